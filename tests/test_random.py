"""Random operators: reproducibility under manual_seed and generator=, distribution moments, dropout's
scaling, masks and gradients, multinomial's sampling rules, and torch's errors. Streams differ from
torch's, so values are compared with the distributions, not with torch's samples."""
import numpy as np
import pytest
import torch

import ember

F = ember.nn.functional
N = 200_000


def _sample_ops():
    g = None
    return {
        'rand': lambda: ember.rand(5, 3),
        'randn': lambda: ember.randn(5, 3),
        'randint': lambda: ember.randint(0, 10, (5, 3)),
        'randperm': lambda: ember.randperm(10),
        'randint_like': lambda: ember.randint_like(ember.zeros(4), 7),
        'rand_like': lambda: ember.rand_like(ember.zeros(4)),
        'randn_like': lambda: ember.randn_like(ember.zeros(4)),
        'bernoulli': lambda: ember.bernoulli(ember.full((20,), 0.5)),
        'bernoulli_p': lambda: ember.bernoulli(ember.zeros(20), 0.5),
        'bernoulli_': lambda: ember.zeros(20).bernoulli_(0.5),
        'multinomial': lambda: ember.multinomial(ember.ones(10), 5),
        'multinomial_r': lambda: ember.multinomial(ember.ones(2, 10), 5, True),
        'normal_tf': lambda: ember.normal(ember.zeros(5), 1.0),
        'poisson': lambda: ember.poisson(ember.full((20,), 3.0)),
        'normal_ft': lambda: ember.normal(0.0, ember.ones(5)),
        'normal_tt': lambda: ember.normal(ember.zeros(5), ember.ones(5)),
        'normal_ff': lambda: ember.normal(0.0, 1.0, (5,)),
        'normal_': lambda: ember.empty(5).normal_(),
        'uniform_': lambda: ember.empty(5).uniform_(-1, 1),
        'exponential_': lambda: ember.empty(5).exponential_(),
        'geometric_': lambda: ember.empty(5).geometric_(0.3),
        'cauchy_': lambda: ember.empty(5).cauchy_(),
        'log_normal_': lambda: ember.empty(5).log_normal_(),
        'random_': lambda: ember.empty(5).random_(0, 100),
        'dropout': lambda: F.dropout(ember.ones(20), 0.5),
        'dropout2d': lambda: F.dropout2d(ember.ones(2, 6, 2, 2), 0.5),
        'alpha_dropout': lambda: F.alpha_dropout(ember.ones(20), 0.5, True),
        'feature_alpha_dropout': lambda: F.feature_alpha_dropout(ember.ones(2, 6, 3), 0.5, True),
    }


@pytest.mark.parametrize('name', sorted(_sample_ops()))
def test_manual_seed_reproducible(name):
    fn = _sample_ops()[name]
    ember.manual_seed(123)
    a, b = fn().numpy(), fn().numpy()
    ember.manual_seed(123)
    c = fn().numpy()
    np.testing.assert_array_equal(a, c)
    if name not in ('multinomial',):          # a permutation of 5 of 10 ones can repeat, the others cannot
        assert not np.array_equal(a, b), 'two draws in a row should differ'


def test_generator_argument_is_honoured():
    ember.manual_seed(0)
    before = ember.get_rng_state()
    g1, g2 = ember.Generator().manual_seed(7), ember.Generator().manual_seed(7)
    for f in (lambda g: ember.empty(6).uniform_(generator=g), lambda g: ember.empty(6).normal_(generator=g),
              lambda g: ember.bernoulli(ember.full((6,), 0.5), generator=g),
              lambda g: ember.multinomial(ember.ones(6), 3, generator=g),
              lambda g: ember.normal(0.0, 1.0, (6,), generator=g), lambda g: ember.randint(10, (6,), generator=g),
              lambda g: ember.empty(6).random_(generator=g), lambda g: ember.empty(6).exponential_(generator=g)):
        np.testing.assert_array_equal(f(g1).numpy(), f(g2).numpy())
    assert ember.equal(ember.get_rng_state(), before) if hasattr(ember, 'equal') else \
        np.array_equal(ember.get_rng_state().numpy(), before.numpy())


