"""parametrizations.orthogonal against torch's: with the same seed and the same starting weight, the
parametrized weight, the `base` buffer, the originals' gradients and the weight after SGD steps equal torch's for
every map (matrix_exp, cayley, householder), with and without the dynamic trivialization, square, tall, wide
and batched matrices, real and complex; the default map, assignment through right_inverse, state_dict keys and
torch's errors."""
import numpy as np
import pytest
import torch

import ember
from ember.nn.utils.parametrizations import orthogonal

_NP = {ember.float32: np.float32, ember.float64: np.float64, ember.complex64: np.complex64,
       ember.complex128: np.complex128}


def _start(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape)
    if ember.empty(0, dtype=dtype).is_complex():
        w = w + 1j * rng.standard_normal(shape)
    return w.astype(_NP[dtype])


def _module(lib, w):
    m = lib.nn.Module()
    m.register_parameter('weight', lib.nn.Parameter(lib.from_numpy(w.copy())))
    return m


def _pair(shape, dtype, **kw):
    w = _start(shape, dtype)
    out = []
    for lib, fn in ((ember, orthogonal), (torch, torch.nn.utils.parametrizations.orthogonal)):
        lib.manual_seed(3)          # tall and wide weights are completed with random columns
        out.append(fn(_module(lib, w), **kw))
    return out


def _close(a, b, dtype):
    tol = 2e-4 if dtype in (ember.float32, ember.complex64) else 1e-9
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _orthonormal(W):
    W = W.detach().numpy().astype(np.complex128)
    W = W if W.shape[-2] >= W.shape[-1] else np.swapaxes(W, -1, -2)
    G = np.swapaxes(W.conj(), -1, -2) @ W
    np.testing.assert_allclose(G, np.broadcast_to(np.eye(W.shape[-1]), G.shape), atol=1e-4)


def _train(lib, m, target, steps=2):
    """SGD steps on |W - target|^2; returns the originals' gradients of each step."""
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    grads = []
    for _ in range(steps):
        opt.zero_grad()
        ((m.weight - lib.from_numpy(target.copy())).abs() ** 2).sum().backward()
        grads.append([p.grad.clone() for p in m.parameters()])
        opt.step()
    return grads


CASES = [(maps, triv, shape, dtype)
         for maps in ('matrix_exp', 'cayley', 'householder')
         for triv in (True, False)
         for shape in ((4, 4), (5, 3), (3, 5), (2, 4, 3))
         for dtype in (ember.float32, ember.float64, ember.complex128)
         if not (maps == 'householder' and dtype.is_complex)]


@pytest.mark.parametrize('maps,triv,shape,dtype', CASES)
def test_values_gradients_and_steps_match_torch(maps, triv, shape, dtype):
    em, tm = _pair(shape, dtype, orthogonal_map=maps, use_trivialization=triv)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _close(em.parametrizations.weight.original, tm.parametrizations.weight.original, dtype)
    if triv:
        _close(em.parametrizations.weight[0].base, tm.parametrizations.weight[0].base, dtype)
    else:
        assert not hasattr(em.parametrizations.weight[0], 'base')
    _close(em.weight, tm.weight, dtype)
    assert em.weight.dtype == dtype and tuple(em.weight.shape) == shape
    _orthonormal(em.weight)
    target = _start(shape, dtype, seed=7)
    ge, gt = _train(ember, em, target), _train(torch, tm, target)
    assert len(ge) == len(gt) == 2 and all(len(a) == len(b) == 1 for a, b in zip(ge, gt))
    for a, b in zip(ge, gt):
        _close(a[0], b[0], dtype)
    _close(em.weight, tm.weight, dtype)
    _orthonormal(em.weight)


@pytest.mark.parametrize('shape', [(4, 4), (3, 5)])
def test_assignment_sets_base_and_returns_minus_identity(shape):
    em, tm = _pair(shape, ember.float64)
    q = _start(shape, ember.float64, seed=11)        # not orthogonal: made so by QR
    for lib, m in ((ember, em), (torch, tm)):
        lib.manual_seed(5)
        m.weight = lib.from_numpy(q.copy())
    _close(em.parametrizations.weight[0].base, tm.parametrizations.weight[0].base, ember.float64)
    _close(em.parametrizations.weight.original, tm.parametrizations.weight.original, ember.float64)
    _close(em.weight, tm.weight, ember.float64)
    w = em.weight.detach().clone()
    em.weight = w                                     # already orthogonal: kept as it is
    np.testing.assert_allclose(em.weight.detach().numpy(), w.numpy(), atol=1e-12)


def test_householder_without_trivialization_assignment():
    em, tm = _pair((5, 3), ember.float64, orthogonal_map='householder', use_trivialization=False)
    q = _start((5, 3), ember.float64, seed=2)
    em.weight, tm.weight = ember.from_numpy(q.copy()), torch.from_numpy(q.copy())
    _close(em.parametrizations.weight.original, tm.parametrizations.weight.original, ember.float64)
    _close(em.weight, tm.weight, ember.float64)


def test_default_map_and_linear():
    for shape, dtype, want in (((4, 4), ember.float32, 'matrix_exp'), ((5, 3), ember.float32, 'householder'),
                               ((5, 3), ember.complex64, 'matrix_exp')):
        em, tm = _pair(shape, dtype)
        assert em.parametrizations.weight[0].orthogonal_map.name == want
        assert tm.parametrizations.weight[0].orthogonal_map.name == want
    ember.manual_seed(0)
    torch.manual_seed(0)
    el = orthogonal(ember.nn.Linear(3, 5))
    tl = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 5))
    assert type(el).__name__ == type(tl).__name__ == 'ParametrizedLinear'
    assert type(el.parametrizations.weight[0]).__name__ == '_Orthogonal'
    _close(el.weight, tl.weight, ember.float32)


def _raises(fn_e, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value) == str(te.value).replace('torch.Size', 'ember.Size')


def test_errors_match_torch():
    tp = torch.nn.utils.parametrizations.orthogonal
    _raises(lambda: orthogonal(ember.nn.Linear(3, 3), orthogonal_map='qr'),
            lambda: tp(torch.nn.Linear(3, 3), orthogonal_map='qr'))
    _raises(lambda: orthogonal(ember.nn.Linear(3, 3), name='bias'),
            lambda: tp(torch.nn.Linear(3, 3), name='bias'))
    _raises(lambda: orthogonal(ember.nn.Linear(3, 3), name='nope'),
            lambda: tp(torch.nn.Linear(3, 3), name='nope'))
    w = _start((3, 3), ember.complex64)
    _raises(lambda: orthogonal(_module(ember, w), orthogonal_map='householder'),
            lambda: tp(_module(torch, w), orthogonal_map='householder'))
    em, tm = _pair((3, 3), ember.float32, orthogonal_map='cayley', use_trivialization=False)

    def assign(lib, m):
        m.weight = lib.eye(3)
    _raises(lambda: assign(ember, em), lambda: assign(torch, tm))
    em, tm = _pair((3, 3), ember.float32)
    _raises(lambda: setattr(em, 'weight', ember.eye(4)), lambda: setattr(tm, 'weight', torch.eye(4)))
