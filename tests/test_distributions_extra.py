"""The distributions, transforms and constraint registry added after the first set, against
torch.distributions: deterministic quantities (log_prob, cdf, icdf, moments, entropy, KL) and their gradients
on the same parameters, seeded samples where ember draws from the same streams as torch (rand, randn,
exponential_, cauchy_, uniform_), sample statistics where it does not (gamma, poisson), transforms, biject_to /
transform_to and the errors for invalid parameters."""
import math
import re

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember
import ember.distributions as ED


def P(lib, x, grad=True, dtype='float64'):
    t = lib.tensor(np.asarray(x, dtype=dtype))
    return t.requires_grad_() if grad and dtype.startswith('float') else t


def npy(t):
    return np.asarray(t) if isinstance(t, (int, float)) else t.detach().numpy()


def close(e, t, rtol=1e-7, atol=1e-9):
    if str(t.dtype).endswith('float32'):
        rtol, atol = max(rtol, 2e-6), max(atol, 1e-6)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(npy(e), npy(t), rtol=rtol, atol=atol, equal_nan=True)


def _msg(ex):
    # tensors print their module's name; a clamp with both bounds is ClampBackward1 in torch, 0 in ember
    return re.sub(r'Backward\d', 'Backward', re.sub(r'(ember|torch)\.', 'X.', str(ex)))


def _same(fe, ft, **tol):
    """Call both; if torch raises, ember must raise the same class; else the results must agree."""
    try:
        t = ft()
    except Exception as ex:      # noqa: BLE001  the oracle decides
        with pytest.raises(type(ex)):
            fe()
        return 'raised'
    e = fe()
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t) and isinstance(e, ember.Size)
    elif isinstance(t, bool):
        assert e is t
    else:
        close(e, t, **tol)
    return 'ok'


def _mk(cls, *args, **kw):
    """A case factory: ``args``/``kw`` are nested lists (parameters requiring grad) or plain Python values."""
    def f(lib, D):
        params = []

        def conv(a):
            if isinstance(a, list):
                t = P(lib, a)
                params.append(t)
                return t
            return a
        a = [conv(x) for x in args]
        k = {n: conv(v) for n, v in kw.items()}
        return getattr(D, cls)(*a, **k), params
    return f


def _gpd(lib, D):
    # float32: torch's GeneralizedPareto compares concentration with a float32 zero (isclose), which raises for
    # float64 parameters
    loc, scale, conc = (P(lib, v, dtype='float32') for v in ([0.0, 1.0, -1.0], [1.0, 2.0, 0.5], [0.0, 0.3, -0.2]))
    return D.GeneralizedPareto(loc, scale, conc), [loc, scale, conc]


def _lowrank(lib, D):
    loc = P(lib, [[0.0, 1.0, -1.0], [0.5, 0.0, 2.0]])
    W = P(lib, [[1.0, 0.5], [0.3, -0.2], [0.0, 1.0]])
    d = P(lib, [1.0, 0.5, 2.0])
    return D.LowRankMultivariateNormal(loc, W, d), [loc, W, d]


def _mixture(lib, D):
    logits = P(lib, [[0.0, 1.0, -1.0], [0.5, 0.5, 0.0]])
    loc = P(lib, [[-1.0, 0.0, 2.0], [0.5, 1.0, 1.5]])
    scale = P(lib, [1.0, 0.5, 2.0])
    return D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(loc, scale)), [logits, loc, scale]


def _mixture_mvn(lib, D):
    probs = P(lib, [0.3, 0.7])
    loc = P(lib, [[0.0, 1.0], [1.0, -1.0]])
    cov = P(lib, [[[1.0, 0.2], [0.2, 0.5]], [[2.0, 0.0], [0.0, 1.0]]])
    d = D.MixtureSameFamily(D.Categorical(probs=probs), D.MultivariateNormal(loc, covariance_matrix=cov))
    return d, [probs, loc, cov]


