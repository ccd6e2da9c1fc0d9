"""Gradient clipping: ``clip_grad_norm_`` (returns the total norm as a tensor) and ``clip_grad_value_``."""
import functools
import types
from ember._warn import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ['clip_grad_norm_', 'clip_grad_norm', 'clip_grad_value_', 'get_total_norm', 'clip_grads_with_norm_']


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _check_foreach(foreach, tensors):
    if foreach and any(t.device.type not in ('cpu', 'cuda') for t in tensors):
        raise RuntimeError(f"foreach=True was passed, but can't use the foreach API on {tensors[0].device.type} "
                           "tensors")


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors`` (as if they were concatenated into one vector), computed as torch's:
    each tensor's ``linalg.vector_norm`` (grouped by device and dtype, as torch's foreach path groups them), then
    the norm of their stack. (torch's float32 norm sums in another order: BENCHMARKS.md, "torch's float32 2-norm
    order".)"""
    import ember
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return ember.tensor(0.0)
    _check_foreach(foreach, tensors)
    first = tensors[0].device
    groups = {}
    for t in tensors:
        groups.setdefault((t.device, t.dtype), []).append(t)
    norms = [ember.linalg.vector_norm(t, norm_type).to(first) for group in groups.values() for t in group]
    total = ember.linalg.vector_norm(ember.stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    _check_foreach(foreach, grads)
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp_max(1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm before clipping.

    >>> import ember
    >>> p = ember.nn.Parameter(ember.ones(4)); p.grad = ember.full((4,), 3.)
    >>> clip_grad_norm_([p], 1.0).item()
    6.0
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient into [-clip_value, clip_value] in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    _check_foreach(foreach, grads)
    for g in grads:
        g.clamp_(min=-clip_value, max=clip_value)
