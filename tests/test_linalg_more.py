"""torch.linalg's eig/eigvals, cond, solve_ex, tensorinv/tensorsolve, householder_product/orgqr/ormqr, ldl_*, and
torch.geqrf / torch.triangular_solve against torch: values, dtypes, named results, errors and gradients."""
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings('ignore', message='.*triangular_solve is deprecated.*')
_INF = float('inf')


def _both(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value) if type(te.value).__name__ != '_LinAlgError' else RuntimeError) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)


def _arr(shape, dt, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dt).kind == 'c':
        a = a + 1j * rng.standard_normal(shape)
    if shift and len(shape) >= 2:
        a = a + shift * np.eye(shape[-1])
    return a.astype(dt)


def _close(e, t, tol):
    e = e.detach().numpy() if hasattr(e, 'detach') else np.asarray(e)
    t = t.detach().resolve_conj().numpy() if hasattr(t, 'detach') else np.asarray(t)
    assert e.dtype == t.dtype and e.shape == t.shape
    np.testing.assert_allclose(e, t, atol=tol, rtol=tol, equal_nan=True)


def _tol(dt):
    return 1e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10


def _grad(L, fn, *arrays):
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    fn(L, *xs).backward()
    return [x.grad for x in xs]


_DTYPES = ['float32', 'float64', 'complex64', 'complex128']


# --- eig / eigvals ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('shape', [(1, 1), (4, 4), (2, 3, 3), (2, 1, 5, 5), (0, 0), (2, 0, 0)])
def test_eig_matches_torch_up_to_phase(shape, dt):
    a = _arr(shape, dt)
    e, t = ember.linalg.eig(ember.from_numpy(a)), torch.linalg.eig(torch.from_numpy(a))
    assert type(e).__name__ == 'linalg_eig' and e._fields == ('eigenvalues', 'eigenvectors')
    _close(e.eigenvalues, t.eigenvalues, _tol(dt))
    ve, vt = e.eigenvectors.numpy(), t.eigenvectors.numpy()
    assert ve.dtype == vt.dtype and ve.shape == vt.shape
    if ve.size:     # each column up to a unit factor e^{i phi} (LAPACK builds may pick another sign in float32)
        phase = (np.conj(ve) * vt).sum(-2, keepdims=True)
        np.testing.assert_allclose(np.abs(phase), 1, atol=10 * _tol(dt))
        np.testing.assert_allclose(ve * phase, vt, atol=10 * _tol(dt))
    _close(ember.linalg.eigvals(ember.from_numpy(a)), torch.linalg.eigvals(torch.from_numpy(a)), _tol(dt))


@pytest.mark.parametrize('dt', ['float64', 'complex128'])
@pytest.mark.parametrize('shape', [(3, 3), (2, 4, 4)])
def test_eig_gradients_match_torch(shape, dt):
    a = _arr(shape, dt, 1)
    w = [np.random.default_rng(2 + i).standard_normal(s) for i, s in enumerate([shape[:-1], shape[:-1], shape])]

    def loss(L, A):     # reads the eigenvectors through |V| only: a loss torch can differentiate
        ev, V = L.linalg.eig(A)
        return (ev.real * L.tensor(w[0])).sum() + (ev.imag * L.tensor(w[1])).sum() + (V.abs() * L.tensor(w[2])).sum()
    _close(_grad(ember, loss, a)[0], _grad(torch, loss, a)[0], 1e-9)
    vals = lambda L, A: (L.linalg.eigvals(A).abs() * L.tensor(w[0])).sum()
    _close(_grad(ember, vals, a)[0], _grad(torch, vals, a)[0], 1e-9)


def test_eig_phase_dependent_loss_raises_as_torch():
    a = _arr((3, 3), 'float64', 4)
    _both(lambda L: L.linalg.eig(L.tensor(a, requires_grad=True))[1].real.sum().backward())