# name -> (factory, values for log_prob (nested list), quantiles for icdf or None)
CASES = {
    'Cauchy': (_mk('Cauchy', [0.0, 1.0, -2.0], [[1.0], [0.5]]), [[[0.3, -1.0, 2.0]], [[1.5, 0.0, -0.2]]],
               [[0.1, 0.5, 0.9]]),
    'HalfCauchy': (_mk('HalfCauchy', [1.0, 0.5, 2.0]), [[0.3, 1.0, 2.0], [0.0, 5.0, 0.1]], [[0.1, 0.5, 0.9]]),
    'HalfNormal': (_mk('HalfNormal', [1.0, 0.5, 2.0]), [[0.3, 1.0, 2.0], [0.0, 5.0, 0.1]], [[0.1, 0.5, 0.9]]),
    'Gumbel': (_mk('Gumbel', [0.0, 1.0], [1.0, 2.0]), [[0.5, -1.0], [3.0, 0.0]], [[0.1, 0.7]]),
    'Gumbel_scalar': (_mk('Gumbel', 1.0, 2.0), [0.5, 4.0], [0.3, 0.9]),
    'StudentT': (_mk('StudentT', [0.5, 1.5, 3.0, 10.0], [0.0, 1.0, -1.0, 0.5], [1.0, 2.0, 0.5, 1.0]),
                 [[0.3, -1.0, 2.0, 0.0]], None),
    'Chi2': (_mk('Chi2', [0.5, 1.0, 3.0]), [[0.1, 2.5, 1.0], [3.0, 0.2, 0.01]], None),
    'Geometric_probs': (_mk('Geometric', probs=[0.2, 0.5, 1.0]), [[0.0, 3.0, 0.0], [2.0, 0.0, 0.0]], None),
    'Geometric_logits': (_mk('Geometric', logits=[-1.0, 0.0, 2.0]), [[0.0, 3.0, 5.0]], None),
    'NegativeBinomial': (_mk('NegativeBinomial', [3.0, 5.5, 0.0], probs=[0.2, 0.5, 0.7]),
                         [[0.0, 3.0, 0.0], [2.0, 7.0, 0.0]], None),
    'NegativeBinomial_logits': (_mk('NegativeBinomial', 4.0, logits=[-1.0, 1.0]), [[0.0, 6.0]], None),
    'Pareto': (_mk('Pareto', [1.0, 2.0, 0.5], [0.5, 2.5, 3.0]), [[1.5, 2.0, 0.7], [10.0, 2.5, 0.5]],
               [[0.1, 0.5, 0.9]]),
    'Weibull': (_mk('Weibull', [1.0, 2.0, 0.5], [0.5, 2.5, 1.0]), [[1.5, 2.0, 0.7], [0.1, 2.5, 0.5]],
                [[0.1, 0.5, 0.9]]),
    'Kumaraswamy': (_mk('Kumaraswamy', [0.5, 2.0, 3.0], [1.5, 2.0, 0.7]), [[0.1, 0.5, 0.9]], [[0.1, 0.5, 0.9]]),
    'ContinuousBernoulli_probs': (_mk('ContinuousBernoulli', probs=[0.2, 0.4995, 0.5, 0.9]),
                                  [[0.1, 0.5, 0.9, 0.0], [1.0, 0.3, 0.2, 0.7]], [[0.1, 0.5, 0.9, 0.3]]),
    'ContinuousBernoulli_logits': (_mk('ContinuousBernoulli', logits=[-2.0, 0.0, 3.0]), [[0.1, 0.5, 0.9]],
                                   [[0.2, 0.5, 0.7]]),
    'FisherSnedecor': (_mk('FisherSnedecor', [1.0, 3.0, 6.0], [2.0, 5.0, 10.0]), [[0.5, 1.0, 2.0]], None),
    'InverseGamma': (_mk('InverseGamma', [0.5, 1.5, 3.0], [1.0, 2.0, 0.5]), [[0.5, 1.0, 2.0], [0.1, 3.0, 0.2]],
                     None),
    'GeneralizedPareto': (_gpd,
                          [[0.5, 2.0, -0.5], [1.0, 5.0, 1.0]], [[0.1, 0.5, 0.9]]),
    'VonMises': (_mk('VonMises', [0.0, 1.0, -2.0], [0.5, 2.0, 10.0]), [[0.3, -1.0, 2.0], [3.0, 1.0, -2.0]], None),
    'LogisticNormal': (_mk('LogisticNormal', [[0.0, 1.0], [0.5, -0.5]], [1.0, 0.5]),
                       [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], None),
    'LowRankMVN': (_lowrank, [[[0.0, 0.0, 0.0]], [[1.0, -1.0, 0.5]]], None),
    'MixtureSameFamily': (_mixture, [[0.3, -1.0], [2.0, 0.0]], None),
    'MixtureSameFamily_mvn': (_mixture_mvn, [[0.3, -1.0], [2.0, 0.0]], None),
    'OneHotCategoricalStraightThrough': (_mk('OneHotCategoricalStraightThrough', probs=[[0.1, 0.2, 0.7],
                                                                                         [0.5, 0.25, 0.25]]),
                                         [[[0, 0, 1], [1, 0, 0]]], None),
}

PROPS = ('mean', 'variance', 'stddev', 'mode', 'batch_shape', 'event_shape', 'has_rsample', 'has_enumerate_support')


def _both(name):
    fn = CASES[name][0]
    return fn(ember, ED), fn(torch, TD)


