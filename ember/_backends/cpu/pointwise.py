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

from ._complex import logaddexp_complex

from ._lerp import lerp as _lerp, addcmul as _addcmul_formula, addcdiv as _addcdiv_formula, fma32 as _fma32
from ._fp import quiet as _quiet, is_half as _is_half, result_type as _result_type, half_ready
from ._layout import like as _input_layout, _c as _c_order_array
from ._special import erf as _erf, erfc as _erfc, erfinv as _erfinv, lgamma as _lgamma, digamma as _digamma, \
    polygamma as _polygamma_k, erfcx as _erfcx, log_ndtr as _log_ndtr, i0 as _i0, i0e as _i0e, i1 as _i1, i1e as _i1e, \
    gammainc as _gammainc, gammaincc as _gammaincc    # NOTE [special
#                                                                                   functions without scipy]
from ._parallel import parallel_for
from ._process import _state as _process_state
from ._split import split_pointwise as _split_pointwise, split_add as _split_add


def _is_int(x):
    return np.asarray(x).dtype.kind in 'iub'


def _check_int_divisor(a, b):
    if _is_int(a) and _is_int(b) and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


# --- arithmetic --------------------------------------------------------------------

def _add(a, b, alpha, out=None):
    if alpha == 1:
        return np.add(a, b, out=out)
    return _scaled(np.add, a, b, alpha, out)


def _sub(a, b, alpha, out=None):
    if alpha == 1:
        return np.subtract(a, b, out=out)
    return _scaled(np.subtract, a, b, alpha, out)


def _scaled(ufunc, a, b, alpha, out):
    """``ufunc(a, alpha * b)`` with alpha as torch casts it: wrapped to an integer dtype; for float16/bfloat16
    (``a`` is an array or, from the adapter, a scalar of the computation dtype) rounded to the dtype, then the
    product (exact) and the sum in float32, rounded once (NOTE [half-precision scalars] in _ops/adapters.py)."""
    dt = a.dtype if a.__class__ is np.ndarray else np.asarray(a).dtype
    if dt.kind in 'iub':
        alpha = np.array(alpha).astype(dt)[()]
    elif dt.itemsize == 2 and dt.kind in 'fV':
        r = ufunc(np.asarray(a, np.float32), np.asarray(b, np.float32) * np.float32(dt.type(alpha)))
        if out is None:
            return r.astype(dt)
        out[...] = r
        return out
    return _scaled_blocks(ufunc, a, b, alpha, out)


_SCALED_BLOCK = 1 << 15