def test_eigvals_forward_ad_matches_torch():
    import ember.autograd.forward_ad as efw
    import torch.autograd.forward_ad as tfw
    a, t = _arr((3, 3), 'float64', 5), _arr((3, 3), 'float64', 6)
    outs = []
    for L, fw in ((ember, efw), (torch, tfw)):
        with fw.dual_level():
            outs.append(fw.unpack_dual(L.linalg.eigvals(fw.make_dual(L.tensor(a), L.tensor(t)))).tangent)
    _close(outs[0], outs[1], 1e-9)


@pytest.mark.parametrize('fn', [
    lambda L: L.linalg.eig(L.ones(2, 3)), lambda L: L.linalg.eig(L.ones(3)),
    lambda L: L.linalg.eig(L.ones(3, 3, dtype=L.int64)), lambda L: L.linalg.eigvals(L.ones(2, 3)),
    lambda L: L.linalg.eigvals(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.eig(L.ones(3, 3, dtype=L.bfloat16)),
    lambda L: L.linalg.eig(L.tensor([[1., float('nan')], [0., 1.]])),
])
def test_eig_errors_like_torch(fn):
    _both(fn)


# --- cond --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('p', [None, 2, -2, 'fro', 'nuc', _INF, -_INF, 1, -1])
@pytest.mark.parametrize('shape', [(3, 3), (2, 4, 4), (0, 0), (2, 0, 0)])
def test_cond_matches_torch(shape, p, dt):
    a = _arr(shape, dt, shift=2.0)
    _close(ember.linalg.cond(ember.from_numpy(a), p), torch.linalg.cond(torch.from_numpy(a), p), _tol(dt))


@pytest.mark.parametrize('p', [None, 2, -2])
@pytest.mark.parametrize('shape', [(3, 5), (2, 5, 3)])
def test_cond_of_rectangular_matrices(shape, p):
    a = _arr(shape, 'float64')
    _close(ember.linalg.cond(ember.from_numpy(a), p), torch.linalg.cond(torch.from_numpy(a), p), 1e-10)


@pytest.mark.parametrize('p', ['fro', 1, -1, _INF, -_INF])
def test_cond_of_singular_matrices_is_inf(p):
    a = np.stack([np.eye(3), np.zeros((3, 3)), [[1., 2, 0], [2, 4, 0], [0, 0, 1]]])
    _close(ember.linalg.cond(ember.from_numpy(a), p), torch.linalg.cond(torch.from_numpy(a), p), 1e-12)


# torch's 'fro' / +-1 / +-inf path fills its inverse in place, so its backward raises; ember's differentiates
@pytest.mark.parametrize('p', [None, 'nuc', 2, -2])
def test_cond_gradients_match_torch(p):
    a = _arr((2, 3, 3), 'float64', 7, shift=2.0)
    f = lambda L, A: L.linalg.cond(A, p).sum()
    _close(_grad(ember, f, a)[0], _grad(torch, f, a)[0], 1e-9)


@pytest.mark.parametrize('fn', [
    lambda L: L.linalg.cond(L.ones(2, 3), 'fro'), lambda L: L.linalg.cond(L.ones(2, 3), 'nuc'),
    lambda L: L.linalg.cond(L.ones(2, 3), 1), lambda L: L.linalg.cond(L.ones(2, 3), 1.0),
    lambda L: L.linalg.cond(L.ones(2, 3), -_INF), lambda L: L.linalg.cond(L.ones(3)),
    lambda L: L.linalg.cond(L.ones(3), 1), lambda L: L.linalg.cond(L.ones(3, 3), 3),
    lambda L: L.linalg.cond(L.ones(3, 3), 'bad'), lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.int64), 1), lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.float16)),
])
def test_cond_errors_like_torch(fn):
    _both(fn)


# --- solve_ex, tensorinv, tensorsolve ---------------------------------------------------------------------------

