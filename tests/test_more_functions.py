"""torch functions written as composites in ember/_python_functions (lu.py, calculus.py, lowrank.py and additions
to linalg.py, pointwise.py, reductions.py, shape.py, indexing.py, surface.py), each compared with torch 2.13:
values, dtypes, shapes, gradients through backward, and the error class and message for bad input."""
import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings('ignore:.*(deprecated|index_reduce|not writable)')
RNG = np.random.default_rng(0)


def _np(t):
    t = t.detach()
    if t.dtype in (torch.bfloat16, ember.bfloat16):
        t = t.float()
    return t.numpy()


def same(ours, theirs, rtol=1e-6, atol=1e-7):
    """The same kind of result: tensors with equal shapes, dtypes and values; tuples of them, element by element."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs) > 0
        for o, t in zip(ours, theirs):
            same(o, t, rtol, atol)
        return
    assert isinstance(ours, ember.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol, equal_nan=True)


def both(expr, **env):
    """``(ours, theirs)``: ``expr`` evaluated with T bound to ember and to torch (each env value given as a NumPy
    array is made a tensor of that library)."""
    out = []
    for lib in (torch, ember):
        names = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in env.items()}
        out.append(eval(expr, {'T': lib, **names}))
    return out[::-1]


def same_error(expr, **env):
    errs = []
    for lib in (torch, ember):
        names = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in env.items()}
        with pytest.raises(Exception) as info:
            eval(expr, {'T': lib, **names})
        errs.append(info.value)
    theirs, ours = errs
    assert type(ours) is type(theirs)
    assert str(ours).split('\n')[0] == str(theirs).split('\n')[0]


def grads(expr, inputs, weight_shape=None, seed=0):
    """d(sum(w * expr)) / d(inputs) for torch and ember, with the same random weights w on each output."""
    out = []
    for lib in (torch, ember):
        xs = {k: lib.tensor(v, requires_grad=True) for k, v in inputs.items()}
        r = eval(expr, {'T': lib, **xs})
        rs = r if isinstance(r, (tuple, list)) else (r,)
        rng = np.random.default_rng(seed)
        loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in rs
                   if o.is_floating_point() or o.is_complex())
        loss.backward()
        out.append([xs[k].grad for k in inputs])
    return out


# --- linear algebra ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('shape', [(4, 4), (2, 3, 3), (5, 3), (3, 5), (2, 1, 4, 6), (1, 1)])
def test_lu_factor_and_lu_like_torch(shape):
    A = RNG.standard_normal(shape)
    same(*both('T.linalg.lu_factor(A)', A=A), rtol=1e-10, atol=1e-12)
    same(*both('T.linalg.lu_factor_ex(A)', A=A), rtol=1e-10, atol=1e-12)
    same(*both('T.linalg.lu(A)', A=A), rtol=1e-10, atol=1e-12)
    same(*both('T.lu(A)', A=A), rtol=1e-10, atol=1e-12)
    same(*both('T.lu(A, get_infos=True)', A=A), rtol=1e-10, atol=1e-12)
    same(*both('T.lu_unpack(*T.linalg.lu_factor(A))', A=A), rtol=1e-10, atol=1e-12)


def test_lu_of_singular_complex_and_empty_matrices():
    Z = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])
    same(*both('T.linalg.lu_factor_ex(Z)', Z=Z))
    assert ember.linalg.lu_factor_ex(ember.tensor(Z)).info.item() == 3
    same(*both('T.lu(T.zeros(3, 2, 2), get_infos=True)'))
    C = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    same(*both('T.linalg.lu_factor(C)', C=C), rtol=1e-10, atol=1e-12)
    same(*both('T.linalg.lu_factor(T.ones(3, 0, 2))'))
    e, t = both('A.lu()', A=RNG.standard_normal((3, 3)))
    same(e, t, rtol=1e-10, atol=1e-12)
    assert type(e) is tuple


def test_lu_unpack_without_data_or_pivots():
    A = RNG.standard_normal((3, 3))
    same(*both('T.lu_unpack(*T.linalg.lu_factor(A), unpack_data=False)', A=A), rtol=1e-10)
    same(*both('T.lu_unpack(*T.linalg.lu_factor(A), unpack_pivots=False)', A=A), rtol=1e-10)


@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('adjoint', [True, False])
def test_linalg_lu_solve_like_torch(left, adjoint):
    A, B = RNG.standard_normal((2, 4, 4)), RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))
    same(*both('T.linalg.lu_solve(*T.linalg.lu_factor(A), B, left=l, adjoint=a)', A=A, B=B, l=left, a=adjoint),
         rtol=1e-9, atol=1e-11)
    t, e = grads(f'T.linalg.lu_solve(*T.linalg.lu_factor(A), B, left={left}, adjoint={adjoint})', {'A': A, 'B': B})
    same(e, t, rtol=1e-8, atol=1e-10)


def test_lu_solve_deprecated_forms():
    A, B = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 2))
    same(*both('T.lu_solve(B, *T.linalg.lu_factor(A))', A=A, B=B), rtol=1e-10, atol=1e-12)
    same(*both('B.lu_solve(*T.linalg.lu_factor(A))', A=A, B=B), rtol=1e-10, atol=1e-12)
    t, e = grads('T.lu_solve(B, *T.lu(A))', {'A': A, 'B': B})
    same(e, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize('shape', [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu_gradients_like_torch(shape):
    A = RNG.standard_normal(shape)
    t, e = grads('T.linalg.lu(A)[1:]', {'A': A})
    same(e, t, rtol=1e-8, atol=1e-10)
    t, e = grads('T.linalg.lu_factor(A).LU', {'A': A})
    same(e, t, rtol=1e-8, atol=1e-10)
    t, e = grads('T.lu_unpack(*T.linalg.lu_factor(A))[1:]', {'A': A})
    same(e, t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize('expr', [
    'T.linalg.lu_factor(T.ones(3))', 'T.linalg.lu_factor(T.ones(3, 2, dtype=T.long))',
    'T.linalg.lu_factor(T.zeros(2, 2))', 'T.linalg.lu_factor(T.zeros(3, 2, 2))', 'T.lu(T.eye(2), pivot=False)',
    'T.linalg.lu(T.eye(2), pivot=False)', 'T.lu_unpack(*T.linalg.lu_factor(T.eye(2))[:1], T.ones(2, dtype=T.long))',
    'T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(3))',
    'T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(2, 1))'])
def test_lu_errors_like_torch(expr):
    same_error(expr)


@pytest.mark.parametrize('scale', [0.1, 1.0, 6.0, 40.0])
def test_matrix_exp_values_and_gradients(scale):
    A = RNG.standard_normal((2, 4, 4)) * scale
    same(*both('T.matrix_exp(A)', A=A), rtol=1e-12 * max(scale, 1) ** 2, atol=1e-14)
    same(*both('A.matrix_exp()', A=A), rtol=1e-12 * max(scale, 1) ** 2, atol=1e-14)
    same(*both('T.linalg.matrix_exp(A)', A=A), rtol=1e-12 * max(scale, 1) ** 2, atol=1e-14)
    t, e = grads('T.matrix_exp(A)', {'A': A})
    same(e, t, rtol=1e-11 * max(scale, 1) ** 2, atol=1e-12)


def test_matrix_exp_dtypes_and_errors():
    A = RNG.standard_normal((3, 3))
    same(*both('T.matrix_exp(A.float())', A=A), rtol=1e-5, atol=1e-6)
    same(*both('T.matrix_exp(A.to(T.complex128) * 1j)', A=A), rtol=1e-12, atol=1e-13)
    same(*both('T.matrix_exp(T.zeros(0, 0))'))
    for expr in ('T.matrix_exp(T.ones(2, 3))', 'T.matrix_exp(T.ones(2, 2, dtype=T.long))', 'T.matrix_exp(T.ones(2))'):
        same_error(expr)


def test_pinverse_like_torch():
    A = RNG.standard_normal((3, 4, 2))
    A[0, :, 1] = A[0, :, 0] * 1e-9
    for rcond in (1e-15, 1e-3):
        same(*both('T.pinverse(A, rcond=r)', A=A, r=rcond), rtol=1e-9, atol=1e-10)
        same(*both('A.pinverse(r)', A=A, r=rcond), rtol=1e-9, atol=1e-10)
    t, e = grads('T.pinverse(A)', {'A': RNG.standard_normal((3, 2))})
    same(e, t, rtol=1e-9, atol=1e-10)
    same_error('T.pinverse(T.ones(2, 3, dtype=T.long))')


def test_matrix_rank_is_removed_as_in_torch():
    same_error('T.matrix_rank(T.eye(3))')
    same(*both('T.linalg.matrix_rank(T.eye(3))'))


def test_svd_lowrank_recovers_a_low_rank_matrix():
    ember.manual_seed(0)
    for shape in ((30, 12), (12, 30)):
        A = ember.tensor(RNG.standard_normal((shape[0], 3)) @ RNG.standard_normal((3, shape[1])))
        U, S, V = ember.svd_lowrank(A, q=4)
        assert (U.shape, S.shape, V.shape) == ((shape[0], 4), (4,), (shape[1], 4))
        assert ((U * S) @ V.mT - A).abs().max().item() < 1e-9
        np.testing.assert_allclose(U.mT.matmul(U).numpy(), np.eye(4), atol=1e-10)
        np.testing.assert_allclose(S[:3].numpy(), torch.linalg.svdvals(torch.tensor(A.numpy()))[:3].numpy(),
                                   rtol=1e-10)
    M = ember.ones(30, 12, dtype=ember.float64)
    U, S, V = ember.svd_lowrank(A.mT + M, q=3, M=M)      # the factors of (A + M) - M
    assert ((U * S) @ V.mT - A.mT).abs().max().item() < 1e-9


def test_svd_lowrank_approximates_torchs_leading_values():
    X = RNG.standard_normal((60, 40)) * np.linspace(5, 0.1, 40)
    ember.manual_seed(0)
    torch.manual_seed(0)
    S_ember = ember.svd_lowrank(ember.tensor(X), q=6, niter=4)[1].numpy()
    S_torch = torch.svd_lowrank(torch.tensor(X), q=6, niter=4)[1].numpy()
    exact = np.linalg.svd(X, compute_uv=False)[:6]
    np.testing.assert_allclose(S_ember[:3], exact[:3], rtol=0.05)
    np.testing.assert_allclose(S_ember[:3], S_torch[:3], rtol=0.05)


def test_pca_lowrank_shapes_centering_and_errors():
    ember.manual_seed(0)
    X = ember.tensor(RNG.standard_normal((50, 2)) @ RNG.standard_normal((2, 5)) + 3.0)
    U, S, V = ember.pca_lowrank(X, q=2)
    assert (U.shape, S.shape, V.shape) == ((50, 2), (2,), (5, 2))
    centered = X - X.mean(0, keepdim=True)
    assert ((U * S) @ V.mT - centered).abs().max().item() < 1e-9
    assert ember.pca_lowrank(X)[1].shape == (5,)              # q defaults to min(6, m, n)
    same_error('T.pca_lowrank(T.ones(4, 3), q=4)')
    same_error('T.pca_lowrank(T.ones(4, 3), niter=-1)')


# --- calculus on samples ---------------------------------------------------------------------------------

VANDER = ['T.vander(T.tensor([1, 2, 3]))', 'T.vander(T.tensor([True, False]))', 'T.vander(T.tensor([1., 2]), N=0)',
          'T.vander(T.tensor([1, 2], dtype=T.int8), 3)', 'T.vander(T.tensor([1.5, 2]).half(), 3, increasing=True)',
          'T.vander(T.tensor([1.5, 2, -3], dtype=T.float64), 5)', 'T.vander(T.tensor([2.]), 1)']


@pytest.mark.parametrize('expr', VANDER)
def test_vander_like_torch(expr):
    same(*both(expr))


def test_vander_gradient_and_errors():
    # torch's own vander backward fails here (its cumprod is modified in place), so the reference is the calculus:
    # d/dx sum_k w_k x^(3-k) = sum_k w_k (3-k) x^(2-k)
    x, w = np.array([0.5, -1.5, 2.0]), RNG.standard_normal((3, 4))
    xe = ember.tensor(x, requires_grad=True)
    (ember.vander(xe, 4) * ember.tensor(w)).sum().backward()
    k = 3 - np.arange(4)
    expected = (w * k * x[:, None] ** np.maximum(k - 1, 0)).sum(1)
    np.testing.assert_allclose(xe.grad.numpy(), expected, rtol=1e-12)
    same_error('T.vander(T.ones(2, 2))')
    same_error('T.vander(T.tensor([1., 2]), N=-1)')


CUMTRAPZ = ['T.cumulative_trapezoid(T.tensor([1., 2, 4]))', 'T.cumulative_trapezoid(T.tensor([1, 2, 4]))',
            'T.cumulative_trapezoid(T.tensor([1, 2, 4]), dx=2)', 'T.cumulative_trapezoid(T.tensor([1, 2, 4]), dx=0.5)',
            'T.cumulative_trapezoid(T.tensor([1., 2, 4]), T.tensor([0., 1, 3]))',
            'T.cumulative_trapezoid(T.tensor([1., 2, 4]), T.tensor([0, 1, 3]))',
            'T.cumulative_trapezoid(T.tensor([[1., 2, 4]]), T.tensor([0., 1, 3]))',
            'T.cumulative_trapezoid(T.tensor([]))',
            'T.cumulative_trapezoid(T.arange(12.).reshape(3, 4), dim=0)',
            'T.cumulative_trapezoid(T.arange(12.).reshape(3, 4), T.arange(12.).reshape(3, 4) ** 2, dim=0)',
            'T.cumulative_trapezoid(T.zeros(0, 2, dtype=T.long), dim=0)']


@pytest.mark.parametrize('expr', CUMTRAPZ)
def test_cumulative_trapezoid_like_torch(expr):
    same(*both(expr))


def test_cumulative_trapezoid_gradient_and_errors():
    y, x = RNG.standard_normal((3, 5)), np.sort(RNG.standard_normal(5))
    t, e = grads('T.cumulative_trapezoid(y, x)', {'y': y, 'x': x})
    same(e, t, rtol=1e-12, atol=1e-14)
    same_error('T.cumulative_trapezoid(T.tensor(1.))')
    same_error('T.cumulative_trapezoid(T.tensor([1., 2, 4]), T.tensor([0., 1]))')


X5 = 'T.tensor([1., 4, 9, 16, 25])'
Y34 = '(T.arange(12.).reshape(3, 4) ** 2)'
GRADIENT = [f'T.gradient({X5})', f'T.gradient({X5}, edge_order=2)', f'T.gradient({X5}, spacing=2.)',
            f'T.gradient({X5}, spacing=[2.])', f'T.gradient({X5}, spacing=(T.tensor([0., 1, 3, 4, 7]),))',
            f'T.gradient({X5}, spacing=(T.tensor([0., 1, 3, 4, 7]),), edge_order=2)',
            'T.gradient(T.tensor([1, 4, 9, 16]))', 'T.gradient(T.tensor([1., 4]))', f'T.gradient({Y34})',
            f'T.gradient({Y34}, dim=1)', f'T.gradient({Y34}, dim=[1])', f'T.gradient({Y34}, spacing=[1., 2.])',
            f'T.gradient({Y34}, spacing=2., dim=(0, 1))', f'T.gradient({Y34}, dim=0, spacing=T.tensor(2.))',
            f'T.gradient({Y34}, spacing=[T.tensor([0., 1, 3]), T.tensor([0., 2, 3, 5])])',
            f'T.gradient({Y34}, spacing=[T.tensor([0., 1, 3]), T.tensor([0., 2, 3, 5])], edge_order=2)',
            f'T.gradient({Y34}, spacing=[2], dim=-1, edge_order=2)', 'T.gradient(T.tensor([1, 4, 9, 16]), spacing=2)',
            'T.gradient(T.tensor([1, 4, 9, 16]), spacing=(T.tensor([0, 1, 2, 4]),))',
            'T.gradient(T.tensor([1., 4, 9, 16]), spacing=(T.tensor([0, 1, 2, 4.], dtype=T.float64),))']


@pytest.mark.parametrize('expr', GRADIENT)
def test_gradient_like_torch(expr):
    same(*both(expr), rtol=1e-6, atol=1e-5)


def test_gradient_of_a_scalar_is_empty():
    assert ember.gradient(ember.tensor(1.)) == () == torch.gradient(torch.tensor(1.))


@pytest.mark.parametrize('edge_order', [1, 2])
def test_gradient_backward_like_torch(edge_order):
    y, x = RNG.standard_normal((4, 5)), np.cumsum(RNG.random(5) + 0.1)
    t, e = grads(f'T.gradient(y, spacing=[x], dim=1, edge_order={edge_order})', {'y': y, 'x': x})
    same(e, t, rtol=1e-10, atol=1e-12)
    t, e = grads(f'T.gradient(y, spacing=[1.5, 0.5], edge_order={edge_order})', {'y': y})
    same(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('expr', [
    'T.gradient(T.tensor([1., 4]), edge_order=2)', 'T.gradient(T.tensor([1., 4, 5]), edge_order=3)',
    f'T.gradient({Y34}, spacing=[1., 2.], dim=1)', f'T.gradient({Y34}, spacing=[1., 2., 3.])',
    f'T.gradient({Y34}, dim=2)'])
def test_gradient_errors_like_torch(expr):
    same_error(expr)


# --- pointwise ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize('expr', ['T.rsub(T.tensor([1, 2]), 5, alpha=2)',
                                  'T.rsub(T.tensor([1., 2]), T.tensor([3., 1]))',
                                  'T.rsub(T.tensor([1., 2]), T.tensor([3., 1]), alpha=0.5)',
                                  'T.rsub(T.tensor([1, 2], dtype=T.int32), 2.5)'])
def test_rsub_like_torch(expr):
    same(*both(expr))


def test_rsub_gradient_and_errors():
    t, e = grads('T.rsub(a, b, alpha=3)', {'a': RNG.standard_normal(3), 'b': RNG.standard_normal(3)})
    same(e, t)
    same_error('T.rsub(T.tensor([True]), T.tensor([True]))')
    same_error('T.rsub(T.tensor([1, 2]), 5, alpha=2.5)')


FREXP = [0., -0., 1., 8., 0.3, np.inf, -np.inf, np.nan, 1e-40, -5., 2. ** -149, 3.4e38, 0.5, 1 - 2 ** -24, 2. ** 100]


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16'])
def test_frexp_like_torch(dtype):
    v = FREXP if dtype in ('float32', 'float64') else [0., 1., 8., 0.3, -5., 6e-8, 65504., 0.5, np.inf, np.nan]
    e, t = both(f'T.frexp(T.tensor(v, dtype=T.{dtype}))', v=v)
    same(e, t, rtol=0, atol=0)
    assert type(e).__name__ == 'frexp' and e._fields == ('mantissa', 'exponent')
    same(*both(f'T.tensor(v, dtype=T.{dtype}).frexp()', v=v), rtol=0, atol=0)


def test_frexp_over_the_whole_float64_range_and_backward():
    x = RNG.standard_normal(4000) * 10.0 ** RNG.integers(-300, 300, 4000)
    near_powers = [np.nextafter(2.0 ** k, 0) for k in (10, 100, 1000, -20)]    # log2 rounds these up to k
    x = np.concatenate([x, [5e-324, 2.2e-308, 1.7e308, -1e-320], near_powers])
    same(*both('T.frexp(x)', x=x), rtol=0, atol=0)
    t, e = grads('T.frexp(x).mantissa', {'x': RNG.standard_normal(6) * 100})
    same(e, t, rtol=0, atol=0)
    same_error('T.frexp(T.tensor([1, 2]))')


def test_mvlgamma_like_torch():
    x = RNG.random((3, 4)) * 5 + 2
    for p in (1, 2, 5):
        same(*both('T.mvlgamma(x, p)', x=x, p=p), rtol=1e-10, atol=1e-12)
        same(*both('x.mvlgamma(p)', x=x, p=p), rtol=1e-10, atol=1e-12)
        same(*both('x.clone().mvlgamma_(p)', x=x, p=p), rtol=1e-10, atol=1e-12)
        t, e = grads(f'T.mvlgamma(x, {p})', {'x': x})
        same(e, t, rtol=1e-9, atol=1e-12)
    same(*both('T.mvlgamma(T.tensor([1, 2]), 2)'), atol=1e-6)
    same_error('T.mvlgamma(T.tensor([1., 2]), 0)')


@pytest.mark.parametrize('name', ['igamma', 'igammac'])
def test_igamma_igammac_like_torch(name):
    a, x = RNG.random(6) * 4 + 0.1, RNG.random(6) * 4
    same(*both(f'T.{name}(a, x)', a=a, x=x), rtol=1e-8, atol=1e-12)
    same(*both(f'a.{name}(x)', a=a, x=x), rtol=1e-8, atol=1e-12)
    same(*both(f'a.clone().{name}_(x)', a=a, x=x), rtol=1e-8, atol=1e-12)
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    getattr(torch, name)(torch.tensor(a), xt).sum().backward()
    getattr(ember, name)(ember.tensor(a), xe).sum().backward()
    same(xe.grad, xt.grad, rtol=1e-8, atol=1e-12)


# --- norms, shapes, indexing ------------------------------------------------------------------------------

@pytest.mark.parametrize('p, dim, maxnorm', [(2, 0, 1.0), (1, 1, 0.5), (3, -1, 2.0), (float('inf'), 0, 0.7),
                                             (2, 2, 1.5)])
def test_renorm_values_and_gradients(p, dim, maxnorm):
    x = RNG.standard_normal((3, 4, 2)) * 2
    same(*both('T.renorm(x, p, d, m)', x=x, p=p, d=dim, m=maxnorm), rtol=1e-10, atol=1e-12)
    assert (ember.renorm(ember.tensor(x), p, dim, maxnorm) != ember.tensor(x)).any()       # some slices scaled
    same(*both('x.renorm(p, d, m)', x=x, p=p, d=dim, m=maxnorm), rtol=1e-10, atol=1e-12)
    same(*both('x.clone().renorm_(p, d, m)', x=x, p=p, d=dim, m=maxnorm), rtol=1e-10, atol=1e-12)
    t, e = grads(f'T.renorm(x, {p!r}, {dim}, {maxnorm})'.replace("inf", "float('inf')"), {'x': x})
    same(e, t, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize('expr', ['T.renorm(T.ones(2, 3), -1, 0, 1.)', 'T.renorm(T.ones(2, 3), 2, 0, -1.)',
                                  'T.renorm(T.ones(2, 3, dtype=T.long), 2, 0, 1.)', 'T.renorm(T.ones(2, 3), 2, 2, 1.)'])
def test_renorm_errors_like_torch(expr):
    same_error(expr)


def test_narrow_copy_is_a_contiguous_copy():
    e, t = both('T.narrow_copy(T.arange(15.).reshape(5, 3).t(), 1, 1, 3)')
    same(e, t)
    assert e.is_contiguous() and e.stride() == t.stride()
    x = ember.arange(6.).reshape(2, 3)
    y = x.narrow_copy(1, 0, 2)
    y.add_(100)
    assert x[0, 0].item() == 0.0            # a copy, not a view
    t, e = grads('A.narrow_copy(0, 1, 2)', {'A': RNG.standard_normal((4, 3))})
    same(e, t)


@pytest.mark.parametrize('expr', ['T.unsafe_split(T.arange(5), 2)', 'T.unsafe_chunk(T.arange(5), 2)',
                                  'T.unsafe_split_with_sizes(T.arange(5), [2, 3])',
                                  'T.arange(12).reshape(3, 4).unsafe_split(3, 1)',
                                  'T.arange(12).reshape(3, 4).unsafe_chunk(2, dim=1)',
                                  'T.arange(12).reshape(3, 4).unsafe_split_with_sizes([1, 2])'])
def test_unsafe_splits_like_torch(expr):
    e, t = both(expr)
    assert type(e) is tuple
    same(e, t)


def test_unsafe_split_outputs_may_be_modified_in_place_under_autograd():
    for lib in (torch, ember):
        x = lib.arange(6.).requires_grad_()
        parts = lib.unsafe_split(x * 2, 2)
        parts[0].mul_(2)                    # split's outputs refuse this; unsafe_split's take it
        sum(p.sum() for p in parts).backward()
        assert x.grad.tolist() == [4., 4., 2., 2., 2., 2.]


INDEX_REDUCE = ["x.index_reduce(0, idx, src, 'prod')", "x.index_reduce(0, idx, src, 'mean', include_self=False)",
                "x.index_reduce(0, idx.int(), src, 'amax')", "T.index_reduce(x, 0, idx, src, reduce='amin')",
                "x.long().index_reduce(0, idx, src.long(), 'mean')",
                "x.clone().index_reduce_(0, idx, src, 'prod', include_self=False)",
                "x.t().index_reduce(1, idx, src.t(), 'amax')"]


@pytest.mark.parametrize('expr', INDEX_REDUCE)
def test_index_reduce_like_torch(expr):
    env = dict(x=RNG.standard_normal((5, 3)), idx=np.array([0, 4, 2, 0]), src=RNG.standard_normal((4, 3)))
    same(*both(expr, **env), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('reduce', ['prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_index_reduce_gradients_like_torch(reduce, include_self):
    env = {'x': RNG.standard_normal((5, 3)), 'src': RNG.standard_normal((4, 3))}
    t, e = grads(f"x.index_reduce(0, T.tensor([0, 4, 2, 0]), src, '{reduce}', include_self={include_self})", env)
    same(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('expr', [
    "T.ones(5, 3).index_reduce(0, T.tensor([0, 4, 2, 0]), T.ones(4, 3), 'sum')",
    "T.ones(5, 3).index_reduce(0, T.tensor([0., 4, 2, 0]), T.ones(4, 3), 'prod')",
    "T.ones(5, 3).index_reduce(0, T.tensor([[0]]), T.ones(4, 3), 'amax')",
    "T.ones(5, 3).index_reduce(0, T.tensor([0, 4, 2, 0]), T.ones(4, 3, dtype=T.float64), 'amax')",
    "T.ones(5, 3).index_reduce(0, T.tensor([0, 7, 2, 0]), T.ones(4, 3), 'amax')",
    "T.ones(5, 3).index_reduce(0, T.tensor([0, 2]), T.ones(4, 3), 'amax')",
    "T.ones(5, 3).index_reduce(0, T.tensor([0, 1]), T.ones(2, 4), 'amax')"])
def test_index_reduce_errors_like_torch(expr):
    same_error(expr)


# --- surface: function forms, new_empty_strided, frombuffer ---------------------------------------------------

def test_function_forms_of_methods():
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        assert lib.get_device(x) == -1
        assert lib.is_inference(x) is False
        with lib.inference_mode():
            assert lib.is_inference(lib.ones(1)) is True
        y = x * 2
        assert lib.detach_(y) is y and y.requires_grad is False and y.grad_fn is None
        z = lib.ones(2)
        assert lib.zero_(z) is z and z.tolist() == [0., 0.]


def test_new_empty_strided_like_torch():
    for lib in (torch, ember):
        x = lib.ones(2, dtype=lib.int32)
        y = x.new_empty_strided((2, 3), (1, 2))
        assert (tuple(y.shape), y.stride(), y.dtype) == ((2, 3), (1, 2), lib.int32)
        z = x.new_empty_strided((2, 3), (3, 1), dtype=lib.float64, requires_grad=True)
        assert (z.dtype, z.requires_grad, z.stride()) == (lib.float64, True, (3, 1))


@pytest.mark.parametrize('kw', [dict(dtype='int32'), dict(dtype='int32', count=1, offset=4),
                                dict(dtype='int16', offset=2), dict(dtype='float32', count=-2),
                                dict(dtype='uint8', offset=7), dict(dtype='float64')])
def test_frombuffer_like_torch(kw):
    data = bytes(range(1, 17))
    kw = dict(kw, dtype=getattr(torch, kw['dtype']))
    t = torch.frombuffer(bytearray(data), **kw)
    e = ember.frombuffer(bytearray(data), **dict(kw, dtype=getattr(ember, str(kw['dtype']).split('.')[-1])))
    same(e, t, rtol=0, atol=0)


def test_frombuffer_shares_a_writable_buffer_and_copies_a_read_only_one():
    buf = bytearray(8)
    t = ember.frombuffer(buf, dtype=ember.int32)
    t[1] = 7
    assert buf[4] == 7
    with pytest.warns(UserWarning, match='not writable'):
        r = ember.frombuffer(b'\x01\x00\x00\x00', dtype=ember.int32)
    assert r.tolist() == [1]
    r.add_(1)                                 # writable: its own copy
    assert ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize('expr', [
    'T.frombuffer(bytearray(8), dtype=T.int32, count=3)', 'T.frombuffer(bytearray(7), dtype=T.int32)',
    'T.frombuffer(bytearray(8), dtype=T.int32, offset=8)', 'T.frombuffer(bytearray(0), dtype=T.int32)',
    'T.frombuffer(bytearray(8), dtype=T.int32, count=0)', 'T.frombuffer(bytearray(8), dtype=T.int32, offset=-1)',
    'T.frombuffer([1, 2], dtype=T.int32)', 'T.frombuffer(bytearray(8))'])
def test_frombuffer_errors_like_torch(expr):
    errs = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            eval(expr, {'T': lib})
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0])
    if not isinstance(errs[0], TypeError):      # torch's argument parser words a missing argument its own way
        assert str(errs[1]) == str(errs[0])
