"""Pointwise operators and their shared rules (ember's TensorIterator).

Every elementwise operator broadcasts its operands and computes in one
"computation dtype" chosen by torch's promotion (NOTE [result type] in
_core/dtype.py). A rule names how the result dtype follows from it:

  promote       result = computation dtype (add, mul, maximum, ...)
  float         integers and bool compute in the default float dtype (sin, exp, div)
  bool          comparisons and logical ops: computation dtype for the kernel, bool result
  integral      bitwise ops: floating operands are an error
  real          complex inputs give their real dtype (abs)
  no_bool       like promote, but bool is an error (neg, sub)
  float64       float_power: double (complex double) whatever the inputs

An op may add a ``check(cd, *args)`` run by its meta function after the scan:
torch's per-op dtype restrictions ("not implemented for 'Long'") and argument
errors live there, so every backend (Meta included) raises them before any
data is touched and a failed in-place op leaves its tensor unchanged.
"""
import math
from numbers import Number

from .._core import dtype as D
from .._core.dtype import scalar_name as _tname, FOUND_DTYPE
from .._core.tensor_impl import TensorImpl
from .._core.broadcast import broadcast_shapes  # noqa: F401  (re-exported: the meta functions' shape rule)
from .registry import declare
from .overloads import overloads
from .._dispatch.ops_namespace import aten


def _is_tensor(x):
    return isinstance(x, TensorImpl)

_PROMOTE = D._PROMOTE
_res = D.result_type_of
_INT, _FLOAT = 1, 2


def _scan(operands):
    """(broadcast shape, computation dtype) of tensors and Python numbers, as torch computes them."""
    if len(operands) == 2:      # the most frequent case, two tensors of one shape and dtype, without the loop
        x, y = operands
        if isinstance(x, TensorImpl) and isinstance(y, TensorImpl):
            s = x._a.shape
            if s and s == y._a.shape and x._dtype is y._dtype:
                return s, x._dtype
    dim = zero = wrapped = None
    shape = None
    for x in operands:
        if isinstance(x, TensorImpl):
            s, d = x._a.shape, x._dtype
            if s:
                dim = d if dim is None else _PROMOTE[dim, d]
                shape = s if shape is None or shape == s else broadcast_shapes(shape, s)
            else:
                zero = d if zero is None else _PROMOTE[zero, d]
                if shape is None:
                    shape = s
        elif x is not None:
            d = D.scalar_dtype(x)
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
    if dim is not None and zero is None and wrapped is None:
        return shape, dim
    return (shape if shape is not None else ()), _res(dim, zero, wrapped)


def _float_of(d):
    return d if d.category >= _FLOAT else D.get_default_dtype()




def _not_impl(name, d):
    return NotImplementedError(f'"{name}" not implemented for \'{_tname(d)}\'')


def _check_integral(name, d):
    if d.category >= _FLOAT:
        raise _not_impl(f'{name}_cpu', d)


_BOOL_MSG = {
    'sub': "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
           "`logical_xor()` operator instead.",
    'neg': "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.",
}


def _must_be_tensors(name, positions):
    """A check that the operands at ``positions`` ((index, name) pairs) are tensors: the dispatcher lets Python
    numbers into every operand of a pointwise op, but torch takes them only where it has a Scalar overload."""
    def check(args):
        for i, n in positions:
            x = args[i]
            if not isinstance(x, TensorImpl) and x is not None:
                raise TypeError(f"{name}(): argument '{n}' (position {i + 1}) must be Tensor, not {type(x).__name__}")
    return check


def pointwise_meta(rule, nargs, name='', check=None, tensors=None):
    """The meta function of a pointwise op: ``(*args) -> (shape, result dtype, computation dtype)``.
    The first ``nargs`` arguments are the operands; the rest (alpha, ...) do not take part."""
    if rule == 'promote' and nargs == 2 and tensors is None:
        # the most frequent meta of all (add, sub, mul, ... on two tensors of one shape and dtype): _scan's
        # fast case inline, without the slice and the call (NOTE [generated autograd kernels]'s hot path)
        def meta(*args):
            x, y = args[0], args[1]
            if isinstance(x, TensorImpl) and isinstance(y, TensorImpl):
                s, cd = x._a.shape, x._dtype
                if not (s and s == y._a.shape and cd is y._dtype):
                    s, cd = _scan((x, y))
            else:
                s, cd = _scan((x, y))
            # (add's check with an int alpha, the usual call, has nothing to check: one Python call less)
            if check is not None and not (check is _alpha_check and args[-1].__class__ is int):
                check(cd, *args)
            return s, cd, cd
        meta.__qualname__ = f'pointwise_meta[{rule}]'
        return meta

    def meta(*args):
        if tensors is not None:
            tensors(args)
        shape, cd = _scan(args[:nargs])
        if check is not None:
            check(cd, *args)
        if rule == 'promote':
            return shape, cd, cd
        if rule == 'float':
            cd = _float_of(cd)
            return shape, cd, cd
        if rule == 'bool':
            return shape, D.bool_, cd
        if rule == 'integral':
            _check_integral(name, cd)
            return shape, cd, cd
        if rule == 'real':
            return shape, cd.to_real(), cd
        if rule == 'no_bool':
            if cd is D.bool_:
                raise RuntimeError(_BOOL_MSG.get(name, f"{name}: the operation is not supported for bool tensors; "
                                                       "use logical_not() / bitwise_xor() / logical_xor() instead."))
            return shape, cd, cd
        if rule == 'real_float':      # angle: the real float dtype of the input's computation dtype
            return shape, _float_of(cd).to_real(), _float_of(cd)
        if rule == 'float64':
            cd = D.complex128 if cd.category > _FLOAT else D.float64
            return shape, cd, cd
        raise ValueError(rule)
    meta.__qualname__ = f'pointwise_meta[{rule}]'
    return meta


