"""CPU kernels for pointwise operators: NumPy ufuncs on arrays already in the computation dtype.

Operands arrive cast to the computation dtype (Python numbers stay numbers:
NumPy 2 treats them as weak, like torch's wrapped numbers). Kernels return a
new array; the adapter casts it to the result dtype.

NOTE [silent floating-point errors]: torch computes 1/0, log(0), exp(1000),
inf - inf without a word; NumPy warns. Every kernel that can meet such values
runs with NumPy's error state set to 'ignore' for the duration of the call
(``_quiet``), never through a global np.seterr, so user code's NumPy keeps its
own settings. ``with np.errstate(all='ignore')`` costs ~4 us per call here (an
ember ``add`` of small tensors costs ~10 us in all); setting the context
variable behind it to a prebuilt state costs ~0.7 us, so that is what
``_quiet`` does, falling back to np.errstate where NumPy's layout differs.
Kernels that cannot raise floating-point errors (comparisons, bitwise ops,
predicates) are left bare.
"""
import math

import numpy as np

from ._fp import quiet as _quiet


def _special():
    import scipy.special
    return scipy.special


def _is_int(x):
    return np.asarray(x).dtype.kind in 'iub'


def _check_int_divisor(a, b):
    if _is_int(a) and _is_int(b) and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


# --- arithmetic --------------------------------------------------------------------

def _add(a, b, alpha, out=None):
    if alpha == 1:
        return np.add(a, b, out=out)
    return np.add(a, np.multiply(b, _like(a, alpha)), out=out)


def _sub(a, b, alpha, out=None):
    if alpha == 1:
        return np.subtract(a, b, out=out)
    return np.subtract(a, np.multiply(b, _like(a, alpha)), out=out)


def _like(a, v):
    """A Scalar argument (alpha, value) in the operand's dtype, as torch casts it (wrapping integers)."""
    dt = np.asarray(a).dtype
    return np.array(v).astype(dt)[()] if dt.kind in 'iub' else v


