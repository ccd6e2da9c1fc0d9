"""Loss functions and loss modules against torch: values and gradients (of inputs, targets where
differentiable, and weights) for every reduction, plus torch's argument errors."""
import numpy as np
import pytest
import torch

import ember
from test_nn_util import e2n

TF, EF = torch.nn.functional, ember.nn.functional
R = np.random.default_rng(0)


def rnd(*shape, low=-2, high=2):
    return R.uniform(low, high, shape).astype(np.float64)


def ints(high, *shape):
    return R.integers(0, high, shape).astype(np.int64)


def pm1(*shape):
    return np.where(R.random(shape) > 0.5, 1.0, -1.0)


def run(fn_name, args, kwargs, grad_idx, atol=1e-7):
    """Call torch's and ember's functional with the same data; compare value and gradients of ``grad_idx``."""
    def mk(lib, a, i):
        if isinstance(a, np.ndarray):
            t = lib.from_numpy(a.copy())
            if i in grad_idx:
                t.requires_grad_(True)
            return t
        return a
    targs = [mk(torch, a, i) for i, a in enumerate(args)]
    eargs = [mk(ember, a, i) for i, a in enumerate(args)]
    tkw = {k: mk(torch, v, k) for k, v in kwargs.items()}
    ekw = {k: mk(ember, v, k) for k, v in kwargs.items()}
    t = getattr(TF, fn_name)(*targs, **tkw)
    e = getattr(EF, fn_name)(*eargs, **ekw)
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:], (fn_name, e.shape, t.shape)
    np.testing.assert_allclose(e2n(e), t.detach().numpy(), atol=atol, rtol=1e-6, err_msg=fn_name)
    leaves_t = [a for i, a in enumerate(targs) if i in grad_idx] + [v for k, v in tkw.items() if k in grad_idx]
    leaves_e = [a for i, a in enumerate(eargs) if i in grad_idx] + [v for k, v in ekw.items() if k in grad_idx]
    if not leaves_t:
        return
    w = rnd(*t.shape)
    gt = torch.autograd.grad((t * torch.from_numpy(w)).sum(), leaves_t)
    ge = ember.autograd.grad((e * ember.from_numpy(w)).sum(), leaves_e)
    for k, (a, b) in enumerate(zip(ge, gt)):
        np.testing.assert_allclose(e2n(a), b.numpy(), atol=atol, rtol=1e-6, err_msg=f'{fn_name} grad {k}')


REDUCTIONS = ['none', 'mean', 'sum']


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_cross_entropy_class_indices(reduction):
    run('cross_entropy', [rnd(6, 5), ints(5, 6)], {'reduction': reduction}, {0})
    run('cross_entropy', [rnd(5), np.array(3)], {'reduction': reduction}, {0})                 # unbatched
    run('cross_entropy', [rnd(3, 4, 2, 5), ints(4, 3, 2, 5)], {'reduction': reduction}, {0})   # K-dim
    t = ints(5, 8)
    t[[1, 4]] = -100
    run('cross_entropy', [rnd(8, 5), t], {'reduction': reduction, 'weight': rnd(5, low=0.1, high=2)}, {0})
    t = ints(5, 8)
    t[[2]] = 3
    run('cross_entropy', [rnd(8, 5), t], {'reduction': reduction, 'ignore_index': 3}, {0})


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_cross_entropy_label_smoothing(reduction):
    t = ints(5, 8)
    t[0] = -100
    run('cross_entropy', [rnd(8, 5), t], {'reduction': reduction, 'label_smoothing': 0.2}, {0})
    run('cross_entropy', [rnd(8, 5), t], {'reduction': reduction, 'label_smoothing': 0.1,
                                          'weight': rnd(5, low=0.1, high=2)}, {0})
    run('cross_entropy', [rnd(2, 5, 3), ints(5, 2, 3)], {'reduction': reduction, 'label_smoothing': 0.3}, {0})


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_cross_entropy_probabilities(reduction):
    p = R.dirichlet(np.ones(5), 6)
    run('cross_entropy', [rnd(6, 5), p], {'reduction': reduction}, {0, 1})
    run('cross_entropy', [rnd(6, 5), p], {'reduction': reduction, 'label_smoothing': 0.2,
                                          'weight': rnd(5, low=0.1, high=2)}, {0, 1})
    run('cross_entropy', [rnd(2, 5, 3), R.dirichlet(np.ones(5), (2, 3)).transpose(0, 2, 1).copy()],
        {'reduction': reduction}, {0})