@pytest.mark.parametrize('fill,mean,var', [
    (lambda t: t.uniform_(-2, 4), 1.0, 3.0),
    (lambda t: t.normal_(1.5, 2.0), 1.5, 4.0),
    (lambda t: t.exponential_(2.0), 0.5, 0.25),
    (lambda t: t.geometric_(0.25), 4.0, 12.0),
    (lambda t: t.log_normal_(0.0, 0.5), float(np.exp(0.125)), float((np.exp(0.25) - 1) * np.exp(0.25))),
    (lambda t: t.bernoulli_(0.3), 0.3, 0.21),
    (lambda t: t.random_(0, 10), 4.5, 8.25),
])
@pytest.mark.parametrize('dtype', [ember.float32, ember.float64])
def test_fill_moments(fill, mean, var, dtype):
    ember.manual_seed(0)
    x = fill(ember.empty(N, dtype=dtype))
    assert x.dtype is dtype and tuple(x.shape) == (N,)
    a = x.numpy().astype(np.float64)
    assert abs(a.mean() - mean) < 5 * np.sqrt(var / N) + 1e-3
    assert abs(a.var() / var - 1) < 0.05


def test_poisson_moments_and_errors():
    ember.manual_seed(0)
    a = ember.poisson(ember.full((N,), 3.5, dtype=ember.float64)).numpy()
    assert abs(a.mean() - 3.5) < 0.03 and abs(a.var() - 3.5) < 0.06 and np.all(a == np.round(a))
    _both_err = [lambda L: L.poisson(-L.ones(3)), lambda L: L.poisson(L.ones(3, dtype=L.int64))]
    for f in _both_err:
        with pytest.raises(Exception) as te:
            f(torch)
        with pytest.raises(type(te.value), match=str(te.value).replace('"', '.').split("'")[0][:30]):
            f(ember)


def test_cauchy_median_and_quartiles():
    ember.manual_seed(0)
    a = ember.empty(N).cauchy_(2.0, 3.0).numpy()
    q1, med, q3 = np.quantile(a, [0.25, 0.5, 0.75])
    assert abs(med - 2) < 0.1 and abs(q1 - (2 - 3)) < 0.15 and abs(q3 - (2 + 3)) < 0.15


def test_random_default_ranges():
    ember.manual_seed(0)
    assert ember.empty(1000, dtype=ember.uint8).random_().numpy().max() > 200
    f = ember.empty(1000).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and f.max() > 2 ** 20 and np.all(f == np.round(f))
    r = ember.empty(1000, dtype=ember.int64).random_(5).numpy()
    assert set(np.unique(r)) == set(range(5))
    r = ember.empty(1000, dtype=ember.int32).random_(-3, 2).numpy()
    assert set(np.unique(r)) == set(range(-3, 2))


def test_normal_forms_shapes_dtypes_moments():
    ember.manual_seed(0)
    m, s = ember.full((N,), 3.0, dtype=ember.float64), ember.full((N,), 0.5, dtype=ember.float64)
    for x in (ember.normal(m, 0.5), ember.normal(3.0, s), ember.normal(m, s)):
        a = x.numpy()
        assert x.dtype is ember.float64 and abs(a.mean() - 3) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert tuple(ember.normal(ember.zeros(3), ember.ones(2, 1)).shape) == (2, 3)
    assert ember.normal(0, 1, (2, 3), dtype=ember.float64).dtype is ember.float64
    assert ember.normal(0, 1, size=(2, 3)).dtype is ember.float32
    out = ember.empty(0)
    r = ember.normal(ember.zeros(4), 1.0, out=out)
    assert r is out and tuple(out.shape) == (4,)