def pointwise(schema, rule, derivatives=None, nargs=None, inplace=True, out=True, check=None, numbers=None, **kw):
    """Declare a pointwise op. ``numbers``: the tensor arguments that may also be Python numbers (torch's Scalar
    overloads); by default every operand but ``self``."""
    from .._dispatch.schema import parse_schema
    s = parse_schema(schema)
    n = nargs if nargs is not None else sum(1 for a in s.arguments if a.base_type == 'Tensor')
    if numbers is None:
        numbers = tuple(a.name for a in s.arguments if a.name != 'self')
    strict = [(i, 'input' if a.name == 'self' else a.name) for i, a in enumerate(s.arguments)
              if a.base_type == 'Tensor' and a.name not in numbers]
    tensors = _must_be_tensors(s.name, strict) if strict else None
    return declare(schema, kind='pointwise', meta=pointwise_meta(rule, n, s.name, check, tensors),
                   derivatives=derivatives, inplace=inplace, out=out, **kw)


def unary(name, rule, grad=None, **kw):
    return pointwise(f'{name}(Tensor self) -> Tensor', rule, {'self': grad} if grad else None, **kw)


# --- dtype checks (torch's per-kernel dtype coverage) -----------------------------

def _no(*cats, kernel=None):
    """A check rejecting computation dtypes of the given categories, as torch's kernels do
    (``"hypot_cpu" not implemented for 'Long'``): 0 bool, 1 integer."""
    def check(cd, *args):
        if cd.category in cats:
            raise _not_impl(kernel, cd)
    return check


_NO_BOOL = lambda k: _no(0, kernel=k)
_FLOAT_ONLY = lambda k: _no(0, 1, kernel=k)


# ---------------------------------------------------------------------------
# Helpers for derivative formulas (written in ember operators, so they
# differentiate again; the engine sums them to each input's shape).
# ---------------------------------------------------------------------------



def _where(c, a, b):
    return _WHERE(c, a, b)


def _zeros(grad):
    return aten.zeros_like.default(grad)


def _zero_grad(grad):
    return _zeros(grad)


def _is_num(x):
    return isinstance(x, Number)


# ---------------------------------------------------------------------------
# Arithmetic. ``grad`` is the incoming gradient, ``result`` the op's output,
# other names are the op's arguments (a Python number where one was passed).
# ---------------------------------------------------------------------------

def _alpha_check(cd, self, other, alpha=1):
    if alpha.__class__ is int:       # the common case, valid for every dtype
        return
    if cd.category <= _INT and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, bool) and cd is not D.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _is_bool_tensor(x):
    return isinstance(x, TensorImpl) and x._dtype is D.bool_ or isinstance(x, bool)


def _sub_check(cd, self, other, alpha=1):
    a, b = _is_bool_tensor(self), _is_bool_tensor(other)
    if a and b:
        raise RuntimeError(_BOOL_MSG['sub'])
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    _alpha_check(cd, self, other, alpha)


pointwise('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'promote',
          {'self': lambda grad: grad, 'other': lambda grad, alpha: grad if alpha == 1 else grad * alpha},
          check=_alpha_check, numbers=('self', 'other'))
pointwise('sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'promote',
          {'self': lambda grad: grad, 'other': lambda grad, alpha: -grad if alpha == 1 else grad * -alpha},
          check=_sub_check, numbers=('self', 'other'),
          # a number first is ``1 - t``: torch's rsub.Scalar, RsubBackward1 (NOTE [node names by arguments])
          grad_name=lambda self, other, alpha: 'SubBackward0' if _is_tensor(self) else 'RsubBackward1')
pointwise('mul.Tensor(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad, other: grad * other, 'other': lambda grad, self: grad * self}, numbers=('self', 'other'))
pointwise('div.Tensor(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': lambda grad, other: grad / other, 'other': lambda grad, self, other: -grad * (self / other / other)},
          numbers=('self', 'other'))


def _div_mode_meta(self, other, rounding_mode=None):
    if rounding_mode is None:
        shape, cd = _scan((self, other))
        cd = _float_of(cd)
        return shape, cd, cd
    if rounding_mode not in ('trunc', 'floor'):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")
    shape, cd = _scan((self, other))
    if cd is D.bool_:
        raise _not_impl(f'div_{rounding_mode}_cpu', cd)
    return shape, cd, cd


def _div_mode_self(grad, other, rounding_mode):
    return grad / other if rounding_mode is None else _zeros(grad)


def _div_mode_other(grad, self, other, rounding_mode):
    return -grad * (self / other / other) if rounding_mode is None else _zeros(grad)


# ``div(a, b, rounding_mode=...)``: a separate overload as in torch, chosen by the keyword
DIV_MODE = declare('div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor', kind='pointwise',
                   meta=_div_mode_meta, inplace=True, out=True, method=False, function=False, name='_div_mode',
                   derivatives={'self': _div_mode_self, 'other': _div_mode_other}, grad_name='DivBackward2')
overloads('div', 'div.Tensor', 'div.Tensor_mode', aliases=('divide', 'true_divide'))

pointwise('floor_divide(Tensor self, Tensor other) -> Tensor', 'promote', check=_NO_BOOL('div_floor_cpu'),
          numbers=('self', 'other'))
pointwise('remainder.Tensor(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad: grad,
           'other': lambda grad, self, other: -grad * DIV_MODE(self, other, rounding_mode='floor')},
          check=_NO_BOOL('remainder_cpu'), numbers=('self', 'other'),
          grad_name=lambda self, other: 'RemainderBackward1' if _is_tensor(other) else 'RemainderBackward0')
pointwise('fmod.Tensor(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad: grad,
           'other': lambda grad, self, other: -grad * DIV_MODE(self, other, rounding_mode='trunc')},
          check=_NO_BOOL('fmod_cpu'))


def _pow_check(cd, self, exponent):
    if cd is D.bool_ and not _is_num(exponent):      # bool_tensor ** True is allowed, as in torch
        raise _not_impl('pow', cd)
    if cd.category == _INT and type(exponent) is int and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_self(grad, self, exponent):
    # torch's pow_backward: grad * (exponent * self ** (exponent - 1)), in this order (the rounding, and the layout
    # of a gradient that is an expanded number: NOTE [channels_last outputs])
    if _is_num(exponent):
        return _zeros(grad) if exponent == 0 else grad * (exponent * self.pow(exponent - 1))
    return _where(exponent == 0, 0., grad * (exponent * self.pow(exponent - 1)))


