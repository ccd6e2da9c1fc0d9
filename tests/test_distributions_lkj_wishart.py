"""LKJCholesky and Wishart against torch.distributions: log_prob, entropy, moments, the three Wishart
parametrisations and the natural-parameter log normaliser on several dimensions, concentrations, df and batch
shapes; gradients of log_prob / entropy with respect to the parameters (and the value); the support and
moments of samples over many draws (loose tolerance: the Beta / Chi2 draws underneath are not torch's);
errors and warnings for invalid arguments."""
import math
import re
import warnings

import numpy as np
import pytest
import torch
import torch.distributions as TD

import ember
import ember.distributions as ED


def npy(t):
    return t.detach().numpy()


def T(lib, x, dtype='float64', grad=False):
    t = lib.tensor(np.asarray(x, dtype=dtype))
    return t.requires_grad_() if grad else t


def close(e, t, rtol=1e-7, atol=1e-9):
    if str(t.dtype).endswith('float32'):
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-5)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(npy(e), npy(t), rtol=rtol, atol=atol, equal_nan=True)


def _msg(ex):
    return re.sub(r'(ember|torch)\.', 'X.', str(ex))


def _raises_like(fe, ft, match_message=True):
    """torch raises; ember must raise the same class (and message, up to the module name, where torch gives
    one: its base class's NotImplementedErrors are bare)."""
    with pytest.raises(Exception) as tex:
        ft()
    with pytest.raises(type(tex.value)) as eex:
        fe()
    if match_message and str(tex.value):
        assert _msg(eex.value) == _msg(tex.value)


def _spd(rng, batch, p):
    A = rng.standard_normal(tuple(batch) + (p, p))
    return A @ np.swapaxes(A, -1, -2) + p * np.eye(p)


def _wishart_values(rng, shape, p):
    X = rng.standard_normal(tuple(shape) + (p, p + 2))
    return X @ np.swapaxes(X, -1, -2)


# --- Wishart: deterministic quantities ---------------------------------------------------------------------------

PARAMS = ('covariance_matrix', 'precision_matrix', 'scale_tril')
# (p, df, matrix batch, value sample shape)
WISHART_CASES = [
    (1, 2.5, (), ()),
    (2, 1.5, (), (4,)),
    (2, 4.0, (3,), (2, 3)),
    (3, [2.5, 3.0, 4.5, 7.0], (), (5, 1)),
    (3, [[3.5], [10.0]], (2, 1), (2, 1)),
    (4, 6.0, (2,), (3, 2)),
    (5, [4.2, 9.0], (2,), ()),
]


def _wishart(lib, D, param, p, df, mbatch, dtype, grad, seed=0):
    rng = np.random.default_rng(seed)
    S = _spd(rng, mbatch, p)
    M = np.linalg.cholesky(S) if param == 'scale_tril' else (np.linalg.inv(S) if param == 'precision_matrix' else S)
    m = T(lib, M, dtype, grad)
    d = T(lib, df, dtype, grad)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')         # the low-df warning, tested on its own
        return D.Wishart(d, **{param: m}), [d, m]


