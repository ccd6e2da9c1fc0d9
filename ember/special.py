"""``ember.special``: torch.special's functions.

Most are ember operators under torch's other names, or compositions of them (so they have gradients, and
second-order gradients, from their parts). The scaled error function, the Bessel, Airy and Hurwitz zeta
functions, the orthogonal polynomials and the incomplete gamma functions are operators of their own, computed
in NumPy (NOTE [special functions without scipy], NOTE [Bessel functions by a trapezoidal rule],
NOTE [Hurwitz zeta], NOTE [orthogonal polynomials]); like torch's, the Bessel and Airy functions and the
polynomials have no gradient (their results do not require grad), and zeta has one in its second argument only.

>>> import ember
>>> ember.special.ndtr(ember.tensor([0.0]))
tensor([0.5000])
>>> ember.special.chebyshev_polynomial_t(ember.tensor([0.5, 2.0]), 3)
tensor([-1., 26.])
"""
import math

import ember
from ember._python_functions._out import write_out as _write_out

__all__ = ['digamma', 'entr', 'gammainc', 'gammaincc', 'erf', 'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammaln', 'i0', 'i0e',
           'i1', 'i1e', 'log1p', 'log_ndtr', 'log_softmax', 'logit', 'logsumexp', 'modified_bessel_i0',
           'modified_bessel_i1', 'multigammaln', 'ndtr', 'ndtri', 'polygamma', 'psi', 'round', 'sinc', 'softmax',
           'xlog1py', 'xlogy', 'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_k0',
           'modified_bessel_k1', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'spherical_bessel_j0',
           'zeta', 'chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
           'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
           'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h',
           'hermite_polynomial_he', 'laguerre_polynomial_l', 'legendre_polynomial_p']

_aten = ember.ops.aten
_SQRT1_2 = math.sqrt(0.5)

erf, erfc, erfinv, expm1, exp2, log1p = ember.erf, ember.erfc, ember.erfinv, ember.expm1, ember.exp2, ember.log1p
digamma = psi = ember.digamma
gammaln = ember.lgamma
polygamma, sinc, xlogy, logit, i0 = ember.polygamma, ember.sinc, ember.xlogy, ember.logit, ember.i0
expit = ember.sigmoid
logsumexp = ember.logsumexp


def erfcx(input, *, out=None):
    """exp(x**2) * erfc(x), without overflow for large x."""
    return _call('erfcx', (input,), out)


def i0e(input, *, out=None):
    """exp(-|x|) * I0(x)."""
    return _call('i0e', (input,), out)


def i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1."""
    return _call('i1', (input,), out)


def i1e(input, *, out=None):
    """exp(-|x|) * I1(x)."""
    return _call('i1e', (input,), out)



def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(a, x); differentiable in x only, as in torch."""
    return _call('gammainc', (ember.as_tensor(input), ember.as_tensor(other)), out)


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _call('gammaincc', (ember.as_tensor(input), ember.as_tensor(other)), out)