def _pow_exponent(grad, self, exponent, result):
    if _is_num(self):
        if self == 0:
            return _where(exponent >= 0, 0., grad * result * -math.inf)
        return grad * result * (math.log(self) if self > 0 else math.nan)
    return grad * _where((self == 0).logical_and(exponent >= 0), 0., result * self.log())


pointwise('pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor', 'promote',
          {'self': _pow_self, 'exponent': _pow_exponent}, check=_pow_check, numbers=('self', 'exponent'),
          # torch's overloads: Tensor_Scalar PowBackward0, Tensor_Tensor PowBackward1, Scalar (2 ** t) PowBackward2
          grad_name=lambda self, exponent: 'PowBackward0' if not _is_tensor(exponent) else 'PowBackward2'
          if not _is_tensor(self) else 'PowBackward1')


def _float_power(self, exponent):
    cplx = any(isinstance(x, TensorImpl) and x._dtype.is_complex or isinstance(x, complex) for x in (self, exponent))
    dt = D.complex128 if cplx else D.float64
    conv = lambda x: x.to(dt) if isinstance(x, TensorImpl) else x
    return conv(self).pow(conv(exponent)) if isinstance(self, TensorImpl) else aten.pow.Tensor_Tensor(self, conv(exponent))


# float_power is pow in double precision: a composite, so pow's derivative serves it.
declare('float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor', composite=_float_power, out=True,
        tags=('wraps_numbers',))

unary('neg', 'no_bool', lambda grad: -grad)
declare('positive(Tensor self) -> Tensor', composite=lambda self: _positive(self))


def _positive(self):
    if self._dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


unary('reciprocal', 'float', lambda grad, result: -grad * result * result)
unary('rsqrt', 'float', lambda grad, result: -0.5 * grad * result * result * result)
# square is pow(self, 2) as in torch, which also gives its dtype rule (bool squares to int64)
declare('square(Tensor self) -> Tensor', composite=lambda self: self.pow(2), out=True)
unary('abs', 'real', lambda grad, self: grad * self.sgn(), check=_NO_BOOL('abs_cpu'), complex_formulas=True,
      forward=lambda self, self_t: (self.sgn().conj() * self_t).real if self.is_complex() else self.sgn() * self_t)
unary('sign', 'promote', _zero_grad)


def _sgn_backward(grad, self, result):
    """sgn(z) = z / |z|: zero for real tensors; for complex ones (grad - s * Re(conj(s) * grad)) / |z|, and 0 at
    z = 0 (NOTE [complex gradients])."""
    if not self._dtype.is_complex:
        return _zeros(grad)
    a = self.abs()
    g = (grad - result * (result.conj() * grad).real) / _where(a == 0, 1.0, a)
    return _where(a == 0, 0.0, g)


unary('sgn', 'promote', _sgn_backward, complex_formulas=True)

# --- exponentials and logarithms ----------------------------------------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)
unary('exp', 'float', lambda grad, result: grad * result)
unary('exp2', 'float', lambda grad, result: grad * result * _LN2)
unary('expm1', 'float', lambda grad, result: grad * (result + 1))
unary('log', 'float', lambda grad, self: grad / self)
unary('log2', 'float', lambda grad, self: grad / (self * _LN2))
unary('log10', 'float', lambda grad, self: grad / (self * _LN10))
unary('log1p', 'float', lambda grad, self: grad / (self + 1))
unary('sqrt', 'float', lambda grad, result: grad / (2 * result))
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
unary('erf', 'float', lambda grad, self: grad * _2_SQRTPI * (-self * self).exp())
unary('erfc', 'float', lambda grad, self: -grad * _2_SQRTPI * (-self * self).exp())
unary('erfinv', 'float', lambda grad, self: grad * (0.5 * math.sqrt(math.pi)) * self.erfinv().square().exp())
# torch.special's scaled error function and modified Bessel functions (NOTE [special functions without scipy]);
# the formulas are torch's derivatives.yaml entries (i1 and i1e at 0: the limit 1/2)


def _igamma_not_implemented(name):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")   # as torch
    return formula


def _igamma_other(grad, self, other):     # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
    return grad * ((self - 1) * other.log() - other - self.lgamma()).exp()


pointwise('special_gammainc(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': _igamma_not_implemented('igamma'), 'other': _igamma_other}, inplace=False, method=False, function=False,
          numbers=(),
          primitive_because="torch's composite only calls igamma; ember names the operator after the public function")
pointwise('special_gammaincc(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': _igamma_not_implemented('igammac'), 'other': lambda grad, self, other: -_igamma_other(grad, self, other)},
          inplace=False, method=False, function=False, numbers=(),
          primitive_because="torch's composite only calls igammac; ember names the operator after the public function")
unary('special_entr', 'float', lambda grad, self: grad * -(1 + self.log()), method=False, function=False)
unary('special_erfcx', 'float', lambda grad, self, result: (2.0 * self * result - 2.0 / math.sqrt(math.pi)) * grad,
      method=False, function=False)
# torch's formula (derivatives.yaml), whose exp(-(result + x^2/2)) cancels badly far in the lower tail: its gradient
# there is inf or 0 rather than about -x, and programs (botorch's tests) see torch's values
unary('special_log_ndtr', 'float', lambda grad, self, result: grad / math.sqrt(2 * math.pi) * (
    result + self.pow(2) / 2).neg().exp(), method=False, function=False)
unary('i0', 'float', lambda grad, self: grad * aten.special_i1.default(self))
unary('special_i0e', 'float', lambda grad, self, result: grad * (aten.special_i1e.default(self) - self.sgn() * result),
      method=False, function=False)
unary('special_i1', 'float', lambda grad, self, result: grad * _where(
    self == 0, 0.5, aten.i0.default(self) - result / _where(self == 0, 1.0, self)), method=False, function=False)