def _scaled_blocks(ufunc, a, b, alpha, out):
    """``ufunc(a, alpha * b)``. For large same-shaped C-contiguous arrays, ``alpha * b`` is formed one block at a
    time in a small reused temporary rather than as a whole new array (an SGD update ``p.add_(buf, alpha=-lr)``
    of resnet18's 2.4M-value weights allocated and page-faulted a 9 MB temporary per parameter); the same
    elementwise operations in the same order, so the same bits. Once ember's malloc setting keeps freed memory
    (NOTE [process settings]), the temporary is reused without page faults and one whole multiply is faster
    (resnet18's 62 SGD updates: 4.4 -> 3.3 ms), so the blocks are only for a process without it."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size >= 4 * _SCALED_BLOCK
            and not _process_state['malloc']       # freed memory kept for reuse: the whole temporary is cheaper
            and a.shape == b.shape and a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous
            and (out is None or (out.shape == a.shape and out.dtype == a.dtype and out.flags.c_contiguous
                                 and (out is a or not np.may_share_memory(out, b))))):
        return ufunc(a, np.multiply(b, alpha), out=out)
    res = np.empty(a.shape, a.dtype) if out is None else out
    fa, fb, fo = a.reshape(-1), b.reshape(-1), res.reshape(-1)
    tmp = np.empty(_SCALED_BLOCK, a.dtype)
    for i in range(0, fa.size, _SCALED_BLOCK):
        j = min(i + _SCALED_BLOCK, fa.size)
        t = np.multiply(fb[i:j], alpha, out=tmp[:j - i])
        ufunc(fa[i:j], t, out=fo[i:j])
    return res


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
    if np.ndim(b) == 0 and a.__class__ is np.ndarray and a.dtype.kind in 'iu' and _is_int(b):
        # a - (a // b) * b: NumPy's floor_divide by a scalar is SIMD (libdivide), its remainder a division
        # per element (256K int64: 1.56 -> 0.16 ms; int32 1.5 -> 0.06 ms); the same integers
        q = np.floor_divide(a, b)
        if q.__class__ is np.ndarray:
            q *= b
            return np.subtract(a, q, out=q)
    return np.remainder(a, b)


def _fmod(a, b):
    _check_int_divisor(a, b)
    return np.fmod(a, b)


def _pow(a, b):
    if b.__class__ in (int, float) and a.__class__ is np.ndarray and (a.dtype == np.float32 or a.dtype == np.float64):
        return _pow_scalar(a, b)
    if a.__class__ is np.ndarray and a.dtype.kind == 'V' and b.__class__ is a.dtype.type and (b == 3 or b == -2):
        sq = np.multiply(a, a)      # torch's bfloat16 x ** 3 and x ** -2 round after each step (x * x) * x, 1 / (x * x)
        return np.multiply(sq, a) if b == 3 else np.divide(b.__class__(1), sq)
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


def _pow_scalar(a, e):
    """A float32 or float64 tensor to a number, with torch's CPU special cases (PowKernel.cpp): 2 and 3 as
    products, -2 as 1/(x*x), -1 as 1/x, 0.5 as sqrt and -0.5 as 1/sqrt (torch's sqrt semantics: -0.0 stays -0.0,
    -inf gives NaN), bit for bit torch's results where IEEE rounding decides, where NumPy would call powf or a
    slower loop (a 393K-element x ** 3, minGPT's GELU: 1 ms -> 0.2 ms; 256K floats x ** 2 67 -> 20 us, x ** 0.5
    283 -> 71 us)."""
    if e == 2:
        return np.multiply(a, a)
    if e == -1:
        return np.divide(a.dtype.type(1), a)
    if e == 0.5:
        return np.sqrt(a)
    if e == 3:
        sq = np.multiply(a, a)
        return np.multiply(sq, a, out=sq) if a.ndim else sq * a
    if e == -2:
        sq = np.multiply(a, a)
        return np.divide(a.dtype.type(1), sq, out=sq) if a.ndim else a.dtype.type(1) / sq
    if e == -0.5:
        r = np.sqrt(a)
        return np.divide(a.dtype.type(1), r, out=r) if a.ndim else a.dtype.type(1) / r
    if a.dtype == np.float32:
        # torch's float32 pow (SLEEF's powf, the exponent rounded to float32 first) is nearly always correctly
        # rounded; NumPy's is a last-bit step off for ~20% of inputs. In double and rounded once it agrees with
        # torch's for ~98% (1M elements: 3.4 ms against 2.2)
        return np.power(a.astype(np.float64), float(np.float32(e))).astype(np.float32)
    return np.power(a, e)


def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind == 'f':     # torch's (0 < a) - (a < 0): sign(nan) and sign(-0.0) are +0.0
        return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)
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


def _addcmul(a, t1, t2, value, out=None):
    return _addcmul_formula(a, t1, t2, _like(a, value), out)


def _addcdiv(a, t1, t2, value, out=None):
    return _addcdiv_formula(a, t1, t2, value, out)


def _clamp(a, lo, hi):
    if a.size >= _CLIP_MIN or a.dtype is _F16:
        r = _clip(a, lo, hi)
        if r is not None:
            return r
    if lo is None:
        return _min_vs(a, hi)
    if hi is None:
        return _max_vs(a, lo)
    r = np.asarray(_max_vs(a, lo))     # an array for 0-d operands too (NumPy gives a scalar), written in place below
    return np.minimum(hi, r, out=r) if isinstance(hi, np.ndarray) and r.shape == np.broadcast_shapes(r.shape, hi.shape) \
        else _min_vs(r, hi)


_BF16_MAX = (2 - 2 ** -7) * 2.0 ** 127     # bfloat16's largest finite value


def _nan_to_num(a, nan, posinf, neginf):
    if a.dtype.kind in 'iub' or np.isfinite(a).all():       # nothing to replace: a copy (3x faster)
        return a.copy(order='K')        # in the input's layout, as torch's output
    if _is_half(a.dtype) and not np.issubdtype(a.dtype, np.inexact):    # bfloat16, that np.nan_to_num passes over
        top = _BF16_MAX
        r = _nan_to_num(a.astype(np.float32), nan, top if posinf is None else posinf, -top if neginf is None else neginf)
        return r.astype(a.dtype)
    return _input_layout(a, np.nan_to_num(a, copy=True, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf))


def _logit(a, eps):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _entr(a):
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)), np.where(a == 0, 0, -np.inf)).astype(a.dtype)


def _polygamma(n, a):
    r = _polygamma_k(n, a)
    return np.where(a == -np.inf, a.dtype.type(np.nan), r) if n else r       # torch: nan at -inf


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


def _hardtanh(a, lo, hi):
    r = _clip(a, lo, hi) if a.size >= _CLIP_MIN or a.dtype is _F16 else None
    return np.minimum(hi, np.maximum(lo, a)) if r is None else r


def _leaky_relu(a, slope):
    """x if x > 0 else x * slope: for 0 < slope <= 1 that is max(x, x * slope), two SIMD passes instead of a
    select (256K float32: 175 -> 40 us), the same values (-0.0 and NaN included)."""
    s = a * slope
    if a.dtype.kind == "f" and 0 < slope <= 1 and s.__class__ is np.ndarray:     # slope 0: inf * 0 is NaN
        return np.maximum(a, s, out=s)
    return _select(a > 0, a, s)


def _prelu_backward(g, a, w):
    """torch's _prelu_kernel_backward: (g or w * g, 0 or a * g) as a > 0, both of the broadcast shape (autograd
    sums the weight's to its shape)."""
    pos = np.broadcast_to(a > 0, np.broadcast_shapes(g.shape, a.shape, w.shape))
    return np.where(pos, g, w * g), np.where(pos, a.dtype.type(0), a * g)