@pytest.mark.parametrize('dtype', ['float64', 'float32'])
@pytest.mark.parametrize('param', PARAMS)
@pytest.mark.parametrize('case', range(len(WISHART_CASES)))
def test_wishart_against_torch(case, param, dtype):
    p, df, mbatch, vshape = WISHART_CASES[case]
    (we, pe), (wt, pt) = (_wishart(lib, D, param, p, df, mbatch, dtype, True) for lib, D in
                          ((ember, ED), (torch, TD)))
    assert tuple(we.batch_shape) == tuple(wt.batch_shape) and tuple(we.event_shape) == tuple(wt.event_shape)
    assert we.has_rsample is wt.has_rsample is True
    assert isinstance(we, ED.ExponentialFamily)
    assert _msg(repr(we)) == _msg(repr(wt))
    assert {k: repr(v) for k, v in we.arg_constraints.items()} == {k: repr(v) for k, v in wt.arg_constraints.items()}
    assert repr(we.support) == repr(wt.support)
    rtol = 1e-10 if dtype == 'float64' else 1e-5
    for prop in ('mean', 'mode', 'variance', 'stddev', 'covariance_matrix', 'precision_matrix', 'scale_tril', 'df'):
        close(getattr(we, prop), getattr(wt, prop), rtol=rtol, atol=1e-10)
    close(we.entropy(), wt.entropy(), rtol=rtol)
    close(we._log_normalizer(*we._natural_params), wt._log_normalizer(*wt._natural_params), rtol=rtol)
    rng = np.random.default_rng(1)
    X = _wishart_values(rng, tuple(vshape) + tuple(wt.batch_shape), p)
    ve, vt = T(ember, X, dtype, True), T(torch, X, dtype, True)
    le, lt = we.log_prob(ve), wt.log_prob(vt)
    close(le, lt, rtol=rtol, atol=1e-9 if dtype == 'float64' else 1e-4)
    # gradients of log_prob and entropy with respect to df, the matrix parameter and the value
    ge = ember.autograd.grad(le.sum() + we.entropy().sum(), pe + [ve])
    gt = torch.autograd.grad(lt.sum() + wt.entropy().sum(), pt + [vt])
    for a, b in zip(ge, gt):
        close(a, b, rtol=1e-7 if dtype == 'float64' else 1e-4, atol=1e-8 if dtype == 'float64' else 1e-4)
    # expand
    big = (2,) + tuple(wt.batch_shape)
    xe, xt = we.expand(big), wt.expand(big)
    assert tuple(xe.batch_shape) == tuple(xt.batch_shape)
    Xb = _wishart_values(rng, big, p)
    close(xe.log_prob(T(ember, Xb, dtype)), xt.log_prob(T(torch, Xb, dtype)), rtol=rtol, atol=1e-4)
    for prop in ('mean', 'variance', 'df', 'covariance_matrix'):
        close(getattr(xe, prop), getattr(xt, prop), rtol=rtol, atol=1e-10)
    close(xe.entropy(), xt.entropy(), rtol=rtol)
    # sample shapes
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')         # torch warns 'Singular sample detected.' on every draw
        for shape in ((), (3,), (2, 1)):
            assert tuple(we.sample(shape).shape) == tuple(wt.sample(shape).shape)
            assert tuple(we.rsample(shape).shape) == tuple(wt.rsample(shape).shape)


@pytest.mark.parametrize('df', [4, 5.0, True])
def test_wishart_df_number_and_integer(df):
    p = 1 if df is True else 3
    for mbatch in ((), (2,)):
        S = _spd(np.random.default_rng(0), mbatch, p)
        we, wt = ED.Wishart(df, T(ember, S)), TD.Wishart(df, T(torch, S))
        close(we.df, wt.df)             # 0-d, whatever the batch
        close(we.log_prob(T(ember, S)), wt.log_prob(T(torch, S)))
        close(we.entropy(), wt.entropy())
        if mbatch:          # torch's moments fail here (a 0-d df viewed as batch_shape + (1, 1)); ember's work
            with pytest.raises(RuntimeError):
                wt.mean
            ref = TD.Wishart(torch.full(mbatch, float(df), dtype=torch.float64), T(torch, S))
            for prop in ('mean', 'mode', 'variance'):
                close(getattr(we, prop), getattr(ref, prop))
        else:
            close(we.mean, wt.mean)
    we, wt = ED.Wishart(ember.tensor(5), ember.eye(3)), TD.Wishart(torch.tensor(5), torch.eye(3))
    for prop in ('df', 'mean', 'variance'):
        close(getattr(we, prop), getattr(wt, prop))
    close(we.entropy(), wt.entropy())
    with pytest.raises(RuntimeError):       # torch writes nan into the integer df - p - 1
        wt.mode
    close(we.mode, TD.Wishart(torch.tensor(5.0), torch.eye(3)).mode)
    close(we.log_prob(2 * ember.eye(3)), wt.log_prob(2 * torch.eye(3)))


def test_wishart_mode_nan_boundary():
    df = [2.5, 3.0, 4.0, 4.0001, 4.5, 6.0]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # df 2.5 < p
        we, wt = ED.Wishart(T(ember, df), ember.eye(3).double()), TD.Wishart(T(torch, df), torch.eye(3).double())
    close(we.mode, wt.mode)
    assert np.isnan(npy(we.mode)[:3]).all() and not np.isnan(npy(we.mode)[3:]).any()