def _int_div_trunc(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return q + fix.astype(q.dtype)


def _div_mode(a, b, mode):
    if mode is None:
        return np.true_divide(a, b)
    if _is_int(a) and _is_int(b):
        _check_int_divisor(a, b)
        return np.floor_divide(a, b) if mode == 'floor' else _int_div_trunc(a, b)
    return np.floor_divide(a, b) if mode == 'floor' else np.trunc(np.true_divide(a, b))


def _floor_divide(a, b):
    _check_int_divisor(a, b)
    return np.floor_divide(a, b)


def _remainder(a, b):
    _check_int_divisor(a, b)
    return np.remainder(a, b)


def _fmod(a, b):
    _check_int_divisor(a, b)
    return np.fmod(a, b)


def _pow(a, b):
    if not (_is_int(a) and _is_int(b)):
        return np.power(a, b)
    bb = np.asarray(b)
    neg = bb < 0
    if not neg.any():
        return np.power(a, b)
    # integer base to a negative power: 1 and -1 stay on the unit circle, everything else truncates to 0
    aa = np.asarray(a)
    pos = np.power(aa, np.where(neg, 0, bb))
    special = np.where(aa == 1, 1, np.where(aa == -1, np.where(bb % 2 == 0, 1, -1), 0))
    return np.where(neg, special, pos)


def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind == 'f':     # torch: sign(nan) is 0
        return np.where(np.isnan(a), a.dtype.type(0), np.sign(a))
    return np.sign(a)


def _keep_int(fn):
    """floor, ceil, trunc, round of an integer tensor is a copy (NumPy would return floats)."""
    def kernel(a, *args):
        if a.dtype.kind in 'iu':
            return a.copy()
        return fn(a, *args)
    return kernel


def _round(a, decimals):
    if decimals == 0:
        return np.rint(a)
    if decimals > 0:   # torch's order of operations, so ties round the same way
        p = a.dtype.type(10.0 ** decimals)
        return np.rint(a * p) / p
    p = a.dtype.type(10.0 ** -decimals)
    return np.rint(a / p) * p


def _frac(a):
    return a - np.trunc(a)


def _xlogy(a, b):
    r = np.multiply(a, np.log(b))
    r = np.where(np.asarray(a) == 0, 0, r)
    return np.where(np.isnan(b), np.nan, r)


def _heaviside(a, v):
    # torch: x == 0 ? values : x > 0 (NaN gives 0; NumPy's heaviside would give NaN)
    return np.where(a == 0, v, a > 0)


def _lerp(a, end, w, out=None):
    # torch's two-sided formula: exact at both ends
    d = end - a
    if np.ndim(w) == 0:      # a scalar weight picks one side for every element
        w = float(w)
        if abs(w) < 0.5:
            return np.add(a, np.multiply(d, w, out=d), out=out)
        return np.subtract(end, np.multiply(d, 1 - w, out=d), out=out)
    r = np.where(np.abs(w) < 0.5, a + w * d, end - d * (1 - w))
    if out is None:
        return r
    out[...] = r
    return out


def _addcmul(a, t1, t2, value, out=None):
    t = np.multiply(t1, t2)
    if value != 1:
        np.multiply(t, _like(a, value), out=t)
    return np.add(a, t, out=out)


def _addcdiv(a, t1, t2, value, out=None):
    t = np.true_divide(t1, t2)
    if value != 1:
        np.multiply(t, value, out=t)
    return np.add(a, t, out=out)


def _clamp(a, lo, hi):
    if lo is None:
        return np.minimum(a, hi)
    if hi is None:
        return np.maximum(a, lo)
    return np.minimum(np.maximum(a, lo), hi)


def _nan_to_num(a, nan, posinf, neginf):
    if a.dtype.kind in 'iub':
        return a.copy()
    return np.nan_to_num(a, copy=True, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def _logit(a, eps):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _polygamma(n, a):
    if n == 0:
        return _special().psi(a)
    r = _special().polygamma(n, a).astype(a.dtype, copy=False)
    return np.where(a == -np.inf, a.dtype.type(np.nan), r)        # torch: nan at -inf (scipy: +-inf)


def _lgamma(a):
    return np.where(a == -np.inf, a.dtype.type(np.inf), _special().gammaln(a))   # torch: lgamma(-inf) = inf


# --- predicates ----------------------------------------------------------------------

def _pred(fn, int_value):
    def kernel(a):
        if a.dtype.kind in 'iub':
            return np.full(a.shape, int_value, np.bool_)
        return fn(a)
    return kernel


def _isreal(a):
    if a.dtype.kind == 'c':
        return a.imag == 0
    return np.ones(a.shape, np.bool_)


def _signbit(a):
    if a.dtype.kind in 'ub':
        return np.zeros(a.shape, np.bool_)
    return np.signbit(a)


def _angle(a):
    if a.dtype.kind == 'c':
        return np.angle(a)
    return np.where(np.isnan(a), a, np.where(a < 0, a.dtype.type(math.pi), a.dtype.type(0)))


# --- bitwise -----------------------------------------------------------------------

def _shift(left):
    def kernel(a, b):
        aa, bb = np.asarray(a), np.asarray(b)
        if not isinstance(a, np.ndarray):      # a Python number: the other operand has the computation dtype
            aa = aa.astype(bb.dtype)
        bits = aa.dtype.itemsize * 8
        out_of_range = (bb < 0) | (bb >= bits)
        safe = np.where(out_of_range, 0, bb).astype(aa.dtype)
        if left:
            return np.where(out_of_range, 0, np.left_shift(aa, safe))
        # shifting a signed value past its width leaves only its sign
        return np.where(out_of_range, np.where(aa < 0, -1, 0).astype(aa.dtype), np.right_shift(aa, safe))
    return kernel


# --- selection ------------------------------------------------------------------------
# NumPy's where branches per element: on a random mask it runs ~15x slower than a multiply (3 ms against
# 0.2 ms for 256x1024 float32). Choosing by bit masks, (a & m) | (b & ~m), is exact for every value
# (NaN, inf, -0.0 included) and branch-free.
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _select(c, a, b):
    """``np.where(c, a, b)`` for a bool mask and operands of one dtype (``b`` may be a number)."""
    if not isinstance(b, np.ndarray):
        b = np.asarray(b, a.dtype)
    elif not isinstance(a, np.ndarray):
        a = np.asarray(a, b.dtype)
    if c.dtype != np.bool_ or a.dtype != b.dtype or a.dtype.itemsize not in _UINT or c.size < 2048:
        return np.where(c, a, b)
    it = _UINT[a.dtype.itemsize]
    m = np.negative(c.view(np.uint8), dtype=it)      # all ones where c
    r = np.bitwise_and(a.view(it), m)
    np.invert(m, out=m)
    return np.bitwise_or(r, np.bitwise_and(b.view(it), m)).view(a.dtype)


def _where(c, a, b):
    if isinstance(a, np.ndarray) and (isinstance(b, np.ndarray) or np.asarray(b, a.dtype) == b):
        return _select(c, a, b)
    return np.where(c, a, b)


# --- activations --------------------------------------------------------------------

def _sigmoid(a):
    # 1 / (1 + exp(-x)) is ~4x faster than scipy's expit; exp(-x) = inf gives the right limit 0
    return 1 / (1 + np.exp(-a))


def _threshold(a, threshold, value):
    return _select(a <= threshold, _like(a, value), a)      # NaN stays NaN, as in torch


def _threshold_backward(g, x, threshold):
    return _select(x <= threshold, np.zeros((), g.dtype), g)


_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# Numerical Recipes' erfcc: erfc(x) = t exp(-x^2 + P(t)), t = 1 / (1 + x/2), relative error < 1.2e-7 for x >= 0.
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)


def _normal_cdf(x):
    """Phi(x) = erfc(-x / sqrt 2) / 2. In float32 a branch-free rational approximation (error ~4e-7 absolute,
    below torch's own float32 gelu error, and relative in the lower tail): scipy's erf takes ~13 ms for a
    256x1024 batch, this ~1 ms. Float64 keeps scipy's exact erf."""
    if x.dtype != np.float32 or x.size < 2048:
        return 0.5 * _special().erfc(x * -x.dtype.type(_SQRT1_2))
    f = np.float32
    az = np.abs(x) * f(_SQRT1_2)
    # past |z| = 9 the tail is below 1e-36: stop there, or exp() makes subnormal floats and every later
    # pass over them runs ~30x slower (measured: 11.9 ms -> 2 ms for 16x64x512)
    np.minimum(az, f(9.0), out=az)
    t = az * f(0.5)
    t += 1
    np.reciprocal(t, out=t)
    p = t * f(_ERFC[-1])
    for c in _ERFC[-2:0:-1]:
        p += f(c)
        p *= t
    p += f(_ERFC[0])
    p -= az * az
    np.exp(p, out=p)
    p *= t                                  # erfc(|z|)
    p *= f(0.5)                             # Phi(-|x|)
    return _select(x < 0, p, 1 - p)


_BLOCK = 65536


def _blocked(fn, *arrays):
    """``fn`` over flat blocks of same-shaped arrays, so a chain of ~20 NumPy passes works on
    cache-resident temporaries (GELU of 16x64x512 floats: 3.1 -> 2.2 ms); small inputs go whole."""
    a0 = arrays[0]
    if a0.size <= 2 * _BLOCK or any(x.shape != a0.shape for x in arrays):
        return fn(*arrays)
    flat = [np.ascontiguousarray(x).reshape(-1) for x in arrays]
    out = np.empty(a0.size, np.result_type(*arrays))
    for i in range(0, a0.size, _BLOCK):
        out[i:i + _BLOCK] = fn(*(x[i:i + _BLOCK] for x in flat))
    return out.reshape(a0.shape)


def _gelu(a, approximate):
    if approximate == 'tanh':
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    return _blocked(lambda x: x * _normal_cdf(x), a)


def _gelu_backward(g, a, approximate):
    if approximate == 'tanh':
        x2 = a * a
        t = np.tanh(_SQRT_2_PI * (a + 0.044715 * x2 * a))
        return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x2))
    return _blocked(lambda gg, x: gg * (_normal_cdf(x) + x * np.exp(-0.5 * x * x) * x.dtype.type(_INV_SQRT_2PI)),
                    g, a)


