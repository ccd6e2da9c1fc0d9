"""Hand-written pointwise API: torch's aliases (``multiply``, ``greater``, ``clip``, ``arctan2``, ...),
methods whose argument order differs from the schema (``Tensor.where``), the conjugation helpers, and the
activations torch also has as ``torch.*`` functions.

>>> import ember
>>> ember.multiply(ember.tensor([7, -7]), 2)
tensor([ 14, -14])
"""
import math

import numpy as np

from .._tensor import Tensor
from .._core import dtype as D
from .._core.dtype import check_cast, scalar_name
from ..ops import aten
from ..overrides import public_function

__all__ = ['conj', 'conj_physical', 'resolve_conj', 'resolve_neg',
           'is_conj', 'is_neg', 'selu', 'selu_', 'celu', 'celu_', 'rrelu', 'rrelu_', 'prelu', 'hardshrink']

# --- aliases: same operator, torch's other name (function, method and in-place method) -------------------
_ALIASES = {'absolute': 'abs', 'arccos': 'acos', 'arcsin': 'asin', 'arctan': 'atan', 'arctan2': 'atan2',
            'arccosh': 'acosh', 'arcsinh': 'asinh', 'arctanh': 'atanh', 'negative': 'neg', 'multiply': 'mul',
            'subtract': 'sub', 'greater': 'gt', 'greater_equal': 'ge', 'less': 'lt', 'less_equal': 'le',
            'not_equal': 'ne', 'clip': 'clamp', 'fix': 'trunc'}


def _named(fn, alias):
    """``ember.<alias>``: the operator's function under torch's other name, so that a traced graph names it as
    torch does (``ember.arctan``, not ``ember.atan``); it honours ``__torch_function__`` under its own name."""
    f = public_function(fn)
    f.__name__ = f.__qualname__ = alias
    f.__module__ = 'ember'
    f.__doc__ = f"Alias for ember.{fn.__name__}."
    return f


def _install_aliases():
    import ember
    for alias, name in _ALIASES.items():
        fn = getattr(ember, name)
        globals()[alias] = _named(fn, alias)
        __all__.append(alias)
        setattr(Tensor, alias, getattr(Tensor, name))
        if hasattr(Tensor, name + '_'):
            setattr(Tensor, alias + '_', getattr(Tensor, name + '_'))
        if hasattr(ember, name + '_'):
            globals()[alias + '_'] = getattr(ember, name + '_')
            __all__.append(alias + '_')


_install_aliases()

# Tensor.where(condition, y) is where(condition, self, y): the schema's first argument is the condition.
_where = aten.where.self
Tensor.where = lambda self, condition, other: _where(condition, self, other)


def _float_power_(self, exponent):
    want = D.complex128 if self._dtype.is_complex or isinstance(exponent, complex) or \
        (isinstance(exponent, Tensor) and exponent._dtype.is_complex) else D.float64
    if self._dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {scalar_name(self._dtype)} but the "
                           f"operation's result requires dtype {scalar_name(want)}")
    return self.pow_(exponent.to(want) if isinstance(exponent, Tensor) else exponent)


Tensor.float_power_ = _float_power_


def square_(input):
    return input.pow_(2)


Tensor.square_ = square_
__all__ += ['square_']


# `t == None` is False in torch (no error): comparisons with a non-number defer to Python.
def _cmp(name, fallback):
    op = getattr(aten, name).Tensor

    def cmp(self, other):
        if other is None or not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.bool_)):
            return fallback
        return op(self, other)
    cmp.__name__ = f'__{name}__'
    return cmp


Tensor.__eq__ = _cmp('eq', NotImplemented)
Tensor.__ne__ = _cmp('ne', NotImplemented)
_bitwise_not = aten.bitwise_not.default


def _invert(self):
    if self._dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _bitwise_not(self)


Tensor.__invert__ = _invert


_conj_physical = aten.conj_physical.default


def conj(input):
    """The complex conjugate; a real tensor is returned as is (as in torch). ember computes it eagerly (torch
    sets a lazy conjugate bit instead, so ``is_conj()`` is always False here)."""
    if not input._dtype.is_complex:
        return input
    return _conj_physical(input)


def conj_physical(input, *, out=None):
    if out is not None:
        return aten.conj_physical.out(input, out=out)
    return _conj_physical(input) if input._dtype.is_complex else input.clone()


def resolve_conj(input):
    return input


resolve_neg = resolve_conj


def is_conj(input):
    return False


def is_neg(input):
    return False


Tensor.real = property(aten.real.default.call)      # NOTE [complex views] in _ops/complex_views.py
Tensor.imag = property(aten.imag.default.call)
for _n in ('conj', 'conj_physical', 'resolve_conj', 'resolve_neg', 'is_conj', 'is_neg'):  # noqa
    setattr(Tensor, _n, globals()[_n])


# activations torch also has as ``torch.*`` functions (and some as Tensor methods)
def selu(input):
    from ..nn.functional import _activation
    return _activation.selu(input)