@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('a_shape,b_shape,left', [((3, 3), (3,), True), ((3, 3), (3, 2), True),
                                                  ((2, 3, 3), (3, 2), True), ((2, 3, 3), (2, 3), True),
                                                  ((3, 3), (2, 3, 1), True), ((3, 3), (2, 3), False),
                                                  ((2, 3, 3), (2, 4, 3), False), ((2, 3, 3), (1, 3), False)])
def test_solve_ex_matches_torch(a_shape, b_shape, left, dt):
    a, b = _arr(a_shape, dt, 1, shift=3.0), _arr(b_shape, dt, 2)
    e = ember.linalg.solve_ex(ember.from_numpy(a), ember.from_numpy(b), left=left)
    t = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b), left=left)
    assert type(e).__name__ == 'linalg_solve_ex' and e._fields == ('result', 'info')
    _close(e.result, t.result, _tol(dt))
    _close(e.info, t.info, 0)


def test_solve_ex_singular_gives_info_and_lapacks_infs():
    A = np.stack([np.eye(3), np.zeros((3, 3)), np.diag([1., 0, 1])])
    e = ember.linalg.solve_ex(ember.from_numpy(A), ember.ones(3, dtype=ember.float64))
    t = torch.linalg.solve_ex(torch.from_numpy(A), torch.ones(3, dtype=torch.float64))
    _close(e.info, t.info, 0)
    _close(e.result, t.result, 1e-12)
    _both(lambda L: L.linalg.solve_ex(L.tensor(A), L.ones(3, dtype=L.float64), check_errors=True))
    _both(lambda L: L.linalg.solve_ex(L.zeros(3, 3), L.ones(3), check_errors=True))


def test_solve_ex_gradients_match_torch():
    a, b = _arr((2, 3, 3), 'float64', 1, shift=3.0), _arr((3, 2), 'float64', 2)
    f = lambda L, A, B: (L.linalg.solve_ex(A, B).result ** 2).sum()
    for ge, gt in zip(_grad(ember, f, a, b), _grad(torch, f, a, b)):
        _close(ge, gt, 1e-9)


@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('shape,ind', [((4, 6, 8, 3), 2), ((6, 2, 3), 1), ((2, 3, 6), 2), ((4, 4), 1)])
def test_tensorinv_matches_torch(shape, ind, dt):
    a = _arr(shape, dt, 3)
    n = int(np.prod(shape[:ind]))
    a = (a.reshape(n, n) + 3 * np.eye(n)).reshape(shape).astype(dt)
    _close(ember.linalg.tensorinv(ember.from_numpy(a), ind), torch.linalg.tensorinv(torch.from_numpy(a), ind),
           10 * _tol(dt))


@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('a_shape,b_shape,dims', [((2, 3, 6), (2, 3), None), ((6, 2, 3), (6,), None),
                                                  ((2, 6, 3), (2, 3), (1,)), ((3, 2, 2, 3), (2, 3), (0, 2))])
def test_tensorsolve_matches_torch(a_shape, b_shape, dims, dt):
    a, b = _arr(a_shape, dt, 4), _arr(b_shape, dt, 5)
    _close(ember.linalg.tensorsolve(ember.from_numpy(a), ember.from_numpy(b), dims),
           torch.linalg.tensorsolve(torch.from_numpy(a), torch.from_numpy(b), dims), 100 * _tol(dt))


def test_tensorinv_and_tensorsolve_gradients_match_torch():
    a = (_arr((6, 6), 'float64', 3) + 3 * np.eye(6)).reshape(2, 3, 6)
    b = _arr((2, 3), 'float64', 4)
    f = lambda L, A: (L.linalg.tensorinv(A, 2) ** 2).sum()
    _close(_grad(ember, f, a)[0], _grad(torch, f, a)[0], 1e-9)
    g = lambda L, A, B: (L.linalg.tensorsolve(A, B) ** 2).sum()
    for ge, gt in zip(_grad(ember, g, a, b), _grad(torch, g, a, b)):
        _close(ge, gt, 1e-9)


