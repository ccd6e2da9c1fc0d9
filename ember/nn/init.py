"""``ember.nn.init``: fill tensors in place with torch's initialisation distributions.

Every function runs under ``no_grad``, writes into ``tensor`` and returns it;
``generator=`` is honoured where torch takes it. Random values are drawn as
torch draws them (NOTE [torch's random streams]): the same numbers under the
same seed.
"""
import math
from ember._warn import warnings

from .. import _functions as _F
from ..autograd.grad_mode import no_grad

__all__ = ['calculate_gain', 'uniform_', 'normal_', 'trunc_normal_', 'constant_', 'ones_', 'zeros_', 'eye_',
           'dirac_', 'xavier_uniform_', 'xavier_normal_', 'kaiming_uniform_', 'kaiming_normal_', 'orthogonal_',
           'sparse_', 'uniform', 'normal', 'constant', 'eye', 'dirac', 'xavier_uniform', 'xavier_normal', 'kaiming_uniform',
           'kaiming_normal', 'orthogonal', 'sparse']


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``calculate_gain('relu') == sqrt(2)``).

    >>> round(calculate_gain('leaky_relu', 0.2), 4)
    1.3868
    """
    linear_fns = ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d',
                  'conv_transpose3d']
    if nonlinearity in linear_fns or nonlinearity == 'sigmoid':
        return 1
    if nonlinearity == 'tanh':
        return 5.0 / 3
    if nonlinearity == 'relu':
        return math.sqrt(2.0)
    if nonlinearity == 'leaky_relu':
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == 'selu':
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _rand_like(t, generator, normal=False):
    f = _F.randn if normal else _F.rand
    return f(tuple(t.shape), generator=generator, dtype=t.dtype, device=t.device)


def _skip(t):
    return t.is_meta or t.numel() == 0


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b).

    >>> import ember
    >>> w = uniform_(ember.empty(3, 5), -1, 1); bool((w.abs() <= 1).all())
    True
    """
    if _skip(tensor):
        return tensor
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std²)."""
    if _skip(tensor):
        return tensor
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std²) truncated to [a, b], by rejection as torch does: normal proposals
    (``normal_(mean, std)``, redrawn where outside) when [a, b] holds more than 30% of the mass, else uniform
    proposals on [a, b] accepted by the density ratio. Same draws as torch under the same seed.

    >>> import ember
    >>> w = trunc_normal_(ember.empty(64, 64), std=0.02)
    >>> bool((w.abs() <= 2).all())
    True
    """
    if _skip(tensor):
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with no_grad():
        p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if p > 0.3:
            _trunc_by_normals(tensor, mean, std, a, b, generator)
        else:
            _trunc_by_uniforms(tensor, mean, std, a, b, generator)
        return tensor


def _trunc_by_normals(tensor, mean, std, a, b, generator):
    """normal_ in place, then fresh normals where a value fell outside [a, b] (the bounds in the tensor's
    dtype, so the test agrees with the values it keeps), until none does."""
    lo, hi = tensor.new_tensor(a, device='cpu').item(), tensor.new_tensor(b, device='cpu').item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        mask = (result < lo) | (result > hi)
        if not bool(mask.any()):
            break
        result = _F.where(mask, _F.empty_like(result).normal_(mean, std, generator=generator), result)
    if result is not tensor:
        tensor.copy_(result)


def _trunc_by_uniforms(tensor, mean, std, a, b, generator):
    """uniform_(a, b) proposals, each kept when log(u) <= its log density relative to the peak's, the rejected
    ones redrawn (with their u) until none is left."""
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    candidates, accept_buf = _F.empty_like(tensor), _F.empty_like(tensor)

    def log_ratio(c):
        return c.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
    tensor.uniform_(a, b, generator=generator)
    pending = accept_buf.uniform_(generator=generator).log_().gt(log_ratio(candidates.copy_(tensor)))
    if not bool(pending.any()):
        return
    result = tensor
    while True:
        candidates.uniform_(a, b, generator=generator)
        result = _F.where(pending, candidates, result)
        pending = _F.where(pending, accept_buf.uniform_(generator=generator).log_().gt(log_ratio(candidates)),
                           pending)
        if not bool(pending.any()):
            break
    tensor.copy_(result)


def constant_(tensor, val):
    """Fill with the value ``val``."""
    with no_grad():
        return tensor.copy_(_F.full_like(tensor, val))


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_F.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor, groups=1):
    """Fill a {3, 4, 5}-D tensor with the Dirac delta (convolutions that keep their input's channels)."""
    import numpy as np
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    per = sizes[0] // groups
    pattern = np.zeros(tuple(sizes), np.float64)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per, sizes[1])):
            pattern[(g * per + d, d) + centre] = 1
    from .._creation import tensor as _tensor
    with no_grad():
        return tensor.copy_(_tensor(pattern, dtype=tensor.dtype, device=tensor.device))


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ('fan_in', 'fan_out'):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == 'fan_in' else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

    >>> import ember
    >>> w = kaiming_uniform_(ember.empty(4, 9), a=math.sqrt(5)); bool((w.abs() <= 1 / 3).all())
    True
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one (Saxe et al., 2013)."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if _skip(tensor):
        return tensor
    from .. import linalg
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _F.randn((rows, cols), generator=generator, dtype=tensor.dtype, device=tensor.device)
    if rows < cols:
        flat = flat.t()
    with no_grad():
        q, r = linalg.qr(flat)
        q = q * _F.diagonal(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        return tensor.mul_(gain)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std²) with a fraction ``sparsity`` of each column's entries set to zero."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        normal_(tensor, 0, std, generator)
        for col in range(cols):     # as torch: each column's zero rows from a randperm of the default generator
            tensor[_F.randperm(rows)[:num_zeros], col] = 0
        return tensor


def _deprecated(fn):
    def wrapper(*args, **kwargs):
        warnings.warn(f"`nn.init.{fn.__name__[:-1]}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__name__ = fn.__name__[:-1]
    return wrapper


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)


# torch's private helpers behind the functions above, which libraries import (mup, timm's older layers): each
# fills under no_grad, as the public function it stands behind does
def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor, val):
    return constant_(tensor, val)


def _no_grad_zero_(tensor):
    return zeros_(tensor)