@pytest.mark.parametrize('name', sorted(CASES))
def test_deterministic_against_torch(name):
    (de, pe), (dt, pt) = _both(name)
    assert type(de).__name__ == type(dt).__name__
    for prop in PROPS:
        _same(lambda: getattr(de, prop), lambda: getattr(dt, prop))
    dtype = str(pt[0].dtype).split('.')[-1] if pt else 'float32'
    ve, vt = P(ember, CASES[name][1], False, dtype), P(torch, CASES[name][1], False, dtype)
    assert _same(lambda: de.log_prob(ve), lambda: dt.log_prob(vt)) == 'ok'
    _same(lambda: de.cdf(ve), lambda: dt.cdf(vt))
    _same(lambda: de.entropy(), lambda: dt.entropy())
    q = CASES[name][2]
    if q is not None:
        assert _same(lambda: de.icdf(P(ember, q, False, dtype)), lambda: dt.icdf(P(torch, q, False, dtype))) == 'ok'
    le, lt = de.log_prob(ve), dt.log_prob(vt)
    ge = ember.autograd.grad(le.sum(), pe, allow_unused=True) if pe else ()
    gt = torch.autograd.grad(lt.sum(), pt, allow_unused=True) if pt else ()
    assert len(ge) == len(gt) == len(pe) == len(pt) and (pe or name.endswith('_scalar'))
    for a, b in zip(ge, gt):
        assert (a is None) == (b is None)
        if b is not None:
            close(a, b, rtol=1e-6, atol=1e-8)
    for shape in ((), (4,), (2, 3)):
        assert tuple(de.sample(shape).shape) == tuple(dt.sample(shape).shape)
        if dt.has_rsample:
            assert tuple(de.rsample(shape).shape) == tuple(dt.rsample(shape).shape)
    big = (5,) + tuple(dt.batch_shape)
    xe, xt = de.expand(big), dt.expand(big)
    assert type(xe).__name__ == type(xt).__name__
    assert tuple(xe.batch_shape) == tuple(xt.batch_shape) and tuple(xe.event_shape) == tuple(xt.event_shape)
    vt2 = xt.sample()
    close(xe.log_prob(ember.from_numpy(vt2.numpy())), xt.log_prob(vt2))
    assert bool(npy(de.support.check(ember.from_numpy(vt2.numpy()))).all())
    assert _msg(repr(de.support)) == _msg(repr(dt.support))
    assert _msg(repr(de)) == _msg(repr(dt))


# --- seeded samples: the streams torch uses for these are ember's too ------------------------------------------

SEEDED = ['Cauchy', 'HalfCauchy', 'HalfNormal', 'Gumbel', 'Gumbel_scalar', 'Pareto', 'Weibull', 'Kumaraswamy',
          'Geometric_probs', 'Geometric_logits', 'ContinuousBernoulli_probs', 'ContinuousBernoulli_logits',
          'GeneralizedPareto', 'VonMises', 'LogisticNormal', 'LowRankMVN']


@pytest.mark.parametrize('name', SEEDED)
def test_seeded_samples_equal_torch(name):
    (de, pe), (dt, pt) = _both(name)
    for shape in ((), (7,), (3, 2)):
        ember.manual_seed(11)
        torch.manual_seed(11)
        close(de.sample(shape), dt.sample(shape), rtol=1e-12, atol=1e-12)
    if dt.has_rsample and pt:
        ember.manual_seed(5)
        torch.manual_seed(5)
        xe, xt = de.rsample((6,)), dt.rsample((6,))
        close(xe, xt, rtol=1e-12, atol=1e-12)
        ge = ember.autograd.grad((xe * xe.detach().cos()).sum(), pe, allow_unused=True)
        gt = torch.autograd.grad((xt * xt.detach().cos()).sum(), pt, allow_unused=True)
        assert len(ge) == len(gt) > 0
        for a, b in zip(ge, gt):
            assert (a is None) == (b is None)
            if b is not None:
                close(a, b, rtol=1e-7, atol=1e-9)


def test_seeded_float32_samples_equal_torch():
    for cls, args in (('Cauchy', (0.5, 2.0)), ('HalfNormal', (1.5,)), ('Gumbel', (0.0, 1.0)), ('Weibull', (1.0, 2.0)),
                      ('Pareto', (1.0, 3.0))):
        a_e = [ember.tensor(a, dtype=ember.float32) for a in args]
        a_t = [torch.tensor(a, dtype=torch.float32) for a in args]
        ember.manual_seed(2)
        torch.manual_seed(2)
        e, t = getattr(ED, cls)(*a_e).sample((50,)), getattr(TD, cls)(*a_t).sample((50,))
        close(e, t, rtol=1e-6, atol=1e-7)


# --- sample statistics where ember's streams differ (gamma, poisson) or selection is by index ------------------

STATS = ['StudentT', 'Chi2', 'NegativeBinomial', 'FisherSnedecor', 'InverseGamma', 'MixtureSameFamily',
         'MixtureSameFamily_mvn', 'OneHotCategoricalStraightThrough', 'VonMises']


@pytest.mark.parametrize('name', STATS)
def test_sample_statistics(name):
    (de, _), (dt, _) = _both(name)
    ember.manual_seed(1234)
    n = 40000
    x = npy(de.sample((n,))).astype(np.float64)
    assert bool(npy(dt.support.check(torch.from_numpy(x))).all())
    mean, var = npy(dt.mean), npy(dt.variance)
    ok = np.isfinite(mean) & np.isfinite(var) & np.broadcast_to(True, mean.shape)
    if name == 'VonMises':        # circular: compare E[cos(x - loc)] = 1 - circular variance
        np.testing.assert_allclose(np.cos(x - npy(dt.loc)).mean(0), 1 - var, atol=0.02)
        return
    if name == 'StudentT':        # variance finite but the fourth moment infinite for df <= 4: check medians
        np.testing.assert_allclose(np.median(x, 0), npy(dt.loc), atol=0.05)
        ok = ok & (npy(dt.df) > 4)
    if name == 'FisherSnedecor':
        ok = ok & (npy(dt.df2) > 8)
    assert ok.any()
    sd = np.sqrt(np.where(ok, var, 1.0) / n)
    assert np.all(np.abs(x.mean(0) - mean)[ok] < 6 * sd[ok] + 1e-12), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0)[ok], np.broadcast_to(var, x.shape[1:])[ok], rtol=0.1, atol=1e-3)