def test_cross_entropy_float32_and_gpt_shapes():
    x = R.standard_normal((16 * 64, 65)).astype(np.float32)
    t = ints(65, 16 * 64)
    run('cross_entropy', [x, t], {}, {0}, atol=1e-5)


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_nll_loss(reduction):
    t = ints(4, 7)
    t[3] = -100
    run('nll_loss', [rnd(7, 4), t], {'reduction': reduction}, {0})
    run('nll_loss', [rnd(7, 4), t], {'reduction': reduction, 'weight': rnd(4, low=0.1, high=1)}, {0})
    run('nll_loss', [rnd(2, 4, 3, 3), ints(4, 2, 3, 3)], {'reduction': reduction}, {0})


def test_nll_cross_entropy_errors():
    x, bad = ember.randn(3, 4), ember.tensor([0, 4, 1])
    with pytest.raises(IndexError, match='Target 4 is out of bounds'):
        EF.nll_loss(x, bad)
    with pytest.raises(ValueError, match=r'Expected input batch_size \(3\) to match target batch_size \(2\)'):
        EF.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(ValueError, match='is not a valid value for reduction'):
        EF.cross_entropy(x, ember.tensor([0, 1, 2]), reduction='avg')
    with pytest.raises(IndexError):
        TF.nll_loss(torch.randn(3, 4), torch.tensor([0, 4, 1]))


# --- the fused nll_loss operators (ember/_ops/losses.py) ----------------------------------------

def _graph_names(t):
    """grad_fn and the node names one level below it."""
    f = t.grad_fn
    return type(f).__name__, [type(n).__name__ if n is not None else None for n, _ in f.next_functions]


@pytest.mark.parametrize('fn', ['nll_loss', 'cross_entropy'])
@pytest.mark.parametrize('shape', [(5,), (4, 5), (4, 5, 3), (4, 5, 3, 2), (2, 5, 3, 2, 2), (0, 5), (0, 5, 3)])
@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_nll_graph_matches_torch(fn, shape, reduction):
    """nll_loss_nd's rank dispatch: NllLossBackward0 for 1-D/2-D inputs, NllLoss2DBackward0 (behind views for
    3-D and 5-D inputs) otherwise."""
    x = rnd(*shape)
    t = ints(5, *(shape[:1] + shape[2:])) if len(shape) > 1 else np.array(2)
    outs = []
    for lib, F in ((torch, TF), (ember, EF)):
        xt = lib.from_numpy(x.copy()).requires_grad_(True)
        outs.append(getattr(F, fn)(xt, lib.from_numpy(t.copy()), reduction=reduction))
    assert _graph_names(outs[1]) == _graph_names(outs[0])


def _fused(lib, name, x, t, w, reduction, ignore_index):
    f = torch.ops.aten if lib is torch else ember
    return getattr(f, name)(x, t, None if w is None else lib.from_numpy(w.copy()), reduction, ignore_index)


@pytest.mark.parametrize('name,shape', [('nll_loss_forward', (6, 5)), ('nll_loss_forward', (5,)),
                                        ('nll_loss2d_forward', (2, 5, 3, 2))])
@pytest.mark.parametrize('reduction', [0, 1, 2])
@pytest.mark.parametrize('weighted', [False, True])
def test_fused_nll_grads_and_gradgrads_match_torch(name, shape, reduction, weighted):
    """Values, total_weight, first and second derivatives (in self and in the incoming gradient), with class
    weights and ignored samples: the generic OpInfo tests skip weights, which torch lets no one differentiate."""
    x = rnd(*shape)
    if len(shape) == 1:
        t = np.array(3)
    else:
        t = ints(5, *(shape[:1] + shape[2:]))
        t.reshape(-1)[[1, 4]] = -100
    w = rnd(5, low=0.1, high=2) if weighted else None
    v, u = rnd(*(t.shape if reduction == 0 and len(shape) > 1 else ())), rnd(*shape)
    res = []
    for lib in (torch, ember):
        xt = lib.from_numpy(x.copy()).requires_grad_(True)
        out, total = _fused(lib, name, xt, lib.from_numpy(t.copy()), w, reduction, -100)
        vt = lib.from_numpy(v.copy()).requires_grad_(True)
        gx, = lib.autograd.grad((out * vt).sum(), xt, create_graph=True)
        ggx, gv = lib.autograd.grad((gx * lib.from_numpy(u.copy())).sum(), [xt, vt], allow_unused=True)
        res.append([out, total, gx, gv, ggx])
        assert not total.requires_grad
    for k, (a, b) in enumerate(zip(res[1], res[0])):
        np.testing.assert_allclose(e2n(a), b.detach().numpy(), atol=1e-12, rtol=1e-12, err_msg=f'{name} [{k}]')


