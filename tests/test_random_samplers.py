"""torch's rejection samplers, value for value (NOTE [torch's rejection samplers] in
ember/_backends/cpu/_torch_samplers.py): ``_standard_gamma``, ``poisson``, ``binomial`` and ``_sample_dirichlet``
draw torch's values for the same seed and leave the generator (its engine and its kept normal) where torch's
is; so do the distributions built on them."""
import numpy as np
import pytest
import torch

import ember

SEEDS = [0, 7, 2 ** 40 + 3]


def _after(L):
    """Draws that read the generator's state after a sampler: the engine (rand) and the kept normal (a small
    float64 randn takes it first)."""
    return [L.rand(5, dtype=L.float64), L.randn(3, dtype=L.float64), L.rand(4)]


def assert_same(fn, seed):
    got = []
    for L in (torch, ember):
        L.manual_seed(seed)
        r = fn(L)
        got.append([np.asarray(x.detach()) for x in ([r] if not isinstance(r, (list, tuple)) else r) + _after(L)])
    for t, e in zip(*got):
        assert e.dtype == t.dtype and e.shape == t.shape
        np.testing.assert_array_equal(e, t)


def _full(L, shape, v, dt):
    return L.full(shape, v, dtype=getattr(L, dt))


DTYPES = ['float32', 'float64']

GAMMA = {
    'tiny': 1e-30, 'small': 1e-6, 'a0.01': 0.01, 'a0.3': 0.3, 'a0.999': 0.999, 'one': 1.0, 'a1.5': 1.5,
    'a7.3': 7.3, 'a100': 100.0, 'huge': 1e6,
}


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('dt', DTYPES)
@pytest.mark.parametrize('alpha', list(GAMMA))
def test_standard_gamma(alpha, dt, seed):
    assert_same(lambda L: L._standard_gamma(_full(L, (67,), GAMMA[alpha], dt)), seed)


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('dt', DTYPES)
def test_standard_gamma_mixed_shapes_and_special_values(dt, seed):
    assert_same(lambda L: L._standard_gamma((L.rand(6, 5, 3, dtype=getattr(L, dt)) * 4) ** 2), seed)
    # alpha 0 draws nothing and gives the smallest normal number; NaN and negative alphas as torch (no error)
    assert_same(lambda L: L._standard_gamma(L.tensor([0., 1., 0., 0.3, float('nan'), -0.5, -1., float('inf')],
                                                     dtype=getattr(L, dt))), seed)
    # an expanded (stride 0) alpha, and a non-contiguous one: draws in the output's order
    assert_same(lambda L: L._standard_gamma(L.tensor([0.2, 3.0], dtype=getattr(L, dt)).expand(9, 2)), seed)
    assert_same(lambda L: L._standard_gamma((L.rand(4, 5, dtype=getattr(L, dt)) + 0.2).t()), seed)


def test_standard_gamma_kept_normal_crosses_calls():
    # a gamma sampler leaves the second Box-Muller normal in the generator; the next one (or randn) starts with it
    assert_same(lambda L: [L._standard_gamma(L.full((3,), 2.0)), L.randn(1, dtype=L.float64),
                           L._standard_gamma(L.full((5,), 0.4, dtype=L.float64)), L.randn(2)], 11)
    assert_same(lambda L: [L.randn(3, dtype=L.float64), L._standard_gamma(L.full((4,), 5.0))], 12)


POISSON = [0.0, 0.1, 1.0, 5.0, 9.99, 10.0, 33.0, 1000.0, 1e7]


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('dt', DTYPES + ['float16', 'bfloat16'])
def test_poisson(dt, seed):
    for lam in POISSON:
        if dt in ('float16', 'bfloat16') and lam > 1000:
            continue
        assert_same(lambda L: _np(L.poisson(_full(L, (53,), lam, dt))), seed)
    assert_same(lambda L: _np(L.poisson(L.rand(7, 9, dtype=getattr(L, dt)) * 30)), seed)


def _np(t):
    return t.float() if t.dtype.is_floating_point and t.dtype.itemsize == 2 else t     # NumPy has no bfloat16


BINOMIAL = [(10, 0.3), (100, 0.05), (100, 0.3), (100, 0.5), (1000, 0.7), (50, 0.95), (7, 0.99), (1e6, 0.4),
            (0, 0.5), (5, 0.0), (5, 1.0), (10.5, 0.4), (40.7, 0.8), (3e7, 0.3), (2 ** 24 + 3, 0.5)]


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('dt', DTYPES)
def test_binomial(dt, seed):
    for n, p in BINOMIAL:
        assert_same(lambda L: L.binomial(_full(L, (41,), float(n), dt), _full(L, (41,), p, dt)), seed)
    assert_same(lambda L: L.binomial(L.floor(L.rand(8, 9, dtype=getattr(L, dt)) * 200),
                                     L.rand(8, 9, dtype=getattr(L, dt))), seed)


@pytest.mark.parametrize('seed', SEEDS)
@pytest.mark.parametrize('dt', DTYPES)
@pytest.mark.parametrize('k', [1, 2, 3, 5, 8, 9, 17, 40, 300])
def test_sample_dirichlet(k, dt, seed):
    # the gammas in double, over their row's sum added as torch's sum kernel adds it
    assert_same(lambda L: L._sample_dirichlet(L.rand(6, k, dtype=getattr(L, dt)) * 3 + 0.05), seed)