def test_rsample_gradients_through_gamma():
    # StudentT and Chi2 reparameterise through _standard_gamma: d E[X] / d param by Monte Carlo
    ember.manual_seed(3)
    df = P(ember, 4.0)
    ED.Chi2(df).rsample((40000,)).mean().backward()
    assert abs(df.grad.item() - 1.0) < 0.05
    loc, scale = P(ember, 1.0), P(ember, 2.0)
    x = ED.StudentT(ember.tensor(5.0, dtype=ember.float64), loc, scale).rsample((40000,))
    x.mean().backward()
    assert loc.grad.item() == pytest.approx(40000 / 40000)
    inv = P(ember, 3.0)
    ED.InverseGamma(inv, ember.tensor(2.0, dtype=ember.float64)).rsample((80000,)).mean().backward()
    assert abs(inv.grad.item() - (-2.0 / 4.0)) < 0.05           # d b / (a - 1) / d a at a = 3, b = 2


def test_straight_through_gradient():
    probs = P(ember, [0.2, 0.3, 0.5])
    ember.manual_seed(0)
    s = ED.OneHotCategoricalStraightThrough(probs=probs).rsample((4,))
    assert set(np.unique(npy(s))) <= {0.0, 1.0} and np.all(npy(s).sum(-1) == 1)
    (s * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    # d/dprobs of (probs / sum(probs)) . w summed 4 times, with sum(probs) = 1
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(npy(probs.grad), 4 * (w - (w * [0.2, 0.3, 0.5]).sum()), rtol=1e-10)


def test_mixture_same_family_details():
    (de, _), (dt, _) = _both('MixtureSameFamily')
    assert tuple(de.mixture_distribution.batch_shape) == (2,) and isinstance(de.component_distribution, ED.Normal)
    ember.manual_seed(0)
    x = npy(de.sample((20000,)))
    # the sample's empirical cdf at a few points equals the mixture cdf
    for v in (-1.0, 0.5, 2.0):
        np.testing.assert_allclose((x <= v).mean(0), npy(dt.cdf(torch.tensor(v, dtype=torch.float64))), atol=0.015)
    with pytest.raises(ValueError, match='needs to be an  instance'):
        ED.MixtureSameFamily(ED.Normal(0.0, 1.0), ED.Normal(ember.zeros(2), 1.0))
    with pytest.raises(ValueError, match='does not equal'):
        ED.MixtureSameFamily(ED.Categorical(ember.ones(3)), ED.Normal(ember.zeros(2), 1.0))
    with pytest.raises(ValueError, match='is not compatible'):
        ED.MixtureSameFamily(ED.Categorical(ember.ones(3, 2)), ED.Normal(ember.zeros(4, 2), 1.0))
    c = ED.constraints.MixtureSameFamilyConstraint(ED.constraints.positive)
    ct = TD.constraints.MixtureSameFamilyConstraint(TD.constraints.positive)
    assert repr(c) == repr(ct)
    v = [[1.0, -1.0], [2.0, 0.5]]
    close(c.check(ember.tensor(v)), ct.check(torch.tensor(v)))


def test_lowrank_matrices_against_torch():
    (de, pe), (dt, pt) = _both('LowRankMVN')
    for prop in ('scale_tril', 'covariance_matrix', 'precision_matrix', 'variance'):
        e, t = getattr(de, prop), getattr(dt, prop)
        close(e, t)
        ge = ember.autograd.grad(e.sum(), pe, allow_unused=True)
        gt = torch.autograd.grad(t.sum(), pt, allow_unused=True)
        for a, b in zip(ge, gt):
            assert (a is None) == (b is None)
            if b is not None:
                close(a, b, rtol=1e-6, atol=1e-8)
    for bad in (lambda lib, D: D.LowRankMultivariateNormal(P(lib, 0.0), P(lib, [[1.0]]), P(lib, [1.0])),
                lambda lib, D: D.LowRankMultivariateNormal(P(lib, [0.0]), P(lib, [1.0]), P(lib, [1.0])),
                lambda lib, D: D.LowRankMultivariateNormal(P(lib, [0.0, 0.0]), P(lib, [[1.0]]), P(lib, [1.0, 1.0])),
                lambda lib, D: D.LowRankMultivariateNormal(P(lib, [0.0]), P(lib, [[1.0]]), P(lib, [1.0, 1.0]))):
        with pytest.raises(ValueError) as tex:
            bad(torch, TD)
        with pytest.raises(ValueError) as eex:
            bad(ember, ED)
        assert _msg(eex.value) == _msg(tex.value)
    for lib, D in ((torch, TD), (ember, ED)):     # the capacitance's Cholesky fails before validation, in both
        with pytest.raises(RuntimeError, match='not positive-definite'):
            D.LowRankMultivariateNormal(P(lib, [0.0]), P(lib, [[1.0]]), P(lib, [-1.0]))


# --- KL divergence ---------------------------------------------------------------------------------------------------

def _mvn(lib, D):
    return D.MultivariateNormal(P(lib, [0.5, 0.0, 1.0]), P(lib, [[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]]))


KL_PAIRS = [
    ('Cauchy', lambda lib, D: (D.Cauchy(P(lib, [0.0, 1.0]), P(lib, [1.0, 2.0])), D.Cauchy(P(lib, [0.5, -1.0]), P(lib, [0.5, 3.0])))),
    ('Gumbel', lambda lib, D: (D.Gumbel(P(lib, [0.0, 1.0]), P(lib, [1.0, 2.0])), D.Gumbel(P(lib, [0.5, -1.0]), P(lib, [0.5, 3.0])))),
    ('HalfNormal', lambda lib, D: (D.HalfNormal(P(lib, [1.0, 2.0])), D.HalfNormal(P(lib, [0.5, 3.0])))),
    ('Geometric', lambda lib, D: (D.Geometric(probs=P(lib, [0.2, 0.7])), D.Geometric(logits=P(lib, [0.5, -1.0])))),
    ('Pareto', lambda lib, D: (D.Pareto(P(lib, [1.0, 0.5]), P(lib, [2.0, 1.0])), D.Pareto(P(lib, [0.5, 1.0]), P(lib, [1.5, 3.0])))),
    ('ContinuousBernoulli', lambda lib, D: (D.ContinuousBernoulli(probs=P(lib, [0.2, 0.4999, 0.9])),
                                            D.ContinuousBernoulli(logits=P(lib, [0.5, -1.0, 0.0])))),
    ('LowRank', lambda lib, D: (_lowrank(lib, D)[0], D.LowRankMultivariateNormal(
        P(lib, [0.0, 0.5, 0.0]), P(lib, [[0.5], [1.0], [0.2]]), P(lib, [2.0, 1.0, 0.5])))),
    ('MVN_LowRank', lambda lib, D: (_mvn(lib, D), _lowrank(lib, D)[0])),
    ('LowRank_MVN', lambda lib, D: (_lowrank(lib, D)[0], _mvn(lib, D))),
    ('LogisticNormal', lambda lib, D: (D.LogisticNormal(P(lib, [0.0, 1.0]), P(lib, [1.0, 2.0])),
                                            D.LogisticNormal(P(lib, [0.5, 1.0]), P(lib, [0.5, 1.0])))),
]


@pytest.mark.parametrize('name,make', KL_PAIRS, ids=[k for k, _ in KL_PAIRS])
def test_kl_against_torch(name, make):
    pe, qe = make(ember, ED)
    pt, qt = make(torch, TD)
    ke, kt = ED.kl_divergence(pe, qe), TD.kl_divergence(pt, qt)
    close(ke, kt, rtol=1e-7, atol=1e-9)
    finite = np.isfinite(npy(kt)).reshape(-1)
    assert finite.any()
    ke, kt = ke.reshape(-1), kt.reshape(-1)
    leaves = []
    for lib, D, p, q in ((ember, ED, pe, qe), (torch, TD, pt, qt)):
        ls = [v for d in (p, q) for v in _leaves(d)]
        leaves.append(ls)
    assert len(leaves[0]) == len(leaves[1]) > 0
    ge = ember.autograd.grad(ke[ember.from_numpy(finite)].sum(), leaves[0], allow_unused=True)
    gt = torch.autograd.grad(kt[torch.from_numpy(finite)].sum(), leaves[1], allow_unused=True)
    for a, b in zip(ge, gt):
        assert (a is None) == (b is None)
        if b is not None:
            close(a, b, rtol=1e-6, atol=1e-8)


def _leaves(d):
    out = []
    for v in vars(d).values():
        if isinstance(v, (ember.Tensor, torch.Tensor)) and v.requires_grad and v.grad_fn is None:
            out.append(v)
        elif isinstance(v, (ED.Distribution, TD.Distribution)):
            out += _leaves(v)
    return out


def test_kl_pareto_infinite_and_event_shape_errors():
    ke = ED.kl_divergence(ED.Pareto(P(ember, [0.5]), P(ember, [2.0])), ED.Pareto(P(ember, [1.0]), P(ember, [2.0])))
    kt = TD.kl_divergence(TD.Pareto(P(torch, [0.5]), P(torch, [2.0])), TD.Pareto(P(torch, [1.0]), P(torch, [2.0])))
    close(ke, kt)
    assert math.isinf(ke.item())
    a = ED.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.ones(2))
    b = ED.LowRankMultivariateNormal(ember.zeros(3), ember.ones(3, 1), ember.ones(3))
    for p, q in ((a, b), (a, ED.MultivariateNormal(ember.zeros(3), ember.eye(3))),
                 (ED.MultivariateNormal(ember.zeros(3), ember.eye(3)), a)):
        with pytest.raises(ValueError, match='different event shapes'):
            ED.kl_divergence(p, q)


