"""OpInfo records for pointwise operators and activations.

Dtypes where torch raises are kept on purpose: the generic test then checks
that ember raises the same exception class (bitwise ops on floats, abs of
bool, integer division by zero, ...).
"""
import numpy as np

from .core import op, S, Arg, unary_samples, binary_samples, FLOATS, INTS, ALL_NUMERIC

NO_BOOL = ALL_NUMERIC[:-1]
INTS_BOOL = ('int64', 'int32', 'uint8', 'bool')
NAN, INF = float('nan'), float('inf')


def _special(dtype):
    """Values that exercise edge cases: NaN, infinities, signed zeros (floats), or small ints."""
    if np.dtype(dtype).kind == 'f':
        return np.array([NAN, INF, -INF, 0., -0., 1.5, -2.5, 3.], dtype)
    if dtype == 'bool':
        return np.array([True, False, True])
    return np.array([0, 1, 2, 3, 7, 100], dtype)


def _nonzero(shape, dtype, seed=0):
    """A divisor with no zeros, both signs."""
    rng = np.random.default_rng(seed)
    mag = rng.integers(1, 4, shape) if np.dtype(dtype).kind in 'iub' else rng.uniform(0.5, 3, shape)
    sign = 1 if dtype in ('uint8', 'bool') else np.where(rng.random(shape) < 0.5, -1, 1)
    return np.asarray(mag * sign).astype(dtype)


def unary(name, low=-3, high=3, dtypes=ALL_NUMERIC, special=True, **kw):
    def gen(dt):
        yield from unary_samples(low, high)(dt)
        if special:
            yield S(_special(dt))
    op(name, gen, dtypes=dtypes, **kw)


def division(name, extra=()):
    def gen(dt):
        for a, b in [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), ()), ((2, 3, 4), (4,)), ((0, 3), (3,))]:
            yield S(Arg(a), _nonzero(b, dt, len(a)), **dict(extra))
        yield S(Arg((3, 4), noncontig=True), _nonzero((3, 4), dt), **dict(extra))
        yield S(Arg((3, 4)), 2, **dict(extra))
        yield S(Arg((3, 4)), -2.5, **dict(extra))
        yield S(7, _nonzero((5,), dt), **dict(extra))
        if np.dtype(dt).kind == 'f':      # x / 0 (an error for ints: data-dependent, so in test_pointwise.py)
            yield S(Arg((4,)), np.zeros(4, dt), **dict(extra))
    return gen


# --- arithmetic ------------------------------------------------------------------------
op('add', lambda dt: [*binary_samples()(dt), S(Arg((3, 4)), Arg((3, 4)), alpha=2), S(Arg((3,)), 2, alpha=-1),
                      S(Arg((3,)), Arg((3,)), alpha=0.5)], dtypes=ALL_NUMERIC)
op('sub', lambda dt: [*binary_samples()(dt), S(Arg((3, 4)), Arg((3, 4)), alpha=2), S(2.5, Arg((3, 4)))],
   dtypes=ALL_NUMERIC)
op('mul', lambda dt: [*binary_samples()(dt), S(3, Arg((2, 3)))], dtypes=ALL_NUMERIC)
op('div', lambda dt: [*division('div')(dt), *division('div', {'rounding_mode': 'trunc'})(dt),
                      *division('div', {'rounding_mode': 'floor'})(dt)], dtypes=ALL_NUMERIC)
op('true_divide', division('true_divide'), dtypes=FLOATS + INTS)
op('floor_divide', division('floor_divide'), dtypes=ALL_NUMERIC, grad=False)
op('remainder', division('remainder'), dtypes=ALL_NUMERIC)
op('fmod', division('fmod'), dtypes=ALL_NUMERIC)


