"""torch.special's Bessel, Airy and Hurwitz zeta functions and orthogonal polynomials against torch (and, where
torch's own values are inexact, against scipy.special) on dense grids: large and negative arguments, degrees up
to 50 and beyond, NaN and infinities, float32 and float64, dtype promotion, out=, errors and gradients.

torch 2.13's float64 J0, J1, Y0, Y1 between 2 and 25 are off by up to 2e-6 of their amplitude, and its Ai
between -5 and -2.09 by up to 1e-5 (measured against mpmath at 30 digits); ember's are within 1e-14 there, so
those ranges are compared with scipy tightly and with torch at torch's accuracy.
"""
from math import comb

import numpy as np
import pytest
import scipy.special as sc
import torch

import ember
from numpy.lib.stride_tricks import sliding_window_view

NAN, INF = float('nan'), float('inf')


def _envelope(values, half_width):
    """The largest |value| within half_width grid points: the scale of an absolute error next to a zero."""
    v = np.abs(np.nan_to_num(np.asarray(values, np.float64), posinf=0.0, neginf=0.0))
    pad = np.pad(v, [(0, 0)] * (v.ndim - 1) + [(half_width, half_width)], mode='edge')
    return sliding_window_view(pad, 2 * half_width + 1, axis=-1).max(-1)


def _both(name, *args, dtype='float64'):
    conv = [lambda lib, a=a: lib.from_numpy(np.asarray(a, dtype)) if isinstance(a, np.ndarray) else a for a in args]
    mine = getattr(ember.special, name)(*[c(ember) for c in conv]).numpy()
    theirs = getattr(torch.special, name)(*[c(torch) for c in conv]).numpy()
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    return mine, theirs


def _close(mine, ref, rel, x=None, what='', half_width=100, floor=1e-300):
    """|mine - ref| <= rel * max(envelope(ref), floor), with the same NaNs and infinities; half_width=0 makes it
    a plain relative comparison (functions without zeros)."""
    if not mine.size:
        return
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref), err_msg=f'{what}: NaN positions')
    inf = np.isinf(ref) | np.isinf(mine)
    np.testing.assert_array_equal(mine[inf], ref[inf], err_msg=f'{what}: infinities')
    env = _envelope(ref, half_width)
    ok = np.isfinite(ref) & np.isfinite(mine)
    diff = np.abs(np.where(ok, mine, 0).astype(np.float64) - np.where(ok, ref, 0))
    err = diff / np.maximum(env, floor)
    i = np.unravel_index(np.argmax(err), err.shape)
    assert err[i] <= rel, f'{what}: error {err[i]:.2e} of the envelope at {"" if x is None else x[i]}: ' \
                          f'{mine[i]!r} vs {ref[i]!r}'


# --- Bessel and Airy functions ---------------------------------------------------------------------------

GRID = np.concatenate([np.linspace(-60, 60, 24001), np.geomspace(1e-9, 1e5, 2001), -np.geomspace(1e-9, 1e5, 2001)])
EDGES = np.array([NAN, INF, -INF, 0.0, -0.0, 1e-300, 5e-324, -1e-300, 1e10, 1e17, 1e300, -1e300, 2.0, 1.0,
                  -2.09, 1.5, 103.8, 103.892, 103.9, 700.0, 710.0, 750.0, -1e8])
UNARY = ['airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0', 'modified_bessel_i1',
         'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1',
         'spherical_bessel_j0']
SCIPY = {'airy_ai': lambda x: sc.airy(x)[0], 'bessel_j0': sc.j0, 'bessel_j1': sc.j1, 'bessel_y0': sc.y0,
         'bessel_y1': sc.y1, 'modified_bessel_k0': sc.k0, 'modified_bessel_k1': sc.k1,
         'scaled_modified_bessel_k0': sc.k0e, 'scaled_modified_bessel_k1': sc.k1e, 'modified_bessel_i0': sc.i0,
         'modified_bessel_i1': sc.i1, 'spherical_bessel_j0': lambda x: sc.spherical_jn(0, x)}