unary('special_i1e', 'float', lambda grad, self, result: grad * _where(
    self == 0, 0.5, aten.special_i0e.default(self) - result * (self.sgn() + 1 / _where(self == 0, 1.0, self))),
    method=False, function=False)


# torch.special's Bessel and Airy functions, Hurwitz zeta and orthogonal polynomials (NOTE [Bessel functions by a
# trapezoidal rule], NOTE [Hurwitz zeta], NOTE [orthogonal polynomials]). torch's kernels take float32 and float64
# only, and give no gradient: their outputs do not require grad, except zeta's, which has one in q.
def _float32_or_64(kernel):
    def check(cd, *args):
        if _float_of(cd) not in (D.float32, D.float64):
            raise _not_impl(kernel, _float_of(cd))
    return check


for _n, _arg in (('airy_ai', 'x'), ('bessel_j0', 'self'), ('bessel_j1', 'self'), ('bessel_y0', 'self'),
                 ('bessel_y1', 'self'), ('modified_bessel_i0', 'self'), ('modified_bessel_i1', 'self'),
                 ('modified_bessel_k0', 'self'), ('modified_bessel_k1', 'self'), ('scaled_modified_bessel_k0', 'x'),
                 ('scaled_modified_bessel_k1', 'x'), ('spherical_bessel_j0', 'x')):
    pointwise(f'special_{_n}(Tensor {_arg}) -> Tensor', 'float', inplace=False, method=False, function=False,
              differentiable=False, numbers=(), check=_float32_or_64(f'{_n}_cpu'))


def _zeta_x(grad):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")      # as torch


def _zeta_q(grad, self, other):          # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return grad * -self * aten.special_zeta.default(self + 1.0, other)


# self (x) and other (q) may each be a number (torch's Scalar overloads)
pointwise('special_zeta(Tensor self, Tensor other) -> Tensor', 'float', {'self': _zeta_x, 'other': _zeta_q},
          inplace=False, method=False, function=False, numbers=('self', 'other'), check=_float32_or_64('zeta_cpu'))
for _n in ('chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w',
           'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
           'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h', 'hermite_polynomial_he', 'laguerre_polynomial_l',
           'legendre_polynomial_p'):
    pointwise(f'special_{_n}(Tensor x, Tensor n) -> Tensor', 'float', inplace=False, method=False, function=False,
              differentiable=False, numbers=('x', 'n'), check=_float32_or_64(f'{_n}_cpu'))


# --- rounding: zero gradient (torch's derivatives.yaml: zeros_like(grad)) ------
unary('floor', 'promote', _zero_grad, check=_NO_BOOL('floor_vml_cpu'))
unary('ceil', 'promote', _zero_grad, check=_NO_BOOL('ceil_vml_cpu'))
unary('trunc', 'promote', _zero_grad, check=_NO_BOOL('trunc_vml_cpu'))
unary('frac', 'promote', lambda grad: grad, check=_FLOAT_ONLY('frac_cpu'))


def _round_check(cd, self, decimals=0):
    if cd is D.bool_ or (decimals != 0 and cd.category < _FLOAT):
        raise _not_impl('round_cpu', cd)


pointwise('round(Tensor self, *, int decimals=0) -> Tensor', 'promote', {'self': _zero_grad}, check=_round_check,
          out_dtype=FOUND_DTYPE)

# --- trigonometric and hyperbolic ------------------------------------------------
unary('sin', 'float', lambda grad, self: grad * self.cos())
unary('cos', 'float', lambda grad, self: -grad * self.sin())
unary('tan', 'float', lambda grad, result: grad * (1 + result * result))
unary('asin', 'float', lambda grad, self: grad * (1 - self * self).rsqrt())
unary('acos', 'float', lambda grad, self: -grad * (1 - self * self).rsqrt())
unary('atan', 'float', lambda grad, self: grad / (1 + self * self))
unary('sinh', 'float', lambda grad, self: grad * self.cosh())
unary('cosh', 'float', lambda grad, self: grad * self.sinh())
unary('tanh', 'float', lambda grad, result: aten.tanh_backward.default(grad, result))
unary('asinh', 'float', lambda grad, self: grad * (self * self + 1).rsqrt())
unary('acosh', 'float', lambda grad, self: grad * (self * self - 1).rsqrt())
unary('atanh', 'float', lambda grad, self: grad / (1 - self * self))
unary('sigmoid', 'float', lambda grad, result: grad * result * (1 - result))
_PI = math.pi
unary('deg2rad', 'float', lambda grad: grad * (_PI / 180))
unary('rad2deg', 'float', lambda grad: grad * (180 / _PI))


def _sinc_grad(grad, self):
    px = self * _PI
    d = (px * px.cos() - px.sin()) / (px * self)
    return grad * _where(self == 0, 0., d)


unary('sinc', 'float', _sinc_grad)
pointwise('atan2(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': lambda grad, self, other: grad * other / (self * self + other * other),
           'other': lambda grad, self, other: -grad * self / (self * self + other * other)}, numbers=())
pointwise('hypot(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad, self, result: grad * self / result,
           'other': lambda grad, other, result: grad * other / result}, check=_FLOAT_ONLY('hypot_cpu'), numbers=())
pointwise('logaddexp(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad, self, other: grad / (1 + (other - self).exp()),
           'other': lambda grad, self, other: grad / (1 + (self - other).exp())}, check=_FLOAT_ONLY('logaddexp_cpu'),
          numbers=())
def _xlogy_self(grad, self, other):
    g = aten.xlogy.Tensor(grad, other)
    if _is_num(other):
        return _where(self == 0, 0., g) if other <= 0 else g
    return _where((self == 0).logical_and(other <= 0), 0., g)


pointwise('xlogy.Tensor(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': _xlogy_self,
           'other': lambda grad, self, other: grad * self / other}, numbers=('self', 'other'))


def _copysign_self(grad, self, result):
    return grad * _where(self == 0, 0., result / self)


pointwise('copysign.Tensor(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': _copysign_self, 'other': lambda grad: _zeros(grad)})


def _heaviside_check(cd, self, values):
    if not isinstance(values, TensorImpl) or not isinstance(self, TensorImpl):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if self._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