def test_normal_gradients_like_torch():
    for lib in (torch, ember):
        m = lib.zeros(3, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        lib.normal(m, s).sum().backward()
        lib.normal(m, 2.0).sum().backward()
        lib.normal(1.0, s).sum().backward()
        np.testing.assert_array_equal(m.grad.numpy(), np.zeros(3))      # torch: zeros, not a reparameterisation
        np.testing.assert_array_equal(s.grad.numpy(), np.zeros(3))
    assert type(ember.normal(ember.zeros(3, requires_grad=True), 1.0).grad_fn).__name__ == 'NormalBackward1'


def test_bernoulli_probabilities_and_dtype():
    ember.manual_seed(0)
    p = ember.tensor([0.0, 0.2, 0.7, 1.0], dtype=ember.float64).expand(N // 4, 4)
    x = ember.bernoulli(p)
    assert x.dtype is ember.float64
    np.testing.assert_allclose(x.numpy().mean(0), [0, 0.2, 0.7, 1], atol=0.01)
    t = ember.zeros(N, dtype=ember.int64).bernoulli_(ember.tensor([0.25]))
    assert t.dtype is ember.int64 and abs(t.numpy().mean() - 0.25) < 0.01
    assert set(np.unique(ember.bernoulli(ember.zeros(100), 0.5).numpy())) == {0.0, 1.0}


def test_multinomial_without_replacement_distinct_and_weighted():
    ember.manual_seed(0)
    for _ in range(20):
        s = ember.multinomial(ember.rand(3, 8) + 0.01, 8).numpy()
        assert all(sorted(r) == list(range(8)) for r in s)
    probs = ember.tensor([0.0, 1.0, 3.0, 0.0, 6.0])
    s = ember.multinomial(probs.expand(20000, 5), 1).numpy().ravel()
    freq = np.bincount(s, minlength=5) / s.size
    np.testing.assert_allclose(freq, [0, 0.1, 0.3, 0, 0.6], atol=0.015)
    two = ember.multinomial(probs.expand(2000, 5), 3).numpy()
    assert {tuple(sorted(r)) for r in two} == {(1, 2, 4)}
    # as torch: zero-probability categories are drawn only once the positive ones run out
    r = ember.multinomial(ember.tensor([0.0, 1.0, 0.0, 0.0]), 4).tolist()
    assert r[0] == 1 and sorted(r) == [0, 1, 2, 3]


def test_multinomial_with_replacement_frequencies():
    ember.manual_seed(0)
    probs = ember.tensor([[1.0, 0.0, 3.0], [0.0, 5.0, 5.0]], dtype=ember.float64)
    s = ember.multinomial(probs, 20000, replacement=True)
    assert s.dtype is ember.int64 and tuple(s.shape) == (2, 20000)
    np.testing.assert_allclose(np.bincount(s.numpy()[0], minlength=3) / 20000, [0.25, 0, 0.75], atol=0.015)
    np.testing.assert_allclose(np.bincount(s.numpy()[1], minlength=3) / 20000, [0, 0.5, 0.5], atol=0.015)


@pytest.mark.parametrize('probs,n,repl', [([1.0, -1.0], 1, False), ([1.0, float('nan')], 1, True),
                                          ([0.0, 0.0], 1, True)])
def test_multinomial_data_errors(probs, n, repl):
    with pytest.raises(RuntimeError) as te:
        torch.multinomial(torch.tensor(probs), n, repl)
    with pytest.raises(RuntimeError) as ee:
        ember.multinomial(ember.tensor(probs), n, repl)
    assert str(ee.value).split('(')[0] == str(te.value).split('(')[0]


def test_randint_forms_match_torch():
    for args, kw in [((5, (2, 3)), {}), ((3, 5, (4,)), {}), ((10, (2,)), {'dtype': 'float32'}), ((), {'high': 4,
                     'size': (3,)}), ((-5, 0, [2, 2]), {})]:
        kt = {k: getattr(torch, v) if k == 'dtype' else v for k, v in kw.items()}
        ke = {k: getattr(ember, v) if k == 'dtype' else v for k, v in kw.items()}
        t, e = torch.randint(*args, **kt), ember.randint(*args, **ke)
        assert tuple(t.shape) == tuple(e.shape) and str(t.dtype)[6:] == e.dtype.name
        lo, hi = (args[0], args[1]) if len(args) == 3 else (0, kw.get('high', args[0] if args else None))
        assert e.numpy().min() >= lo and e.numpy().max() < hi
    with pytest.raises(RuntimeError, match="from=5 >= to=3"):
        ember.randint(5, 3, (2,))
    with pytest.raises(TypeError):
        ember.randint(5)


# --- dropout ----------------------------------------------------------------------------------------

@pytest.mark.parametrize('p', [0.2, 0.5, 0.9])
def test_dropout_scaling_and_rate(p):
    ember.manual_seed(0)
    x = ember.rand(100_000) + 1
    y = F.dropout(x, p).numpy()
    kept = y != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(y[kept], x.numpy()[kept] / (1 - p), rtol=1e-6)


def test_dropout_eval_identity_and_edge_p():
    x = ember.randn(4, 5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert np.all(F.dropout(x, 1.0).numpy() == 0)
    for f in (F.alpha_dropout, F.feature_alpha_dropout):
        assert f(x, 0.5) is x          # training=False by default, as in torch
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="but got -0.1"):
        F.dropout2d(ember.randn(2, 3, 4, 5), -0.1)


def test_dropout_gradient_is_mask_over_keep_prob():
    ember.manual_seed(0)
    x = ember.randn(50, 40, requires_grad=True)
    y = F.dropout(x, 0.3)
    y.sum().backward()
    mask = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), mask / 0.7, rtol=1e-6)
    # second order: the gradient is linear in the incoming gradient
    x2 = ember.randn(10, requires_grad=True)
    y2 = F.dropout(x2, 0.5)
    g, = ember.autograd.grad(y2.sum(), x2, create_graph=True)
    assert g.requires_grad or g.grad_fn is None