# --- Wishart: errors and warnings ---------------------------------------------------------------------------------

def _wishart_calls():
    I3 = np.eye(3)
    return [
        lambda L, D: D.Wishart(L.tensor(2.0), L.tensor(I3)),
        lambda L, D: D.Wishart(1.5, L.tensor(I3)),
        lambda L, D: D.Wishart(L.tensor([1.5, 4.0]), L.tensor(I3)),
        lambda L, D: D.Wishart(L.tensor([[1.5]]), L.tensor(I3)),
        lambda L, D: D.Wishart(L.tensor(2), L.tensor(I3)),
        lambda L, D: D.Wishart(L.tensor(1.5), L.tensor(I3), validate_args=False),
        lambda L, D: D.Wishart(L.tensor(1.5), L.tensor(I3).expand(2, 3, 3)),
        lambda L, D: D.Wishart(4.0),
        lambda L, D: D.Wishart(4.0, L.tensor(I3), scale_tril=L.tensor(I3)),
        lambda L, D: D.Wishart(4.0, L.ones(3)),
        lambda L, D: D.Wishart(4.0, scale_tril=L.ones(3)),
        lambda L, D: D.Wishart(4.0, precision_matrix=L.ones(3)),
        lambda L, D: D.Wishart(L.tensor(4.0), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda L, D: D.Wishart(L.tensor(4.0), precision_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda L, D: D.Wishart(L.tensor(4.0), scale_tril=L.tensor([[1.0, 0.0], [2.0, -1.0]])),
        lambda L, D: D.Wishart(L.tensor(4.0), L.tensor([[1.0, 0.5], [0.4, 1.0]])),
        lambda L, D: D.Wishart(L.tensor(4.0), L.eye(2)).log_prob(L.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda L, D: D.Wishart(L.tensor(4.0), L.eye(2)).log_prob(L.eye(3)),
        lambda L, D: D.Wishart(L.tensor(4.0), L.eye(2).expand(3, 2, 2)).log_prob(L.eye(2).expand(2, 2, 2)),
    ]


@pytest.mark.parametrize('i', range(len(_wishart_calls())))
def test_wishart_errors_like_torch(i):
    f = _wishart_calls()[i]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _raises_like(lambda: f(ember, ED), lambda: f(torch, TD))


def test_wishart_broadcast_error_class():
    for df, m in (([4.0, 5.0], np.eye(3)[None].repeat(3, 0)), ([[4.0, 5.0]], np.eye(3)[None].repeat(3, 0))):
        _raises_like(lambda: ED.Wishart(T(ember, df), T(ember, m)), lambda: TD.Wishart(T(torch, df), T(torch, m)),
                     match_message=False)


def _caught(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        f()
    return [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize('df, p', [(2.5, 3), (3.0, 3), ([2.5, 4.0], 3), ([3.5, 4.0], 3), (1.2, 2), (0.5, 1)])
def test_wishart_low_df_warning_like_torch(df, p):
    we = _caught(lambda: ED.Wishart(T(ember, df), ember.eye(p).double()))
    wt = _caught(lambda: TD.Wishart(T(torch, df), torch.eye(p).double()))
    assert we == wt
    assert we == ([(UserWarning, 'Low df values detected. Singular samples are highly likely to occur for '
                    'ndim - 1 < df < ndim.')] if np.min(df) < p else [])
    # the warning points at the caller, not at ember's internals
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        ED.Wishart(T(ember, df), ember.eye(p).double())
    assert all(x.filename == __file__ for x in w)


def test_wishart_singular_samples_redrawn_and_warned():
    # df just above p - 1 with a tiny scale: about three quarters of the draws are numerically singular
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        w = ED.Wishart(ember.tensor(1.000001), ember.eye(2) * 1e-30, validate_args=False)
    msgs = _caught(lambda: w.rsample((2000,), max_try_correction=0))
    assert msgs == [(UserWarning, 'Singular sample detected.')]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ember.manual_seed(0)
        s0 = w.rsample((2000,), max_try_correction=0)
        ember.manual_seed(0)
        s3 = w.rsample((2000,), max_try_correction=3)
    ok0 = npy(ED.constraints.positive_definite.check(s0)).mean()
    ok3 = npy(ED.constraints.positive_definite.check(s3)).mean()
    assert ok3 > ok0 + 0.2          # redraws replace singular samples only
    # well-conditioned draws are not redrawn and raise no warning (torch 2.13 warns on every call)
    w = ED.Wishart(ember.tensor(5.0), ember.eye(3))
    assert _caught(lambda: w.rsample((100,))) == []


# --- Wishart: samples ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('p, df, param', [(1, 0.7, 'covariance_matrix'), (2, 1.5, 'precision_matrix'),
                                          (3, 3.5, 'scale_tril'), (3, [4.0, 8.0], 'covariance_matrix'),
                                          (5, 6.5, 'scale_tril')])
def test_wishart_sample_moments(p, df, param):
    ember.manual_seed(0)
    torch.manual_seed(0)
    (we, _), (wt, _) = (_wishart(lib, D, param, p, df, (), 'float64', False, seed=3) for lib, D in
                        ((ember, ED), (torch, TD)))
    n = 20000
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        se, st = npy(we.sample((n,))), npy(wt.sample((n,)))
    assert se.shape == st.shape == (n,) + tuple(wt.batch_shape) + (p, p)
    if np.min(df) >= p:
        assert npy(ED.constraints.positive_definite.check(ember.tensor(se))).all()
    np.testing.assert_allclose(se, np.swapaxes(se, -1, -2), rtol=1e-12, atol=1e-12)
    mean, var = npy(wt.mean), npy(wt.variance)
    scale = np.sqrt(var / n)            # standard error of the sample mean
    for s in (se, st):
        assert (np.abs(s.mean(0) - mean) <= 6 * scale + 1e-12).all()
        np.testing.assert_allclose(s.var(0), var, rtol=0.15)
    np.testing.assert_allclose(se.mean(0), st.mean(0), atol=float(12 * scale.max()))


def test_wishart_rsample_gradients():
    # E[X] = df L L^T: the pathwise gradients of the sample mean approach df d(LL^T) and LL^T (through the
    # chi-squared draws' implicit reparameterisation)
    ember.manual_seed(0)
    df = ember.tensor(5.0, dtype=ember.float64, requires_grad=True)
    Ln = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]])
    L = ember.tensor(Ln, requires_grad=True)
    s = ED.Wishart(df, scale_tril=L).rsample((20000,))
    s.mean(0).sum().backward()
    Sigma = Ln @ Ln.T
    np.testing.assert_allclose(npy(df.grad), Sigma.sum(), rtol=0.05)
    ones = np.ones((3, 3))
    # L enters as a dense matrix (torch's too): every entry has a gradient, 2 df (J L) with J all ones
    np.testing.assert_allclose(npy(L.grad), 5.0 * (ones + ones.T) @ Ln, rtol=0.05, atol=0.05)