@pytest.mark.parametrize('fn', [
    lambda L: L.linalg.solve_ex(L.eye(3), L.ones(3, 2), left=False),
    lambda L: L.linalg.solve_ex(L.ones(3, 3, dtype=L.int64), L.ones(3)),
    lambda L: L.linalg.solve_ex(L.ones(3, 3), L.ones(4)),
    lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=0),
    lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=1),
    lambda L: L.linalg.tensorinv(L.zeros(2, 2, 4), ind=2),
    lambda L: L.linalg.tensorinv(L.zeros(2, 2, 4, dtype=L.int64), ind=2),
    lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 4)),
    lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 3), dims=(1,)),
    lambda L: L.linalg.tensorsolve(L.zeros(2, 3, 6), L.ones(2, 3)),
])
def test_solver_errors_like_torch(fn):
    _both(fn)


# --- triangular_solve ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('upper,transpose,unit', [(True, False, False), (False, False, False), (True, True, False),
                                                  (False, True, True), (True, False, True)])
@pytest.mark.parametrize('b_shape,a_shape', [((3, 2), (3, 3)), ((2, 3, 1), (2, 3, 3)), ((2, 1, 3, 2), (4, 3, 3))])
def test_triangular_solve_matches_torch(b_shape, a_shape, upper, transpose, unit, dt):
    b, a = _arr(b_shape, dt, 1), _arr(a_shape, dt, 2, shift=3.0)
    e = ember.triangular_solve(ember.from_numpy(b), ember.from_numpy(a), upper, transpose, unit)
    t = torch.triangular_solve(torch.from_numpy(b), torch.from_numpy(a), upper, transpose, unit)
    assert type(e).__name__ == 'triangular_solve' and e._fields == ('solution', 'cloned_coefficient')
    _close(e.solution, t.solution, _tol(dt))
    _close(e.cloned_coefficient, t.cloned_coefficient, 0)
    _close(ember.from_numpy(b).triangular_solve(ember.from_numpy(a), upper).solution,
           torch.from_numpy(b).triangular_solve(torch.from_numpy(a), upper).solution, _tol(dt))


@pytest.mark.parametrize('upper,transpose,unit', [(True, False, False), (False, True, False), (False, False, True)])
def test_triangular_solve_gradients_match_torch(upper, transpose, unit):
    b, a = _arr((2, 3, 2), 'float64', 1), _arr((3, 3), 'float64', 2, shift=3.0)
    f = lambda L, B, A: (L.triangular_solve(B, A, upper, transpose, unit).solution ** 2).sum()
    for ge, gt in zip(_grad(ember, f, b, a), _grad(torch, f, b, a)):
        _close(ge, gt, 1e-9)


def test_triangular_solve_singular_gives_lapacks_infs():
    e = ember.triangular_solve(ember.ones(3, 2), ember.zeros(3, 3))
    t = torch.triangular_solve(torch.ones(3, 2), torch.zeros(3, 3))
    _close(e.solution, t.solution, 0)


def test_triangular_solve_warns_deprecation_once_per_process():
    """torch's warning is TORCH_WARN_ONCE: calls from two lines of a fresh process give one warning."""
    import subprocess
    import sys
    code = ('import warnings, {lib} as L\nwarnings.simplefilter("always")\n'
            'with warnings.catch_warnings(record=True) as w:\n'
            '    L.triangular_solve(L.ones(2, 1), L.eye(2))\n'
            '    L.triangular_solve(L.ones(2, 1), L.eye(2))\n'
            'print(sum("triangular_solve is deprecated" in str(x.message) for x in w))')
    counts = [subprocess.run([sys.executable, '-c', code.format(lib=lib)], capture_output=True, text=True,
                             timeout=120).stdout.strip() for lib in ('ember', 'torch')]
    assert counts == ['1', '1']