def _pow_samples(dt):
    fl = np.dtype(dt).kind == 'f'
    yield S(Arg((3, 4), low=0.5, high=2), Arg((3, 4), low=-2 if fl else 0, high=3))
    yield S(Arg((3, 1), low=0.5, high=2), Arg((4,), low=0, high=3))
    yield S(Arg((), low=0.5, high=2), Arg((), low=0, high=2))
    yield S(Arg((0, 3), low=0.5, high=2), Arg((3,), low=0, high=2))
    yield S(Arg((3, 4), noncontig=True, low=0.5, high=2), 2)
    yield S(Arg((3, 4), low=0.5, high=2), 0)
    yield S(Arg((3, 4), low=0.5, high=2), -1)            # an error for integer tensors
    yield S(Arg((3, 4), low=0.5, high=2), 2.5)
    yield S(2, Arg((3, 4), low=0, high=3))
    yield S(np.array([0, 1, -1, 2, -2, 3], dt) if dt not in ('uint8', 'bool') else np.array([0, 1, 2], dt),
            np.array([-1, -2, -3, 0, 1, 2], dt) if dt not in ('uint8', 'bool') else np.array([1, 0, 2], dt))


op('pow', _pow_samples, dtypes=ALL_NUMERIC)
op('float_power', lambda dt: [S(Arg((3, 4), low=0.5, high=2), Arg((3, 4), low=-2, high=2)),
                              S(Arg((3, 4), low=0.5, high=2), 2), S(2, Arg((4,), low=-2, high=2))],
   dtypes=FLOATS + INTS)
op('neg', unary_samples(), dtypes=ALL_NUMERIC)
op('positive', unary_samples(), dtypes=ALL_NUMERIC)
unary('reciprocal', 0.5, 3)
unary('rsqrt', 0.2, 5)
unary('square')
unary('abs')
unary('sign')
unary('sgn')
unary('exp')
unary('exp2')
unary('expm1')
unary('log', 0.1, 5)
unary('log2', 0.1, 5)
unary('log10', 0.1, 5)
unary('log1p', -0.9, 5)
unary('sqrt', 0.1, 5)
unary('erf')
unary('erfc')
unary('erfinv', -0.9, 0.9, special=False)
op('i0', lambda dt: [*unary_samples(-5, 5)(dt), S(np.array([0.0, -0.0, 30.0, -12.5]).astype(dt))], dtypes=FLOATS + INTS)
for _n in ('gammainc', 'gammaincc'):    # differentiable in x only (torch: not implemented for a)
    op(f'special.{_n}', lambda dt: [S(Arg((3, 4), low=0.2, high=6, grad=False), Arg((3, 4), low=0.01, high=9)),
                                     S(Arg((4,), low=0.5, high=3, grad=False), Arg((2, 1), low=0.5, high=3)),
                                     S(np.array([0.0, 1.0, -1.0, 2.0]).astype(dt), np.array([1.0, 0.0, 1.0, -1.0]).astype(dt),
                                       )], dtypes=FLOATS)
op('special.entr', lambda dt: [*unary_samples(0.1, 4)(dt), S(np.array([0.0, -1.0, 2.0]).astype(dt))], dtypes=FLOATS)
op('special.erfcx', lambda dt: [*unary_samples(-3, 20)(dt), S(_special(dt))], dtypes=FLOATS)
op('special.log_ndtr', lambda dt: [*unary_samples(-6, 4)(dt), S(_special(dt)),
                                   S(np.array([-40.0, -1.0, -1.0001, -0.9999, 12.0, -1e3]).astype(dt))], dtypes=FLOATS)
for _n in ('i0e', 'i1', 'i1e'):
    op(f'special.{_n}', lambda dt: [*unary_samples(-25, 25)(dt), S(np.array([0.0, -1e-3, 30.0]).astype(dt))],
       dtypes=FLOATS)


# torch.special's Bessel and Airy functions, zeta and orthogonal polynomials: float32 and float64 kernels (integers
# and bool compute in float32; float16 is torch's NotImplementedError), no gradient but zeta's in q.
# tests/test_special_functions.py compares them with torch and scipy on dense grids.
_SPECIAL_DTYPES = ALL_NUMERIC + ('float16',)


def _bessel_samples(low, high, edges):
    def gen(dt):
        yield from unary_samples(low, high)(dt)
        yield S(_special(dt))
        if dt in FLOATS:
            yield S(np.array(edges, dt))
    return gen