def _hardswish(a):
    """a * min(max(a + 3, 0), 6) / 6 as torch computes it, in place on one temporary (3x faster)."""
    r = a + a.dtype.type(3)
    if r.__class__ is not np.ndarray:
        return a * np.minimum(np.maximum(r, 0), 6) / 6
    np.clip(r, 0, 6, out=r)
    r *= a
    r /= a.dtype.type(6)
    return r


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
    elif a.dtype != b.dtype:       # float16 with bfloat16 among them, which np.where cannot promote
        dt = _result_type((a, b))
        a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    if c.dtype != np.bool_ or a.dtype != b.dtype or a.dtype.itemsize not in _UINT or c.size < 2048:
        return np.where(c, a, b)
    it = _UINT[a.dtype.itemsize]
    m = np.negative(c.view(np.uint8), dtype=it)      # all ones where c
    r = np.bitwise_and(a.view(it), m)
    np.invert(m, out=m)
    return np.bitwise_or(r, np.bitwise_and(b.view(it), m)).view(a.dtype)


def _where(c, a, b):
    if isinstance(a, np.ndarray) and (isinstance(b, np.ndarray) or _holds(a.dtype, b)):
        return _select(c, a, b)
    if isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):     # a number beside a float16/bfloat16 array
        b = half_ready(b, a.dtype)                                      # is made through float32, as torch's
    elif isinstance(b, np.ndarray) and not isinstance(a, np.ndarray):
        a = half_ready(a, b.dtype)
    return np.where(c, a, b)


def _holds(dtype, number):
    """Whether ``number`` is exactly a value of ``dtype`` (NaN and inf are no integer's)."""
    try:
        v = np.asarray(number, dtype)
    except (ValueError, OverflowError):
        return False
    # (compared in float64: compared as they are, a float16 value equals any number that rounds to it)
    return bool((v.astype(np.float64) if v.dtype.kind in 'fV' else v) == number)


# --- activations --------------------------------------------------------------------

def _sigmoid(a):
    # 1 / (1 + exp(-x)) is ~4x faster than scipy's expit; exp(-x) = inf gives the right limit 0
    return 1 / (1 + np.exp(-a))


def _threshold(a, threshold, value):
    return _select(a <= threshold, _like(a, value), a)      # NaN stays NaN, as in torch


def _threshold_backward(g, x, threshold, out=None):
    """g where x > threshold (or x is NaN), else 0: the drop mask as a bit mask ANDed into g's bits, two
    passes instead of a select's four (128x512 float32: 50 -> 25 us). Elementwise, so large arrays split
    into blocks over the intra-op threads like the ufuncs (KERNELS, NOTE [split pointwise])."""
    drop = x <= threshold
    if g.size < 1024 or g.shape != drop.shape or g.dtype.itemsize not in _UINT or g.dtype.kind not in 'fiu':
        r = _select(drop, np.zeros((), g.dtype), g)
        if out is None:
            return r
        np.copyto(out, r)       # a block of a split call (NOTE [split pointwise]) must land in its slice
        return out
    it = _UINT[g.dtype.itemsize]
    keep = np.subtract(drop.view(np.uint8), 1, dtype=it)        # 0 where dropped, all ones where kept
    return np.bitwise_and(g.view(it), keep, out=keep if out is None else out.view(it)).view(g.dtype)