OSCILLATING = ('airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'spherical_bessel_j0')


def _torch_inexact(name, x):
    """Where torch 2.13's float64 values are far from the function's (see the module's docstring)."""
    if name.startswith('bessel_'):
        return (np.abs(x) > 2) & (np.abs(x) < 25)
    if name == 'airy_ai':
        return (x > -5) & (x <= -2.09)
    return np.zeros(x.shape, bool)


@pytest.mark.parametrize('name', UNARY)
def test_bessel_and_airy_match_torch_in_float64(name):
    mine, theirs = _both(name, GRID)
    inexact = _torch_inexact(name, GRID)
    width = 100 if name in OSCILLATING else 0
    _close(mine[~inexact], theirs[~inexact], 1e-12, GRID[~inexact], name, width)
    _close(mine[inexact], theirs[inexact], 3e-5 if name != 'airy_ai' else 5e-5, GRID[inexact],
           name + ' (where torch is inexact)', width)


@pytest.mark.parametrize('name', UNARY)
def test_bessel_and_airy_match_scipy_in_float64(name):
    x = GRID[np.abs(GRID) <= (100 if name != 'airy_ai' else 30)]   # beyond, both round the phase, each its way
    mine = getattr(ember.special, name)(ember.from_numpy(x)).numpy()
    ref = SCIPY[name](x)
    if name.endswith(('k0', 'k1')) or name.startswith('bessel_y'):
        ref = np.where(x < 0, NAN, ref)       # scipy's K and Y of x < 0 are nan too, except at -0
    _close(mine, ref, 1e-14 if name != 'airy_ai' else 1e-13, x, name, 100 if name in OSCILLATING else 0)


@pytest.mark.parametrize('name', UNARY)
def test_bessel_and_airy_special_values_are_torchs(name):
    mine, theirs = _both(name, EDGES)
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-300, equal_nan=True,
                               err_msg=f'{name} at {EDGES}')


@pytest.mark.parametrize('name', UNARY)
def test_bessel_and_airy_float32_match_torch(name):
    x = np.concatenate([np.linspace(-40, 40, 8001), np.geomspace(1e-6, 1e6, 801), -np.geomspace(1e-6, 1e6, 801),
                        [NAN, INF, -INF, 0.0]]).astype(np.float32)
    mine, theirs = _both(name, x, dtype='float32')
    # torch rounds the phase x - pi/4 in float32 and so does ember: at 1e6 that is what is left of the value.
    # Below float32's smallest normal number (Ai beyond 26, K beyond 85) torch's float32 exp over- or underflows
    # where ember's float64 does not: the floor ignores those subnormal differences.
    _close(mine, theirs, 3e-5, x, name, 100 if name in OSCILLATING else 0, floor=1e-30)


def test_integers_and_bool_compute_in_float32():
    for name in UNARY:
        for dt in ('int64', 'int32', 'uint8', 'bool'):
            x = np.array([0, 1, 3, 7]).astype(dt)
            mine, theirs = _both(name, x, dtype=dt)
            assert mine.dtype == np.float32
            np.testing.assert_allclose(mine, theirs, rtol=2e-6, atol=1e-7, err_msg=f'{name} {dt}')


def _ones_call(lib, name, dtype):
    t = lib.ones(3, dtype=getattr(lib, dtype))
    return getattr(lib.special, name)(t) if name in UNARY else getattr(lib.special, name)(t, t)


@pytest.mark.parametrize('name', UNARY + ['zeta', 'chebyshev_polynomial_t', 'laguerre_polynomial_l'])
@pytest.mark.parametrize('dtype', ['float16', 'bfloat16', 'complex64'])
def test_float16_bfloat16_and_complex_raise_as_in_torch(name, dtype):
    with pytest.raises(NotImplementedError) as theirs:
        _ones_call(torch, name, dtype)
    with pytest.raises(NotImplementedError) as mine:
        _ones_call(ember, name, dtype)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize('name', UNARY + ['chebyshev_polynomial_u', 'hermite_polynomial_h'])
def test_no_gradient_as_in_torch(name):
    """torch's outputs do not require grad (no node, no error); backward through them then fails as in torch."""
    for lib in (torch, ember):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = getattr(lib.special, name)(x) if name in UNARY else getattr(lib.special, name)(x, 3)
        assert not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError, match='does not require grad'):
            y.sum().backward()


def test_modified_bessel_i0_i1_are_i0_i1_without_a_gradient():
    x = ember.linspace(-30, 30, 301, dtype=ember.float64)
    assert ember.equal(ember.special.modified_bessel_i0(x), ember.i0(x))
    assert ember.equal(ember.special.modified_bessel_i1(x), ember.special.i1(x))
    g = x.clone().requires_grad_()
    assert ember.special.i0(g).requires_grad and not ember.special.modified_bessel_i0(g).requires_grad


def test_out_and_keyword_names_are_torchs():
    for lib in (torch, ember):
        o = lib.empty(3, dtype=lib.float64)
        r = lib.special.bessel_j0(input=lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), out=o)
        assert r is o
        assert lib.special.airy_ai(x=lib.tensor([1.0])).shape == (1,)
        assert lib.special.scaled_modified_bessel_k1(x=lib.tensor([1.0])).shape == (1,)
        assert lib.special.chebyshev_polynomial_t(x=lib.tensor([0.5]), n=lib.tensor([3])).item() == -1.0
        assert lib.special.zeta(input=lib.tensor([2.0]), other=lib.tensor([1.0])).shape == (1,)
    np.testing.assert_allclose(ember.special.bessel_j0(ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).numpy(),
                               sc.j0([1.0, 2.0, 3.0]), rtol=1e-15)