def test_fused_nll_mean_of_nothing_is_nan():
    for x, t in [(ember.randn(3, 4), ember.tensor([-100, -100, -100])), (ember.randn(0, 4), ember.zeros(0).long()),
                 (ember.randn(4), ember.tensor(-100))]:
        out, total = ember.nll_loss_forward(x, t, None, 1, -100)
        assert np.isnan(out.item()) and total.item() == 0
        assert ember.nll_loss_forward(x, t, None, 2, -100)[0].item() == 0


@pytest.mark.parametrize('fn,args', [
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([0, 12, 1]))),
    # one bad target only: torch checks reduction='none' rows in parallel, so which of several it names varies
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([0, -5, 1]), None, None, -100, None, 'none')),
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([1, -100, 5]), None, None, 5)),
    ('nll_loss', lambda L: (L.randn(2, 3, 4, 5), L.full((2, 4, 5), 7))),
    ('nll_loss', lambda L: (L.randn(2, 3, 4), L.full((2, 4), -7))),
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2], dtype=L.int32))),
    ('nll_loss', lambda L: (L.randn(3, 4), L.zeros(3))),
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2]), L.ones(4, dtype=L.float64))),
    ('nll_loss', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2]), L.ones(3))),
    ('nll_loss', lambda L: (L.randn(2, 4, 3), L.zeros(2, 3).long(), L.ones(3))),
    ('nll_loss', lambda L: (L.randn(4), L.tensor([1, 2]))),
    ('nll_loss', lambda L: (L.randn(3, 4), L.zeros(3, 1).long())),
    ('nll_loss', lambda L: (L.randn(3, 4, 2), L.zeros(3, 2, 1).long())),
    ('nll_loss', lambda L: (L.randn(3, 4, 2, 2), L.zeros(3, 4).long())),
    ('nll_loss', lambda L: (L.randn(3, 4, 2, 2), L.zeros(3, 5, 2).long())),
    ('nll_loss', lambda L: (L.ones(3, 4).long(), L.tensor([0, 1, 2]))),
    ('cross_entropy', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2], dtype=L.int32))),
    ('cross_entropy', lambda L: (L.randn(3, 4), L.zeros(3, 4).long())),
    ('cross_entropy', lambda L: (L.randn(3, 4), L.rand(3, 4), None, None, 1)),
    ('cross_entropy', lambda L: (L.randn(3, 4), L.rand(3, 4), L.ones(3))),
    ('cross_entropy', lambda L: (L.randn(3, 4), L.tensor([0, 1, 7]), None, None, -100, None, 'mean', 0.2)),
])
def test_nll_errors_match_torch(fn, args):
    with pytest.raises(Exception) as te:
        getattr(TF, fn)(*args(torch))
    with pytest.raises(type(te.value)) as ee:
        getattr(EF, fn)(*args(ember))
    assert str(ee.value).replace('ember', 'torch') == str(te.value).split('\n')[0]