pointwise('heaviside(Tensor self, Tensor values) -> Tensor', 'promote', check=_heaviside_check, numbers=())

# --- maximum, minimum, clamp -----------------------------------------------------
# torch splits the gradient evenly on ties, and a NaN operand passes it to both sides.


def _max_self(grad, self, other):
    return _where(self < other, 0., _where(self == other, grad / 2, grad))


def _max_other(grad, self, other):
    return _where(self > other, 0., _where(self == other, grad / 2, grad))


def _select_jvp(weight):
    """Forward derivative of a binary max/min: ``other_t + w * (self_t - other_t)``, ``w`` the share of self
    (torch's: ties and NaNs as its forward formulas take them, which differ from the backward's)."""
    def jvp(self, other, self_t, other_t, result):
        z = aten.zeros_like.default(result)
        st, ot = (z if self_t is None else self_t), (z if other_t is None else other_t)
        return ot + weight(self, other).to(result.dtype) * (st - ot)
    return jvp


pointwise('maximum(Tensor self, Tensor other) -> Tensor', 'promote', {'self': _max_self, 'other': _max_other},
          inplace=False, numbers=(), forward=_select_jvp(lambda s, o: (s > o).double() + (s == o).double() * 0.5))
pointwise('minimum(Tensor self, Tensor other) -> Tensor', 'promote', {'self': _max_other, 'other': _max_self},
          inplace=False, numbers=(), forward=_select_jvp(lambda s, o: (s < o).double() + (s == o).double() * 0.5))


def _fmax_self(grad, self, other):
    return _where((self >= other).logical_or(other.isnan()), grad, 0.)


def _fmax_other(grad, self, other):
    return _where((self >= other).logical_or(other.isnan()), 0., grad)


def _fmin_self(grad, self, other):
    return _where((self <= other).logical_or(other.isnan()), grad, 0.)


def _fmin_other(grad, self, other):
    return _where((self <= other).logical_or(other.isnan()), 0., grad)


pointwise('fmax(Tensor self, Tensor other) -> Tensor', 'promote', {'self': _fmax_self, 'other': _fmax_other},
          inplace=False, numbers=(), forward=_select_jvp(lambda s, o: (s > o).logical_or(o.isnan())))
pointwise('fmin(Tensor self, Tensor other) -> Tensor', 'promote', {'self': _fmin_self, 'other': _fmin_other},
          inplace=False, numbers=(), forward=_select_jvp(lambda s, o: (s <= o).logical_or(o.isnan())))


_C_NAMES = {'uint8': 'uint8_t', 'int8': 'int8_t', 'int16': 'short', 'int32': 'int', 'int64': 'int64_t'}


def _clamp_check(cd, self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if cd is D.bool_:
        raise _not_impl('clamp_cpu', cd)
    if cd.category == _INT:
        import numpy as np
        info = np.iinfo(cd.np)
        lo = -(info.max + 1) // 2 if info.min == 0 else info.min     # torch lets uint8 take -1 (it wraps)
        for v in (min, max):
            if type(v) is int and not lo <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {_C_NAMES[cd.name]} without overflow")


def _clamp_bound_check(cd, name, bound):
    if cd is D.bool_ and not isinstance(bound, TensorImpl):
        raise _not_impl(f'{name}_scalar_cpu', cd)
    if cd.category == _INT:
        _clamp_check(cd, None, bound, None)


def _clamp_self(grad, self, min, max):
    if min is None:
        return _where(self <= max, grad, 0.)
    if max is None:
        return _where(self >= min, grad, 0.)
    return _where((self >= min).logical_and(self <= max), grad, 0.)


def _clamp_min(grad, self, min, max):
    if max is None:
        return _where(self < min, grad, 0.)
    return _where((self < min).logical_and(min < max), grad, 0.)


def _clamp_max(grad, self, min, max):
    if min is None:
        return _where(self > max, grad, 0.)
    return _where((self > max).logical_or(max < min), grad, 0.)


pointwise('clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor', 'promote',
          {'self': _clamp_self, 'min': _clamp_min, 'max': _clamp_max}, check=_clamp_check,
          # NOTE [node names by arguments]: torch's Scalar-bound overload is ClampBackward1, its Tensor one ClampBackward0
          grad_name=lambda self, min, max: 'ClampBackward0' if _is_tensor(min) or _is_tensor(max) else 'ClampBackward1')
pointwise('clamp_min(Tensor self, Tensor min) -> Tensor', 'promote',
          {'self': lambda grad, self, min: _where(self >= min, grad, 0.),
           'min': lambda grad, self, min: _where(self < min, grad, 0.)},
          check=lambda cd, self, min: _clamp_bound_check(cd, 'clamp_min', min),
          grad_name=lambda self, min: 'ClampMinBackward1' if _is_tensor(min) else 'ClampMinBackward0')
pointwise('clamp_max(Tensor self, Tensor max) -> Tensor', 'promote',
          {'self': lambda grad, self, max: _where(self <= max, grad, 0.),
           'max': lambda grad, self, max: _where(self > max, grad, 0.)},
          check=lambda cd, self, max: _clamp_bound_check(cd, 'clamp_max', max),
          grad_name=lambda self, max: 'ClampMaxBackward1' if _is_tensor(max) else 'ClampMaxBackward0')


def _lerp_check(cd, self, end, weight):
    for name, t in (('end', end), ('weight', weight)):
        if isinstance(t, TensorImpl) and t._dtype is not self._dtype and (name == 'end' or t._a.ndim):
            raise RuntimeError(f"expected dtype {D.cpp_name(self._dtype)} for `{name}` but got dtype "
                               f"{D.cpp_name(t._dtype)}")
    if cd.category < _FLOAT:
        raise _not_impl('lerp_kernel_scalar' if _is_num(weight) else 'lerp_kernel_tensor', cd)


pointwise('lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor', 'promote',
          {'self': lambda grad, weight: grad * (1 - weight), 'end': lambda grad, weight: grad * weight,
           'weight': lambda grad, self, end: grad * (end - self)}, nargs=2, check=_lerp_check,
          numbers=('weight',), grad_name=lambda self, end, weight: 'LerpBackward1' if _is_tensor(weight) else 'LerpBackward0')


def _addcdiv_check(cd, self, tensor1, tensor2, value=1):
    if all(isinstance(t, TensorImpl) and t._dtype.category < _FLOAT for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                           "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior can be implemented with true_divide: (input + value * "
                           "torch.true_divide(tensor1, tensor2)).")


pointwise('addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor', 'promote',
          {'self': lambda grad: grad, 'tensor1': lambda grad, tensor2, value: grad * tensor2 * value,
           'tensor2': lambda grad, tensor1, value: grad * tensor1 * value}, numbers=(),
          check=_NO_BOOL('addcmul_cpu_out'))
pointwise('addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor', 'promote',
          {'self': lambda grad: grad, 'tensor1': lambda grad, tensor2, value: grad * value / tensor2,
           'tensor2': lambda grad, tensor1, tensor2, value: -grad * value * tensor1 / (tensor2 * tensor2)},
          check=_addcdiv_check, numbers=())
pointwise('nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor', 'promote',
          {'self': lambda grad, self: grad * self.isfinite()})

# --- more exponentials, special functions, integer number theory ------------------------------
pointwise('logaddexp2(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad, self, other: grad / (1 + aten.pow.Tensor_Tensor(2., other - self)),
           'other': lambda grad, self, other: grad / (1 + aten.pow.Tensor_Tensor(2., self - other))},
          check=_FLOAT_ONLY('logaddexp2_cpu'), numbers=())
