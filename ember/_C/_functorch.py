"""torch._C._functorch: the queries on functorch's wrapper tensors that libraries make (NOTE [vmap] in
ember/_functorch/batching.py: ember's BatchedTensor is torch's functorch BatchedTensor; torch's legacy one, of the
old torch._vmap_internals.vmap, does not exist here)."""
from .._core.tensor_impl import TensorImpl


def is_batchedtensor(tensor):
    """Whether ``tensor`` is a vmap BatchedTensor (a per-sample view of a batch)."""
    return isinstance(tensor, TensorImpl) and tensor._bt is not None


def is_legacy_batchedtensor(tensor):
    """False: ember has no legacy (torch._vmap_internals) batched tensors."""
    return False