def selu_(input):
    from ..nn.functional import _activation
    return _activation.selu(input, True)


def celu(input, alpha=1.0):
    from ..nn.functional import _activation
    return _activation.celu(input, alpha)


def celu_(input, alpha=1.0):
    from ..nn.functional import _activation
    return _activation.celu(input, alpha, True)


def rrelu(input, lower=1. / 8, upper=1. / 3, training=False, generator=None):
    from ..nn.functional import _activation
    return _activation.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1. / 8, upper=1. / 3, training=False, generator=None):
    from ..nn.functional import _activation
    return _activation.rrelu(input, lower, upper, training, True)


def prelu(input, weight):
    from ..nn.functional import _activation
    return _activation.prelu(input, weight)


def hardshrink(input, lambd=0.5, *, out=None):
    if out is not None:
        return aten.hardshrink.out(input, lambd, out=out)
    from ..nn.functional import _activation
    return _activation.hardshrink(input, lambd)


Tensor.prelu = prelu
Tensor.hardshrink = hardshrink

_polygamma = aten.polygamma.default
Tensor.polygamma = lambda self, n: _polygamma(n, self)
Tensor.polygamma_ = lambda self, n: self.copy_(_polygamma(n, self))


# --- torch's other pointwise names: rsub, frexp, mvlgamma, igamma/igammac ------------------------------------
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``: sub with its operands reversed (torch.rsub).

    >>> import ember
    >>> ember.rsub(ember.tensor([1, 2]), 5, alpha=2)
    tensor([3, 1])
    """
    return aten.sub.Tensor(other, input, alpha=alpha)


def _pow2(e, dtype):
    """2**e in ``dtype`` as two factors, each inside the dtype's exponent range (so even a float64 subnormal's
    scale, 2**1074, stays exact), for ``x * f1 * f2``."""
    half = (e * -0.5).floor()
    return aten.exp2.default(half.to(dtype)), aten.exp2.default((-e - half).to(dtype))


def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with input = mantissa * 2**exponent, |mantissa| in [0.5, 1) (0, inf and nan keep
    their value with exponent 0); exponent is int32. The mantissa is ``input`` times powers of two, so its
    gradient is ``grad / 2**exponent``, torch's.

    >>> import ember
    >>> ember.frexp(ember.tensor([8., 0.3]))
    ember.return_types.frexp(
    mantissa=tensor([0.5000, 0.6000]),
    exponent=tensor([ 4, -1], dtype=ember.int32))
    """
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    a = input.detach().to(D.float64).abs()
    regular = aten.isfinite.default(a) & (a != 0)
    a = aten.where.self(regular, a, a.new_ones(()))
    e = aten.log2.default(a).floor() + 1
    for _ in range(2):                  # log2 rounds near powers of two: move e until a / 2**e is in [0.5, 1)
        f1, f2 = _pow2(e, D.float64)
        m = a * f1 * f2
        e = e + (m >= 1).to(D.float64) - (m < 0.5).to(D.float64)
    e = aten.where.self(regular, e, e.new_zeros(()))
    f1, f2 = _pow2(e, input.dtype)
    from ..return_types import _structseq
    result = _structseq('frexp', ['mantissa', 'exponent'])(input * f1 * f2, e.to(D.int32))
    if out is None:
        return result
    for o, r in zip(out, result):
        o.resize_(r.shape).copy_(r)
    return type(result)(*out)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi).

    >>> import ember
    >>> round(ember.mvlgamma(ember.tensor([2.5]), 2).item(), 4)
    0.857
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = aten.lgamma.default(input)
    for j in range(1, p):
        total = total + aten.lgamma.default(input - 0.5 * j)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(input, other) (torch.special.gammainc)."""
    if out is not None:
        return aten.special_gammainc.out(input, other, out=out)
    return aten.special_gammainc.default(input, other)


def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(input, other) (torch.special.gammaincc)."""
    if out is not None:
        return aten.special_gammaincc.out(input, other, out=out)
    return aten.special_gammaincc.default(input, other)


def _inplace(fn):
    """The in-place method of a composite: the result written back into ``self`` (same dtype, as torch's
    in-place ops require)."""
    def method(self, *args):
        r = fn(self, *args)
        check_cast(r.dtype, self.dtype)
        return self.copy_(r)
    method.__name__ = fn.__name__ + '_'
    return method


__all__ += ['rsub', 'frexp', 'mvlgamma', 'igamma', 'igammac']
Tensor.frexp = lambda self: frexp(self)
Tensor.mvlgamma = lambda self, p: mvlgamma(self, p)
Tensor.mvlgamma_ = _inplace(mvlgamma)
Tensor.igamma = lambda self, other: igamma(self, other)
Tensor.igammac = lambda self, other: igammac(self, other)
Tensor.igamma_ = _inplace(igamma)
Tensor.igammac_ = _inplace(igammac)