for _n, _lo, _hi, _edges in (
        ('airy_ai', -12, 8, [-30.5, -2.09, -2.1, 1.49, 1.5, 25.0, 103.0, 104.0]),
        ('bessel_j0', -30, 30, [2.0, 2.0001, 5.0, 5.52, 120.5, -1e4]),
        ('bessel_j1', -30, 30, [2.0, 2.0001, 5.0, 3.83, 120.5, -1e4]),
        ('bessel_y0', -1, 30, [1e-8, 0.89, 2.0, 2.0001, 5.0, 120.5, 1e4]),
        ('bessel_y1', -1, 30, [1e-8, 2.2, 2.0, 2.0001, 5.0, 120.5, 1e4]),
        ('modified_bessel_i0', -30, 30, [1e-8, 80.0, -80.0]),
        ('modified_bessel_i1', -30, 30, [1e-8, 80.0, -80.0]),
        ('modified_bessel_k0', -1, 30, [1e-8, 2.0, 2.0001, 80.0]),
        ('modified_bessel_k1', -1, 30, [1e-8, 2.0, 2.0001, 80.0]),
        ('scaled_modified_bessel_k0', -1, 30, [1e-8, 2.0, 2.0001, 500.0]),
        ('scaled_modified_bessel_k1', -1, 30, [1e-8, 2.0, 2.0001, 500.0]),
        ('spherical_bessel_j0', -30, 30, [1e-8, 0.4999, 0.5, 1e5])):
    op(f'special.{_n}', _bessel_samples(_lo, _hi, _edges), dtypes=_SPECIAL_DTYPES, grad=False)


def _zeta_samples(dt):
    yield from binary_samples(1.2, 6, 0.3, 5, scalars=False)(dt)
    yield S(2.5, Arg((3, 4), low=0.3, high=5))            # self_scalar: the gradient in q is compared
    yield S(3, Arg((5,), low=0.3, high=5))
    yield S(Arg((3, 4), low=1.2, high=6), 1.5)             # other_scalar
    if dt in FLOATS:                   # torch's special cases: x = 1, x < 1, q <= 0, infinities, nan
        x = np.array([1.0, 0.5, 2.0, 3.0, 2.5, 2.0, NAN, 2.0, INF, INF, 2.0, 4.0], dt)
        q = np.array([2.0, 2.0, 0.0, -1.5, -1.5, -INF, 1.0, NAN, 1.0, 2.0, 1e-3, 1e4], dt)
        yield S(x, q)


op('special.zeta', _zeta_samples, dtypes=_SPECIAL_DTYPES)


def _polynomial_samples(low, high):
    def gen(dt):
        n = np.arange(12).reshape(3, 4)
        yield S(Arg((3, 4), low=low, high=high), n)
        yield S(Arg((5, 1), low=low, high=high), np.array([[0, 1, 3, 8, 13]]))           # broadcast
        yield S(Arg((3, 4), low=low, high=high, noncontig=True), n + 0.5)                 # n truncated
        yield S(Arg((), low=low, high=high), np.array(7))
        yield S(Arg((0, 3), low=low, high=high), np.array([1, 2, 3]))
        yield S(Arg((3, 4), low=low, high=high), 5)                                        # n_scalar
        yield S(Arg((3, 4), low=low, high=high), 2.5)
        yield S(0.25, np.arange(-2, 20))                                                   # x_scalar
        yield S(Arg((4,), low=low, high=high), Arg((4,), low=-3, high=30))                # n in x's dtype
        if dt in FLOATS:               # end values, infinities, n < 0 (NaN x only with n = 0: see the kernels)
            x = np.array([1.0, -1.0, 0.0, -0.0, 0.5, 1.0, -1.0, INF, -INF, 2.5, NAN, 0.3, 0.3], dt)
            k = np.array([5, 6, 9, 4, 50, 40, 41, 3, 2, 30, 0, -1, 1e19], dt)
            yield S(x, k)
    return gen