@pytest.mark.parametrize('fn', [
    lambda L: L.triangular_solve(L.ones(3, 2), L.ones(2, 3)),
    lambda L: L.triangular_solve(L.ones(3, 2), L.ones(3, 3, dtype=L.float64)),
    lambda L: L.triangular_solve(L.ones(4, 2), L.ones(3, 3)),
    lambda L: L.triangular_solve(L.ones(3, 2, dtype=L.int64), L.ones(3, 3, dtype=L.int64)),
    lambda L: L.triangular_solve(L.ones(3), L.ones(3, 3)),
    lambda L: L.triangular_solve(L.ones(3, 2), L.ones(3)),
])
def test_triangular_solve_errors_like_torch(fn):
    _both(fn)


# --- geqrf, householder_product / orgqr, ormqr ----------------------------------------------------------------

@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('shape', [(3, 3), (5, 3), (3, 5), (2, 4, 3), (2, 0, 3)])
def test_geqrf_and_householder_product_match_torch(shape, dt):
    a = _arr(shape, dt, 1)
    e, t = ember.geqrf(ember.from_numpy(a)), torch.geqrf(torch.from_numpy(a))
    assert type(e).__name__ == 'geqrf' and e._fields == ('a', 'tau')
    _close(e.a, t.a, _tol(dt))
    _close(e.tau, t.tau, _tol(dt))
    _close(ember.from_numpy(a).geqrf().tau, t.tau, _tol(dt))
    if shape[-2] >= shape[-1]:
        A, tau = torch.from_numpy(e.a.numpy()), torch.from_numpy(e.tau.numpy())
        Q = ember.linalg.householder_product(e.a, e.tau)
        _close(Q, torch.linalg.householder_product(A, tau), _tol(dt))
        _close(ember.orgqr(e.a, e.tau), torch.orgqr(A, tau), _tol(dt))
        _close(e.a.orgqr(e.tau), A.orgqr(tau), _tol(dt))


@pytest.mark.parametrize('dt', ['float64', 'complex128'])
@pytest.mark.parametrize('left,transpose', [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_matches_torch(left, transpose, dt):
    a = _arr((2, 4, 3), dt, 1)
    c = _arr((2, 4, 2) if left else (2, 2, 4), dt, 2)
    h, tau = torch.geqrf(torch.from_numpy(a))
    e = ember.ormqr(ember.from_numpy(h.numpy()), ember.from_numpy(tau.numpy()), ember.from_numpy(c), left, transpose)
    _close(e, torch.ormqr(h, tau, torch.from_numpy(c), left, transpose), 1e-10)


@pytest.mark.parametrize('dt', ['float64', 'complex128'])
def test_householder_product_gradients_match_torch(dt):
    h, tau = torch.geqrf(torch.from_numpy(_arr((2, 4, 3), dt, 1)))
    w = _arr((2, 4, 3), dt, 9)
    f = lambda L, A, T: (L.linalg.householder_product(A, T) * L.tensor(w)).real.sum()
    for ge, gt in zip(_grad(ember, f, h.numpy(), tau.numpy()), _grad(torch, f, h.numpy(), tau.numpy())):
        _close(ge, gt, 1e-9)


def test_geqrf_has_no_derivative_as_torch():
    _both(lambda L: L.geqrf(L.ones(3, 3, requires_grad=True))[0].sum().backward())


@pytest.mark.parametrize('fn', [
    lambda L: L.geqrf(L.ones(3)), lambda L: L.geqrf(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.geqrf(L.ones(3, 3, dtype=L.float16)),
    lambda L: L.linalg.householder_product(L.ones(3, 4), L.ones(2)),
    lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(4)),
    lambda L: L.linalg.householder_product(L.ones(4), L.ones(1)),
    lambda L: L.linalg.householder_product(L.ones(2, 4, 3), L.ones(3, 2)),
    lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(2, 2)),
    lambda L: L.linalg.householder_product(L.ones(4, 3), L.ones(2, dtype=L.float64)),
    lambda L: L.linalg.householder_product(L.ones(4, 3, dtype=L.int64), L.ones(2, dtype=L.int64)),
    lambda L: L.orgqr(L.ones(3, 4), L.ones(2)),
])
def test_qr_pieces_errors_like_torch(fn):
    _both(fn)


# --- ldl_factor / ldl_solve ----------------------------------------------------------------------------------------

def _sym(shape, dt, hermitian, seed=0):
    m = _arr(shape, dt, seed)
    a = m + (np.conj(np.swapaxes(m, -1, -2)) if hermitian else np.swapaxes(m, -1, -2))
    if a.size:
        a[..., 0, 0] *= 0.01    # a small first pivot: Bunch-Kaufman takes 2x2 blocks and interchanges
    return a


@pytest.mark.parametrize('dt', _DTYPES)
@pytest.mark.parametrize('hermitian', [False, True])
@pytest.mark.parametrize('shape', [(1, 1), (5, 5), (3, 4, 4), (12, 12), (0, 0)])
def test_ldl_factor_and_solve_match_torch(shape, hermitian, dt):
    a = _sym(shape, dt, hermitian)
    e = ember.linalg.ldl_factor_ex(ember.from_numpy(a), hermitian=hermitian)
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=hermitian)
    assert type(e).__name__ == 'linalg_ldl_factor_ex' and e._fields == ('LD', 'pivots', 'info')
    _close(e.pivots, t.pivots, 0)
    _close(e.info, t.info, 0)
    _close(e.LD, t.LD, 100 * _tol(dt))
    f = ember.linalg.ldl_factor(ember.from_numpy(a), hermitian=hermitian)
    assert type(f).__name__ == 'linalg_ldl_factor'
    _close(f.pivots, t.pivots, 0)
    b = _arr(shape[:-1] + (2,), dt, 3)
    _close(ember.linalg.ldl_solve(e.LD, e.pivots, ember.from_numpy(b), hermitian=hermitian),
           torch.linalg.ldl_solve(t.LD, t.pivots, torch.from_numpy(b), hermitian=hermitian), 100 * _tol(dt))


