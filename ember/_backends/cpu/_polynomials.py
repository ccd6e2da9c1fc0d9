"""NOTE [orthogonal polynomials] -- torch.special's Chebyshev, Hermite, Laguerre and Legendre polynomials.

Each kernel takes x and the degree n (both in the computation dtype, or one a Python number) and follows
torch's evaluation order, so that its special cases and its rounding agree with torch's:

- n is truncated to an integer as C++'s cast to int64 does. NaN, infinities and |n| >= 2**63 have no such
  integer: x86 gives INT64_MIN, a negative degree, so they give 0 like every n < 0.
- Exact values at the ends of the interval (|x| == 1, or x == 0 and x == 1 for the shifted polynomials),
  then for the Chebyshev families the trigonometric closed form (cos(n acos x) and its U, V, W kin) inside
  the interval once n passes the threshold torch uses (6, or 8 for U, V and W; 4 for shifted W), then
  P_0 and P_1, then the three-term recurrence up to n.
- Arithmetic stays in the computation dtype (float32 recurs in float32, as torch does), in torch's operand
  order. torch's build fuses each recurrence step ``a * P_j - c`` into one multiply-subtract (one rounding,
  no overflow of the product alone). float32 does the same through float64, so float32 recurrences agree with
  torch's to the bit; float64 has no fused operation in NumPy, so its last bits may differ (a few ulps of the
  recurrence's terms, which is more than a few ulps of the value only next to its zeros), and only the fused
  operation's overflow behaviour is reproduced. torch's float32 closed forms use a float32 acos a few ulps off,
  which n multiplies: they differ from ember's (rounded once) by up to ~n ulps.
- Where x is NaN and n >= 1, some of torch's kernels read a value they never wrote (the recurrence loop stops
  at a NaN before its first step) and return whatever it was: ember returns NaN there.

The recurrence runs on the elements that need it only, dropping each one when its degree is reached, so a
few large degrees do not make the whole tensor iterate.
"""
import numpy as np

from ._fp import quiet

_INT64_LIMIT = 2.0 ** 63


def _operands(x, n):
    """(x, k, dtype): x as an array of the computation dtype, and the integer degrees k (int64) that torch's
    cast of n to int64 gives, both broadcast."""
    dt = next(a.dtype for a in (x, n) if isinstance(a, np.ndarray))
    x, n = np.broadcast_arrays(np.asarray(x, dt), np.asarray(n, dt))
    nf = n.astype(np.float64)
    ok = np.abs(nf) < _INT64_LIMIT                   # False for nan and inf
    k = np.where(ok, np.trunc(np.where(ok, nf, 0.0)), -1.0).astype(np.int64)
    return x, k, dt