for _n, _lo, _hi in (('chebyshev_polynomial_t', -1.2, 1.2), ('chebyshev_polynomial_u', -1.2, 1.2),
                     ('chebyshev_polynomial_v', -1.2, 1.2), ('chebyshev_polynomial_w', -1.2, 1.2),
                     ('shifted_chebyshev_polynomial_t', -0.1, 1.1), ('shifted_chebyshev_polynomial_u', -0.1, 1.1),
                     ('shifted_chebyshev_polynomial_v', -0.1, 1.1), ('shifted_chebyshev_polynomial_w', -0.1, 1.1),
                     ('hermite_polynomial_h', -3, 3), ('hermite_polynomial_he', -3, 3),
                     ('laguerre_polynomial_l', -2, 8), ('legendre_polynomial_p', -1.2, 1.2)):
    op(f'special.{_n}', _polynomial_samples(_lo, _hi), dtypes=_SPECIAL_DTYPES, grad=False)
unary('floor')
unary('ceil')
unary('trunc')
unary('frac')
op('round', lambda dt: [*unary_samples()(dt), S(_special(dt)), S(Arg((3, 4), low=-300, high=300), decimals=1),
                        S(Arg((3, 4), low=-300, high=300), decimals=-1),
                        S(np.array([0.5, 1.5, 2.5, -0.5, -1.5]).astype(dt))], dtypes=ALL_NUMERIC)

# --- trigonometric and friends ---------------------------------------------------------------
for _n in ('sin', 'cos', 'atan', 'sinh', 'cosh', 'asinh', 'tanh', 'sigmoid', 'deg2rad', 'rad2deg', 'sinc'):
    unary(_n)
unary('tan', -1.2, 1.2)
unary('asin', -0.9, 0.9, special=False)
unary('acos', -0.9, 0.9, special=False)
unary('atanh', -0.9, 0.9, special=False)
unary('acosh', 1.2, 4, special=False)
unary('angle')
unary('conj_physical')
# NOTE [complex views]: views that reinterpret the dtype (strides and offset compared in the new dtype's elements)
op('real', unary_samples(), dtypes=('float32', 'complex64', 'complex128'), view=True,
   grad_dtypes=('float64', 'complex128'))
op('imag', unary_samples(), dtypes=('complex64', 'complex128'), view=True, grad_dtypes=('complex128',))
op('view_as_real', unary_samples(), dtypes=('complex64', 'complex128'), view=True, grad_dtypes=('complex128',))
op('view_as_complex', lambda dtype: iter([S(Arg((3, 2))), S(Arg((2, 4, 2))), S(Arg((0, 2))), S(Arg((2,)))]),
   dtypes=('float32', 'float64'), view=True)
op('complex', binary_samples(scalars=False), dtypes=('float32', 'float64'))
op('polar', binary_samples(low=0.1, scalars=False), dtypes=('float32', 'float64'))
op('atan2', binary_samples(), dtypes=ALL_NUMERIC)
op('hypot', binary_samples(), dtypes=ALL_NUMERIC)
op('logaddexp', lambda dt: [*binary_samples()(dt), S(Arg((3,), low=-300, high=300), Arg((3,), low=-300, high=300))],
   dtypes=ALL_NUMERIC)
op('xlogy', lambda dt: [*binary_samples(0, 3, 0.1, 3)(dt), S(np.array([0., 0., 1.]).astype(dt), np.array([NAN, 2., 0.]).astype(dt)
                                                              if np.dtype(dt).kind == 'f' else np.array([1, 2, 3], dt)),
                        S(2, Arg((3,), low=0.1, high=3))], dtypes=ALL_NUMERIC)
op('copysign', lambda dt: [*binary_samples()(dt), S(Arg((3, 4)), -0.0)], dtypes=ALL_NUMERIC)
op('heaviside', lambda dt: [S(_special(dt), _special(dt)[::-1].copy()), S(Arg((3, 4)), Arg((4,))),
                            S(Arg((3, 4)), Arg((), 'float64'))], dtypes=ALL_NUMERIC, grad=False)


def _ties(dt):
    a = np.array([1, 2, 3, 0], dt) if dt != 'bool' else np.array([True, False, True, False])
    b = np.array([1, 0, 4, 0], dt) if dt != 'bool' else np.array([True, True, False, False])
    yield S(a, b)
    if np.dtype(dt).kind == 'f':
        yield S(np.array([NAN, 1, NAN, 2], dt), np.array([1, NAN, NAN, 2], dt))