# NOTE [clip]: NumPy 2.4's clip with two bounds of the array's float dtype is one SIMD pass (256K float32:
# 22 us), where maximum/minimum against a scalar take 78 us (and against a filled array 40 us plus the fill);
# clip with None for a bound takes the slow path, so a missing bound is +-inf. np.clip costs ~2 us of Python
# before its loop, so it is used from 64K elements on (65536 float32: clip 6.9 us, a filled maximum 7.8;
# 1024: 2.4 against 0.9), the filled array below. The results are torch's bit for bit (NaN kept, signed zeros
# as torch's clamp, relu, relu6 and hardtanh give them; tests/test_pointwise.py). On the smaller paths the bound
# is maximum's/minimum's first operand: on a tie (-0.0 against 0.0) NumPy's float32/64 loops return the second,
# torch keeps x; NumPy's float16 loop returns the first on a tie, so float16 always clips.
_CLIP_MIN = 1 << 16
_F16 = np.dtype(np.float16)


def _clip(a, lo, hi, out=None):
    """a clamped to [lo, hi] (None: unbounded) for a large float array and scalar bounds, or None where it does
    not apply (small arrays, other dtypes, tensor bounds: the callers' general paths)."""
    if a.__class__ is not np.ndarray or (a.size < _CLIP_MIN and a.dtype is not _F16) or a.dtype.kind != 'f' or \
            not (_plain_bound(lo, a) and _plain_bound(hi, a)):
        return None
    t = a.dtype.type
    return np.clip(a, t(-np.inf) if lo is None else t(lo), t(np.inf) if hi is None else t(hi), out=out)


def _plain_bound(v, a):
    return v is None or v.__class__ in (int, float) or v.__class__ is a.dtype.type or \
        (v.__class__ is np.ndarray and v.ndim == 0 and v.dtype == a.dtype)     # a.dtype.type: a float16 number


def _vs_scalar(fn, side):
    """np.maximum/np.minimum with a Scalar operand: one clip (NOTE [clip]) for large float arrays, else through
    an array of it (see ``_filled``)."""
    def kernel(a, v):
        if a.size >= _CLIP_MIN or a.dtype is _F16:
            r = _clip(a, v, None) if side == 'lo' else _clip(a, None, v)
            if r is not None:
                return r
        if a.dtype.kind != 'f' or a.size < 1024 or (isinstance(v, np.ndarray) and (v.ndim or v.dtype != a.dtype)) \
                or not a.flags.c_contiguous:      # (the ufunc keeps a strided input's layout, as torch's output does)
            return fn(v, a)         # the bound first: NumPy returns the second operand on a tie, torch keeps x
        f = _filled(a.shape, a.dtype, v)
        return fn(f, a, out=f)
    return kernel


_max_vs, _min_vs = _vs_scalar(np.maximum, 'lo'), _vs_scalar(np.minimum, 'hi')


def _relu(a, out=None):
    """Elementwise, so large arrays split into blocks over the intra-op threads (KERNELS); large float arrays:
    one clip to [0, inf] (NOTE [clip])."""
    if a.dtype.kind != 'f' or a.__class__ is not np.ndarray:
        return np.maximum(0, a, out=out)        # 0 first: relu(-0.0) is -0.0, as torch's (NOTE [clip])
    n = a.size
    if n >= _CLIP_MIN or a.dtype is _F16:
        t = a.dtype.type
        return np.clip(a, t(0), t(np.inf), out=out)
    if n < 1024 or not a.flags.c_contiguous:      # a filled C-order array would lose a channels_last layout
        return np.maximum(0, a, out=out)
    r = _filled(a.shape, a.dtype, 0)
    return np.maximum(r, a, out=r if out is None else out)