def test_fused_nll_backward_errors_match_torch():
    x, t, tw = np.zeros((3, 4)), np.array([0, 3, 1]), np.array(3.0)
    cases = [(np.ones(2), x, t, 0, tw), (np.ones(3), x, t, 1, tw), (np.array(1.0), x, t, 1, np.ones(2)),
             (np.array(1.0), np.zeros(4), np.array([2]), 1, tw), (np.array(1.0), x, np.array([0, 9, 1]), 1, tw)]
    for g, xx, tt, red, tww in cases:
        with pytest.raises(Exception) as te:
            torch.ops.aten.nll_loss_backward(*[torch.from_numpy(np.asarray(a)) for a in (g, xx, tt)], None, red, -100,
                                             torch.from_numpy(tww))
        with pytest.raises(type(te.value)) as ee:
            ember.nll_loss_backward(*[ember.from_numpy(np.asarray(a)) for a in (g, xx, tt)], None, red, -100,
                                    ember.from_numpy(tww))
        assert str(ee.value) == str(te.value).split('\n')[0]


POINTWISE = [
    ('mse_loss', {}), ('l1_loss', {}), ('smooth_l1_loss', {}), ('smooth_l1_loss', {'beta': 0.5}),
    ('smooth_l1_loss', {'beta': 0.0}), ('huber_loss', {}), ('huber_loss', {'delta': 0.3}), ('soft_margin_loss', {}),
]


@pytest.mark.parametrize('name,kw', POINTWISE, ids=[f'{n}-{k}' for n, k in POINTWISE])
@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_regression_losses(name, kw, reduction):
    target = pm1(4, 5) if name == 'soft_margin_loss' else rnd(4, 5)
    run(name, [rnd(4, 5), target], dict(kw, reduction=reduction), {0, 1} if name != 'soft_margin_loss' else {0})


@pytest.mark.parametrize('name', ['mse_loss', 'l1_loss', 'huber_loss'])
@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_weighted_regression_losses(name, reduction):
    run(name, [rnd(4, 5), rnd(4, 5)], {'reduction': reduction, 'weight': rnd(4, 5, low=0, high=1)}, {0, 1})


def test_broadcast_warning():
    with pytest.warns(UserWarning, match='different to the input size'):
        EF.mse_loss(ember.randn(3, 1), ember.randn(3))


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_bce(reduction):
    x = rnd(4, 5, low=0.01, high=0.99)
    run('binary_cross_entropy', [x, R.random((4, 5))], {'reduction': reduction}, {0, 1})
    run('binary_cross_entropy', [x, R.random((4, 5))], {'reduction': reduction, 'weight': rnd(5, low=0, high=1)},
        {0})
    run('binary_cross_entropy', [np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.5])], {'reduction': reduction},
        set())


@pytest.mark.parametrize('fn,kw,args', [
    ('nll_loss', 'weight', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2]))),
    ('cross_entropy', 'weight', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2]))),
    ('binary_cross_entropy', 'weight', lambda L: (L.rand(3, 4), L.rand(3, 4))),
    ('binary_cross_entropy_with_logits', 'weight', lambda L: (L.randn(3, 4), L.rand(3, 4))),
    ('binary_cross_entropy_with_logits', 'pos_weight', lambda L: (L.randn(3, 4), L.rand(3, 4))),
    ('multi_margin_loss', 'weight', lambda L: (L.randn(3, 4), L.tensor([0, 1, 2])))])
def test_weights_without_derivative_are_errors_like_torch(fn, kw, args):
    with pytest.raises(RuntimeError) as te:
        getattr(TF, fn)(*args(torch), **{kw: torch.rand(4, requires_grad=True)})
    with pytest.raises(RuntimeError) as ee:
        getattr(EF, fn)(*args(ember), **{kw: ember.rand(4, requires_grad=True)})
    assert str(ee.value) == str(te.value)
    with ember.no_grad():
        getattr(EF, fn)(*args(ember), **{kw: ember.rand(4, requires_grad=True)})


def test_bce_errors():
    with pytest.raises(ValueError, match='Using a target size'):
        EF.binary_cross_entropy(ember.rand(3), ember.rand(3, 1))
    with pytest.raises(RuntimeError, match='between 0 and 1'):
        EF.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(ValueError, match='must be the same as input size'):
        EF.binary_cross_entropy_with_logits(ember.rand(3), ember.rand(2))


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_bce_with_logits(reduction):
    x = rnd(4, 5, low=-30, high=30)
    run('binary_cross_entropy_with_logits', [x, R.random((4, 5))], {'reduction': reduction}, {0, 1})
    run('binary_cross_entropy_with_logits', [x, R.random((4, 5))],
        {'reduction': reduction, 'pos_weight': rnd(5, low=0.5, high=3), 'weight': rnd(4, 5, low=0, high=1)},
        {0, 1})