for _n in ('maximum', 'minimum', 'fmax', 'fmin'):
    op(_n, lambda dt: [*binary_samples()(dt), *_ties(dt)], dtypes=ALL_NUMERIC)


def _clamp_samples(dt):
    yield S(Arg((3, 4)), -1, 1)
    yield S(Arg((3, 4), noncontig=True), min=-1)
    yield S(Arg((3, 4)), max=0.5)
    yield S(Arg((2, 3, 4)), Arg((3, 4), low=-2, high=0), Arg((4,), low=0, high=2))
    yield S(Arg((3, 4)), Arg((3, 4)), Arg((3, 4)))     # min > max in places: the result is max
    yield S(Arg((0, 4)), -1, 1)
    yield S(Arg(()), 0.5)
    yield S(Arg((3,)))                                # neither bound: an error
    if np.dtype(dt).kind == 'f':
        yield S(_special(dt), -1, 2)


op('clamp', _clamp_samples, dtypes=ALL_NUMERIC)
op('clamp_min', lambda dt: [S(Arg((3, 4)), 0.5), S(Arg((3, 4)), Arg((4,)))], dtypes=ALL_NUMERIC)
op('clamp_max', lambda dt: [S(Arg((3, 4)), 0.5), S(Arg((3, 4)), Arg((4,)))], dtypes=ALL_NUMERIC)
op('clip', lambda dt: [S(Arg((3, 4)), -1, 1), S(Arg((3, 4)), max=Arg((4,)))], dtypes=FLOATS + INTS)
op('lerp', lambda dt: [S(Arg((3, 4)), Arg((3, 4)), 0.3), S(Arg((3, 4)), Arg((4,)), 0.7),
                       S(Arg((3, 4)), Arg((3, 4)), Arg((3, 4), low=0, high=1)),
                       S(Arg((3, 1)), Arg((4,)), Arg((), low=0, high=1))], dtypes=ALL_NUMERIC)
op('addcmul', lambda dt: [S(Arg((3, 4)), Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((4,)), Arg((3, 1)), value=2),
                          S(Arg(()), Arg((2,)), Arg(()), value=0.5)], dtypes=ALL_NUMERIC)
op('addcdiv', lambda dt: [S(Arg((3, 4)), Arg((3, 4)), _nonzero((3, 4), dt)),
                          S(Arg((3, 4)), Arg((4,)), _nonzero((3, 1), dt), value=2)], dtypes=ALL_NUMERIC)
op('nan_to_num', lambda dt: [S(_special(dt)), S(_special(dt), nan=1.0, posinf=2.0), S(_special(dt), neginf=-5.0),
                             S(Arg((3, 4)))], dtypes=ALL_NUMERIC)

op('logaddexp2', lambda dt: [*binary_samples()(dt), S(Arg((3,), low=-300, high=300), Arg((3,), low=-300, high=300))],
   dtypes=ALL_NUMERIC)
op('nextafter', lambda dt: [S(Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((4,))), S(Arg((3,)), 2.0)],
   dtypes=FLOATS + INTS, grad=False)
op('gcd', lambda dt: [S(Arg((3, 4), low=-20, high=20), Arg((3, 4), low=-20, high=20)), S(Arg((3,)), 4)],
   dtypes=INTS + FLOATS, grad=False)
op('lcm', lambda dt: [S(Arg((3, 4), low=-20, high=20), Arg((4,), low=-20, high=20))], dtypes=INTS + FLOATS, grad=False)
op('logit', lambda dt: [*unary_samples(0.05, 0.95)(dt), S(Arg((3, 4), low=-0.5, high=1.5)),
                        S(Arg((3, 4), low=0, high=1), eps=0.2), S(Arg((3, 4), low=-0.5, high=1.5), 0.1)],
   dtypes=ALL_NUMERIC)
for _n in ('lgamma', 'digamma'):   # poles at 0 and negative integers; torch's values at +-inf are its own
    op(_n, lambda dt: [*unary_samples(0.1, 5)(dt), S(np.array([0., -0., -2.5, 1.5]).astype(dt))],
       dtypes=ALL_NUMERIC)