pointwise('nextafter(Tensor self, Tensor other) -> Tensor', 'promote', check=_FLOAT_ONLY('nextafter_cpu'), numbers=())
for _n in ('gcd', 'lcm'):
    pointwise(f'{_n}(Tensor self, Tensor other) -> Tensor', 'integral', differentiable=False, numbers=())


def _logit_grad(grad, self, eps):
    g = grad / (self * (1 - self))
    if eps is None:
        return _where((self < 0).logical_or(self > 1), math.nan, g)
    return _where((self < eps).logical_or(self > 1 - eps), 0., g)


pointwise('logit(Tensor self, float? eps=None) -> Tensor', 'float', {'self': _logit_grad})
unary('lgamma', 'float', lambda grad, self: grad * self.digamma())
unary('digamma', 'float', lambda grad, self: grad * aten.polygamma.default(1, self))


def _polygamma_meta(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if not isinstance(self, TensorImpl):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(self).__name__}")
    cd = _float_of(self._dtype)
    return self._a.shape, cd, cd


declare('polygamma(int n, Tensor self) -> Tensor', kind='pointwise', meta=_polygamma_meta, out=True, method=False,
        derivatives={'self': lambda grad, n, self: grad * aten.polygamma.default(n + 1, self)})
# ldexp(x, e) = x * 2**e. A primitive (not the composite x * 2**e) because torch's LdexpBackward0 saves the
# result for other's gradient, so an in-place change of the output must fail backward as in torch
pointwise('ldexp.Tensor(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': lambda grad, other: grad * aten.pow.Tensor_Tensor(2., other),
           'other': lambda grad, result: grad * result * math.log(2.0)}, inplace=True, numbers=())


# --- comparisons and predicates (no gradient) -----------------------------------
for _n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge'):
    pointwise(f'{_n}.Tensor(Tensor self, Tensor other) -> Tensor', 'bool', differentiable=False)
for _n in ('logical_and', 'logical_or', 'logical_xor'):
    pointwise(f'{_n}(Tensor self, Tensor other) -> Tensor', 'bool', differentiable=False, numbers=())
unary('logical_not', 'bool', differentiable=False)
for _n in ('isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf', 'isreal', 'signbit'):
    unary(_n, 'bool', differentiable=False, inplace=False, out=_n in ('isposinf', 'isneginf', 'signbit'),
          primitive_because="one NumPy predicate pass instead of torch's composite of comparisons"
          if _n in ('isfinite', 'isreal') else None)

# --- bitwise: integers and bool only ------------------------------------------------
for _n in ('bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift'):
    pointwise(f'{_n}.Tensor(Tensor self, Tensor other) -> Tensor', 'integral', differentiable=False,
              numbers=('self', 'other'), check=_NO_BOOL(_n[8] + 'shift_cpu') if 'shift' in _n else None)
unary('bitwise_not', 'integral', differentiable=False)

# --- complex helpers on real tensors ------------------------------------------------


def _angle_backward(grad, self):
    """d angle: i z / |z|^2 for complex z (0 at z = 0); nothing for real ones (NOTE [complex gradients])."""
    if not self._dtype.is_complex:
        return _zeros(grad)
    a2 = self.abs().pow(2)
    return _where(a2 == 0, 0.0, grad * self * 1j / _where(a2 == 0, 1.0, a2))


pointwise('angle(Tensor self) -> Tensor', 'real_float', {'self': _angle_backward}, inplace=False,
          complex_formulas=True,
          forward=lambda self, self_t: (self.conj() * self_t).imag / (self.abs() ** 2) if self.is_complex()
          else self_t * 0)
unary('conj_physical', 'promote', lambda grad: grad.conj(), complex_formulas=True, out_dtype=FOUND_DTYPE,
      primitive_because="ember has no lazy conjugate bit, so there is no _conj_physical to defer to: one kernel")