def test_ldl_singular_and_batched_broadcast():
    z = np.zeros((2, 3, 3))
    e, t = ember.linalg.ldl_factor_ex(ember.from_numpy(z)), torch.linalg.ldl_factor_ex(torch.from_numpy(z))
    _close(e.info, t.info, 0)
    _close(e.pivots, t.pivots, 0)
    _both(lambda L: L.linalg.ldl_factor(L.zeros(3, 3)))
    _both(lambda L: L.linalg.ldl_factor_ex(L.zeros(2, 3, 3), check_errors=True))
    a = _sym((4, 4), 'float64', False)
    LD, piv = torch.linalg.ldl_factor(torch.from_numpy(a))
    b = _arr((2, 4, 3), 'float64', 1)
    _close(ember.linalg.ldl_solve(ember.from_numpy(LD.numpy()), ember.from_numpy(piv.numpy()), ember.from_numpy(b)),
           torch.linalg.ldl_solve(LD, piv, torch.from_numpy(b)), 1e-10)


@pytest.mark.parametrize('fn', [
    lambda L: L.linalg.ldl_factor(L.ones(2, 3)), lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.ldl_factor_ex(L.ones(3)), lambda L: L.linalg.ldl_factor_ex(L.ones(3, 3, dtype=L.float16)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(4, 2)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3, 2, dtype=L.float64)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(2, dtype=L.int32), L.ones(3, 2)),
    lambda L: L.linalg.ldl_solve(L.ones(2, 3), L.ones(2, dtype=L.int32), L.ones(3, 2)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3)),
    lambda L: L.linalg.ldl_factor_ex(L.eye(3, requires_grad=True))[0].sum().backward(),
    lambda L: L.linalg.ldl_solve(L.eye(3, requires_grad=True), L.ones(3, dtype=L.int32), L.ones(3, 2)).sum().backward(),
])
def test_ldl_errors_like_torch(fn):
    _both(fn)