op('polygamma', lambda dt: [S(1, Arg((3, 4), low=0.5, high=4)), S(0, Arg((5,), low=0.5, high=4)),
                            S(2, Arg((3,), low=0.5, high=4)), S(-1, Arg((3,)))], dtypes=FLOATS + INTS)
# (torch's gradient of ldexp for a negative *integer* exponent is 0, from an integer 2**e; ember's is 2**e)
op('ldexp', lambda dt: [S(Arg((3, 4)), Arg((3, 4), 'int64', low=0, high=3)), S(Arg((3, 4)), Arg((4,), low=-2, high=2))],
   dtypes=FLOATS + INTS)

# --- comparisons, predicates, logical and bitwise ops ------------------------------------------------
for _n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greater', 'greater_equal', 'less', 'less_equal', 'not_equal',
           'logical_and', 'logical_or', 'logical_xor'):
    op(_n, binary_samples(-1, 1), dtypes=ALL_NUMERIC, grad=False)
op('logical_not', unary_samples(), dtypes=ALL_NUMERIC, grad=False)
for _n in ('isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf', 'isreal', 'signbit'):
    unary(_n, grad=False)
for _n in ('bitwise_and', 'bitwise_or', 'bitwise_xor'):
    op(_n, binary_samples(-10, 10), dtypes=INTS_BOOL + FLOATS, grad=False)
for _n in ('bitwise_left_shift', 'bitwise_right_shift'):
    op(_n, lambda dt: [S(Arg((3, 4), low=-10, high=10), Arg((3, 4), low=0, high=5)), S(Arg((5,), low=-50, high=50), 2),
                       S(Arg((5,), low=-50, high=50), 70), S(Arg((5,), low=-50, high=50), np.array([-1, 0, 1, 63, 64]))],
       dtypes=('int64', 'int32') + FLOATS, grad=False)
unary('bitwise_not', dtypes=INTS_BOOL + FLOATS, grad=False)
op('where', lambda dt: [S(Arg((3, 4), 'bool'), Arg((3, 4)), Arg((3, 4))), S(Arg((3, 1), 'bool'), Arg((4,)), Arg(())),
                        S(Arg((3, 4), 'bool'), Arg((3, 4)), 0.5), S(Arg((3, 4), 'uint8'), Arg((3, 4)), Arg((3, 4))),
                        S(Arg((3, 4), 'float32'), Arg((3, 4)), Arg((3, 4))), S(Arg((60, 50), 'bool'), Arg((60, 50)), 0)],
   dtypes=ALL_NUMERIC)

# --- activations (torch.nn.functional) ----------------------------------------------------------
_ZERO = lambda dt: S(np.array([-1, 0, 2], dt) if dt != 'uint8' else np.array([0, 1, 2], dt))


def act(name, *extra, low=-3, high=3, dtypes=FLOATS + ('int64',), **kw):
    def gen(dt):
        yield from unary_samples(low, high)(dt)
        yield _ZERO(dt)
        for e in extra:
            yield e
    op(name, gen, dtypes=dtypes, torch_name=f'nn.functional.{name}', **kw)


act('relu', dtypes=ALL_NUMERIC)
act('relu6', S(Arg((7,), low=-2, high=8)))
act('hardtanh', S(Arg((3, 4)), -0.5, 0.5), S(Arg((3, 4)), min_val=-2, max_val=-1))
act('leaky_relu', S(Arg((3, 4)), 0.2))
act('elu', S(Arg((3, 4)), 0.5))
act('selu')
act('celu', S(Arg((3, 4)), 0.5))
act('gelu', S(Arg((3, 4)), approximate='tanh'), S(Arg((3,)), approximate='bad'))
act('silu')
act('mish')
act('softplus', S(Arg((3, 4)), 2, 1), S(Arg((3,), low=10, high=30)))
act('hardswish', low=-5, high=5)
act('hardsigmoid', low=-5, high=5, gradgrad=False)     # torch has no double backward for it
act('logsigmoid', S(Arg((4,), low=-100, high=100)))
act('softsign')
act('tanhshrink')
act('softshrink', S(Arg((3, 4)), 1.0), S(Arg((3,)), -1.0))
act('hardshrink', S(Arg((3, 4)), 1.0))
op('threshold', lambda dt: [S(Arg((3, 4)), 0.5, 2.0), S(Arg((3, 4), noncontig=True), 1, -1), S(Arg(()), 0, 0)],
   dtypes=ALL_NUMERIC[:-1], torch_name='nn.functional.threshold')