def _to_complex_meta(name, a_name, b_name):
    def meta(a, b):
        for x, n in ((a, a_name), (b, b_name)):
            if not isinstance(x, TensorImpl):
                raise TypeError(f"{name}(): argument '{n}' must be Tensor, not {type(x).__name__}")
        if a._dtype is not b._dtype:
            raise RuntimeError(f"Expected object of scalar type {_tname(a._dtype)} but got scalar type "
                               f"{_tname(b._dtype)} for second argument")
        if a._dtype not in (D.float16, D.float32, D.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{_tname(a._dtype)} and {_tname(b._dtype)}")
        return broadcast_shapes(a._a.shape, b._a.shape), a._dtype.to_complex(), a._dtype
    return meta


# complex(real, imag) and polar(abs, angle): real inputs, a complex result, so their formulas are written for
# complex gradients (NOTE [complex gradients]); each input takes the real part of what reaches it
declare('complex(Tensor real, Tensor imag) -> Tensor', kind='pointwise', meta=_to_complex_meta('complex', 'real', 'imag'),
        out=True, method=False, complex_formulas=True,
        # torch's formulas (at::real(grad), at::imag(grad)) name the inputs to its code generator, which saves them:
        # writing into ``real`` or ``imag`` in place before backward raises, as there
        derivatives={'real': lambda grad, real: grad.real, 'imag': lambda grad, imag: grad.imag},
        forward=lambda real_t, imag_t, result: aten.complex.default(
            real_t if real_t is not None else aten.zeros_like.default(result.real),
            imag_t if imag_t is not None else aten.zeros_like.default(result.real)))


declare('polar(Tensor abs, Tensor angle) -> Tensor', kind='pointwise', meta=_to_complex_meta('polar', 'abs', 'angle'),
        out=True, method=False, complex_formulas=True,
        derivatives={'abs': lambda grad, result: (grad * result.sgn().conj()).real,   # torch's: sgn(result)
                     'angle': lambda grad, result: (grad * (result * 1j).conj()).real},
        forward=lambda abs, angle, abs_t, angle_t, result: _polar_jvp(abs, angle, abs_t, angle_t, result))


def _polar_jvp(abs, angle, abs_t, angle_t, result):
    """d(r e^{i a}) = dr e^{i a} + i da r e^{i a}."""
    out = None
    if abs_t is not None:
        out = abs_t * aten.polar.default(aten.ones_like.default(abs), angle)
    if angle_t is not None:
        t = result * 1j * angle_t
        out = t if out is None else out + t
    return out


def _where_meta(condition, self, other):
    shape, cd = _scan((self, other))
    if isinstance(condition, TensorImpl):
        if condition._dtype is not D.bool_ and condition._dtype is not D.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_tname(condition._dtype)}")
        shape = broadcast_shapes(shape, condition._a.shape)
    return shape, cd


_WHERE = declare('where.self(Tensor condition, Tensor self, Tensor other) -> Tensor', forward='linear', meta=_where_meta,
                 derivatives={'self': lambda grad, condition: _where(condition, grad, 0.),
                              'other': lambda grad, condition: _where(condition, 0., grad)},
                 tags=('wraps_numbers',))


# ---------------------------------------------------------------------------
# Activations (torch.nn.functional). Primitives where a fused kernel beats a
# chain of ops on the training path (relu, gelu, silu: forward and backward
# each one NumPy pass) or where the composite would be numerically worse
# (softplus, logsigmoid, elu: an exp that overflows in the branch `where`
# discards still poisons the gradient with inf * 0 = nan). The rest are
# composites in ember/nn/functional/_activation.py.
# ---------------------------------------------------------------------------

def _no_bool_relu(cd, *args):
    if cd is D.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")


# relu(x) is (x > 0).where(x, 0), as tinygrad writes it; its gradient passes where x > 0 and is 0 at x == 0
# (torch's choice: the derivative of max(x, 0) would split the tie and give 1/2 at 0). One kernel forward
# (np.maximum) and one backward (threshold_backward, masking on the result) instead of a comparison, a
# where each way: forward + backward of a 256x1024 float32 batch take ~0.4 ms against ~1.8 ms for the
# composite (median of 40 runs).
def _threshold_backward_self(grad, self):
    return _zeros(grad)


pointwise('threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor', 'promote',
          {'grad_output': lambda grad, self, threshold: aten.threshold_backward.default(grad, self, threshold),
           'self': _threshold_backward_self}, nargs=2, inplace=False, out=False, method=False, function=False)
unary('relu', 'promote', lambda grad, result: aten.threshold_backward.default(grad, result, 0), nn=True,
      check=_no_bool_relu, out=False)
pointwise('threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor', 'promote',
          {'self': lambda grad, self, threshold: aten.threshold_backward.default(grad, self, threshold)}, nargs=1,
          nn=True, method=False)


def _gelu_check(cd, self, approximate='none'):
    if approximate not in ('none', 'tanh'):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if cd.category < _FLOAT:
        raise _not_impl('GeluKernelImpl', cd)


_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_C = 0.044715


def _gelu_second(self, approximate):
    """d^2/dx^2 gelu(x), for the double backward."""
    if approximate == 'none':
        x2 = self * self
        return (x2 * -0.5).exp() * _INV_SQRT_2PI * (2 - x2)
    x2 = self * self
    u = (self + self * x2 * _GELU_C) * _SQRT_2_PI
    du = (1 + x2 * (3 * _GELU_C)) * _SQRT_2_PI
    t = u.tanh()
    return (1 - t * t) * (du - self * t * du * du + x2 * (3 * _GELU_C * _SQRT_2_PI))


pointwise('gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor', 'promote',
          {'grad_output': lambda grad, self, approximate: aten.gelu_backward.default(grad, self, approximate=approximate),
           'self': lambda grad, grad_output, self, approximate: grad * grad_output * _gelu_second(self, approximate)},
          inplace=False, out=False, method=False, function=False)
pointwise('gelu(Tensor self, *, str approximate="none") -> Tensor', 'promote',
          {'self': lambda grad, self, approximate: aten.gelu_backward.default(grad, self, approximate=approximate)},
          check=_gelu_check, nn=True, method=False, function=False)


def _silu_second(grad, grad_output, self):
    s = self.sigmoid()
    return grad * grad_output * s * (1 - s) * (2 + self * (1 - 2 * s))


pointwise('tanh_backward(Tensor grad_output, Tensor output) -> Tensor', 'promote',
          {'grad_output': lambda grad, output: aten.tanh_backward.default(grad, output),
           'output': lambda grad, grad_output, output: -2 * grad * output * grad_output},
          inplace=False, out=True, method=False, function=False)