def ndtr(input, *, out=None):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2))."""
    return _written(0.5 * ember.erfc(input * -_SQRT1_2), out)


def ndtri(input):
    """The inverse of ndtr: sqrt(2) * erfinv(2p - 1)."""
    return math.sqrt(2.0) * ember.erfinv(2 * input - 1)


def log_ndtr(input, *, out=None):
    """log(ndtr(x)), accurate in both tails (an operator: its gradient is torch's formula)."""
    return _call('log_ndtr', (input,), out)


def entr(input, *, out=None):
    """-x * log(x) for x > 0, 0 at 0, -inf below (an operator: its gradient at 0 is torch's -inf)."""
    return _call('entr', (input,), out)


def xlog1py(input, other, *, out=None):
    """x * log1p(y), and 0 where x is 0 (unless y is nan)."""
    x, y = ember.as_tensor(input), ember.as_tensor(other)
    r = x * ember.log1p(y)
    return _written(ember.where((x == 0).logical_and(y.isnan().logical_not()), 0.0, r), out)


def multigammaln(input, p):
    """The multivariate log-gamma function of dimension p (torch.mvlgamma)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        total = total + ember.lgamma(input - 0.5 * j)
    return total


softmax, log_softmax = ember.softmax, ember.log_softmax    # torch's are these functions under a second name


def round(input, *, decimals=0, out=None):
    return ember.round(input, decimals=decimals, out=out)


def _written(r, out):
    """``out=`` of the functions composed here (NOTE [out= of Python-written functions])."""
    return r if out is None else _write_out(out, r)


def _call(name, args, out):
    packet = getattr(_aten, f'special_{name}')
    return packet.default(*args) if out is None else packet.out(*args, out=out)


def _unary(name, doc):
    """A function of one tensor named as torch names its argument: ``input``, or ``x`` where torch's schema does."""
    if name in ('airy_ai', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'spherical_bessel_j0'):
        def fn(x, *, out=None):
            return _call(name, (x,), out)
    else:
        def fn(input, *, out=None):
            return _call(name, (input,), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _polynomial(name, doc):
    def fn(x, n, *, out=None):
        return _call(name, (x, n), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + (" n is truncated to an integer, and n < 0 gives 0; x or n may be a number (not both). "
                        "No gradient, as in torch. Example: ember.special.chebyshev_polynomial_t(x, 3).")
    return fn


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (other + k)^-input: inf at input = 1, nan below; either argument may be a
    number; the gradient is in ``other`` only, as in torch.

    >>> ember.special.zeta(ember.tensor([2.0]), 1.0)
    tensor([1.6449])
    """
    return _call('zeta', (input, other), out)


airy_ai = _unary('airy_ai', 'The Airy function Ai(x).')
bessel_j0 = _unary('bessel_j0', 'The Bessel function of the first kind of order 0, J0.')
bessel_j1 = _unary('bessel_j1', 'The Bessel function of the first kind of order 1, J1.')
bessel_y0 = _unary('bessel_y0', 'The Bessel function of the second kind of order 0, Y0 (nan below 0).')
bessel_y1 = _unary('bessel_y1', 'The Bessel function of the second kind of order 1, Y1 (nan below 0).')
modified_bessel_i0 = _unary('modified_bessel_i0', 'The modified Bessel function I0: i0 without a gradient.')
modified_bessel_i1 = _unary('modified_bessel_i1', 'The modified Bessel function I1: i1 without a gradient.')
modified_bessel_k0 = _unary('modified_bessel_k0', 'The modified Bessel function of the second kind K0 (nan below 0).')
modified_bessel_k1 = _unary('modified_bessel_k1', 'The modified Bessel function of the second kind K1 (nan below 0).')
scaled_modified_bessel_k0 = _unary('scaled_modified_bessel_k0', 'exp(x) * K0(x).')
scaled_modified_bessel_k1 = _unary('scaled_modified_bessel_k1', 'exp(x) * K1(x).')
spherical_bessel_j0 = _unary('spherical_bessel_j0', 'The spherical Bessel function j0(x) = sin(x) / x.')

chebyshev_polynomial_t = _polynomial('chebyshev_polynomial_t', 'The Chebyshev polynomial T_n(x); T_2(0.5) = -0.5.')
chebyshev_polynomial_u = _polynomial('chebyshev_polynomial_u', 'The Chebyshev polynomial U_n(x); U_2(0.5) = 0.')
chebyshev_polynomial_v = _polynomial('chebyshev_polynomial_v', 'The Chebyshev polynomial V_n(x); V_2(0.5) = -1.')
chebyshev_polynomial_w = _polynomial('chebyshev_polynomial_w', 'The Chebyshev polynomial W_n(x); W_2(0.5) = 1.')
shifted_chebyshev_polynomial_t = _polynomial('shifted_chebyshev_polynomial_t', 'T_n(2x - 1).')
shifted_chebyshev_polynomial_u = _polynomial('shifted_chebyshev_polynomial_u', 'U_n(2x - 1).')
shifted_chebyshev_polynomial_v = _polynomial('shifted_chebyshev_polynomial_v', 'V_n(2x - 1).')
shifted_chebyshev_polynomial_w = _polynomial('shifted_chebyshev_polynomial_w', 'W_n(2x - 1).')
hermite_polynomial_h = _polynomial('hermite_polynomial_h', "The physicists' Hermite polynomial H_n(x); H_2(0.5) = -1.")
hermite_polynomial_he = _polynomial('hermite_polynomial_he', "The probabilists' Hermite He_n(x); He_2(0.5) = -0.75.")
laguerre_polynomial_l = _polynomial('laguerre_polynomial_l', 'The Laguerre polynomial L_n(x); L_2(0.5) = 0.125.')
legendre_polynomial_p = _polynomial('legendre_polynomial_p', 'The Legendre polynomial P_n(x); P_2(0.5) = -0.125.')