op('prelu', lambda dt: [S(Arg((2, 3, 4)), Arg((3,))), S(Arg((3, 4)), Arg((1,))), S(Arg((2, 3)), Arg((2,))),
                        S(Arg((5,)), Arg((1,))), S(Arg(()), Arg(())), S(Arg((2, 3, 4), noncontig=True), Arg(())),
                        S(Arg((0, 3)), Arg((3,))), S(Arg((2, 3)), Arg((1, 3)))],
   dtypes=FLOATS, torch_name='nn.functional.prelu')
op('_prelu_kernel', lambda dt: [S(Arg((2, 3, 4)), Arg((1, 3, 1))), S(Arg((3,)), Arg((2, 3))), S(Arg(()), Arg(())),
                                S(Arg((4, 3), noncontig=True), Arg((3,))), S(Arg((0, 2)), Arg((1, 2)))],
   dtypes=FLOATS, torch_name='_prelu_kernel')
op('_prelu_kernel_backward', lambda dt: [S(Arg((2, 3, 4)), Arg((2, 3, 4)), Arg((1, 3, 1))),
                                         S(Arg((2, 3)), Arg((3,)), Arg((2, 3))), S(Arg(()), Arg(()), Arg(())),
                                         S(Arg((4, 3), noncontig=True), Arg((4, 3)), Arg((3,)))],
   dtypes=FLOATS, torch_name='ops.aten._prelu_kernel_backward', grad=False, gradgrad=False)
act('rrelu')
op('glu', lambda dt: [S(Arg((2, 4))), S(Arg((4, 3)), 0), S(Arg((3, 3)), 1), S(Arg(()))], dtypes=FLOATS,
   torch_name='nn.functional.glu')
op('ops.aten.threshold_backward', lambda dt: [S(Arg((3, 4)), Arg((3, 4)), 0.5), S(Arg((3, 4)), Arg((4,)), 0)],
   dtypes=FLOATS)
op('ops.aten.gelu_backward', lambda dt: [S(Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((3, 4)), approximate='tanh')],
   dtypes=FLOATS)
op('ops.aten.silu_backward', lambda dt: [S(Arg((3, 4)), Arg((3, 4)))], dtypes=FLOATS)

# --- in-place methods: the result is written into self (errors when it would need a broadcast or a
# category downgrade, e.g. int_tensor.add_(2.5)); no grad checks (in-place on leaves is an error) ---------
for _n, _gen, _dts in [('add_', binary_samples(), ALL_NUMERIC), ('sub_', binary_samples(), NO_BOOL),
                       ('mul_', binary_samples(), ALL_NUMERIC), ('div_', lambda dt: [*division('div_')(dt), *division('div_', {'rounding_mode': 'floor'})(dt),
                                                      *division('div_', {'rounding_mode': 'trunc'})(dt)], FLOATS + INTS),
                       ('floor_divide_', division('floor_divide_'), FLOATS + INTS),
                       ('remainder_', division('remainder_'), FLOATS + INTS),
                       ('pow_', _pow_samples, FLOATS + INTS), ('bitwise_and_', binary_samples(-10, 10), INTS_BOOL),
                       ('lerp_', lambda dt: [S(Arg((3, 4)), Arg((4,)), 0.3)], FLOATS),
                       ('addcmul_', lambda dt: [S(Arg((3, 4)), Arg((4,)), Arg((3, 1)), value=2)], FLOATS + INTS),
                       ('clamp_', _clamp_samples, FLOATS + INTS), ('relu_', unary_samples(), FLOATS + INTS),
                       ('sigmoid_', unary_samples(), FLOATS + INTS), ('abs_', unary_samples(), FLOATS + INTS),
                       ('nan_to_num_', lambda dt: [S(_special(dt), nan=1.0)], FLOATS + INTS)]:
    op(_n, _gen, dtypes=_dts, method=True, grad=False)
