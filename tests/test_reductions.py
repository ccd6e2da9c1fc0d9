"""Reductions, sorting and softmax beyond the generic OpInfo tests: torch's return types, overload choice,
ties and NaN, uint8 logical reductions, implicit softmax dims, gradients at zeros, out=, and node names."""
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from _harness import as_np


def pair(a):
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def same(e, t, **kw):
    assert e.dtype.name == str(t.dtype).replace('torch.', '')
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(as_np(e), as_np(t), equal_nan=True, **kw)


@pytest.mark.parametrize('name,args', [('max', (1,)), ('min', (0, True)), ('sort', (1, True)), ('topk', (2,)),
                                       ('kthvalue', (2, 1)), ('median', (1,)), ('mode', (1,)), ('cummax', (1,)),
                                       ('cummin', (0,))])
def test_return_types_are_named_tuples(name, args):
    a = np.random.default_rng(0).normal(size=(3, 4))
    e, t = pair(a)
    er, tr = getattr(ember, name)(e, *args), getattr(torch, name)(t, *args)
    assert type(er).__name__ == type(tr).__name__ == name
    assert isinstance(er, getattr(ember.return_types, name)) and isinstance(er, tuple)
    values, indices = er
    same(values, tr.values)
    same(er.indices, tr.indices)
    assert repr(er).startswith(f'ember.return_types.{name}(\nvalues=')
    m = getattr(e, name)(*args)                     # the Tensor method is the same function
    same(m.values, tr.values)


def test_aminmax_fields():
    e, t = pair(np.array([[3., 1.], [2., 5.]]))
    er, tr = ember.aminmax(e, dim=0), torch.aminmax(t, dim=0)
    same(er.min, tr.min)
    same(er.max, tr.max)


def test_max_overloads():
    a, b = np.random.default_rng(1).normal(size=(2, 3, 4))
    (ea, ta), (eb, tb) = pair(a), pair(b)
    same(ember.max(ea), torch.max(ta))
    same(ea.max(eb), ta.max(tb))
    same(ember.min(ea, other=eb), torch.min(ta, other=tb))
    same(ember.max(ea, dim=-1, keepdim=True).values, torch.max(ta, dim=-1, keepdim=True).values)
    with pytest.raises(RuntimeError, match='Expected reduction dim'):
        ember.max(ember.zeros(0, 3))
    with pytest.raises(IndexError, match='non-zero size'):
        ember.zeros(0, 3).max(0)


def test_nan_and_ties_follow_torch():
    a = np.array([[1., np.nan, 2., np.nan], [3., 3., 1., 3.]])
    e, t = pair(a)
    for name in ('max', 'min', 'median'):
        er, tr = getattr(e, name)(1), getattr(t, name)(1)
        same(er.values, tr.values)
        same(er.indices, tr.indices)
    for desc in (False, True):
        er, tr = e.sort(dim=1, descending=desc, stable=True), t.sort(dim=1, descending=desc, stable=True)
        same(er.values, tr.values)
        same(er.indices, tr.indices)
    same(e.argmax(), t.argmax())
    same(e.amax(1), t.amax(1))
    i, ti = pair(np.array([[1, 2, 2, 3, 3, 1], [5, 5, 4, 4, 4, 5]]))
    same(i.mode(1).values, ti.mode(1).values)
    same(i.mode(1).indices, ti.mode(1).indices)
    same(i.cummax(1).indices, ti.cummax(1).indices)
    same(i.cummin(1).indices, ti.cummin(1).indices)


def test_logical_reductions_dtypes():
    for a in (np.array([[0, 3], [1, 1]], np.uint8), np.array([[0., 2.], [1., 1.]]), np.array([[True, False]])):
        e, t = pair(a)
        for name in ('all', 'any'):
            same(getattr(e, name)(), getattr(t, name)())
            same(getattr(e, name)(1), getattr(t, name)(1))
            same(getattr(ember, name)(e, 0, keepdim=True), getattr(torch, name)(t, 0, keepdim=True))


