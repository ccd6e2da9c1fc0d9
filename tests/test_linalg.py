"""Products and ember.linalg beyond the generic OpInfo tests: torch's exact error messages for every
matmul dimension case, singular/indefinite input errors, SVD compared sign-invariantly, in-place and
out= variants, and the fused linear against its composite."""
import numpy as np
import pytest
import torch

import ember

_MATMUL_CASES = [((2, 3), (4, 5)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 2, 3), (2, 4, 5)),
                 ((3, 2, 3), (2, 3, 5)), ((2, 3, 3), (4,)), ((4,), (2, 3, 3)), ((), (3,)), ((3,), ()),
                 ((5, 2, 3), (2, 3)), ((5, 2, 3), (4,)), ((2, 3), (2, 4, 4)), ((3, 1, 3), (2, 4, 4)),
                 ((3, 2, 3), (7, 2, 4, 4))]


def _both(fn):
    """Run ``fn(lib)`` on torch and ember; both must raise the same class with the same message."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value) if type(te.value).__name__ != '_LinAlgError' else RuntimeError) as ee:
        fn(ember)
    assert str(ee.value) == str(te.value)
    return ee.value


@pytest.mark.parametrize('a,b', _MATMUL_CASES)
def test_matmul_errors_name_shapes_like_torch(a, b):
    _both(lambda L: L.matmul(L.ones(a), L.ones(b)))


@pytest.mark.parametrize('fn', [
    lambda L: L.mm(L.ones(2, 3), L.ones(3, 4, dtype=L.float64)),
    lambda L: L.matmul(L.ones(2, 3), L.ones(3, dtype=L.float64)),
    lambda L: L.matmul(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 3, 4, dtype=L.float64)),
    lambda L: L.matmul(L.ones(2, 3, dtype=L.bool), L.ones(3, 4, dtype=L.bool)),
    lambda L: L.matmul(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    lambda L: L.mv(L.ones(2, 3, 1), L.ones(4)),
    lambda L: L.dot(L.ones(3, 1), L.ones(3)),
    lambda L: L.addmm(L.ones(4), L.ones(2, 3), L.ones(3, 4, dtype=L.float64)),
    lambda L: L.addmv(L.ones(2, dtype=L.float64), L.ones(2, 3), L.ones(3)),
    lambda L: L.baddbmm(L.ones(4, dtype=L.float64), L.ones(2, 2, 3), L.ones(2, 3, 4)),
    lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(4, 3, dtype=L.float64)),
    lambda L: L.nn.functional.linear(L.ones(2, 3), L.ones(4, 3), L.ones(5)),
    lambda L: L.einsum('ij,jk->ik', L.ones(2, 3), L.ones(3, 4, dtype=L.float64)),
    lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 4, dtype=L.float64), 1),
    lambda L: L.outer(L.ones(2, 3), L.ones(3)),
    lambda L: L.diag(L.ones(2, 3, 4)),
    lambda L: L.linalg.inv(L.ones(2, 3)),
    lambda L: L.linalg.inv(L.ones(3, dtype=L.float32)),
    lambda L: L.linalg.det(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(4)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(3, 2, dtype=L.float64)),
    lambda L: L.linalg.solve(L.eye(3), L.ones(3, 2), left=False),
    lambda L: L.linalg.qr(L.ones(3, 2), mode='bad'),
    lambda L: L.linalg.norm(L.ones(3, 3, 3), 'fro'),
    lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    lambda L: L.linalg.multi_dot([L.ones(2, 3)]),
])
def test_errors_like_torch(fn):
    _both(fn)


@pytest.mark.parametrize('fn', [
    lambda L: L.linalg.inv(L.zeros(3, 3)),
    lambda L: L.linalg.inv(L.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda L: L.linalg.inv(L.stack([L.eye(3), L.zeros(3, 3)])),
    lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)),
    lambda L: L.linalg.cholesky(-L.eye(3)),
    lambda L: L.linalg.cholesky(L.ones(3, 3)),
    lambda L: L.linalg.cholesky(L.stack([L.eye(2), -L.eye(2)])),
])
def test_singular_input_raises_linalg_error(fn):
    e = _both(fn)
    assert isinstance(e, ember.linalg.LinAlgError) and isinstance(e, RuntimeError)


def _svd_pair(shape, full, seed=0):
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    return ember.linalg.svd(ember.from_numpy(a), full_matrices=full), torch.linalg.svd(torch.from_numpy(a),
                                                                                         full_matrices=full), a


@pytest.mark.parametrize('shape', [(4, 3), (3, 4), (3, 3), (2, 5, 3)])
@pytest.mark.parametrize('full', [False, True])
def test_svd_matches_torch_up_to_signs(shape, full):
    (U, S, Vh), (tU, tS, tVh), a = _svd_pair(shape, full)
    np.testing.assert_allclose(S.numpy(), tS.numpy(), atol=1e-12)
    k = S.shape[-1]
    Uk, Vk = U.numpy()[..., :k], Vh.numpy()[..., :k, :]
    np.testing.assert_allclose(np.abs(U.numpy()), np.abs(tU.numpy()), atol=1e-10) if not full or shape[-2] <= k \
        else None
    np.testing.assert_allclose((Uk * S.numpy()[..., None, :]) @ Vk, a, atol=1e-12)
    eye = lambda n: np.broadcast_to(np.eye(n), U.shape[:-2] + (n, n))
    np.testing.assert_allclose(np.swapaxes(U.numpy(), -1, -2) @ U.numpy(), eye(U.shape[-1]), atol=1e-12)
    np.testing.assert_allclose(Vh.numpy() @ np.swapaxes(Vh.numpy(), -1, -2), eye(Vh.shape[-2]), atol=1e-12)
    U2, S2, V2 = ember.svd(ember.from_numpy(a))            # torch.svd returns V, not V^H
    np.testing.assert_allclose(((U2.numpy() * S2.numpy()[..., None, :]) @ np.swapaxes(V2.numpy(), -1, -2)), a,
                               atol=1e-12)


@pytest.mark.parametrize('shape', [(4, 3), (3, 4), (3, 3)])
def test_svd_gradient_matches_torch_for_sign_invariant_loss(shape):
    a = np.random.default_rng(1).uniform(-1, 1, shape)
    w = np.random.default_rng(2).uniform(-1, 1, (shape[0], shape[0]))
    v = np.random.default_rng(3).uniform(-1, 1, (shape[1], shape[1]))
    grads = []
    for L in (torch, ember):
        A = L.from_numpy(a.copy()).requires_grad_(True)
        U, S, Vh = L.linalg.svd(A, full_matrices=False)
        loss = (S * S).sum() + ((U @ U.mT) * L.from_numpy(w)).sum() + ((Vh.mT @ Vh) * L.from_numpy(v)).sum() \
            + (U * S.unsqueeze(-2) @ Vh).sum()
        g, = L.autograd.grad(loss, A)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-9)


def test_in_place_and_out_variants():
    a, b, c = ember.randn(2, 3), ember.randn(3, 4), ember.randn(2, 4)
    out = ember.empty(2, 4)
    r = ember.matmul(a, b, out=out)
    assert r is out and np.allclose(out.numpy(), a.numpy() @ b.numpy(), atol=1e-6)
    expect = 0.5 * c.numpy() + 2 * a.numpy() @ b.numpy()
    c.addmm_(a, b, beta=0.5, alpha=2)
    np.testing.assert_allclose(c.numpy(), expect, atol=1e-5)
    before = c.numpy().copy()
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        c.addmm_(a, ember.randn(4, 4))
    np.testing.assert_array_equal(c.numpy(), before)       # a failed in-place op leaves its tensor unchanged
    x = ember.ones(3)
    with pytest.raises(RuntimeError):
        x.addmv_(ember.ones(3, 3), ember.ones(4))
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_addmm_beta_zero_ignores_nan_input():
    inp = ember.full((2, 2), float('nan'))
    r = ember.addmm(inp, ember.eye(2), ember.eye(2), beta=0)
    assert r.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_fused_linear_equals_composite_and_backward():
    F = ember.nn.functional
    x = ember.randn(8, 5, 7, requires_grad=True)
    w = ember.randn(6, 7, requires_grad=True)
    b = ember.randn(6, requires_grad=True)
    y = F.linear(x, w, b)
    # the fused kernel, with torch's composite's nodes around its one node (NOTE [linear's graph])
    t = torch.nn.functional.linear(torch.randn(8, 5, 7, requires_grad=True), torch.randn(6, 7, requires_grad=True),
                                   torch.randn(6, requires_grad=True))
    assert type(y.grad_fn).__name__ == type(t.grad_fn).__name__ == 'ViewBackward0'
    names = lambda fn: [type(n).__name__ for n, _ in fn.next_functions[0][0].next_functions]
    assert names(y.grad_fn) == names(t.grad_fn) == ['AccumulateGrad', 'ViewBackward0', 'TBackward0']
    np.testing.assert_allclose(y.detach().numpy(), (x.detach().numpy() @ w.detach().numpy().T + b.detach().numpy()),
                               rtol=1e-5, atol=1e-5)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones((8 * 5, 6)).T @ x.detach().numpy().reshape(-1, 7), rtol=1e-4)
    np.testing.assert_allclose(b.grad.numpy(), np.full(6, 40.0))


def test_matmul_batched_broadcast_gradients_sum_to_input_shapes():
    for L in (torch, ember):
        a = L.ones(3, 1, 2, 4, requires_grad=True)
        b = L.ones(5, 4, 2, requires_grad=True)
        L.matmul(a, b).sum().backward()
        assert tuple(a.grad.shape) == (3, 1, 2, 4) and tuple(b.grad.shape) == (5, 4, 2)
        if L is torch:
            ga, gb = a.grad.numpy(), b.grad.numpy()
    np.testing.assert_allclose(a.grad.numpy(), ga)
    np.testing.assert_allclose(b.grad.numpy(), gb)


def test_einsum_forms():
    a, b = ember.randn(2, 3), ember.randn(3, 4)
    ref = a.numpy() @ b.numpy()
    for r in (ember.einsum('ij,jk->ik', a, b), ember.einsum('ij,jk', [a, b]), ember.einsum('ij, jk -> ik', (a, b))):
        np.testing.assert_allclose(r.numpy(), ref, rtol=1e-5, atol=1e-6)
    assert ember.einsum('ii', ember.eye(4)).item() == 4.0


def test_linalg_namespace_and_top_level_aliases():
    A = ember.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=ember.float64)
    tA = torch.from_numpy(A.numpy())
    for name in ('det', 'inverse', 'logdet'):
        np.testing.assert_allclose(getattr(ember, name)(A).numpy(), getattr(torch, name)(tA).numpy())
    np.testing.assert_allclose(ember.linalg.diagonal(A).numpy(), [4.0, 3.0])
    inv, info = ember.linalg.inv_ex(A)
    assert info.item() == 0 and np.allclose(inv.numpy(), np.linalg.inv(A.numpy()))
    assert ember.linalg.matmul is not None and ember.linalg.cross is not None


def _sym(n, seed, batch=()):
    a = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize('batch', [(), (2,)])
def test_eigh_matches_torch_up_to_signs(batch):
    a = _sym(4, 0, batch)
    L, V = ember.linalg.eigh(ember.from_numpy(a))
    tL, tV = torch.linalg.eigh(torch.from_numpy(a))
    np.testing.assert_allclose(L.numpy(), tL.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.abs(V.numpy()), np.abs(tV.numpy()), atol=1e-10)
    np.testing.assert_allclose(ember.linalg.eigvalsh(ember.from_numpy(a)).numpy(), tL.numpy(), atol=1e-12)
    _both(lambda lib: lib.linalg.eigh(lib.ones(2, 3)))


def test_eigh_gradients_match_torch():
    a = _sym(4, 1)
    w = np.random.default_rng(5).uniform(-1, 1, (4, 4))
    grads = []
    for L in (torch, ember):
        A = L.from_numpy(a.copy()).requires_grad_(True)
        vals, vecs = L.linalg.eigh(A)
        loss = (vals * L.from_numpy(np.arange(4.0))).sum() + ((vecs @ vecs.mT * vals.unsqueeze(-2)) *
                                                               L.from_numpy(w)).sum()
        g1, = L.autograd.grad(loss, A)
        g2, = L.autograd.grad((L.linalg.eigvalsh(A) ** 2).sum(), A)
        grads.append((g1.numpy(), g2.numpy()))
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, atol=1e-9)


@pytest.mark.parametrize('m', [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                               [[[2.0, 1.0], [1.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]]]])
def test_det_gradient_at_singular_matrices_like_torch(m):
    grads = []
    for L in (torch, ember):
        A = L.tensor(m, dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(L.linalg.det(A).sum(), A)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-12)


@pytest.mark.parametrize('dt', ['float16', 'bfloat16'])
@pytest.mark.parametrize('k', range(12))
def test_half_precision_like_torch(dt, k):
    fns = [lambda L, a: L.linalg.inv(a), lambda L, a: L.linalg.det(a), lambda L, a: L.linalg.slogdet(a),
           lambda L, a: L.linalg.cholesky(a), lambda L, a: L.linalg.qr(a), lambda L, a: L.linalg.svd(a),
           lambda L, a: L.linalg.eigh(a), lambda L, a: L.linalg.solve(a, a), lambda L, a: L.linalg.matrix_norm(a),
           lambda L, a: L.einsum('ij,jk', a, a), lambda L, a: L.linalg.matrix_norm(a, 'nuc'),
           lambda L, a: L.linalg.matrix_norm(a, 1)]
    f = fns[k]
    try:
        t = f(torch, torch.eye(3, dtype=getattr(torch, dt)))
    except Exception:
        _both(lambda L: f(L, L.eye(3, dtype=getattr(L, dt))))
        return
    e = f(ember, ember.eye(3, dtype=getattr(ember, dt)))
    assert e.dtype.name == dt and np.allclose(e.float().numpy(), t.float().numpy())