def _fused(a, q, c):
    """a * q - c with one rounding, as the fused multiply-subtract torch's build computes its recurrences with:
    float32 in float64 (the product is exact there) rounded once; float64 in float64, where only what a fused
    operation does with an overflow is mended: the product alone never overflows (halve the operands), and an
    infinite c gives -c."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * q - c).astype(np.float32)
    r = a * q - c
    over = ~np.isfinite(r) & np.isfinite(a) & np.isfinite(q)
    if over.any():
        a, q, c = a[over], q[over], c[over]
        r[over] = np.where(np.isinf(c), -c, (a * (q * 0.5) - c * 0.5) * 2)
    return r


def _recur(x, k, p, q, step):
    """P_k(x) for elements with k >= 2, from P_0 = p and P_1 = q by ``r = (a * q - c) / d`` for j = 1 .. k - 1,
    where ``step(x, j, p)`` gives (a, c, d) and d may be None (1-D arrays). Finished elements, and those
    already NaN, leave the loop."""
    out = np.empty_like(x)
    idx = np.arange(x.size)
    j = 1
    while idx.size:
        a, c, d = step(x, j, p)
        r = _fused(a, q, c)
        p, q = q, r if d is None else r / x.dtype.type(d)
        j += 1
        done = (k < j + 1) | np.isnan(q)
        if done.any():
            out[idx[done]] = q[done]
            keep = ~done
            x, k, p, q, idx = x[keep], k[keep], p[keep], q[keep], idx[keep]
    return out


def _libm(fn, x):
    """A libm function in x's dtype: float32 through float64, so that it is rounded once as glibc's float
    functions are (NumPy's own float32 kernels are a few ulps off)."""
    return fn(x.astype(np.float64)).astype(np.float32) if x.dtype == np.float32 else fn(x)


def _polynomial(ends, closed, p1, step):
    """A kernel from torch's evaluation order: ``ends(x, k)`` gives (mask, value) pairs for the exact end
    values; ``closed`` is (threshold, inside(x), formula(x, k)) or None; ``p1(x)`` is P_1 and ``step`` the
    recurrence (see _recur)."""
    def kernel(x, n):
        x, k, dt = _operands(x, n)
        res = np.zeros(x.shape, dt)
        todo = k >= 0                                  # n < 0: 0
        for mask, value in ends(x, k):
            m = todo & mask
            res[m] = np.broadcast_to(value, x.shape)[m]
            todo &= ~mask
        if closed is not None:
            threshold, inside, formula = closed
            m = todo & (k > threshold) & inside(x)
            if m.any():
                res[m] = formula(x[m], k[m])
            todo &= ~m
        res[todo & (k == 0)] = 1
        m = todo & (k == 1)
        res[m] = p1(x[m])
        m = todo & (k >= 2)
        if m.any():
            xm = x[m]
            res[m] = _recur(xm, k[m], np.ones_like(xm), p1(xm), step)
        nan = np.isnan(x) & (k >= 1)
        res[nan] = np.nan                               # where torch reads an unwritten value (see NOTE)
        return res
    return kernel


def _even(k):
    return k % 2 == 0


def _pm(k, value):
    """value where k is even, -value where it is odd."""
    return np.where(_even(k), value, -value)


def _f(x, k):
    """An integer array in x's dtype (C++'s conversion of an int64 operand)."""
    return k.astype(x.dtype)


def _half(x):
    return x.dtype.type(0.5)


# --- Chebyshev polynomials of the first to fourth kinds: P_{j+1} = 2x P_j - P_{j-1} -------------------

def _chebyshev_step(x, j, p):
    return x + x, p, None


def _on_ends(x):
    return np.abs(x) == 1


def _inside(x):
    return np.abs(x) < 1


def _t_closed(x, k):
    return _libm(np.cos, _f(x, k) * _libm(np.arccos, x))


def _u_closed(x, k):
    a = _libm(np.arccos, x)
    s = _libm(np.sin, a)
    m = _f(x, k + 1)
    return np.where(s != 0, _libm(np.sin, m * a) / s, m * _libm(np.cos, m * a) / x)


def _v_closed(x, k, ends):
    a = _libm(np.arccos, x)
    h = a / 2
    return np.where(_libm(np.sin, h) != 1, _libm(np.cos, (_f(x, k) + _half(x)) * a) / _libm(np.cos, h), ends)


def _w_closed(x, k, ends):
    a = _libm(np.arccos, x)
    h = a / 2
    return np.where(_libm(np.cos, h) != 1, _libm(np.sin, (_f(x, k) + _half(x)) * a) / _libm(np.sin, h), ends)


chebyshev_t = _polynomial(lambda x, k: [(_on_ends(x), np.where((x > 0) | _even(k), 1, -1))],
                          (6, _inside, _t_closed), lambda x: x, _chebyshev_step)
chebyshev_u = _polynomial(lambda x, k: [(_on_ends(x), np.where((x > 0) | _even(k), _f(x, k + 1), -_f(x, k + 1)))],
                          (8, _inside, _u_closed), lambda x: x + x, _chebyshev_step)
chebyshev_v = _polynomial(lambda x, k: [(_on_ends(x), np.where(x > 0, 1, _pm(k, _f(x, k + k + 1))))],
                          (8, _inside, lambda x, k: _v_closed(x, k, _pm(k, _f(x, k + k + 1)))),
                          lambda x: x + x - 1, _chebyshev_step)
chebyshev_w = _polynomial(lambda x, k: [(_on_ends(x), np.where(x > 0, _f(x, k + k + 1), _pm(k, 1)))],
                          (8, _inside, lambda x, k: _w_closed(x, k, np.where(x > 0, _f(x, k + k + 1), _pm(k, 1)))),
                          lambda x: x + x + 1, _chebyshev_step)


# --- shifted Chebyshev polynomials: the above at y = 2x - 1, for x in [0, 1] --------------------------

def _y(x):
    return x + x - 1


def _shifted_inside(x):
    return np.abs(_y(x)) < 1


def _shifted_step(x, j, p):
    return _y(x) + _y(x), p, None


shifted_chebyshev_t = _polynomial(lambda x, k: [(x == 1, 1), (x == 0, _pm(k, 1))],
                                  (6, _shifted_inside, lambda x, k: _t_closed(_y(x), k)), _y, _shifted_step)
shifted_chebyshev_u = _polynomial(lambda x, k: [(x == 1, _f(x, k + 1)), (x == 0, _pm(k, _f(x, k + 1)))],
                                  (6, _shifted_inside, lambda x, k: _u_closed(_y(x), k)),
                                  lambda x: _y(x) + _y(x), _shifted_step)
shifted_chebyshev_v = _polynomial(lambda x, k: [(x == 1, 1), (x == 0, _pm(k, _f(x, k + k + 1)))],
                                  (6, _shifted_inside, lambda x, k: _v_closed(_y(x), k, _pm(k, _f(x, k + k + 1)))),
                                  lambda x: _y(x) + _y(x) - 1, _shifted_step)
# torch's fallback where cos(acos(y) / 2) rounds to 1 is +-1 here (W_n(1) = 2n + 1 for the unshifted one)
shifted_chebyshev_w = _polynomial(lambda x, k: [(x == 1, _f(x, k + k + 1)), (x == 0, _pm(k, 1))],
                                  (4, _shifted_inside, lambda x, k: _w_closed(_y(x), k, _pm(k, 1))),
                                  lambda x: _y(x) + _y(x) + 1, _shifted_step)


# --- Hermite, Laguerre, Legendre: their own recurrences, no closed form -------------------------------

def _no_ends(x, k):
    return []


# physicists' H: H_{j+1} = 2x H_j - 2j H_{j-1}; probabilists' He: He_{j+1} = x He_j - j He_{j-1}
hermite_h = _polynomial(_no_ends, None, lambda x: x + x, lambda x, j, p: (x + x, (2 * j) * p, None))
hermite_he = _polynomial(_no_ends, None, lambda x: x, lambda x, j, p: (x, j * p, None))
# (j + 1) L_{j+1} = (2j + 1 - x) L_j - j L_{j-1}; L_n(0) = 1
laguerre_l = _polynomial(lambda x, k: [(x == 0, 1)], None, lambda x: 1 - x,
                         lambda x, j, p: ((j + j) + (1 - x), j * p, j + 1))
# (j + 1) P_{j+1} = (2j + 1) x P_j - j P_{j-1}; P_n(1) = 1, P_n(-1) = (-1)^n
legendre_p = _polynomial(lambda x, k: [(_on_ends(x), np.where((x > 0) | _even(k), 1, -1))], None, lambda x: x,
                         lambda x, j, p: ((j + j + 1) * x, j * p, j + 1))


KERNELS = {f'special_{name}': quiet(fn) for name, fn in (
    ('chebyshev_polynomial_t', chebyshev_t), ('chebyshev_polynomial_u', chebyshev_u),
    ('chebyshev_polynomial_v', chebyshev_v), ('chebyshev_polynomial_w', chebyshev_w),
    ('shifted_chebyshev_polynomial_t', shifted_chebyshev_t), ('shifted_chebyshev_polynomial_u', shifted_chebyshev_u),
    ('shifted_chebyshev_polynomial_v', shifted_chebyshev_v), ('shifted_chebyshev_polynomial_w', shifted_chebyshev_w),
    ('hermite_polynomial_h', hermite_h), ('hermite_polynomial_he', hermite_he),
    ('laguerre_polynomial_l', laguerre_l), ('legendre_polynomial_p', legendre_p))}