# --- LKJCholesky ----------------------------------------------------------------------------------------------------

LKJ_CASES = [(2, 0.5), (2, 1.0), (3, 0.3), (3, 1.0), (3, 2.7), (4, [0.5, 1.0, 4.0]), (5, 1.5), (6, [[0.8], [3.0]]),
             (8, 2.0)]


def _lkj_values(dim, shape, dtype, seed):
    torch.manual_seed(seed)
    return TD.LKJCholesky(dim, torch.tensor(0.7, dtype=getattr(torch, dtype))).sample(shape).numpy()


@pytest.mark.parametrize('dtype', ['float64', 'float32'])
@pytest.mark.parametrize('case', range(len(LKJ_CASES)))
def test_lkj_against_torch(case, dtype):
    dim, conc = LKJ_CASES[case]
    ce, ct = T(ember, conc, dtype, True), T(torch, conc, dtype, True)
    de, dt = ED.LKJCholesky(dim, ce), TD.LKJCholesky(dim, ct)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) and tuple(de.event_shape) == tuple(dt.event_shape)
    assert de.has_rsample is dt.has_rsample is False
    assert _msg(repr(de)) == _msg(repr(dt)) and repr(de.support) == repr(dt.support)
    close(de._beta.concentration1, dt._beta.concentration1)
    close(de._beta.concentration0, dt._beta.concentration0)
    X = _lkj_values(dim, (3,) + tuple(dt.batch_shape), dtype, case)
    ve, vt = T(ember, X, dtype, True), T(torch, X, dtype, True)
    le, lt = de.log_prob(ve), dt.log_prob(vt)
    close(le, lt, rtol=1e-12 if dtype == 'float64' else 1e-5, atol=1e-12 if dtype == 'float64' else 1e-4)
    ge = ember.autograd.grad(le.sum(), [ce, ve])
    gt = torch.autograd.grad(lt.sum(), [ct, vt])
    for a, b in zip(ge, gt):
        close(a, b, rtol=1e-10 if dtype == 'float64' else 1e-5, atol=1e-10 if dtype == 'float64' else 1e-4)
    # identity value, broadcasting against the batch
    close(de.log_prob(T(ember, np.eye(dim), dtype)), dt.log_prob(T(torch, np.eye(dim), dtype)),
          rtol=1e-12 if dtype == 'float64' else 1e-6)
    for shape in ((), (4,), (2, 3)):
        se = de.sample(shape)
        assert tuple(se.shape) == tuple(dt.sample(shape).shape) and se.dtype == ce.dtype and not se.requires_grad
        assert npy(ED.constraints.corr_cholesky.check(se)).all()
    big = (2,) + tuple(dt.batch_shape)
    xe, xt = de.expand(big), dt.expand(big)
    assert tuple(xe.batch_shape) == tuple(xt.batch_shape) and xe.dim == xt.dim
    close(xe.concentration, xt.concentration)
    close(xe._beta.concentration0, xt._beta.concentration0)
    Xb = _lkj_values(dim, big, dtype, case + 100)
    close(xe.log_prob(T(ember, Xb, dtype)), xt.log_prob(T(torch, Xb, dtype)),
          rtol=1e-12 if dtype == 'float64' else 1e-5, atol=1e-4)
    assert tuple(xe.sample((3,)).shape) == tuple(xt.sample((3,)).shape)


