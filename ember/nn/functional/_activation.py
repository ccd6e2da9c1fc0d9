"""Activation functions of torch.nn.functional.

Primitives (relu, gelu, silu, elu, leaky_relu, hardtanh, softplus, hardswish,
hardsigmoid, log_sigmoid, threshold) are declared in ember/_ops/pointwise.py
with a kernel and a derivative; this module adds torch's ``inplace=`` keyword
to them and writes the rest as composites of ember operators (no kernel, no
derivative of their own). A composite's in-place form computes out of place
and copies the result in with ``copy_``, which records the history.

>>> import ember
>>> import ember.nn.functional as F
>>> F.relu(ember.tensor([-1., 0., 2.]))
tensor([0., 0., 2.])
"""
import ember
from ...amp.autocast_mode import _autocast_composite

__all__ = ['relu', 'relu_', 'relu6', 'leaky_relu', 'leaky_relu_', 'elu', 'elu_', 'selu', 'selu_', 'celu', 'celu_',
           'gelu', 'silu', 'mish', 'softplus', 'hardtanh', 'hardtanh_', 'hardswish', 'hardsigmoid', 'logsigmoid',
           'softsign', 'tanhshrink', 'softshrink', 'hardshrink', 'threshold', 'threshold_', 'prelu', 'rrelu',
           'rrelu_', 'glu', 'sigmoid', 'tanh']


def _op(name):
    """The operator ``aten.<name>.default``, looked up once."""
    return getattr(ember.ops.aten, name).default


def _op_(name):
    return _op(name + '_')


_relu, _relu_ = _op('relu'), _op_('relu')
_hardtanh, _hardtanh_ = _op('hardtanh'), _op_('hardtanh')
_elu, _elu_ = _op('elu'), _op_('elu')
_leaky, _leaky_ = _op('leaky_relu'), _op_('leaky_relu')
_silu, _silu_ = _op('silu'), _op_('silu')
_hardswish, _hardswish_ = _op('hardswish'), _op_('hardswish')
_hardsigmoid, _hardsigmoid_ = _op('hardsigmoid'), _op_('hardsigmoid')
_threshold, _threshold_ = _op('threshold'), _op_('threshold')
_prelu = _op('prelu')
_softplus, _gelu, _log_sigmoid = _op('softplus'), _op('gelu'), _op('log_sigmoid')
_hardshrink, _softshrink = _op('hardshrink'), _op('softshrink')
sigmoid, tanh = ember.sigmoid, ember.tanh


def relu(input, inplace=False):
    """max(x, 0); the gradient at 0 is 0, as in torch."""
    return _relu_(input) if inplace else _relu(input)


def relu_(input):
    return _relu_(input)


def hardtanh(input, min_val=-1., max_val=1., inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh_(input, min_val, max_val) if inplace else _hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1., max_val=1.):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0., 6., inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _leaky_(input, negative_slope) if inplace else _leaky(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _leaky_(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return _elu_(input, alpha) if inplace else _elu(input, alpha)


def elu_(input, alpha=1.0):
    return _elu_(input, alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return (_elu_ if inplace else _elu)(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return (_elu_ if inplace else _elu)(input, alpha, 1, 1 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def gelu(input, approximate='none'):
    """x * Phi(x), or its tanh approximation with ``approximate='tanh'``."""
    return _gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _silu_(input) if inplace else _silu(input)


def _inplace_or(input, fn, inplace):
    """``fn(input)``, or written into ``input`` (computed on a copy, which autograd may save)."""
    return input.copy_(fn(input.clone())) if inplace else fn(input)


def _mish(x):
    if x.dtype in (ember.float16, ember.bfloat16):    # torch's mish kernel computes half precision in float32 (opmath)
        return _mish(x.float()).to(x.dtype)
    return x * _softplus(x).tanh()


def mish(input, inplace=False):
    """x * tanh(softplus(x)): a composite."""
    return _inplace_or(input, _mish, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return _softplus(input, beta, threshold)


def hardswish(input, inplace=False):
    return _hardswish_(input) if inplace else _hardswish(input)


def hardsigmoid(input, inplace=False):
    return _hardsigmoid_(input) if inplace else _hardsigmoid(input)


def logsigmoid(input):
    """log(sigmoid(x)), computed without overflow for large |x|."""
    return _log_sigmoid(input)


def softsign(input):
    """x / (1 + |x|): a composite."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x): a composite."""
    return input - input.tanh()


def _check_lambd(input, lambd, name):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for \'{input.type().split(".")[-1][:-6]}\'')
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {ember.finfo(input.dtype).max:g}] for input dtype "
                           f"{input.type().split('.')[-1][:-6]}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    >>> F.softshrink(ember.tensor([-1., 0.2, 2.]))
    tensor([-0.5000,  0.0000,  1.5000])
    """
    _check_lambd(input, lambd, 'softshrink_check')
    return _softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0.

    >>> F.hardshrink(ember.tensor([-1., 0.2, 2.]))
    tensor([-1.,  0.,  2.])
    """
    _check_lambd(input, lambd, 'hardshrink_cpu')
    return _hardshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    return _threshold_(input, threshold, value) if inplace else _threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _threshold_(input, threshold, value)


@_autocast_composite('prelu')      # torch's prelu is one operator in its CPU lower-precision list
def prelu(input, weight):
    """max(0, x) + weight * min(0, x), one weight per channel (dim 1) or one for all (torch's composite around
    ``_prelu_kernel``).

    >>> F.prelu(ember.tensor([[-2., 3.]]), ember.tensor([0.5, 0.1]))
    tensor([[-1.,  3.]])
    """
    return _prelu(input, weight)


def rrelu(input, lower=1. / 8, upper=1. / 3, training=False, inplace=False):
    """Randomized leaky relu: slope (lower + upper) / 2 in eval mode, uniform in [lower, upper) when training."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    # torch's rrelu_with_noise: only the elements <= 0 draw, in order, a double uniform in [lower, upper) (the
    # bounds first rounded to the input's opmath type, float32 below float64), then rounded to the input's
    # dtype; the rest keep slope 1 (so a seeded call gives torch's slopes)
    if input.dtype != ember.float64:
        lower, upper = (ember.tensor(v, dtype=ember.float32).item() for v in (lower, upper))
    with ember.no_grad():
        neg = input.detach() <= 0
        slope = ember.ones_like(input)
        u = ember.rand(int(neg.sum()), dtype=ember.float64)        # x * (upper - lower) + lower, not fused here
        slope[neg] = (u * (upper - lower) + lower).to(input.dtype)
    return _inplace_or(input, lambda x: x * slope, inplace)


def rrelu_(input, lower=1. / 8, upper=1. / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``: a composite."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.dim() if dim < 0 else dim
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()