# --- transforms -------------------------------------------------------------------------------------------------------

# (factory, input x (nested list))
TRANSFORMS = [
    (lambda lib, D: D.transforms.AbsTransform(), [[0.3, -1.2], [0.1, -0.7]]),
    (lambda lib, D: D.transforms.SoftplusTransform(), [[0.3, -1.2], [25.0, -30.0]]),
    (lambda lib, D: D.transforms.SoftmaxTransform(), [[0.3, -1.2, 2.0], [0.1, 0.7, 0.0]]),
    (lambda lib, D: D.transforms.StickBreakingTransform(), [[0.3, -1.2, 2.0], [0.1, 0.7, 0.0]]),
    (lambda lib, D: D.transforms.LowerCholeskyTransform(), [[[0.3, -1.2], [2.0, 0.5]], [[0.1, 0.7], [0.0, -1.0]]]),
    (lambda lib, D: D.transforms.PositiveDefiniteTransform(), [[[0.3, -1.2], [2.0, 0.5]]]),
    (lambda lib, D: D.transforms.CorrCholeskyTransform(), [[0.3, -1.2, 2.0], [0.1, 0.7, 0.0]]),
    (lambda lib, D: D.transforms.ReshapeTransform((2, 3), (3, 2)), [[[0.3, -1.2, 2.0], [0.1, 0.7, 0.0]]]),
    (lambda lib, D: D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1), [[0.3, -1.2], [0.1, 0.7]]),
    (lambda lib, D: D.transforms.IndependentTransform(D.transforms.SigmoidTransform(), 2), [[0.3, -1.2], [0.1, 0.7]]),
    (lambda lib, D: D.transforms.CatTransform([D.transforms.ExpTransform(), D.transforms.identity_transform,
                                               D.transforms.AffineTransform(1.0, 3.0)], dim=1, lengths=[1, 2, 1]),
     [[0.3, -1.2, 0.4, 0.5], [0.1, 0.7, 0.2, -0.3]]),
    (lambda lib, D: D.transforms.CatTransform([D.transforms.ExpTransform(), D.transforms.SigmoidTransform()],
                                              dim=0, lengths=[1, 1]), [[0.3, -1.2], [0.1, 0.7]]),
    (lambda lib, D: D.transforms.CatTransform([D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1),
                                               D.transforms.SigmoidTransform()],
                                              dim=-1, lengths=[2, 2]), [[0.3, -1.2, 0.2, 0.1]]),
    (lambda lib, D: D.transforms.StackTransform([D.transforms.ExpTransform(), D.transforms.TanhTransform()], dim=1),
     [[0.3, -1.2], [0.1, 0.7]]),
    (lambda lib, D: D.transforms.CumulativeDistributionTransform(D.Normal(0.0, 2.0)), [[0.3, -1.2], [0.1, 0.7]]),
    (lambda lib, D: D.transforms.ComposeTransform([D.transforms.SoftplusTransform(),
                                                   D.transforms.AffineTransform(-1.0, 2.0)]), [[0.3, -1.2]]),
]