def test_sum_and_mean_dtypes():
    e, t = pair(np.arange(6, dtype=np.int32).reshape(2, 3))
    same(e.sum(), t.sum())
    same(e.sum(1, dtype=ember.float32), t.sum(1, dtype=torch.float32))
    same(e.mean(dtype=ember.float64), t.mean(dtype=torch.float64))
    with pytest.raises(RuntimeError, match='could not infer output dtype'):
        e.mean()
    b, tb = pair(np.array([True, True, False]))
    same(b.sum(), tb.sum())
    same(b.cumsum(0), tb.cumsum(0))
    same(b.prod(), tb.prod())


def test_var_std_signatures():
    a = np.random.default_rng(2).normal(size=(3, 4))
    e, t = pair(a)
    for args, kw in [((), {}), ((1,), {}), ((1, False), {}), ((False,), {}), ((0, True, True), {}),
                     ((), {'correction': 0}), (((0, 1),), {'correction': 2, 'keepdim': True}), ((1,), {'unbiased': False})]:
        same(e.var(*args, **kw), t.var(*args, **kw))
        same(ember.std(e, *args, **kw), torch.std(t, *args, **kw))
        for ev, tv in zip(ember.var_mean(e, *args, **kw), torch.var_mean(t, *args, **kw)):
            same(ev, tv)
    with pytest.raises(RuntimeError, match='floating point'):
        ember.ones(3, dtype=ember.int64).var()


@pytest.mark.parametrize('p', ['fro', 2, 1, 0, 3.5, float('inf'), -float('inf')])
def test_norm_and_vector_norm(p):
    a = np.random.default_rng(3).normal(size=(3, 4))
    e, t = pair(a)
    same(e.norm(p), t.norm(p))
    same(ember.norm(e, p, dim=1, keepdim=True), torch.norm(t, p, dim=1, keepdim=True))
    if p != 'fro':
        from ember._python_functions.reductions import vector_norm
        same(vector_norm(e, p, dim=0), torch.linalg.vector_norm(t, p, dim=0))


@pytest.mark.parametrize('p', [2, 1, 3.0, float('inf')])
def test_norm_grad_at_zero_is_zero(p):
    e = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    ember.linalg_vector_norm(e, p).backward()
    torch.linalg.vector_norm(t, p).backward()
    same(e.grad, t.grad)


@pytest.mark.parametrize('name', ['prod', 'cumprod'])
def test_grads_with_zeros(name):
    a = np.array([[2., 0., 3., 4.], [0., 0., 5., 1.], [1., 2., 3., 4.]])
    args = (1,)
    e = ember.from_numpy(a.copy()).requires_grad_()
    t = torch.from_numpy(a.copy()).requires_grad_()
    w = np.random.default_rng(4).normal(size=(3, 4) if name == 'cumprod' else (3,))
    ge, = ember.autograd.grad((getattr(e, name)(*args) * ember.from_numpy(w)).sum(), [e])
    gt, = torch.autograd.grad((getattr(t, name)(*args) * torch.from_numpy(w)).sum(), [t])
    same(ge, gt, rtol=1e-6, atol=1e-9)
    if name == 'prod':
        ge, = ember.autograd.grad(e.prod(), [e])
        gt, = torch.autograd.grad(t.prod(), [t])
        same(ge, gt)


def test_softmax_functional_signature_and_implicit_dim():
    a = np.random.default_rng(5).normal(size=(2, 3, 4)).astype(np.float32)
    e, t = pair(a)
    for f in ('softmax', 'log_softmax', 'softmin'):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            r = getattr(F, f)(e)
        assert any('Implicit dimension choice' in str(x.message) for x in w)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            same(r, getattr(torch.nn.functional, f)(t), rtol=1e-6, atol=1e-7)
        same(getattr(F, f)(e, 1, 3, ember.float64), getattr(torch.nn.functional, f)(t, 1, 3, torch.float64))
    same(ember.softmax(e, -1), torch.softmax(t, -1), rtol=1e-6, atol=1e-7)
    same(e.log_softmax(dim=0), t.log_softmax(dim=0), rtol=1e-6, atol=1e-7)


def test_softmax_extremes():
    a = np.array([[0., -np.inf, 1.], [-np.inf, -np.inf, -np.inf], [1000., 1001., -1000.]])
    e, t = pair(a)
    same(e.softmax(1), t.softmax(1))
    same(e.log_softmax(1), t.log_softmax(1))
    same(e.logsumexp(1), t.logsumexp(1))