def test_sample_dirichlet_edges():
    assert_same(lambda L: L._sample_dirichlet(L.tensor([0.1, 2.0, 5.0])), 1)
    assert_same(lambda L: L._sample_dirichlet(L.tensor([[1e-4, 1e-4], [0., 0.], [1e4, 1.]], dtype=L.float64)), 2)
    assert_same(lambda L: L._sample_dirichlet(L.tensor(2.0)), 3)
    with pytest.raises(NotImplementedError, match="\"dirichlet\" not implemented for 'Half'"):
        ember._sample_dirichlet(ember.ones(3, dtype=ember.float16))
    x = ember._sample_dirichlet(ember.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet is not implemented"):
        x.sum().backward()


@pytest.mark.parametrize('fn', ['_standard_gamma', 'binomial'])
def test_half_precision_is_refused_as_torch(fn):
    a = ember.ones(3, dtype=ember.float16)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        ember._standard_gamma(a) if fn == '_standard_gamma' else ember.binomial(a, a)


def test_explicit_generator_and_state_round_trip():
    g, tg = ember.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    a = ember._standard_gamma(ember.full((9,), 0.7), generator=g)
    b = torch._standard_gamma(torch.full((9,), 0.7), generator=tg)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the state bytes, kept normal included, equal torch's, and a state saved by torch continues here
    np.testing.assert_array_equal(g.get_state().numpy(), tg.get_state().numpy())
    ember.default_generator.set_state(ember.tensor(tg.get_state().numpy()))
    np.testing.assert_array_equal(ember.poisson(ember.full((20,), 12.0)).numpy(),
                                  torch.poisson(torch.full((20,), 12.0), generator=tg).numpy())


def _dists(L, dt):
    T = lambda v: L.tensor(v, dtype=dt)     # noqa: E731
    D = L.distributions
    return {
        'Gamma': lambda: D.Gamma(T([0.3, 1.0, 4.5]), T([2.0, 0.5, 1.0])).rsample((20,)),
        'Gamma.sample': lambda: D.Gamma(T([0.3, 1.0, 4.5]), T([2.0, 0.5, 1.0])).sample((7,)),
        'Beta': lambda: D.Beta(T([0.5, 2.0, 7.0]), T([1.5, 0.3, 7.0])).rsample((20,)),
        'Dirichlet': lambda: D.Dirichlet(T([[0.5, 2.0, 7.0, 1.0, 0.1], [1., 1., 1., 1., 1.]])).rsample((10,)),
        'Dirichlet.sample': lambda: D.Dirichlet(T([0.5, 2.0, 7.0])).sample((10,)),
        'Chi2': lambda: D.Chi2(T([0.5, 3.0, 10.0])).rsample((20,)),
        'StudentT': lambda: D.StudentT(T([1.0, 3.0, 30.0]), T([0., 1., 2.]), T([1., 2., .5])).rsample((20,)),
        'Poisson': lambda: D.Poisson(T([0.5, 3.0, 12.0, 200.0])).sample((20,)),
        'Binomial': lambda: D.Binomial(T([10., 100., 1000.]), probs=T([0.2, 0.6, 0.97])).sample((20,)),
        'FisherSnedecor': lambda: D.FisherSnedecor(T([1.0, 5.0]), T([3.0, 20.0])).rsample((20,)),
        'InverseGamma.base': lambda: D.InverseGamma(T([0.7, 3.0]), T([1.0, 2.0])).base_dist.rsample((20,)),
    }


@pytest.mark.parametrize('seed', SEEDS[:2])
@pytest.mark.parametrize('dt', DTYPES)
@pytest.mark.parametrize('name', list(_dists(torch, torch.float32)))
def test_distributions_sample_torchs_values(name, dt, seed):
    assert_same(lambda L: _dists(L, getattr(L, dt))[name](), seed)


def test_inverse_gamma_within_an_ulp():
    # its Gamma draws are torch's; torch's PowerTransform takes x.pow(tensor(-1)) through a vectorised pow
    # (SLEEF, within 1 ulp), ember's is 1 / x
    out = []
    for L in (torch, ember):
        L.manual_seed(0)
        out.append(L.distributions.InverseGamma(L.tensor([0.7, 3.0]), L.tensor([1.0, 2.0])).rsample((50,)).numpy())
    np.testing.assert_array_max_ulp(out[1], out[0], maxulp=1)


@pytest.mark.parametrize('name', ['Dirichlet', 'Beta'])
def test_dirichlet_rsample_with_grad_draws_torchs_values(name):
    # where the concentration requires grad, ember builds the sample from differentiable double gammas: the
    # same values (its gradient is the gammas' pathwise one, not torch's _dirichlet_grad approximation)
    out = []
    for L in (torch, ember):
        L.manual_seed(5)
        c = L.tensor([[0.5, 2.0, 7.0, 1.0], [0.2, 1., 1., 3.]], requires_grad=True)
        d = L.distributions.Dirichlet(c) if name == 'Dirichlet' else L.distributions.Beta(c[..., 0], c[..., 1])
        x = d.rsample((20,))
        x.sum().backward() if name == 'Beta' else (x * L.arange(4.)).sum().backward()
        out.append((x.detach().numpy(), L.rand(3).numpy(), c.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])
    assert np.all(np.isfinite(out[1][2]))


def test_gamma_rsample_gradient_is_close_to_torchs():
    # the same samples; the gradient is the exact implicit derivative here, torch's a fitted approximation
    # (tests/test_distributions.py, test_standard_gamma_grad_against_torch)
    grads = []
    for L in (torch, ember):
        L.manual_seed(3)
        a = L.tensor([0.3, 1.0, 4.5, 20.0], dtype=L.float64, requires_grad=True)
        L.distributions.Gamma(a, L.tensor(2.0, dtype=L.float64)).rsample((30,)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=2e-3)