@pytest.mark.parametrize('i', range(len(TRANSFORMS)))
def test_transforms_against_torch(i):
    make, x = TRANSFORMS[i]
    te, tt = make(ember, ED), make(torch, TD)
    assert type(te).__name__ == type(tt).__name__
    xe, xt = P(ember, x), P(torch, x)
    ye, yt = te(xe), tt(xt)
    close(ye, yt)
    close(te.inv(ye), tt.inv(yt))
    assert te.bijective == tt.bijective
    assert repr(te.domain) == repr(tt.domain) and repr(te.codomain) == repr(tt.codomain)
    assert te.domain.event_dim == tt.domain.event_dim and te.codomain.event_dim == tt.codomain.event_dim
    assert tuple(te.forward_shape(tuple(xt.shape))) == tuple(tt.forward_shape(xt.shape))
    assert tuple(te.inverse_shape(tuple(yt.shape))) == tuple(tt.inverse_shape(yt.shape))
    if te == te and not isinstance(tt, TD.transforms.IndependentTransform):
        assert (te == make(ember, ED)) == (tt == make(torch, TD))
    assert _same(lambda: te.log_abs_det_jacobian(xe, ye), lambda: tt.log_abs_det_jacobian(xt, yt)) in ('ok', 'raised')
    try:
        lt = tt.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        assert not tt.bijective
        return
    le = te.log_abs_det_jacobian(xe, ye)
    close(le, lt)
    ge = ember.autograd.grad(le.sum() + ye.sum(), xe, allow_unused=True)[0]
    gt = torch.autograd.grad(lt.sum() + yt.sum(), xt, allow_unused=True)[0]
    close(ge, gt, rtol=1e-6, atol=1e-9)
    try:
        st = tt.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            te.sign
    else:
        assert int(te.sign) == int(st)


