"""NOTE [Bessel functions by a trapezoidal rule] -- J0, J1, Y0, Y1, K0, K1 and the Airy function Ai in NumPy.

One integral gives every Bessel function here away from the origin. For complex z off the negative real axis,

    K_nu(z) = integral_0^inf exp(-z cosh t) cosh(nu t) dt,

and the substitution u = 2 sqrt(z) sinh(t / 2) (so that z (cosh t - 1) = u^2 / 2) turns it into

    sqrt(2z / pi) e^z K_nu(z) = sqrt(2 / pi) integral_0^inf exp(-u^2 / 2) cosh(nu t) / sqrt(1 + u^2 / (4z)) du,

which tends to 1 as |z| grows. The integrand is even and analytic in a strip about the real u axis as wide as
its branch points at u = +-2i sqrt(z) allow, so the trapezoidal rule converges geometrically: with step 1/4
and 38 nodes (exp(-u^2 / 2) < 2e-19 beyond) it is accurate to an ulp or two for |z| >= 1, real or complex, and
with step 1/2 for |z| >= 6 (checked against mpmath to 40 digits while writing it). Then

- K0, K1 (x > 2) at z = x, and their exponentially scaled forms, without the e^-x;
- J and Y (x > 2) at z = -ix: the Hankel function H_nu(x) = J + iY = sqrt(2 / (pi x)) e^{i chi} (P + iQ) with
  chi = x - (nu / 2 + 1/4) pi and P + iQ the integral above;
- Ai(x) = e^-zeta / (2 sqrt(pi) x^(1/4)) * (the integral at nu = 1/3, z = zeta) for x >= 3/2, and
  Ai(-x) = (P sin(zeta + pi/4) + Q cos(zeta + pi/4)) / (sqrt(pi) x^(1/4)) for x >= 2.09, zeta = 2 x^(3/2) / 3.

Near the origin the power series serve (J, Y, K below 2, Ai between -2.09 and 3/2): their terms stay below a few
units there, so little cancels.

Matching torch: for large arguments torch rounds the phase (x - pi/4, x - 3pi/4 for order 1, zeta + pi/4 for
Ai, zeta computed as -2x sqrt(-x) / 3) to the input's dtype before taking its cosine. For x near 1e4 in float32
that moves the phase by up to 5e-4, and beyond 2**53 in float64 it is all that is left of the value; ember
rounds the phase the same way (past x = 5, and below x = -2.09 for Ai, where torch's values show it doing so),
so its values agree with torch's there too. Other special cases are torch's: J and Y of +-inf are nan; Y, K of
x < 0 nan, of 0 -inf and inf; Ai is nan at +-inf and 0 beyond x = 103.892 (where torch's exp(zeta) would
overflow). What ember does not reproduce is torch's inaccuracy in float64 (measured against mpmath at 30 digits,
torch 2.13): J0, J1, Y0, Y1 between 2 and 25 are off by up to 2e-6 of their amplitude (largest near 5 to 7),
and Ai between -5 and -2.09 by up to 2e-5; ember's are within 5e-15 of the amplitude there.

Everything is computed in float64 and rounded to the input's dtype.
"""
import math

import numpy as np

from ._fp import quiet

_EULER = 0.5772156649015329
_LN2 = math.log(2.0)
_TWO_OVER_PI = 2.0 / math.pi
_AI0, _MINUS_AIP0 = 0.3550280538878172, 0.2588194037928068      # Ai(0) and -Ai'(0)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)

def _rule(step):
    """Nodes and weights of the trapezoidal rule with this step on [0, 9.3) (exp(-u^2 / 2) < 2e-19 beyond)."""
    nodes = np.arange(0.0, 9.3, step)
    weights = step * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * nodes * nodes)
    weights[0] *= 0.5
    return tuple(zip(nodes, weights))


# the strip of analyticity widens with |z|: step 1/2 (19 nodes) is as exact from |z| = 6 on
_FINE, _COARSE, _COARSE_FROM = _rule(0.25), _rule(0.5), 6.0


def _trapezoid(nu, z, rule):
    quarter = 0.25 / z
    half_root = 0.5 / np.sqrt(z) if nu not in (0, 1) else None
    total = np.zeros_like(quarter)
    for u, w in rule:
        v = (u * u) * quarter                  # u^2 / (4z) = sinh(t/2)^2; cosh t = 1 + 2v
        root = np.sqrt(1.0 + v)                # cosh(t/2)
        if nu == 0:
            total += w / root
        elif nu == 1:
            total += w * (1.0 + 2.0 * v) / root
        else:                                  # cosh(nu t) = (e^(nu t) + e^(-nu t)) / 2, e^(t/2) = sinh + cosh
            e = (u * half_root + root) ** (2.0 * nu)
            total += w * 0.5 * (e + 1.0 / e) / root
    return total