pointwise('silu_backward(Tensor grad_output, Tensor self) -> Tensor', 'promote',
          {'grad_output': lambda grad, self: aten.silu_backward.default(grad, self), 'self': _silu_second},
          inplace=False, out=False, method=False, function=False,
          primitive_because="one fused elementwise pass for silu's first-order backward (torch's is a composite of ops)")
unary('silu', 'promote', lambda grad, self: aten.silu_backward.default(grad, self), check=_FLOAT_ONLY('silu_cpu'),
      nn=True, method=False, function=False,       # silu_backward conjugates for complex input: a holomorphic jvp
      forward=lambda self, self_t: self_t * self.sigmoid() * (1 + self * (1 - self.sigmoid())))


def _elu_grad(grad, self, alpha, scale, input_scale):
    # at x == 0 the slope is the constant alpha * scale * input_scale, so the double backward is 0 there (torch)
    # (NaN takes the exponential branch, so its gradient is NaN as in torch)
    c = scale * alpha * input_scale
    return _where(self > 0, grad * scale, _where(self == 0, grad * c, grad * c * (self * input_scale).exp()))


pointwise('elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor', 'promote',
          {'self': _elu_grad}, nargs=1, check=_FLOAT_ONLY('elu_cpu'), nn=True, method=False, function=False)
pointwise('leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor', 'promote',
          {'self': lambda grad, self, negative_slope: _where(self > 0, grad, grad * negative_slope)}, nargs=1,
          check=_FLOAT_ONLY('leaky_relu_cpu'), nn=True, method=False, function=False)
pointwise('hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor', 'promote',
          {'self': lambda grad, self, min_val, max_val:
              _where((self > min_val).logical_and(self < max_val), grad, 0.)}, nargs=1,
          check=_NO_BOOL('hardtanh_cpu'), nn=True, method=False, function=False)

# PReLU: torch's prelu is a composite (the weight reshaped to broadcast over dim 1) around the primitive
# _prelu_kernel, whose node PreluKernelBackward0 libraries that walk grad_fn graphs recognise; the first-order
# backward is torch's fused _prelu_kernel_backward (one pass for both gradients)

def _prelu_check(cd, self, weight):
    if self.dtype != weight.dtype:
        raise RuntimeError(f"Found dtype {_tname(weight.dtype)} but expected {_tname(self.dtype)}")
    if cd.category != _FLOAT:
        raise _not_impl('prelu_cpu', cd)


def _prelu_grads(grad, self, weight, output_mask):
    pos = self > 0
    return [_where(pos, grad, weight * grad) if output_mask[0] else None,
            _where(pos, 0., self * grad) if output_mask[1] else None]


def _prelu_jvp(self, self_t, weight, weight_t):
    """torch's: where(self >= 0, self_t, weight * self_t + weight_t * self), a missing tangent being zero."""
    neg = None if self_t is None else weight * self_t
    if weight_t is not None:
        neg = weight_t * self if neg is None else neg + weight_t * self
    return _where(self >= 0, 0. if self_t is None else self_t, neg)


pointwise('_prelu_kernel(Tensor self, Tensor weight) -> Tensor', 'promote', {('self', 'weight'): _prelu_grads},
          check=_prelu_check, numbers=(), inplace=False, out=False, method=False, forward=_prelu_jvp,
          first_order={('self', 'weight'): lambda grad, self, weight:
                       list(aten._prelu_kernel_backward.default(grad, self, weight))})


def _prelu_backward_meta(grad_output, self, weight):
    shape = broadcast_shapes(tuple(grad_output.shape), tuple(self.shape), tuple(weight.shape))
    _prelu_check(self._dtype, self, weight)
    return [(shape, self._dtype), (shape, weight._dtype)]


declare('_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)',
        meta=_prelu_backward_meta, method=False)


def _prelu(self, weight):
    """torch's composite: the checks, then the weight reshaped (a view) to broadcast over dim 1."""
    if self.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_tname(self.dtype)} and {_tname(weight.dtype)}")
    n = weight.numel()
    if n != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if self.dim() > 1 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if self.dim() != weight.dim():
        weight = weight.reshape((1, n) + (1,) * (self.dim() - 2) if self.dim() > 1 else (1,) * self.dim())
    return aten._prelu_kernel.default(self, weight)


declare('prelu(Tensor self, Tensor weight) -> Tensor', composite=_prelu, function=False, method=False)


# hardshrink/softshrink: primitives rather than compositions of where, because torch's backward saves self
# (and only self): an in-place change of the input after the call must fail backward, as in torch
pointwise('hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor', 'promote',
          {'self': lambda grad, self, lambd: _where((self > lambd).logical_or(self < -lambd), grad, 0.)}, nargs=1,
          inplace=False, out=True, out_dtype=FOUND_DTYPE)
pointwise('softshrink(Tensor self, Scalar lambd=0.5) -> Tensor', 'promote',
          {'self': lambda grad, self, lambd: _where((self > lambd).logical_or(self < -lambd), grad, 0.)}, nargs=1,
          inplace=False, out=True, function=False, method=False)


def _softplus_grad(grad, self, beta, threshold):
    z = self * beta
    return _where(z > threshold, grad, grad * z.sigmoid())


pointwise('softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor', 'promote', {'self': _softplus_grad},
          nargs=1, check=_FLOAT_ONLY('softplus_cpu'), nn=True, method=False, function=False, inplace=False)
unary('hardswish', 'promote',
      lambda grad, self: _where(self < -3, 0., _where(self <= 3, grad * (self / 3 + 0.5), grad)),
      check=_FLOAT_ONLY('hardswish_cpu'), nn=True, method=False, function=False)
unary('hardsigmoid', 'promote',
      lambda grad, self: _where((self > -3).logical_and(self < 3), grad / 6, 0.),
      check=_FLOAT_ONLY('hardsigmoid_cpu'), nn=True, method=False, function=False)
unary('log_sigmoid', 'promote', lambda grad, self: grad * (-self).sigmoid(), check=_FLOAT_ONLY('log_sigmoid_cpu'),
      method=False, function=False, inplace=False, out=False,
      primitive_because="one numerically stable pass; torch's composite calls log_sigmoid_forward with a scratch buffer")