_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# NOTE [float32 GELU] -- NumPy has no erf, and scipy's (float64 Cephes) takes ~8 ms for 1024x512 floats.
# In float32, gelu(x) = x Phi(x) = relu(x) - |x| q with q = Phi(-|x|) = erfc(|x|/sqrt 2)/2, taken from
# Abramowitz & Stegun 7.1.26 (erfc(z) = t P(t) exp(-z^2), t = 1/(1 + p z), |error| < 1.5e-7; torch's own
# vectorised float erf uses the same formula). Writing it through relu and |x| needs no select on the sign,
# and the derivative reuses the same exp: gelu'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2)/sqrt(2 pi).
# Every step is one NumPy pass over cache-sized blocks (``_blocked``). Measured on 1024x512 float32, one
# thread: forward 2.4 -> 1.4 ms, backward 3.0 -> 1.7 ms against the previous 10-term rational erfc.
_AS_P = 0.3275911 / math.sqrt(2)                  # p, for z = |x| / sqrt 2
_AS_HALF = tuple(0.5 * c for c in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_CAP = 12.0     # past |x| = 12, q < 2e-33: cap there, or exp() makes subnormal floats and every later pass
#                 over them runs ~30x slower (measured: 11.9 -> 2 ms for 16x64x512)


def _filled(shape, dtype, value):
    """A new array of ``value``. NumPy 2.4's maximum/minimum run ~2x slower against a scalar than against
    an array of the same value (128x512 float32: 25 us vs 11 us including this fill)."""
    r = np.empty(shape, dtype)
    r.fill(value)
    return r


def _horner_f32(coeffs, t):
    """sum(c[k] t^k) in float32 by Horner's rule, one NumPy pass per step (coefficients low to high)."""
    f = np.float32
    r = t * f(coeffs[-1])
    for c in coeffs[-2:0:-1]:
        r += f(c)
        r *= t
    r += f(coeffs[0])
    return r


def _normal_tail(a):
    """(q, e) for a = |x| (float32, capped): q = Phi(-a), e = exp(-a^2 / 2)."""
    f = np.float32
    t = a * f(_AS_P)
    t += f(1)
    np.reciprocal(t, out=t)
    q = _horner_f32(_AS_HALF, t)
    q *= t
    e = a * a
    e *= f(-0.5)
    np.exp(e, out=e)
    q *= e
    return q, e


def _abs_capped(x):
    a = np.abs(x)
    return np.minimum(a, _filled(a.shape, a.dtype, _CAP), out=a)


def _gelu_f32(x):
    a = _abs_capped(x)
    q, _ = _normal_tail(a)
    q *= a
    r = _filled(x.shape, x.dtype, 0)
    np.maximum(x, r, out=r)                         # relu(x): NaN propagates
    r -= q
    return r


def _gelu_backward_f32(g, x):
    f = np.float32
    a = _abs_capped(x)
    q, e = _normal_tail(a)
    np.subtract(f(0.5), q, out=q)                   # Phi(x) = 0.5 + sign(x) (0.5 - q): exact 0.5 at x = 0
    q *= np.sign(x)
    q += f(0.5)
    e *= x
    e *= f(_INV_SQRT_2PI)                           # x phi(x)
    q += e
    q *= g
    return q


_BLOCK = 65536


def _blocked(fn, *arrays):
    """``fn`` over flat blocks of same-shaped arrays, so a chain of ~20 NumPy passes works on
    cache-resident temporaries (GELU of 16x64x512 floats: 3.1 -> 2.2 ms), the blocks shared out among
    the intra-op threads (``_parallel``); small inputs go whole."""
    a0 = arrays[0]
    if a0.size <= 2 * _BLOCK or any(x.shape != a0.shape for x in arrays):
        return fn(*arrays)
    flat = [np.ascontiguousarray(x).reshape(-1) for x in arrays]
    out = np.empty(a0.size, np.result_type(*arrays))
    n = a0.size

    def run(lo, hi):
        for i in range(lo * _BLOCK, min(hi * _BLOCK, n), _BLOCK):
            out[i:i + _BLOCK] = fn(*(x[i:i + _BLOCK] for x in flat))
    parallel_for(-(-n // _BLOCK), run, 2)
    return out.reshape(a0.shape)


# NOTE [float32 erf] -- erf of a float32 array in float32, as torch's CPU kernel computes it (a vectorised
# float erf accurate to about an ulp), where the float64 path of _special.py (a 50-term series) took 80 ns per
# element (256K floats: 20.8 ms against torch's 0.26). Two least-squares polynomial fits, made once against
# that float64 erf on Chebyshev nodes (numpy.polynomial; the degrees are the smallest that reach the float32
# rounding floor):
#   |x| <= 1:          erf(x) = x * A(x^2), A of degree 5;
#   1 < |x| < 3.92:    erf(x) = sign(x) (1 - exp(-x^2) B(w)), w = (1/|x| - 1/3.92) * 2.685 - 1 in [-1, 1], B of
#                      degree 7 fitting erfc(z) exp(z^2) (smooth, ~1/(z sqrt(pi)));
#   |x| >= 3.92:       erf(x) rounds to +-1 in float32 (clipping |x| to 3.92 gives exactly that).
# Evaluated in float32 over 200,001 points of [0, 3.92]: at most 2.4 ulps from the float64 erf (1.03 beyond 1).
# NaN stays NaN and -0.0 stays -0.0. erfc keeps the float64 path (its tail needs relative accuracy).
_ERF_A = (1.1283791274426218, -0.3761234986563727, 0.11280364757723264, -0.026716390702216392,
          0.004923280883443814, -0.0005654108881123111)
_ERF_B = (0.30692709988125866, 0.1420538046599241, -0.02386813059309018, 0.0022750058344224913,
          0.0004391046207813159, -0.00033757198874027157, 0.00011313231543829731, -1.8860951465652287e-05)
_ERF_ONE, _ERF_W0, _ERF_WK = 3.92, 1 / 3.92, 2 / (1 - 1 / 3.92)


def _erf_f32(x):
    f = np.float32
    near = _horner_f32(_ERF_A, x * x)
    near *= x
    a = np.abs(x)
    np.clip(a, f(1), f(_ERF_ONE), out=a)
    w = np.reciprocal(a)
    w -= f(_ERF_W0)
    w *= f(_ERF_WK)
    w -= f(1)
    g = _horner_f32(_ERF_B, w)
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    g *= a
    np.subtract(f(1), g, out=g)
    np.copysign(g, x, out=g)
    small = np.abs(x) <= f(1)
    np.copyto(g, near, where=small)
    return g


def _erf_kernel(a):
    if a.dtype == np.float32 and a.__class__ is np.ndarray:
        return _blocked(_erf_f32, a) if a.ndim else _erf_f32(a[None])[0]
    return _erf(a)


def _exact_cdf(x):
    return 0.5 * _erfc(x * -x.dtype.type(_SQRT1_2))


def _gelu(a, approximate):
    if approximate == 'tanh':
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    if a.dtype == np.float32 and a.size >= 2048:
        return _input_layout(a, _blocked(_gelu_f32, a))     # (blocks are written in C order; torch follows the input)
    return a * _exact_cdf(a)


def _gelu_backward(g, a, approximate):
    if approximate == 'tanh':
        x2 = a * a
        t = np.tanh(_SQRT_2_PI * (a + 0.044715 * x2 * a))
        return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x2))
    if a.dtype == np.float32 and a.size >= 2048:
        return _blocked(_gelu_backward_f32, g, a)
    return g * (_exact_cdf(a) + a * np.exp(-0.5 * a * a) * a.dtype.type(_INV_SQRT_2PI))


def _silu(a):
    return a / (1 + np.exp(-a))


def _tanh_backward(g, y):
    """``g * (1 - y^2)`` with ``1 - y^2`` one fused multiply-add for float32, as torch's kernel (NOTE [fused
    multiply-add in float32] in _lerp.py). For complex ``y`` tanh's formula passes the conjugate already (NOTE
    [complex gradients] in autograd/kernels.py), where torch's kernel conjugates itself."""
    d = _fma32(np.negative(y), y, np.float32(1)) if y.dtype == np.float32 else 1 - y * y
    return np.multiply(g, d)


def _silu_backward(g, a):
    s = _sigmoid(a)
    return g * s * (1 + a * (1 - s))


def _elu(a, alpha, scale, input_scale):
    return _select(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


def _softplus(a, beta, threshold):
    z = a * beta
    return _select(z > threshold, a, np.log1p(np.exp(z)) / beta)


def _log_sigmoid(a):
    # min(x, 0) - log1p(exp(-|x|)): no overflow for either sign; contiguous whatever the input's layout, as torch's
    # log_sigmoid_forward (which writes a fresh buffer) gives
    return _c_order_array(np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))))