# --- Hurwitz zeta -------------------------------------------------------------------------------------------

def _zeta_grid():
    x = np.concatenate([np.linspace(1.0, 12, 45), np.arange(1.0, 13), [20.0, 35.5, 60.0, 100.0]])
    q = np.concatenate([np.linspace(-30, 60, 181), [1e-8, 1e-3, 8.9999, 9.0, 9.0001, 1e4, 1e8, 1e12]])
    return np.meshgrid(x, q, indexing='ij')


@pytest.mark.parametrize('dtype', ['float64', 'float32'])
def test_zeta_matches_torch(dtype):
    x, q = (a.astype(dtype) for a in _zeta_grid())
    mine, theirs = _both('zeta', x, q, dtype=dtype)
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(mine), np.isinf(theirs))
    fin = np.isfinite(theirs)
    # the same sums in the same order: float64 to a few ulps of the largest term (q < 0 sums terms of both
    # signs); float32 (ember rounds a float64 sum once, torch's float32 kernel is less exact) to a few float32 ulps
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    nearest = np.where(q64 > 0, q64, np.abs(q64 - np.round(q64)))
    largest = np.where(fin, nearest, 1.0) ** -np.where(fin, x64, 0.0)
    rtol, ulps, tiny = (1e-13, 1e-15, 0.0) if dtype == 'float64' else (2.5e-7, 5e-7, 1e-44)   # tiny: subnormals
    bad = np.abs(mine[fin] - theirs[fin].astype(np.float64)) > rtol * np.abs(theirs[fin]) + ulps * largest[fin] + tiny
    assert not bad.any(), list(zip(x[fin][bad], q[fin][bad], mine[fin][bad], theirs[fin][bad]))[:5]


def test_zeta_matches_scipy_where_it_converges():
    x, q = _zeta_grid()
    keep = (x > 1) & (q > 0) & (q < 1e8)
    mine = ember.special.zeta(ember.from_numpy(x[keep]), ember.from_numpy(q[keep])).numpy()
    np.testing.assert_allclose(mine, sc.zeta(x[keep], q[keep]), rtol=1e-13)


def test_zeta_special_cases_are_torchs():
    x = np.array([1.0, 0.5, -2.0, 2.0, 2.0, 3.0, 2.5, 2.0, NAN, NAN, NAN, 2.0, INF, INF, INF, INF, -INF, 1.5, 1.5,
                  50.0])
    q = np.array([2.0, 2.0, 2.0, 0.0, -0.0, -1.5, -1.5, -INF, -1.0, 2.0, -1.5, NAN, 1.0, 2.0, -1.5, 0.5, 2.0, 1e300,
                  1e-300, 0.5])
    mine, theirs = _both('zeta', x, q)
    np.testing.assert_array_equal(mine, theirs)      # inf, nan and 0 where torch gives them; no other values


def test_zeta_far_below_zero_sums_every_term_as_torch():
    x, q = np.array([2.0, 3.0, 4.0]), np.array([-1e6 + 0.5, -123456.25, -3000.75])
    mine, theirs = _both('zeta', x, q)
    np.testing.assert_allclose(mine, theirs, rtol=1e-14)


def test_zeta_scalar_overloads_and_promotion():
    for x, q in [(2.0, np.array([1.0, 2.5])), (np.array([2.0, 3.0]), 1.5), (3, np.array([2, 3])),
                 (np.array([2, 3]), np.array([1.5], np.float32))]:
        conv = lambda lib, a: lib.from_numpy(a) if isinstance(a, np.ndarray) else a
        mine = ember.special.zeta(conv(ember, x), conv(ember, q))
        theirs = torch.special.zeta(conv(torch, x), conv(torch, q))
        assert str(mine.dtype).split('.')[1] == str(theirs.dtype).split('.')[1]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-7)
    with pytest.raises(TypeError):
        ember.special.zeta(2.0, 3.0)