def test_lkj_concentration_number_and_int():
    for conc in (2, 0.5, 1):
        de, dt = ED.LKJCholesky(3, conc), TD.LKJCholesky(3, conc)
        close(de.concentration, dt.concentration)
        close(de.log_prob(ember.eye(3)), dt.log_prob(torch.eye(3)))
        close(de.log_prob(ember.eye(3).double()), dt.log_prob(torch.eye(3).double()))
    de = ED.LKJCholesky(3, ember.tensor(2.0, dtype=ember.float64))
    assert de.sample().dtype == ember.float64


@pytest.mark.parametrize('dim, conc', [(2, 0.5), (3, 1.0), (4, 1.0), (5, 0.5), (5, 3.0)])
def test_lkj_sample_moments_match_torch(dim, conc):
    ember.manual_seed(0)
    torch.manual_seed(0)
    n = 20000
    se = npy(ED.LKJCholesky(dim, ember.tensor(conc, dtype=ember.float64)).sample((n,)))
    st = npy(TD.LKJCholesky(dim, torch.tensor(conc, dtype=torch.float64)).sample((n,)))
    assert npy(ED.constraints.corr_cholesky.check(ember.tensor(se))).all()
    assert (np.triu(se, 1) == 0).all() and (se[..., 0, 0] == 1).all()
    Ce, Ct = se @ np.swapaxes(se, -1, -2), st @ np.swapaxes(st, -1, -2)
    np.testing.assert_allclose(np.diagonal(Ce, 0, -2, -1), 1, atol=1e-12)
    iu = np.triu_indices(dim, 1)
    # moments of the Cholesky diagonal, of the correlations and of their squares (standard errors ~ 0.003)
    for fe, ft in ((np.diagonal(se, 0, -2, -1) ** 2, np.diagonal(st, 0, -2, -1) ** 2),
                   (Ce[:, iu[0], iu[1]], Ct[:, iu[0], iu[1]]), (Ce[:, iu[0], iu[1]] ** 2, Ct[:, iu[0], iu[1]] ** 2),
                   (se[:, iu[1], iu[0]], st[:, iu[1], iu[0]])):
        np.testing.assert_allclose(fe.mean(0), ft.mean(0), atol=0.02)
        np.testing.assert_allclose(fe.var(0), ft.var(0), atol=0.02)
    if dim == 2:        # both follow the LKJ density here: r ~ 2 Beta(eta, eta) - 1, var 1 / (2 eta + 1)
        np.testing.assert_allclose(Ce[:, 0, 1].var(), 1 / (2 * conc + 1), rtol=0.05)


