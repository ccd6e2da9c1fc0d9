"""torch._functorch.eager_transforms's hook that libraries replace: ``_wrap_tensor_for_grad``, which makes the
differentiable input of a grad/vjp/jacrev level. ember.func looks it up here at each call (``func/_reverse.py``),
so a library that swaps it (PyPose keeps its LieTensor type that way) changes what ember's transforms see, as in
torch."""
from .._tensor import Tensor


def _wrap_tensor_for_grad(maybe_tensor, level):
    """A fresh differentiable alias of ``maybe_tensor`` for the transform at ``level`` (anything else as it is): a
    view, not a detached copy, so a dual tensor keeps its tangents (jacfwd(jacrev(f)), NOTE [forward AD])."""
    if not isinstance(maybe_tensor, Tensor):
        return maybe_tensor
    alias = maybe_tensor.view_as(maybe_tensor)
    return alias if maybe_tensor.requires_grad else alias.requires_grad_()