def test_transform_errors_and_cache():
    with pytest.raises(ValueError, match='in_shape, out_shape have different numbers of elements'):
        ED.transforms.ReshapeTransform((2,), (3,))
    t = ED.transforms.ReshapeTransform((2, 3), (6,))
    with pytest.raises(ValueError, match='Shape mismatch'):
        t.forward_shape((4, 3))
    with pytest.raises(ValueError, match='Input is not a flattened lower-diagonal number'):
        ED.transforms.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(AssertionError, match='must equal length 2'):
        ED.transforms.CatTransform([ED.transforms.ExpTransform()] * 2)(ember.zeros(3))
    with pytest.raises(AssertionError, match='must equal len\\(transforms\\) 2'):
        ED.transforms.StackTransform([ED.transforms.ExpTransform()] * 2)(ember.zeros(3))
    for make in (lambda D: D.transforms.SoftplusTransform(cache_size=1),
                 lambda D: D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1, cache_size=1),
                 lambda D: D.transforms.StackTransform([D.transforms.ExpTransform()], cache_size=1)):
        tr = make(ED)
        x = ember.ones(1, 1)
        y = tr(x)
        assert tr.inv(y) is x
    assert ED.transforms.identity_transform is ED.identity_transform
    close(ED.identity_transform(ember.tensor([1.5])), torch.tensor([1.5]))


def test_tril_vec_helpers_against_torch():
    from torch.distributions import utils as TU
    from ember.distributions import utils as EU
    m = np.arange(18.0).reshape(2, 3, 3)
    for diag in (-1, 0, 1):
        v = TU.tril_matrix_to_vec(torch.tensor(m), diag)
        close(EU.tril_matrix_to_vec(ember.tensor(m), diag), v)
        if diag > 0:       # torch's vec_to_tril_matrix fails for diag > 0
            continue
        close(EU.vec_to_tril_matrix(ember.tensor(v.numpy()), diag), TU.vec_to_tril_matrix(v, diag))
    with pytest.raises(ValueError, match='cannot be expressed'):
        EU.vec_to_tril_matrix(ember.zeros(5))


# --- biject_to / transform_to -------------------------------------------------------------------------------------------

REG_CONSTRAINTS = [
    (lambda C: C.real, [[0.3, -1.2], [0.1, 0.7]]), (lambda C: C.positive, [[0.3, -1.2], [0.1, 0.7]]),
    (lambda C: C.nonnegative, [[0.3, -1.2]]), (lambda C: C.greater_than(1.5), [[0.3, -1.2]]),
    (lambda C: C.greater_than_eq(-1.0), [[0.3, -1.2]]), (lambda C: C.less_than(2.0), [[0.3, -1.2]]),
    (lambda C: C.unit_interval, [[0.3, -1.2]]), (lambda C: C.interval(-2.0, 3.0), [[0.3, -1.2]]),
    (lambda C: C.half_open_interval(0.0, 1.0), [[0.3, -1.2]]),
    (lambda C: C.simplex, [[0.3, -1.2, 0.5], [0.1, 0.7, -0.4]]), (lambda C: C.real_vector, [[0.3, -1.2]]),
    (lambda C: C.independent(C.positive, 1), [[0.3, -1.2]]),
    (lambda C: C.corr_cholesky, [[0.3, -1.2, 0.5], [0.1, 0.7, -0.4]]),
    (lambda C: C.lower_cholesky, [[[0.3, -1.2], [0.5, 0.1]]]),
    (lambda C: C.positive_definite, [[[0.3, -1.2], [0.5, 0.1]]]),
    (lambda C: C.positive_semidefinite, [[[0.3, -1.2], [0.5, 0.1]]]),
    (lambda C: C.cat([C.positive, C.real], 1, [1, 2]), [[0.3, -1.2, 0.5]]),
    (lambda C: C.stack([C.positive, C.unit_interval], 0), [[0.3, -1.2], [0.5, 0.1]]),
]


@pytest.mark.parametrize('i', range(len(REG_CONSTRAINTS)))
@pytest.mark.parametrize('registry', ['biject_to', 'transform_to'])
def test_constraint_registry_against_torch(registry, i):
    make, x = REG_CONSTRAINTS[i]
    ce, ct = make(ED.constraints), make(TD.constraints)
    reg_e, reg_t = getattr(ED, registry), getattr(TD, registry)
    try:
        tt = reg_t(ct)
    except NotImplementedError as ex:
        with pytest.raises(NotImplementedError) as eex:
            reg_e(ce)
        assert str(eex.value) == str(ex)
        return
    te = reg_e(ce)
    assert type(te).__name__ == type(tt).__name__
    xe, xt = P(ember, x), P(torch, x)
    ye, yt = te(xe), tt(xt)
    close(ye, yt)
    assert bool(npy(ce.check(ye)).all())
    close(te.inv(ye), tt.inv(yt))
    if tt.bijective:      # a round trip through the unconstrained space
        close(te.inv(ye), xe, rtol=1e-6, atol=1e-8)
        close(te.log_abs_det_jacobian(xe, ye), tt.log_abs_det_jacobian(xt, yt))


def test_constraint_registry_errors_and_register():
    with pytest.raises(NotImplementedError, match='Cannot transform _Boolean constraints'):
        ED.biject_to(ED.constraints.boolean)
    with pytest.raises(TypeError, match='Expected constraint to be either a Constraint subclass or instance'):
        ED.constraint_registry.ConstraintRegistry().register(3, lambda c: None)
    reg = ED.constraint_registry.ConstraintRegistry()

    @reg.register(ED.constraints.positive)
    def _f(c):
        return ED.transforms.SoftplusTransform()
    assert isinstance(reg(ED.constraints.greater_than(3.0)), ED.transforms.SoftplusTransform)
    assert ED.constraint_registry.biject_to is ED.biject_to


