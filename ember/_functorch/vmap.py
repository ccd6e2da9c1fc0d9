"""torch._functorch.vmap's helpers that libraries import (tensordict): adding and taking apart a vmap level's
batch dimensions, and the names torch's module re-exports. ember.func.vmap does not call back into this module,
so a library that replaces its functions (tensordict teaches torch's vmap its TensorDicts that way) changes
nothing in ember's vmap."""
from .._C._functorch import _add_batch_dim, _remove_batch_dim, is_batchedtensor  # noqa: F401
from .._tensor import Tensor  # noqa: F401
from ..utils._pytree import _broadcast_to_and_flatten, tree_flatten, tree_unflatten  # noqa: F401


def _get_name(func):
    """A function's name for vmap's messages (its repr where it has none)."""
    return getattr(func, '__name__', repr(func))


def _maybe_remove_batch_dim(name, batched_output, vmap_level, batch_size, out_dim):
    """One output of a vmapped function as the caller sees it: with its batch at ``out_dim``, or as it is when
    ``out_dim`` is None (then it must not be batched)."""
    if out_dim is None:
        if isinstance(batched_output, Tensor) and is_batchedtensor(batched_output):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return batched_output
    if not isinstance(batched_output, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(batched_output)}. "
                         f"Did you mean to set out_dims= to None for output?")
    return _remove_batch_dim(batched_output, vmap_level, batch_size, out_dim)