def test_dropout_inplace():
    ember.manual_seed(0)
    x = ember.ones(1000)
    r = F.dropout(x, 0.5, inplace=True)
    assert r is x and set(np.unique(x.numpy())) <= {0.0, 2.0} and x._version > 0


def test_channel_dropout_zeroes_whole_channels():
    ember.manual_seed(0)
    for fn, shape in ((F.dropout1d, (4, 8, 6)), (F.dropout2d, (4, 8, 3, 3)), (F.dropout3d, (4, 8, 2, 2, 2)),
                      (F.dropout1d, (8, 6)), (F.dropout3d, (8, 2, 2, 2))):
        y = fn(ember.ones(*shape), 0.5).numpy()
        per_channel = y.reshape(y.shape[0], -1) if len(shape) in (2, 4) and fn is not F.dropout2d and \
            len(shape) == {F.dropout1d: 2, F.dropout3d: 4}.get(fn) else y.reshape(shape[0] * shape[1], -1)
        assert np.all((per_channel == 0).all(1) | (per_channel == 2).all(1)), fn
        assert 0 < (per_channel == 0).all(1).mean() < 1
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(ember.ones(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(ember.ones(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(0)
    x = ember.randn(200_000, dtype=ember.float64)
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    vals = np.unique(y[np.abs(y - x.numpy() * 0) > 0].round(6))
    assert vals.size > 10
    z = F.feature_alpha_dropout(ember.randn(400, 500, 2, dtype=ember.float64), 0.2, training=True).numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02


# --- errors, as torch raises them ------------------------------------------------------------------

_ERR = [
    lambda L: L.ones(3).uniform_(2, 1), lambda L: L.ones(3).normal_(0, -1), lambda L: L.ones(3).exponential_(0),
    lambda L: L.ones(3).geometric_(1.5), lambda L: L.ones(3).log_normal_(0, 0), lambda L: L.ones(3).cauchy_(0, 0),
    lambda L: L.ones(3).random_(5, 2), lambda L: L.ones(3, dtype=L.uint8).random_(-1, 5),
    lambda L: L.ones(3, dtype=L.uint8).random_(0, 500), lambda L: L.ones(3, dtype=L.int64).uniform_(),
    lambda L: L.ones(3, dtype=L.int64).normal_(), lambda L: L.ones(3, dtype=L.int64).exponential_(),
    lambda L: L.ones(3, dtype=L.int64).cauchy_(), lambda L: L.ones(3).bernoulli_(1.5),
    lambda L: L.bernoulli(L.ones(3) * 2), lambda L: L.bernoulli(L.ones(3, dtype=L.int64)),
    lambda L: L.multinomial(L.ones(3), 4), lambda L: L.multinomial(L.ones(2, 3, 4), 2),
    lambda L: L.multinomial(L.ones(3), 0), lambda L: L.multinomial(L.ones(3, dtype=L.int64), 1),
    lambda L: L.normal(L.zeros(3), -1.0), lambda L: L.normal(L.zeros(3), L.ones(4)),
    lambda L: L.normal(0.0, 1.0, (2,), generator=None).normal_(0, -2),
]


@pytest.mark.parametrize('k', range(len(_ERR)))
def test_errors_match_torch(k):
    with pytest.raises(Exception) as te:
        _ERR[k](torch)
    with pytest.raises(type(te.value)) as ee:
        _ERR[k](ember)
    assert str(ee.value) == str(te.value)


def test_in_place_fills_and_autograd_like_torch():
    for fill in (lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.bernoulli_(0.5),
                 lambda t: t.exponential_(), lambda t: t.random_(0, 5)):
        for L in (torch, ember):
            leaf = L.zeros(3, requires_grad=True)
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                fill(leaf)
            with L.no_grad():
                fill(leaf)                       # allowed without grad mode (what nn.init does)
            x = L.ones(3, requires_grad=True)
            y = x * 2
            fill(y)
            y.sum().backward()
            assert x.grad.tolist() == [0.0, 0.0, 0.0]