def test_zeta_gradient_in_q_and_none_in_x():
    xs, qs = np.array([2.0, 3.5, 6.0]), np.array([0.5, 1.5, 7.0])
    res = {}
    for lib in (torch, ember):
        q = lib.tensor(qs, dtype=lib.float64, requires_grad=True)
        z = lib.special.zeta(lib.tensor(xs, dtype=lib.float64), q)
        g, = lib.autograd.grad((z * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum(), q, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), q)
        res[lib] = g.detach().numpy(), gg.numpy()
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented."):
            lib.special.zeta(x, lib.tensor(qs, dtype=lib.float64)).sum().backward()
    for mine, theirs in zip(res[ember], res[torch]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_bernoulli_numbers_of_the_zeta_tail():
    from ember._backends.cpu._zeta import BERNOULLI_EVEN
    from fractions import Fraction
    b = [Fraction(1)]
    for m in range(1, 2 * len(BERNOULLI_EVEN) + 1):
        b.append(-sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    assert [Fraction(n, d) for n, d in BERNOULLI_EVEN] == b[2::2]


# --- orthogonal polynomials -------------------------------------------------------------------------------

POLYNOMIALS = ['chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w',
               'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
               'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h', 'hermite_polynomial_he',
               'laguerre_polynomial_l', 'legendre_polynomial_p']
X_POLY = np.concatenate([np.linspace(-3, 3, 1201), [-1.0, 1.0, 0.0, -0.0, 0.5, 1 - 2 ** -53, -1 + 2 ** -53,
                                                    2 ** -60, INF, -INF, 1e200, -1e200, 30.0, -30.0]])
N_POLY = np.concatenate([np.arange(-3, 61), [2.5, -0.5, 6.9, 8.5, 100.0, 257.0, 1e19, -1e19, INF, -INF, NAN]])


@pytest.mark.parametrize('name', POLYNOMIALS)
@pytest.mark.parametrize('dtype', ['float64', 'float32'])
def test_polynomials_match_torch_on_a_grid_of_x_and_n(name, dtype):
    """x in and outside [-1, 1] (and [0, 1] for the shifted ones), degrees to 257, fractional, negative, NaN, inf
    and out-of-range n; every value torch gives, NaN, inf and overflow included, except NaN x (below)."""
    x, n = np.meshgrid(X_POLY, N_POLY, indexing='ij')
    with np.errstate(over='ignore'):             # +-1e200 and 1e19 are +-inf in float32
        x, n = x.astype(dtype), n.astype(dtype)
    mine, theirs = _both(name, x, n, dtype=dtype)
    # float64: ulps of the recurrence's terms (torch fuses a*b - c, NumPy cannot). float32 recurrences agree to the
    # bit; torch's float32 closed forms (cos(n acos x), ...) carry n times its float32 acos's error, 5e-5 at n = 257
    _close(mine.T, theirs.T, 1e-11 if dtype == 'float64' else 1e-4, x.T, name, floor=1e-37)


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_polynomials_of_nan_are_nan_and_of_n_below_zero_zero(name):
    """Where x is NaN torch returns 1 for n = 0 and otherwise NaN, or for some n a value it never wrote (its
    recurrence stops before its first step): ember returns NaN there."""
    x = ember.tensor([NAN] * 6 + [0.3] * 4, dtype=ember.float64)
    n = ember.tensor([0, 1, 2, 5, 9, 30, -1, -7, NAN, 1e19], dtype=ember.float64)
    got = getattr(ember.special, name)(x, n).tolist()
    assert got[0] == 1.0 and all(np.isnan(got[1:6])) and got[6:] == [0.0] * 4


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_polynomial_scalar_overloads_broadcasting_and_promotion(name):
    cases = [(np.linspace(-1.5, 1.5, 7), 4), (np.linspace(-1.5, 1.5, 7), 12.7), (0.3, np.arange(-2, 40)),
             (np.linspace(-1, 1, 5)[:, None], np.arange(0, 12)[None, :]), (np.array([2, -1, 0]), np.array([3, 4, 5])),
             (np.array([True, False]), np.array([3])), (np.float64(0.25) * np.ones(3), np.array([9, 10, 11], np.int32)),
             (np.array(0.4, np.float64), np.arange(5, dtype=np.float32))]
    for x, n in cases:
        conv = lambda lib, a: lib.from_numpy(np.asarray(a)) if isinstance(a, np.ndarray) else a
        mine = getattr(ember.special, name)(conv(ember, x), conv(ember, n))
        theirs = getattr(torch.special, name)(conv(torch, x), conv(torch, n))
        assert str(mine.dtype).split('.')[1] == str(theirs.dtype).split('.')[1], (x, n)
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6, err_msg=f'{name}({x}, {n})')
    o = ember.empty(2, dtype=ember.float64)
    assert getattr(ember.special, name)(ember.tensor([0.2, 0.7], dtype=ember.float64), 3, out=o) is o
    with pytest.raises(TypeError):
        getattr(ember.special, name)(0.5, 3)


def test_large_degrees_only_iterate_the_elements_that_need_them():
    x = ember.full((100000,), 1.0001, dtype=ember.float64)
    n = ember.zeros(100000, dtype=ember.float64)
    n[0] = 5000.0
    np.testing.assert_allclose(ember.special.legendre_polynomial_p(x, n)[:2].numpy(),
                               torch.special.legendre_polynomial_p(torch.tensor([1.0001, 1.0001], dtype=torch.float64),
                                                                   torch.tensor([5000.0, 0.0], dtype=torch.float64)),
                               rtol=1e-10)