def _tanh(a, out=None):
    """float32 tanh rounded once from float64: NumPy's float32 SIMD tanh is off by an ulp in a third of the
    elements, torch's is correctly rounded in all but ~0.1%, and tanh feeds saturating formulas (SAC's
    log(1 - tanh(x)^2)) that turn an ulp into a different training run. It still runs faster than torch's."""
    if a.dtype != np.float32:
        return np.tanh(a, out=out)
    r = np.tanh(a, dtype=np.float64)
    if out is None:
        return r.astype(np.float32)
    np.copyto(out, r, casting='unsafe')
    return out


_tanh.writes_over_input = True      # its result is complete before ``out`` is written: out may be its input


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
    'erf': _erf_kernel,
    'erfc': _erfc,
    'erfinv': _erfinv,
    'special_erfcx': _erfcx,
    'special_entr': _entr,
    'special_log_ndtr': _log_ndtr,
    'special_gammainc': _gammainc,
    'special_gammaincc': _gammaincc,
    'i0': _i0,
    'special_i0e': _i0e,
    'special_i1': _i1,
    'special_i1e': _i1e,
    'special_modified_bessel_i0': _i0,
    'special_modified_bessel_i1': _i1,
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
    'tanh': _tanh,
    'asinh': np.arcsinh,
    'acosh': np.arccosh,
    'atanh': np.arctanh,
    'sigmoid': _sigmoid,
    'deg2rad': np.deg2rad,
    'rad2deg': np.rad2deg,
    'sinc': np.sinc,
    'atan2': np.arctan2,
    'hypot': np.hypot,
    'logaddexp': lambda a, b: logaddexp_complex(a, b) if a.dtype.kind == 'c' else np.logaddexp(a, b),
    'xlogy.Tensor': _xlogy,
    'copysign.Tensor': np.copysign,
    'heaviside': _heaviside,
    'maximum': np.maximum,
    'minimum': np.minimum,
    'fmax': np.fmax,
    'fmin': np.fmin,
    'clamp': _clamp,
    'clamp_min': _max_vs,
    'clamp_max': _min_vs,
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
    'digamma': _digamma,
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
    'conj_physical': np.conj,
    'complex': lambda re, im: _complex(re, im),
    'polar': lambda r, th: _complex(r * np.cos(th), r * np.sin(th)),
    'bitwise_and.Tensor': np.bitwise_and,
    'bitwise_or.Tensor': np.bitwise_or,
    'bitwise_xor.Tensor': np.bitwise_xor,
    'bitwise_not': np.invert,
    'bitwise_left_shift.Tensor': _shift(True),
    'bitwise_right_shift.Tensor': _shift(False),
    'where.self': _where,
    # activations
    'relu': _relu,
    'threshold': _threshold,
    'threshold_backward': _threshold_backward,
    'gelu': _gelu,
    'gelu_backward': _gelu_backward,
    'silu': _silu,
    'silu_backward': _silu_backward,
    'tanh_backward': _tanh_backward,
    'elu': _elu,
    'leaky_relu': lambda a, slope: _leaky_relu(a, slope),
    'hardtanh': lambda a, lo, hi: _hardtanh(a, lo, hi),
    '_prelu_kernel': lambda a, w: _select(a > 0, a, a * w),
    '_prelu_kernel_backward': lambda g, a, w: _prelu_backward(g, a, w),
    'hardshrink': lambda a, lambd: _select((a > lambd) | (a < -lambd), a, 0),
    'softshrink': lambda a, lambd: _select(a > lambd, a - a.dtype.type(lambd),
                                           _select(a < -lambd, a + a.dtype.type(lambd), 0)),
    'ldexp.Tensor': lambda a, e: a * np.exp2(e),
    'softplus': _softplus,
    'hardswish': lambda a: _hardswish(a),
    'hardsigmoid': lambda a: np.minimum(np.maximum(a + 3, 0), 6) / 6,
    'log_sigmoid': _log_sigmoid,
}