@pytest.mark.parametrize('reduction', REDUCTIONS + ['batchmean'])
@pytest.mark.parametrize('log_target', [False, True])
def test_kl_div(reduction, log_target):
    x = np.log(R.dirichlet(np.ones(5), 4))
    t = R.dirichlet(np.ones(5), 4)
    t[0, 1] = 0.0
    if log_target:
        t = np.log(t + 1e-3)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        run('kl_div', [x, t], {'reduction': reduction, 'log_target': log_target}, {0, 1} if log_target else {0})


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_embedding_losses(reduction):
    run('cosine_embedding_loss', [rnd(6, 4), rnd(6, 4), pm1(6)], {'reduction': reduction, 'margin': 0.2}, {0, 1})
    run('cosine_embedding_loss', [rnd(4), rnd(4), np.array(-1.0)], {'reduction': reduction}, {0, 1})
    run('margin_ranking_loss', [rnd(6), rnd(6), pm1(6)], {'reduction': reduction, 'margin': 0.5}, {0, 1})
    run('hinge_embedding_loss', [rnd(3, 4), pm1(3, 4)], {'reduction': reduction, 'margin': 0.7}, {0})
    run('triplet_margin_loss', [rnd(5, 4), rnd(5, 4), rnd(5, 4)], {'reduction': reduction}, {0, 1, 2})
    run('triplet_margin_loss', [rnd(5, 4), rnd(5, 4), rnd(5, 4)],
        {'reduction': reduction, 'p': 1, 'swap': True, 'margin': 2.0}, {0, 1, 2})
    run('multilabel_soft_margin_loss', [rnd(3, 5), (R.random((3, 5)) > 0.5).astype(np.float64)],
        {'reduction': reduction, 'weight': rnd(5, low=0, high=1)}, {0})
    run('multi_margin_loss', [rnd(4, 5), ints(5, 4)], {'reduction': reduction}, {0})
    mt = np.array([[3, 0, -1, 1, 2], [1, 2, 4, 0, 3], [-1, 2, 2, 2, 2], [4, 4, -1, 0, 0]])
    run('multilabel_margin_loss', [rnd(4, 5), mt], {'reduction': reduction}, {0})
    run('multilabel_margin_loss', [rnd(5), mt[0]], {'reduction': reduction}, {0})
    run('multi_margin_loss', [rnd(4, 5), ints(5, 4)], {'reduction': reduction, 'p': 2, 'margin': 0.5,
                                                       'weight': rnd(5, low=0, high=1)}, {0})


@pytest.mark.parametrize('reduction', REDUCTIONS)
def test_nll_likelihood_losses(reduction):
    run('poisson_nll_loss', [rnd(3, 4), rnd(3, 4, low=0, high=5)], {'reduction': reduction}, {0})
    run('poisson_nll_loss', [rnd(3, 4, low=0.1, high=3), rnd(3, 4, low=0, high=5)],
        {'reduction': reduction, 'log_input': False, 'full': True}, {0})
    run('gaussian_nll_loss', [rnd(3, 4), rnd(3, 4), rnd(3, 4, low=0.1, high=2)], {'reduction': reduction}, {0, 1, 2})
    run('gaussian_nll_loss', [rnd(3, 4), rnd(3, 4), rnd(3, low=0, high=2)],
        {'reduction': reduction, 'full': True}, {0, 2})
    run('gaussian_nll_loss', [rnd(3, 4), rnd(3, 4), rnd(3, 1, low=0.1, high=2)], {'reduction': reduction}, {0, 2})


def test_gaussian_nll_errors():
    for args, msg in [((ember.randn(3, 4), ember.randn(3, 4), ember.ones(2)), 'var is of incorrect size'),
                      ((ember.randn(3), ember.randn(3), -ember.ones(3)), 'var has negative')]:
        with pytest.raises(ValueError, match=msg):
            EF.gaussian_nll_loss(*args)