def _silu(a):
    return a / (1 + np.exp(-a))


def _silu_backward(g, a):
    s = _sigmoid(a)
    return g * s * (1 + a * (1 - s))


def _elu(a, alpha, scale, input_scale):
    return _select(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


def _softplus(a, beta, threshold):
    z = a * beta
    return _select(z > threshold, a, np.log1p(np.exp(z)) / beta)


def _log_sigmoid(a):
    # min(x, 0) - log1p(exp(-|x|)): no overflow for either sign
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


def _erf(fn_name):     # a scipy.special ufunc by name (erf, erfc, erfinv, gammaln, psi)
    def kernel(a):
        return getattr(_special(), fn_name)(a)
    return kernel


_TABLE = {
    'add.Tensor': _add,
    'sub.Tensor': _sub,
    'mul.Tensor': np.multiply,
    'div.Tensor': np.true_divide,
    'div.Tensor_mode': _div_mode,
    'floor_divide': _floor_divide,
    'remainder.Tensor': _remainder,
    'fmod.Tensor': _fmod,
    'pow.Tensor_Tensor': _pow,
    'neg': np.negative,
    'reciprocal': np.reciprocal,
    'rsqrt': lambda a: 1 / np.sqrt(a),
    'abs': np.abs,
    'sign': _sign,
    'sgn': _sign,
    'exp': np.exp,
    'exp2': np.exp2,
    'expm1': np.expm1,
    'log': np.log,
    'log2': np.log2,
    'log10': np.log10,
    'log1p': np.log1p,
    'sqrt': np.sqrt,
    'erf': _erf('erf'),
    'erfc': _erf('erfc'),
    'erfinv': _erf('erfinv'),
    'floor': _keep_int(np.floor),
    'ceil': _keep_int(np.ceil),
    'trunc': _keep_int(np.trunc),
    'frac': _frac,
    'round': _keep_int(_round),
    'sin': np.sin,
    'cos': np.cos,
    'tan': np.tan,
    'asin': np.arcsin,
    'acos': np.arccos,
    'atan': np.arctan,
    'sinh': np.sinh,
    'cosh': np.cosh,
    'tanh': np.tanh,
    'asinh': np.arcsinh,
    'acosh': np.arccosh,
    'atanh': np.arctanh,
    'sigmoid': _sigmoid,
    'deg2rad': np.deg2rad,
    'rad2deg': np.rad2deg,
    'sinc': np.sinc,
    'atan2': np.arctan2,
    'hypot': np.hypot,
    'logaddexp': np.logaddexp,
    'xlogy.Tensor': _xlogy,
    'copysign.Tensor': np.copysign,
    'heaviside': _heaviside,
    'maximum': np.maximum,
    'minimum': np.minimum,
    'fmax': np.fmax,
    'fmin': np.fmin,
    'clamp': _clamp,
    'clamp_min': np.maximum,
    'clamp_max': np.minimum,
    'lerp.Tensor': _lerp,
    'addcmul': _addcmul,
    'addcdiv': _addcdiv,
    'nan_to_num': _nan_to_num,
    'logaddexp2': np.logaddexp2,
    'nextafter': np.nextafter,
    'gcd': np.gcd,
    'lcm': np.lcm,
    'logit': _logit,
    'lgamma': _lgamma,
    'digamma': _erf('psi'),
    'polygamma': _polygamma,
    'eq.Tensor': np.equal,
    'ne.Tensor': np.not_equal,
    'lt.Tensor': np.less,
    'le.Tensor': np.less_equal,
    'gt.Tensor': np.greater,
    'ge.Tensor': np.greater_equal,
    'logical_and': np.logical_and,
    'logical_or': np.logical_or,
    'logical_xor': np.logical_xor,
    'logical_not': np.logical_not,
    'isnan': _pred(np.isnan, False),
    'isinf': _pred(np.isinf, False),
    'isfinite': _pred(np.isfinite, True),
    'isposinf': _pred(np.isposinf, False),
    'isneginf': _pred(np.isneginf, False),
    'isreal': _isreal,
    'signbit': _signbit,
    'angle': _angle,
    'bitwise_and.Tensor': np.bitwise_and,
    'bitwise_or.Tensor': np.bitwise_or,
    'bitwise_xor.Tensor': np.bitwise_xor,
    'bitwise_not': np.invert,
    'bitwise_left_shift.Tensor': _shift(True),
    'bitwise_right_shift.Tensor': _shift(False),
    'where.self': _where,
    # activations
    'relu': lambda a: np.maximum(a, 0),
    'threshold': _threshold,
    'threshold_backward': _threshold_backward,
    'gelu': _gelu,
    'gelu_backward': _gelu_backward,
    'silu': _silu,
    'silu_backward': _silu_backward,
    'elu': _elu,
    'leaky_relu': lambda a, slope: _select(a > 0, a, a * slope),
    'hardtanh': lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
    'softplus': _softplus,
    'hardswish': lambda a: a * np.minimum(np.maximum(a + 3, 0), 6) / 6,
    'hardsigmoid': lambda a: np.minimum(np.maximum(a + 3, 0), 6) / 6,
    'log_sigmoid': _log_sigmoid,
}

# kernels that cannot meet a floating-point error run bare (NOTE [silent floating-point errors])
_EXACT = {'neg', 'abs', 'sign', 'sgn', 'floor', 'ceil', 'trunc', 'where.self', 'relu', 'threshold_backward',
          'threshold', 'maximum', 'minimum', 'fmax', 'fmin', 'clamp', 'clamp_min', 'clamp_max', 'nan_to_num',
          'heaviside', 'isreal', 'signbit', 'angle', 'logical_not', 'logical_and', 'logical_or', 'logical_xor',
          'eq.Tensor', 'ne.Tensor', 'lt.Tensor', 'le.Tensor', 'gt.Tensor', 'ge.Tensor', 'isnan', 'isinf',
          'isfinite', 'isposinf', 'isneginf', 'bitwise_and.Tensor', 'bitwise_or.Tensor', 'bitwise_xor.Tensor',
          'bitwise_not', 'bitwise_left_shift.Tensor', 'bitwise_right_shift.Tensor', 'hardtanh', 'gcd', 'lcm'}
KERNELS = {name: fn if name in _EXACT else _quiet(fn) for name, fn in _TABLE.items()}
