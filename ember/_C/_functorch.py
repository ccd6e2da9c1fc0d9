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


def _add_batch_dim(self, batch_dim, level):
    """A BatchedTensor at ``level`` whose batch is dimension ``batch_dim`` of ``self`` (what vmap does to an input)."""
    from .._functorch.batching import make_batched
    return make_batched(self.movedim(batch_dim, 0), level)


def _remove_batch_dim(self, level, batch_size, out_dim):
    """The per-sample results of ``level`` as one tensor, the batch at ``out_dim``; a tensor not batched at
    ``level`` (the same for every sample) is expanded to ``batch_size`` there."""
    from .._functorch.batching import unwrap
    physical = unwrap(self, level)
    if physical is None:
        physical = self.unsqueeze(0).expand(batch_size, *self.shape)
    return physical.movedim(0, out_dim)


def get_unwrapped(tensor):
    """The tensor a BatchedTensor wraps (its batch dimension first)."""
    if not is_batchedtensor(tensor):
        raise RuntimeError("get_unwrapped: expected a functorch wrapper tensor (a vmap BatchedTensor)")
    return tensor._bt[0]