def test_lkj_batched_sample_moments():
    ember.manual_seed(0)
    conc = [0.5, 5.0]
    s = npy(ED.LKJCholesky(2, ember.tensor(conc, dtype=ember.float64)).sample((20000,)))
    assert s.shape == (20000, 2, 2, 2)
    r = s[..., 1, 0]
    np.testing.assert_allclose(r.var(0), 1 / (2 * np.array(conc) + 1), rtol=0.05)
    np.testing.assert_allclose(r.mean(0), 0, atol=0.02)


def _lkj_calls():
    return [
        lambda L, D: D.LKJCholesky(1, 1.0),
        lambda L, D: D.LKJCholesky(0),
        lambda L, D: D.LKJCholesky(2.0, 1.0),
        lambda L, D: D.LKJCholesky(3, -1.0),
        lambda L, D: D.LKJCholesky(3, L.tensor([1.0, 0.0])),
        lambda L, D: D.LKJCholesky(3, 2.0).log_prob(2 * L.eye(3)),
        lambda L, D: D.LKJCholesky(3, 2.0).log_prob(L.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.1], [0.0, 0.6, 0.8]])),
        lambda L, D: D.LKJCholesky(3, 2.0).log_prob(L.eye(2)),
        lambda L, D: D.LKJCholesky(3, L.tensor([1.0, 2.0])).log_prob(L.eye(3).expand(3, 3, 3)),
        lambda L, D: D.LKJCholesky(3, 2.0).rsample(),
        lambda L, D: D.LKJCholesky(3, 2.0).mean,
        lambda L, D: D.LKJCholesky(3, 2.0).entropy(),
    ]


@pytest.mark.parametrize('i', range(len(_lkj_calls())))
def test_lkj_errors_like_torch(i):
    f = _lkj_calls()[i]
    _raises_like(lambda: f(ember, ED), lambda: f(torch, TD))


def test_lkj_validate_args_false_and_constraint_registry():
    de = ED.LKJCholesky(3, ember.tensor(2.0), validate_args=False)
    dt = TD.LKJCholesky(3, torch.tensor(2.0), validate_args=False)
    v = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.1], [0.0, 0.6, 0.8]]
    close(de.log_prob(ember.tensor(v)), dt.log_prob(torch.tensor(v)))
    # unconstrained reals -> Cholesky factors of correlation matrices
    x = np.random.default_rng(0).standard_normal((4, 6))
    te, tt = ED.biject_to(de.support), TD.biject_to(dt.support)
    assert type(te).__name__ == type(tt).__name__
    close(te(T(ember, x)), tt(T(torch, x)))
    assert npy(de.support.check(te(T(ember, x)))).all()
    for name in ('LKJCholesky', 'Wishart', 'lkj_cholesky', 'wishart'):
        assert hasattr(ED, name)
    assert ED.lkj_cholesky.__name__ == 'ember.distributions.lkj_cholesky'


def test_lkj_log_prob_normalised():
    # dim 2: the density of r = L_10 on (-1, 1) integrates to one (midpoint rule), for several concentrations
    n = 200000
    r = (np.arange(n) + 0.5) / n * 2 - 1
    values = np.zeros((n, 2, 2))
    values[:, 0, 0], values[:, 1, 0], values[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    for conc in (0.7, 1.0, 3.0):
        lp = npy(ED.LKJCholesky(2, ember.tensor(conc, dtype=ember.float64)).log_prob(ember.tensor(values)))
        # p(L) is a density in L_10, the free coordinate
        assert abs(np.exp(lp).sum() * 2 / n - 1) < 2e-3
    for conc in (0.5, 1.0, 2.0):
        close(ED.LKJCholesky(3, ember.tensor(conc, dtype=ember.float64)).log_prob(ember.eye(3).double()),
              TD.LKJCholesky(3, torch.tensor(conc, dtype=torch.float64)).log_prob(torch.eye(3).double()))
    assert math.isfinite(float(npy(ED.LKJCholesky(8, 0.1).log_prob(ember.eye(8)))))