def test_out_variants():
    e, t = pair(np.random.default_rng(6).normal(size=(3, 4)))
    eo, to = ember.empty(3, dtype=ember.float64), torch.empty(3, dtype=torch.float64)
    r = ember.sum(e, 1, out=eo)
    torch.sum(t, 1, out=to)
    assert r is eo
    same(eo, to)
    vals, idx = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int64)
    r = ember.sort(e, 0, out=(vals, idx))
    same(vals, torch.sort(t, 0).values)
    same(r.indices, torch.sort(t, 0).indices)


def test_grad_fn_names():
    def names(L):
        x = L.ones(3, 4, requires_grad=True)
        return [type(f(x).grad_fn).__name__ for f in (
            lambda x: x.sum(), lambda x: x.mean(1), lambda x: x.softmax(1), lambda x: x.log_softmax(1),
            lambda x: x.max(1).values, lambda x: x.max())]
    assert names(ember) == names(torch)
    x = ember.randn(3, 4, requires_grad=True)
    assert x.max(1).indices.grad_fn is None and not x.max(1).indices.requires_grad


def test_meta_and_errors_before_data():
    m = ember.empty(2, 3, 4, device='meta')
    assert tuple(m.sum((0, 2)).shape) == (3,)
    assert tuple(m.max(1).indices.shape) == (2, 4) and m.max(1).indices.dtype is ember.int64
    with pytest.raises(IndexError, match='Dimension out of range'):
        m.softmax(3)
    with pytest.raises(RuntimeError, match='selected index k out of range'):
        m.topk(5)


def test_nan_gradients_of_full_max_follow_torch():
    a = np.array([1., np.nan, 2., np.nan])
    for name in ('max', 'min', 'median', 'amax'):
        e = ember.from_numpy(a.copy()).requires_grad_()
        t = torch.from_numpy(a.copy()).requires_grad_()
        getattr(e, name)().backward()
        getattr(t, name)().backward()
        same(e.grad, t.grad)


@pytest.mark.parametrize('name,args', [('argmax', ()), ('argmin', (0,)), ('topk', (1,)), ('median', ()),
                                       ('kthvalue', (1,)), ('median', (0,))])
def test_bool_inputs_rejected_like_torch(name, args):
    tb = torch.tensor([True, False])
    with pytest.raises(Exception) as te:
        getattr(tb, name)(*args)
    with pytest.raises(te.type):
        getattr(ember.tensor([True, False]), name)(*args)


def test_inplace_scans():
    e, t = pair(np.arange(1, 7, dtype=np.int32).reshape(2, 3))
    assert e.cumsum_(1) is e
    t.cumsum_(1)
    same(e, t)
    same(e.cumprod_(0), t.cumprod_(0))


@pytest.mark.parametrize('dt', ['float16', 'bfloat16'])
def test_half_precision_accumulates_like_torch(dt):
    a = np.random.default_rng(7).normal(size=(4, 300)).astype(np.float32)
    e, t = ember.from_numpy(a).to(getattr(ember, dt)), torch.from_numpy(a).to(getattr(torch, dt))
    for f in (lambda x: x.sum(1), lambda x: x.mean(), lambda x: x.softmax(1), lambda x: x.cumsum(1),
              lambda x: x.var(1), lambda x: x.norm(dim=1), lambda x: x.log_softmax(1)):
        re, rt = f(e), f(t)
        assert re.dtype.name == str(rt.dtype).replace('torch.', '')
        np.testing.assert_allclose(re.float().numpy(), rt.float().numpy(), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('scale', [1.0, 100.0])     # past +-60 the kernels subtract the row maximum first
def test_softmax_family_over_short_rows_matches_torch(dtype, scale):
    a = (np.random.default_rng(0).standard_normal((33, 65)) * scale).astype(dtype)
    a[3, :4] = [np.inf, -np.inf, 1., 2.]
    a[5] = -np.inf
    for dim in (-1, 0):
        for name in ('softmax', 'log_softmax'):
            xe, xt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
            ye, yt = getattr(xe, name)(dim), getattr(xt, name)(dim)
            np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
            w = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
            ge, = ember.autograd.grad((ye * ember.tensor(w)).nan_to_num().sum(), xe)
            gt, = torch.autograd.grad((yt * torch.tensor(w)).nan_to_num().sum(), xt)
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-5)