def _scaled_k(nu, z):
    """sqrt(2z / pi) e^z K_nu(z) for |z| >= 1 (z a real or complex 1-D array): the trapezoidal rule of the NOTE."""
    coarse = np.abs(z) >= _COARSE_FROM
    out = np.empty(z.shape, np.result_type(z, np.float64))
    out[coarse] = _trapezoid(nu, z[coarse], _COARSE)
    out[~coarse] = _trapezoid(nu, z[~coarse], _FINE)
    return out


def _phase(x, a, shift, start):
    """x - shift for the cosine of an asymptotic form, rounded as torch rounds it: in the input's dtype where
    torch uses that form (x > start), in float64 below (see NOTE)."""
    rounded = (a - a.dtype.type(shift)).astype(np.float64).ravel()
    return np.where(x > start, rounded, x - shift)


def _hankel(nu, x, chi):
    """(J_nu(x), Y_nu(x)) for x > 2 with the phase chi = x - (nu/2 + 1/4) pi."""
    pq = _scaled_k(nu, x * -1j)
    amp = np.sqrt(_TWO_OVER_PI / x)
    c, s = np.cos(chi), np.sin(chi)
    return amp * (pq.real * c - pq.imag * s), amp * (pq.real * s + pq.imag * c)


# --- power series near the origin (x <= 2): z = x^2 / 4 ------------------------------------------------

_TERMS = 22


def _series(x, order, sign, harmonic):
    """sum_k sign^k z^k / (k! (k + order)!) (order 0 or 1, sign +-1), and where ``harmonic`` the same sum with
    each term times psi(k + 1) + psi(k + 1 + order) (order 1) or psi(k + 1) (order 0)."""
    z = 0.25 * x * x
    term = np.ones_like(x)
    plain = term.copy()
    weight = -_EULER if order == 0 else 1.0 - 2.0 * _EULER        # psi(1), psi(1) + psi(2)
    with_psi = weight * term if harmonic else None
    h = 0.0                                                        # H_k
    for k in range(1, _TERMS):
        term = term * (sign * z) / (k * (k + order))
        plain += term
        if harmonic:
            h += 1.0 / k
            weight = h - _EULER if order == 0 else 2.0 * h + 1.0 / (k + 1) - 2.0 * _EULER
            with_psi += weight * term
    return plain, with_psi


def _log_half(x):
    """log(x / 2) as torch's Y forms take it: log(x) - log 2 (finite at the smallest subnormals)."""
    return np.log(x) - _LN2


def _j_small(order, x):
    s, _ = _series(x, order, -1.0, False)
    return s if order == 0 else 0.5 * x * s


def _y_small(order, x):
    j, psi = _series(x, order, -1.0, True)
    if order == 0:    # Y0 = (2/pi) (log(x/2) J0 - sum (-z)^k psi(k+1) / k!^2)
        return _TWO_OVER_PI * (_log_half(x) * j - psi)
    # Y1 = -2/(pi x) + (2/pi) log(x/2) J1 - (x / 2pi) sum (-z)^k (psi(k+1) + psi(k+2)) / (k! (k+1)!)
    return -_TWO_OVER_PI / x + _TWO_OVER_PI * _log_half(x) * (0.5 * x * j) - (0.5 / math.pi) * x * psi


def _k_small(order, x):
    i, psi = _series(x, order, 1.0, True)
    lg = np.log(0.5 * x)             # as torch: -inf (so K0 = inf) where x / 2 underflows
    if order == 0:    # K0 = -log(x/2) I0 + sum z^k psi(k+1) / k!^2
        return -lg * i + psi
    # K1 = 1/x + log(x/2) I1 - (x/4) sum z^k (psi(k+1) + psi(k+2)) / (k! (k+1)!)
    return 1.0 / x + lg * (0.5 * x * i) - 0.25 * x * psi


# --- kernels --------------------------------------------------------------------------------------------

def _apply(a, fn):
    """fn on float64 1-D x (a copy of the input), reshaped and rounded back to a's dtype."""
    x = np.asarray(a, dtype=np.float64).ravel()
    return np.asarray(fn(x, a)).reshape(np.shape(a)).astype(a.dtype, copy=False)


def _bessel_j(order):
    shift = (0.25 + 0.5 * order) * math.pi

    def compute(x, a):
        ax = np.abs(x)
        out = np.full_like(x, np.nan)                 # nan and +-inf
        small = ax <= 2
        out[small] = _j_small(order, ax[small])
        big = (ax > 2) & (ax < np.inf)
        out[big] = _hankel(order, ax[big], _phase(ax[big], np.abs(np.ravel(a))[big], shift, 5.0))[0]
        return np.where(np.signbit(x), -out, out) if order == 1 else out     # J1 is odd, J0 even
    return lambda a: _apply(a, compute)