MODULES = [
    ('CrossEntropyLoss', {}, lambda: [rnd(6, 5), ints(5, 6)]),
    ('CrossEntropyLoss', {'label_smoothing': 0.1, 'ignore_index': 1, 'reduction': 'sum'}, lambda: [rnd(6, 5), ints(5, 6)]),
    ('NLLLoss', {'reduction': 'none'}, lambda: [rnd(6, 5), ints(5, 6)]),
    ('MSELoss', {}, lambda: [rnd(3, 4), rnd(3, 4)]), ('L1Loss', {'reduction': 'sum'}, lambda: [rnd(3, 4), rnd(3, 4)]),
    ('SmoothL1Loss', {'beta': 0.5}, lambda: [rnd(3, 4), rnd(3, 4)]),
    ('HuberLoss', {'delta': 0.5}, lambda: [rnd(3, 4), rnd(3, 4)]),
    ('BCELoss', {}, lambda: [rnd(3, 4, low=0.05, high=0.95), R.random((3, 4))]),
    ('BCEWithLogitsLoss', {}, lambda: [rnd(3, 4), R.random((3, 4))]),
    ('KLDivLoss', {'reduction': 'batchmean'}, lambda: [np.log(R.dirichlet(np.ones(4), 3)), R.dirichlet(np.ones(4), 3)]),
    ('SoftMarginLoss', {}, lambda: [rnd(3, 4), pm1(3, 4)]),
    ('MultiLabelSoftMarginLoss', {}, lambda: [rnd(3, 4), (R.random((3, 4)) > 0.5) * 1.0]),
    ('CosineEmbeddingLoss', {'margin': 0.1}, lambda: [rnd(3, 4), rnd(3, 4), pm1(3)]),
    ('MarginRankingLoss', {'margin': 0.1}, lambda: [rnd(5), rnd(5), pm1(5)]),
    ('HingeEmbeddingLoss', {}, lambda: [rnd(5), pm1(5)]),
    ('TripletMarginLoss', {'margin': 0.5}, lambda: [rnd(3, 4), rnd(3, 4), rnd(3, 4)]),
    ('PoissonNLLLoss', {}, lambda: [rnd(3, 4), rnd(3, 4, low=0, high=4)]),
    ('GaussianNLLLoss', {}, lambda: [rnd(3, 4), rnd(3, 4), rnd(3, 4, low=0.1, high=1)]),
    ('MultiMarginLoss', {}, lambda: [rnd(3, 4), ints(4, 3)]),
    ('MultiLabelMarginLoss', {}, lambda: [rnd(2, 4), np.array([[3, 0, -1, 1], [1, -1, 0, 0]])]),
]


@pytest.mark.parametrize('name,kw,data', MODULES, ids=[m[0] + str(i) for i, m in enumerate(MODULES)])
def test_loss_modules(name, kw, data):
    arrays = data()
    tm, em = getattr(torch.nn, name)(**kw), getattr(ember.nn, name)(**kw)
    assert repr(em) == repr(tm)
    assert em.reduction == tm.reduction
    t = tm(*[torch.from_numpy(np.asarray(a).copy()) for a in arrays])
    e = em(*[ember.from_numpy(np.asarray(a).copy()) for a in arrays])
    np.testing.assert_allclose(e2n(e), t.numpy(), atol=1e-7, rtol=1e-6)


def test_weighted_loss_modules_register_weight_buffers():
    w = np.array([0.2, 1.0, 3.0])
    for name, kw in [('CrossEntropyLoss', 'weight'), ('NLLLoss', 'weight'), ('BCELoss', 'weight'),
                     ('BCEWithLogitsLoss', 'pos_weight')]:
        tm = getattr(torch.nn, name)(**{kw: torch.from_numpy(w)})
        em = getattr(ember.nn, name)(**{kw: ember.from_numpy(w)})
        assert list(em.state_dict()) == list(tm.state_dict())
    assert list(ember.nn.CrossEntropyLoss().state_dict()) == list(torch.nn.CrossEntropyLoss().state_dict())


def test_legacy_size_average_reduce():
    for sa, red in [(False, None), (None, False), (True, True)]:
        with pytest.warns(UserWarning):
            em = ember.nn.MSELoss(size_average=sa, reduce=red)
        with pytest.warns(UserWarning):
            tm = torch.nn.MSELoss(size_average=sa, reduce=red)
        assert em.reduction == tm.reduction