def _complex(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


# kernels that cannot meet a floating-point error run bare (NOTE [silent floating-point errors])
_EXACT = {'neg', 'abs', 'sign', 'sgn', 'floor', 'ceil', 'trunc', 'where.self', 'relu', 'threshold_backward',
          'threshold', 'maximum', 'minimum', 'fmax', 'fmin', 'clamp', 'clamp_min', 'clamp_max', 'nan_to_num',
          'heaviside', 'isreal', 'signbit', 'angle', 'conj_physical', 'complex', 'logical_not', 'logical_and', 'logical_or', 'logical_xor',
          'eq.Tensor', 'ne.Tensor', 'lt.Tensor', 'le.Tensor', 'gt.Tensor', 'ge.Tensor', 'isnan', 'isinf',
          'isfinite', 'isposinf', 'isneginf', 'bitwise_and.Tensor', 'bitwise_or.Tensor', 'bitwise_xor.Tensor',
          'bitwise_not', 'bitwise_left_shift.Tensor', 'bitwise_right_shift.Tensor', 'hardtanh', 'gcd', 'lcm'}


def _splittable(fn):
    """One elementwise ufunc (one output), or add/sub: their large calls are cut into blocks over the intra-op
    threads, bit for bit the same result (NOTE [split pointwise] in _split.py)."""
    return (isinstance(fn, np.ufunc) and fn.nout == 1) or fn in (_add, _sub, _relu, _threshold_backward)


# memory-bound kernels (~0.1 ns per element): split only from 8x the size of a transcendental one
_CHEAP = {_add, _sub, _relu, _threshold_backward, np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive, np.absolute,
          np.maximum, np.minimum, np.fmax, np.fmin, np.equal, np.not_equal, np.less, np.less_equal, np.greater,
          np.greater_equal, np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.bitwise_and,
          np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift, np.copysign, np.sign,
          np.floor, np.ceil, np.trunc, np.rint, np.isnan, np.isinf, np.isfinite, np.signbit, np.square,
          np.conjugate, np.heaviside}
# NOTE [half-precision opmath]: torch computes a float16/bfloat16 kernel in float32 (its CPU kernels' opmath type) and
# rounds the result once; a kernel written here as several NumPy steps would round after every step in the input's
# type (ml_dtypes' bfloat16 ufuncs do). These kernels get float32 copies of half-precision inputs and round their
# result back once; a one-ufunc kernel needs nothing (NumPy's and ml_dtypes' half loops already compute in float32).
# logit stays out: torch's computes it step by step in the input's type, as NumPy does.
_OPMATH = {'sigmoid', 'silu', 'silu_backward', 'gelu', 'gelu_backward', 'elu', 'softplus', 'hardswish', 'hardsigmoid',
           'log_sigmoid', 'rsqrt', 'sinc', 'lerp.Tensor', 'addcmul', 'addcdiv', 'erf', 'erfc', 'erfinv',
           'ldexp.Tensor', 'softshrink', 'special_entr', 'special_erfcx', 'special_log_ndtr'}


def _half(a):
    """A float16 or bfloat16 array."""
    return a.__class__ is np.ndarray and _is_half(a.dtype)


def _opmath(fn, writes_out=False):
    """``fn`` computing half-precision operands in float32 (NOTE [half-precision opmath]); ``writes_out``: it may be
    handed ``out=`` the array of an in-place call's own tensor (its result does not depend on the order of writes)."""
    def kernel(*args, **kwargs):
        half = next((a.dtype for a in args if _half(a)), None)
        if half is None:
            return fn(*args, **kwargs)
        out = kwargs.pop('out', None)
        r = np.asarray(fn(*[a.astype(np.float32) if _half(a) else a for a in args], **kwargs)).astype(half)
        if out is None:
            return r
        out[...] = r
        return out
    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    kernel.accepts_out = writes_out
    return kernel


# lerp_ and addcmul_ (EMA updates, optimizers) write into their tensor directly: their kernels read each block of
# their operands before writing it (_lerp.py)
_TABLE.update({name: _opmath(_TABLE[name], name in ('lerp.Tensor', 'addcmul')) for name in _OPMATH if name in _TABLE})
def _quiet_half(fn):
    """An exact kernel (NumPy's own loops raise no floating-point flag for it), quiet for bfloat16/float8 operands,
    whose ml_dtypes loops raise the invalid flag on a NaN (``x > 0``, ``clamp``): torch's are silent."""
    q = _quiet(fn)

    def kernel(*args, **kw):
        a0 = args[0]
        return q(*args, **kw) if a0.__class__ is np.ndarray and a0.dtype.kind == 'V' else fn(*args, **kw)
    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    kernel.__wrapped__ = fn
    kernel.accepts_out = getattr(q, 'accepts_out', False)
    return kernel


KERNELS = {name: _split_pointwise(fn, 1 if fn in _CHEAP else 8, quiet='half' if name in _EXACT else True)
           if _splittable(fn) else _quiet_half(fn) if name in _EXACT else _quiet(fn) for name, fn in _TABLE.items()}
KERNELS['add.Tensor'] = _split_add(_add, np.add)
KERNELS['sub.Tensor'] = _split_add(_sub, np.subtract)