def _bessel_y(order):
    shift = (0.25 + 0.5 * order) * math.pi

    def compute(x, a):
        out = np.full_like(x, np.nan)                 # x < 0, nan and +inf
        out[x == 0] = -np.inf
        small = (x > 0) & (x <= 2)
        out[small] = _y_small(order, x[small])
        big = (x > 2) & np.isfinite(x)
        out[big] = _hankel(order, x[big], _phase(x[big], np.ravel(a)[big], shift, 5.0))[1]
        return out
    return lambda a: _apply(a, compute)


def _bessel_k(order, scaled):
    def compute(x, a):
        out = np.full_like(x, np.nan)                 # x < 0 and nan
        out[x == 0] = np.inf
        out[x == np.inf] = 0.0
        small = (x > 0) & (x <= 2)
        xs = x[small]
        out[small] = _k_small(order, xs) * (np.exp(xs) if scaled else 1.0)
        big = (x > 2) & (x < np.inf)
        xb = x[big]
        k = np.sqrt(0.5 * math.pi / xb) * _scaled_k(order, xb)
        out[big] = k if scaled else k * np.exp(-xb)
        return out
    return lambda a: _apply(a, compute)


j0, j1 = _bessel_j(0), _bessel_j(1)
y0, y1 = _bessel_y(0), _bessel_y(1)
k0, k1 = _bessel_k(0, False), _bessel_k(1, False)
k0e, k1e = _bessel_k(0, True), _bessel_k(1, True)


# --- the Airy function Ai --------------------------------------------------------------------------------

_AIRY_POSITIVE, _AIRY_NEGATIVE, _AIRY_ZERO = 1.5, -2.09, 103.892


def _airy_series(x):
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!."""
    x3 = x * x * x
    f, g = np.ones_like(x), x.copy()
    tf, tg = f.copy(), g.copy()
    for k in range(1, 20):
        tf = tf * x3 / ((3 * k - 1) * (3 * k))
        tg = tg * x3 / ((3 * k) * (3 * k + 1))
        f += tf
        g += tg
    return _AI0 * f - _MINUS_AIP0 * g


def _airy_positive(x):
    zeta = (2.0 / 3.0) * x * np.sqrt(x)
    return np.exp(-zeta) * _scaled_k(1.0 / 3.0, zeta) * (0.5 * _INV_SQRT_PI) / np.sqrt(np.sqrt(x))


def _airy_negative(x, a):
    """Ai(x) for x <= -2.09, with the phase zeta + pi/4 computed as torch computes it, in a's dtype."""
    t = np.sqrt(-a)
    zeta_rounded = (a.dtype.type(-2.0) * a * t / a.dtype.type(3.0))
    theta = (zeta_rounded + a.dtype.type(0.25 * math.pi)).astype(np.float64)
    ax = -x
    pq = _scaled_k(1.0 / 3.0, (2.0 / 3.0) * ax * np.sqrt(ax) * -1j)
    return (pq.real * np.sin(theta) + pq.imag * np.cos(theta)) * _INV_SQRT_PI / np.sqrt(np.sqrt(ax))


def _airy(x, a):
    out = np.full_like(x, np.nan)                     # nan and +-inf
    mid = (x > _AIRY_NEGATIVE) & (x < _AIRY_POSITIVE)
    out[mid] = _airy_series(x[mid])
    pos = (x >= _AIRY_POSITIVE) & (x <= _AIRY_ZERO)
    out[pos] = _airy_positive(x[pos])
    out[(x > _AIRY_ZERO) & (x < np.inf)] = 0.0
    neg = (x <= _AIRY_NEGATIVE) & (x > -np.inf)
    out[neg] = _airy_negative(x[neg], np.ravel(a)[neg])
    return out


def airy_ai(a):
    return _apply(a, _airy)


# --- the spherical Bessel function j0 = sin(x) / x ------------------------------------------------------------

def _spherical_j0(x, a):
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    xs = x[small]
    z = xs * xs
    series = np.zeros_like(xs)
    for k in range(7, 0, -1):             # 1 - z/3! + z^2/5! - ... to z^6/13!
        series = (series + (-1) ** k / math.factorial(2 * k + 1)) * z
    out[small] = 1.0 + series
    xb = x[~small]
    out[~small] = np.sin(xb) / xb
    out[np.isinf(x)] = 0.0
    return out


def spherical_j0(a):
    return _apply(a, _spherical_j0)


KERNELS = {f'special_{name}': quiet(fn) for name, fn in (
    ('airy_ai', airy_ai), ('bessel_j0', j0), ('bessel_j1', j1), ('bessel_y0', y0), ('bessel_y1', y1),
    ('modified_bessel_k0', k0), ('modified_bessel_k1', k1), ('scaled_modified_bessel_k0', k0e),
    ('scaled_modified_bessel_k1', k1e), ('spherical_bessel_j0', spherical_j0))}