# --- invalid parameters ----------------------------------------------------------------------------------------------

INVALID = [lambda lib, D: D.Cauchy(P(lib, [0.0]), P(lib, [-1.0])),
           lambda lib, D: D.HalfNormal(P(lib, [0.0])),
           lambda lib, D: D.HalfCauchy(-1.0),
           lambda lib, D: D.Gumbel(P(lib, [0.0]), P(lib, [-1.0])),
           lambda lib, D: D.StudentT(P(lib, [-1.0])),
           lambda lib, D: D.Chi2(P(lib, [0.0])),
           lambda lib, D: D.Geometric(probs=P(lib, [0.0])),
           lambda lib, D: D.Geometric(probs=P(lib, [1.5])),
           lambda lib, D: D.Geometric(probs=P(lib, [0.5]), logits=P(lib, [0.0])),
           lambda lib, D: D.NegativeBinomial(P(lib, [-1.0]), P(lib, [0.5])),
           lambda lib, D: D.NegativeBinomial(P(lib, [1.0]), P(lib, [1.0])),
           lambda lib, D: D.NegativeBinomial(P(lib, [1.0])),
           lambda lib, D: D.Pareto(P(lib, [1.0]), P(lib, [0.0])),
           lambda lib, D: D.Weibull(P(lib, [-1.0]), P(lib, [1.0])),
           lambda lib, D: D.Kumaraswamy(P(lib, [1.0]), P(lib, [-1.0])),
           lambda lib, D: D.ContinuousBernoulli(probs=P(lib, [1.5])),
           lambda lib, D: D.ContinuousBernoulli(probs=P(lib, [1.5]), validate_args=True),
           lambda lib, D: D.ContinuousBernoulli(),
           lambda lib, D: D.FisherSnedecor(P(lib, [1.0]), P(lib, [-2.0])),
           lambda lib, D: D.InverseGamma(P(lib, [1.0]), P(lib, [0.0])),
           lambda lib, D: D.GeneralizedPareto(P(lib, [0.0]), P(lib, [0.0]), P(lib, [0.1])),
           lambda lib, D: D.VonMises(P(lib, [0.0]), P(lib, [-1.0])),
           lambda lib, D: D.LogisticNormal(P(lib, [0.0]), P(lib, [-1.0])),
           lambda lib, D: D.OneHotCategoricalStraightThrough(probs=P(lib, [-1.0, 2.0]))]


@pytest.mark.parametrize('i', range(len(INVALID)))
def test_invalid_parameters_raise_like_torch(i):
    make = INVALID[i]
    try:
        make(torch, TD)
    except Exception:       # noqa: BLE001
        pass
    else:                   # torch accepts it (ContinuousBernoulli clamps probs unless validate_args is given)
        make(ember, ED)
        return
    with pytest.raises(Exception) as tex:
        make(torch, TD)
    with pytest.raises(type(tex.value)) as eex:
        make(ember, ED)
    assert _msg(eex.value) == _msg(tex.value)


OUT_OF_SUPPORT = [(lambda lib, D: D.HalfNormal(P(lib, [1.0])), [-0.5]),
                  (lambda lib, D: D.Geometric(probs=P(lib, [0.5])), [1.5]),
                  (lambda lib, D: D.Pareto(P(lib, [1.0]), P(lib, [1.0])), [0.5]),
                  (lambda lib, D: D.Weibull(P(lib, [1.0]), P(lib, [1.0])), [-0.5]),
                  (lambda lib, D: D.Kumaraswamy(P(lib, [1.0]), P(lib, [1.0])), [1.5]),
                  (lambda lib, D: D.ContinuousBernoulli(probs=P(lib, [0.3])), [1.5]),
                  (lambda lib, D: D.LogisticNormal(P(lib, [0.0]), P(lib, [1.0])), [0.5, 0.6]),
                  (lambda lib, D: D.NegativeBinomial(2.0, P(lib, [0.5])), [-1.0])]


@pytest.mark.parametrize('i', range(len(OUT_OF_SUPPORT)))
def test_log_prob_out_of_support(i):
    make, v = OUT_OF_SUPPORT[i]
    with pytest.raises(ValueError) as tex:
        make(torch, TD).log_prob(P(torch, v, grad=False))
    with pytest.raises(ValueError) as eex:
        make(ember, ED).log_prob(P(ember, v, grad=False))
    assert _msg(eex.value) == _msg(tex.value)


def test_torch_distribution_names_all_present():
    names = [n for n in dir(TD) if not n.startswith('_')]
    missing = [n for n in names if not hasattr(ED, n)]
    assert missing == [], missing
    for mod in ('cauchy', 'half_normal', 'studentT', 'von_mises', 'mixture_same_family',
                'lowrank_multivariate_normal', 'constraint_registry', 'negative_binomial', 'continuous_bernoulli'):
        assert getattr(ED, mod).__name__ == f'ember.distributions.{mod}'
