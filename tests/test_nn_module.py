"""Module machinery against torch: registration, iteration, state_dict round trips and errors, train/eval,
to(dtype), zero_grad, hooks (order, return values, removal), repr, attribute errors, pickling."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from test_nn_util import e2n, t2e, copy_state

tnn, enn = torch.nn, ember.nn


def make_net(nn, lib):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
            self.bn = nn.BatchNorm1d(8)
            self.register_buffer('scale', lib.ones(8))
            self.register_buffer('tmp', lib.zeros(2), persistent=False)
            self.head = nn.Linear(8, 3)
            self.alpha = nn.Parameter(lib.zeros(()))

        def forward(self, x):
            return self.head(self.bn(self.block(self.act(self.fc1(x)))) * self.scale) + self.alpha
    return Net()


def test_names_match_torch():
    t, e = make_net(tnn, torch), make_net(enn, ember)
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters(prefix='m', recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix='m', recurse=False)]
    assert len(list(e.parameters())) == len(list(t.parameters()))
    assert len(list(e.modules())) == len(list(t.modules()))
    assert e.state_dict()._metadata.keys() == t.state_dict()._metadata.keys()


def test_forward_matches_torch_after_state_copy():
    t, e = make_net(tnn, torch), make_net(enn, ember)
    copy_state(t, e)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    for train in (True, False):
        t.train(train), e.train(train)
        np.testing.assert_allclose(e2n(e(ember.from_numpy(x))), t(torch.from_numpy(x)).detach().numpy(), atol=1e-5)


def test_shared_parameters_are_deduplicated():
    for nn in (tnn, enn):
        lin = nn.Linear(2, 2)
        seq = nn.Sequential(lin, lin)
        assert len(list(seq.parameters())) == 2
        assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
        assert len(list(seq.modules())) == 2
    el = enn.Linear(2, 2)
    other = enn.Linear(2, 2)
    other.weight = el.weight
    assert other.weight is el.weight


def test_get_submodule_parameter_buffer():
    e, t = make_net(enn, ember), make_net(tnn, torch)
    assert e.get_submodule('block.0') is e.block[0]
    assert e.get_parameter('block.0.weight') is e.block[0].weight
    assert e.get_buffer('bn.running_mean') is e.bn.running_mean
    for fn, arg in [('get_submodule', 'block.5'), ('get_parameter', 'fc1.nope'), ('get_buffer', 'fc1.weight'),
                    ('get_parameter', 'scale')]:
        with pytest.raises(AttributeError) as te:
            getattr(t, fn)(arg)
        with pytest.raises(AttributeError) as ee:
            getattr(e, fn)(arg)
        assert str(ee.value) == str(te.value)


def test_getattr_error_like_torch():
    for nn in (tnn, enn):
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
            nn.Linear(2, 2).foo


def test_setattr_rules():
    m = enn.Linear(2, 3)
    with pytest.raises(TypeError) as ee:
        m.weight = ember.zeros(3, 2)
    with pytest.raises(TypeError) as te:
        tnn.Linear(2, 3).weight = torch.zeros(3, 2)
    assert str(ee.value).replace('ember.', 'torch.') == str(te.value)
    m.weight = None
    assert m.weight is None and 'weight' in m._parameters
    m.extra = enn.ReLU()
    assert 'extra' in m._modules
    m.extra = None
    assert m.extra is None
    m.buf = ember.ones(1)
    assert 'buf' not in m._buffers      # plain tensors are plain attributes
    m.register_buffer('b2', ember.ones(1))
    m.b2 = ember.zeros(2)
    assert m._buffers['b2'].shape == (2,)
    with pytest.raises(KeyError):
        m.register_buffer('a.b', ember.ones(1))
    with pytest.raises(KeyError, match="attribute 'buf' already exists"):
        m.register_parameter('buf', enn.Parameter(ember.ones(1)))
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' object to parameter 'p'"):
        m.register_parameter('p', ember.ones(2, requires_grad=True) * 2)
    del m.b2
    assert 'b2' not in m._buffers
    m2 = enn.Module()
    m2.b = enn.Buffer(ember.ones(2), persistent=False)
    assert 'b' in m2._buffers and 'b' not in m2.state_dict()


def test_module_before_init_errors():
    class Bad(enn.Module):
        def __init__(self):
            self.w = enn.Parameter(ember.ones(1))
    with pytest.raises(AttributeError, match='cannot assign parameters before Module.__init__'):
        Bad()


def test_dir_lists_members():
    m = make_net(enn, ember)
    d = dir(m)
    for k in ('fc1', 'scale', 'alpha', 'forward', 'training'):
        assert k in d


def test_state_dict_round_trip_and_values():
    a, b = make_net(enn, ember), make_net(enn, ember)
    sd = a.state_dict()
    assert not sd['fc1.weight'].requires_grad and 'tmp' not in sd
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == '<All keys matched successfully>'
    for k, v in a.state_dict().items():
        np.testing.assert_array_equal(e2n(v), e2n(b.state_dict()[k]))
    w = b.fc1.weight
    b.load_state_dict(sd)
    assert b.fc1.weight is w          # copied in place


def test_state_dict_keep_vars_and_prefix():
    m = enn.Linear(2, 2)
    assert m.state_dict(keep_vars=True)['weight'] is m.weight
    assert list(m.state_dict(prefix='x.')) == ['x.weight', 'x.bias']


def test_load_state_dict_errors_like_torch():
    t, e = tnn.Linear(3, 2), enn.Linear(3, 2)
    tsd = {'weight': torch.zeros(2, 3), 'extra': torch.zeros(1)}
    esd = {k: t2e(v) for k, v in tsd.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tsd)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(esd)
    assert str(ee.value) == str(te.value)
    tr, er = t.load_state_dict(tsd, strict=False), e.load_state_dict(esd, strict=False)
    assert er.missing_keys == tr.missing_keys and er.unexpected_keys == tr.unexpected_keys
    tsd = {'weight': torch.zeros(3, 3), 'bias': torch.zeros(2)}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(tsd)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict({k: t2e(v) for k, v in tsd.items()})
    assert str(ee.value).replace('ember.Size', 'torch.Size') == str(te.value)
    assert 'size mismatch for weight' in str(ee.value)
    with pytest.raises(TypeError):
        e.load_state_dict([1, 2])


def test_load_state_dict_assign():
    m = enn.Linear(3, 2)
    w = ember.ones(2, 3)
    m.load_state_dict({'weight': w, 'bias': ember.zeros(2)}, assign=True)
    assert isinstance(m.weight, enn.Parameter) and m.weight.requires_grad
    w.add_(1)
    assert float(m.weight.sum()) == 12.0      # assign=True keeps the given storage


def test_load_state_dict_post_hook_and_nested_strictness():
    m = enn.Sequential(enn.Linear(2, 2))
    seen = []
    m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.missing_keys)))
    m.load_state_dict({'0.weight': ember.zeros(2, 2)}, strict=False)
    assert seen == [['0.bias']]


def test_train_eval():
    m = make_net(enn, ember)
    assert m.training and m.bn.training
    m.eval()
    assert not m.training and not m.bn.training and not m.block[0].training
    assert m.train() is m and m.block.training
    with pytest.raises(ValueError):
        m.train('yes')


def test_to_dtype_keeps_parameter_identity():
    m = make_net(enn, ember)
    p = m.fc1.weight
    m.fc1.weight.grad = ember.ones(8, 4)
    out = m.to(ember.float64)
    assert out is m and m.fc1.weight is p and p.dtype == ember.float64 and isinstance(p, enn.Parameter)
    assert p.grad.dtype == ember.float64
    assert m.bn.num_batches_tracked.dtype == ember.int64      # integer buffers keep their dtype
    assert m.scale.dtype == ember.float64
    m.float()
    assert p.dtype == ember.float32
    m.half()
    assert p.dtype == ember.float16
    m.double()
    assert p.dtype == ember.float64
    m.to('cpu', dtype=ember.float32)
    assert p.dtype == ember.float32 and p.requires_grad
    with pytest.raises(TypeError, match='only accepts floating point or complex dtypes'):
        m.to(ember.int64)


def test_zero_grad_and_requires_grad_():
    m = enn.Linear(3, 2)
    m(ember.randn(4, 3)).sum().backward()
    assert m.weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert float(m.weight.grad.abs().sum()) == 0
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not m.weight.requires_grad
    m.requires_grad_()
    assert m.weight.requires_grad


def test_apply_and_children_order():
    seen = []
    m = enn.Sequential(enn.Linear(2, 2), enn.Sequential(enn.ReLU()))
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ['Linear', 'ReLU', 'Sequential', 'Sequential']


def _hook_trace(nn, lib):
    log = []
    m = nn.Linear(3, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append('pre1'))
    m.register_forward_pre_hook(lambda mod, args: log.append('pre0'), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (log.append('prekw'), (args, kwargs))[1],
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append('post1'))
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append('postkw'), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append('post0'), prepend=True)
    x = lib.ones(1, 3)
    m(x)
    h1.remove()
    m(x)
    return log


def test_forward_hook_order_like_torch():
    assert _hook_trace(enn, ember) == _hook_trace(tnn, torch)


def test_forward_hooks_replace_args_and_results():
    for nn, lib in ((tnn, torch), (enn, ember)):
        m = nn.Linear(3, 2)
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
        out = m(lib.ones(1, 3))
        np.testing.assert_allclose(e2n(out), e2n(m.bias.reshape(1, 2)), atol=1e-6)
        m.register_forward_hook(lambda mod, args, out: out * 0 + 7)
        assert float(m(lib.ones(1, 3)).sum()) == 14.0
        m2 = nn.Linear(3, 2)
        m2.register_forward_pre_hook(lambda mod, a, k: ((a[0] * 0,), k), with_kwargs=True)
        np.testing.assert_allclose(e2n(m2(lib.ones(1, 3))), e2n(m2.bias.reshape(1, 2)), atol=1e-6)


def test_forward_hook_always_call():
    class Boom(enn.Module):
        def forward(self, x):
            raise ValueError('boom')
    log = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append('always'), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append('normal'))
    with pytest.raises(ValueError, match='boom'):
        m(ember.ones(1))
    assert log == ['always']


def test_global_forward_hooks():
    log = []
    h = enn.modules.module.register_module_forward_hook(lambda mod, args, out: log.append(type(mod).__name__))
    try:
        enn.Sequential(enn.ReLU())(ember.ones(2))
    finally:
        h.remove()
    enn.ReLU()(ember.ones(2))
    assert log == ['ReLU', 'Sequential']


def _backward_hook_trace(nn, lib):
    log = []
    m = nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)))
    m.register_full_backward_pre_hook(lambda mod, go: log.append(('pre', [e2n(g).tolist() for g in go])))

    def hook(mod, gi, go):
        log.append(('bw', [None if g is None else e2n(g).tolist() for g in gi], [e2n(g).tolist() for g in go]))
        return (gi[0] * 2,) if gi[0] is not None else None
    m.register_full_backward_hook(hook)
    x = lib.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    log.append(('xgrad', e2n(x.grad).tolist()))
    # inputs that need no grad: grad_input is (None,)
    m(lib.ones(1, 3)).sum().backward()
    return log


def test_full_backward_hooks_like_torch():
    assert _backward_hook_trace(enn, ember) == _backward_hook_trace(tnn, torch)


def test_backward_pre_hook_replaces_grad_output():
    for nn, lib in ((tnn, torch), (enn, ember)):
        m = nn.Linear(2, 2)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        assert float(x.grad.abs().sum()) == 0 and float(m.weight.grad.abs().sum()) == 0


def test_hook_handles_are_context_managers():
    m = enn.ReLU()
    log = []
    with m.register_forward_hook(lambda *a: log.append(1)):
        m(ember.ones(1))
    m(ember.ones(1))
    assert log == [1]


def test_state_dict_hooks():
    m = enn.Linear(2, 2)
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: None)
    def drop_bias(mod, sd, prefix, meta):
        sd.pop('bias')
    m.register_state_dict_post_hook(drop_bias)
    assert list(m.state_dict()) == ['weight']


def test_deepcopy_and_pickle():
    m = make_net(enn, ember)
    m2 = copy.deepcopy(m)
    assert m2.fc1.weight is not m.fc1.weight and isinstance(m2.fc1.weight, enn.Parameter)
    np.testing.assert_array_equal(e2n(m2.fc1.weight), e2n(m.fc1.weight))
    assert m2.fc1.weight.requires_grad
    m3 = pickle.loads(pickle.dumps(enn.Sequential(enn.Linear(2, 3), enn.ReLU())))
    assert repr(m3) == repr(enn.Sequential(enn.Linear(2, 3), enn.ReLU()))
    assert isinstance(m3[0].weight, enn.Parameter)


def test_parameter_semantics():
    t = ember.zeros(3)
    p = enn.Parameter(t)
    assert isinstance(p, ember.Tensor) and p.requires_grad and p.is_leaf
    with ember.no_grad():
        p.add_(1)
    assert float(t.sum()) == 3.0                 # shares t's storage
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(3))).replace('torch', 'ember')
    assert not enn.Parameter(ember.zeros(2), requires_grad=False).requires_grad
    assert type(p * 2) is ember.Tensor
    assert enn.Parameter().shape == (0,)


CONTAINER_CASES = ['seq', 'modulelist', 'moduledict', 'paramlist', 'paramdict']


def _container_ops(nn, lib):
    out = []
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    out.append(len(s))
    out.append(repr(s[1:]))
    out.append(repr(s[-1]))
    s.append(nn.Tanh())
    s.insert(1, nn.Sigmoid())
    s.extend([nn.Identity()])
    del s[0]
    out.append(repr(s))
    out.append(repr(s + nn.Sequential(nn.ReLU())))
    out.append(repr(nn.Sequential(OrderedDict([('a', nn.ReLU()), ('b', nn.Tanh())]))))
    out.append(repr(s.pop(0)))
    s[0] = nn.ELU()
    out.append(repr(s))
    try:
        s[10]
    except IndexError as e:
        out.append(str(e))
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.ReLU())
    ml.insert(0, nn.Tanh())
    ml += [nn.ReLU()]
    out.append(repr(ml))
    out.append(repr(ml[1:3]))
    del ml[1]
    out.append([type(m).__name__ for m in ml])
    md = nn.ModuleDict({'b': nn.ReLU(), 'a': nn.Tanh()})
    md['c'] = nn.Linear(1, 1)
    out.append(list(md.keys()))
    out.append('a' in md)
    out.append(repr(md.pop('a')))
    out.append(repr(md))
    pl = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3, 2)])
    pl.append(lib.ones(1))
    out.append(len(pl))
    out.append([type(p).__name__ for p in pl])
    out.append([n for n, _ in pl.named_parameters()])
    out.append(repr(pl).replace('torch.', 'ember.'))
    pd = nn.ParameterDict({'x': nn.Parameter(lib.ones(2)), 'y': lib.zeros(1)})
    pd['z'] = lib.ones(3)
    out.append(list(pd.keys()))
    out.append([n for n, _ in pd.named_parameters()])
    out.append(repr(pd).replace('torch.', 'ember.'))
    out.append('x' in pd)
    out.append(len(pd))
    return out


def test_containers_like_torch():
    assert _container_ops(enn, ember) == _container_ops(tnn, torch)


def test_sequential_forward_and_slicing_shares_modules():
    s = enn.Sequential(enn.Linear(2, 3), enn.ReLU(), enn.Linear(3, 1))
    assert s[0:2][0] is s[0]
    x = ember.randn(4, 2)
    np.testing.assert_allclose(e2n(s(x)), e2n(s[2](s[1](s[0](x)))), atol=1e-6)


def test_custom_extra_repr():
    class M(enn.Module):
        def extra_repr(self):
            return 'a=1\nb=2'
    class TM(tnn.Module):
        def extra_repr(self):
            return 'a=1\nb=2'
    e, t = enn.Sequential(M()), tnn.Sequential(TM())
    assert repr(e).replace('M(', 'X(') == repr(t).replace('TM(', 'X(')


def _two_input_hooks(nn, lib):
    log = []
    m = nn.Bilinear(2, 3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.from_numpy(np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 2, 3)))
        m.bias.zero_() if hasattr(m.bias, 'zero_') else m.bias.mul_(0)

    def hook(mod, gi, go):
        log.append([None if g is None else np.round(e2n(g), 5).tolist() for g in gi])
        return (gi[0] * 0, gi[1] * 10) if gi[1] is not None else None
    m.register_full_backward_hook(hook)
    a = lib.ones(1, 2, requires_grad=True)
    b = lib.ones(1, 3, requires_grad=True)
    m(a, b).sum().backward()
    log.append([np.round(e2n(a.grad), 5).tolist(), np.round(e2n(b.grad), 5).tolist()])
    c = lib.ones(1, 3)
    m(a, c).sum().backward()        # only the first input needs grad: grad_input[1] is None
    return log


def test_full_backward_hook_with_several_inputs_like_torch():
    assert _two_input_hooks(enn, ember) == _two_input_hooks(tnn, torch)


def test_torch_module_paths():
    m = enn.BatchNorm2d(3)
    assert isinstance(m, enn.modules.batchnorm._BatchNorm) and isinstance(m, enn.modules.batchnorm._NormBase)
    assert isinstance(enn.InstanceNorm1d(2), enn.modules.instancenorm._InstanceNorm)
    assert isinstance(enn.Conv2d(1, 1, 1), enn.modules.conv._ConvNd)
    assert enn.modules.utils._pair(3) == (3, 3)
    assert enn.modules.distance.CosineSimilarity is enn.CosineSimilarity
