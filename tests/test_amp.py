"""Automatic mixed precision against torch: autocast's output dtypes and values per policy class,
gradients through autocast, GradScaler's step skipping and scale sequence, a small training run."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = [('bfloat16', 2e-2), ('float16', 5e-3)]


def E(t):
    """An ember copy of a torch tensor (same dtype, same values)."""
    e = ember.tensor(t.detach().float().numpy()).to(getattr(ember, str(t.dtype)[6:]))
    return e.requires_grad_(t.requires_grad)


def np_of(x):
    return x.detach().float().numpy()


def _inputs():
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)
    return {'a': r(3, 4), 'b': r(4, 5), 'w': r(5, 4), 'bias': r(5), 'x4': r(2, 3, 6, 6), 'k': r(4, 3, 3, 3),
            'b1': r(2, 3, 4), 'b2': r(2, 4, 5), 'c': r(3, 5), 'logits': r(6, 5), 'p': r(3, 4) * 0.3 + 1}


# (name, function over a namespace (torch or ember) and the inputs, low-precision inputs?)
CASES = [
    ('linear', lambda T, d, lp: T.nn.functional.linear(d['a'], d['w'], d['bias'])),
    ('matmul', lambda T, d, lp: T.matmul(d['a'], d['b'])),
    ('matmul_op', lambda T, d, lp: d['a'] @ d['b']),
    ('conv2d', lambda T, d, lp: T.nn.functional.conv2d(d['x4'], d['k'], padding=1)),
    ('bmm', lambda T, d, lp: T.bmm(d['b1'], d['b2'])),
    ('addmm', lambda T, d, lp: T.addmm(d['c'], d['a'], d['b'])),
    ('mm', lambda T, d, lp: T.mm(d['a'], d['b'])),
    ('baddbmm', lambda T, d, lp: T.baddbmm(d['b1'] @ d['b2'], d['b1'], d['b2'])),
    # fp32 list: losses and prod run in float32, even from low-precision inputs
    ('cross_entropy', lambda T, d, lp: T.nn.functional.cross_entropy(d['logits'].to(lp), T.tensor([0, 1, 2, 3, 4, 0]))),
    ('nll_loss', lambda T, d, lp: T.nn.functional.nll_loss(d['logits'].to(lp), T.tensor([0, 1, 2, 3, 4, 0]))),
    ('prod', lambda T, d, lp: T.prod(d['p'].to(lp))),
    # in no list: runs unchanged, in its inputs' dtype
    ('add', lambda T, d, lp: d['a'] + 1),
    ('relu_lowp', lambda T, d, lp: T.relu(d['a'].to(lp))),
    ('softmax_lowp', lambda T, d, lp: T.softmax(d['a'].to(lp), 1)),
    # promote list: mixed precisions meet at the widest
    ('cat_mixed', lambda T, d, lp: T.cat([d['a'].to(lp), d['a']])),
    ('stack_lowp', lambda T, d, lp: T.stack([d['a'].to(lp), d['a'].to(lp)])),
    # ember composes these from listed ops (or has a primitive torch composes): still torch's dtype
    ('prelu', lambda T, d, lp: T.nn.functional.prelu(d['x4'], T.ones(3) * 0.2)),
    ('einsum', lambda T, d, lp: T.einsum('bij,bjk->bik', d['b1'], d['b2'])),
    ('interpolate', lambda T, d, lp: T.nn.functional.interpolate(d['x4'], scale_factor=2, mode='bilinear')),
    # float64 is never cast
    ('mm_double', lambda T, d, lp: T.mm(d['a'].double(), d['b'].double())),
    # composite of a listed op: linear through nn.Linear-like chain
    ('linear_relu_linear', lambda T, d, lp: T.nn.functional.linear(T.relu(T.nn.functional.linear(d['a'], d['w'])),
                                                                      d['w'].t())),
]


@pytest.mark.parametrize('dt,tol', DTYPES)
@pytest.mark.parametrize('name,fn', CASES, ids=[c[0] for c in CASES])
def test_autocast_dtype_and_values_match_torch(name, fn, dt, tol):
    d = _inputs()
    with torch.autocast('cpu', dtype=getattr(torch, dt)):
        want = fn(torch, d, getattr(torch, dt))
    with ember.autocast('cpu', dtype=getattr(ember, dt)):
        got = fn(ember, {k: E(v) for k, v in d.items()}, getattr(ember, dt))
    assert str(got.dtype) == str(want.dtype).replace('torch', 'ember')
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(np_of(got), np_of(want), rtol=tol * 4, atol=tol * 4)


LOSSES = [  # torch's CPU float32 list: ember's composite losses follow it too
    ('mse_loss', lambda F, T, a, b, y, pb, lp: F.mse_loss(a.to(lp), b)),
    ('l1_loss', lambda F, T, a, b, y, pb, lp: F.l1_loss(a.to(lp), b.to(lp))),
    ('smooth_l1_loss', lambda F, T, a, b, y, pb, lp: F.smooth_l1_loss(a.to(lp), b)),
    ('huber_loss', lambda F, T, a, b, y, pb, lp: F.huber_loss(a.to(lp), b)),
    ('binary_cross_entropy', lambda F, T, a, b, y, pb, lp: F.binary_cross_entropy(pb.to(lp), pb)),
    ('bce_with_logits', lambda F, T, a, b, y, pb, lp: F.binary_cross_entropy_with_logits(a.to(lp), pb)),
    ('cross_entropy_smoothing', lambda F, T, a, b, y, pb, lp: F.cross_entropy(a.to(lp), y, label_smoothing=0.1)),
    ('cross_entropy_probs', lambda F, T, a, b, y, pb, lp: F.cross_entropy(a.to(lp), pb.to(lp))),
    ('soft_margin_loss', lambda F, T, a, b, y, pb, lp: F.soft_margin_loss(a.to(lp), b.sign())),
    ('multi_margin_loss', lambda F, T, a, b, y, pb, lp: F.multi_margin_loss(a.to(lp), y)),
    ('poisson_nll_loss', lambda F, T, a, b, y, pb, lp: F.poisson_nll_loss(a.to(lp), pb)),
    ('cosine_embedding_loss', lambda F, T, a, b, y, pb, lp: F.cosine_embedding_loss(a.to(lp), b, T.ones(6))),
    ('margin_ranking_loss', lambda F, T, a, b, y, pb, lp: F.margin_ranking_loss(a[:, 0].to(lp), b[:, 0], a[:, 1].sign())),
    ('hinge_embedding_loss', lambda F, T, a, b, y, pb, lp: F.hinge_embedding_loss(a.to(lp), b.sign())),
    ('triplet_margin_loss', lambda F, T, a, b, y, pb, lp: F.triplet_margin_loss(a.to(lp), b, a.flip(0))),
]


@pytest.mark.parametrize('dt,tol', DTYPES)
@pytest.mark.parametrize('name,fn', LOSSES, ids=[c[0] for c in LOSSES])
def test_losses_run_in_float32_under_autocast_as_torch(name, fn, dt, tol):
    g = torch.Generator().manual_seed(0)
    a, b, pb = torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g), torch.rand(6, 5, generator=g)
    y = torch.tensor([0, 1, 2, 3, 4, 0])
    with torch.autocast('cpu', dtype=getattr(torch, dt)):
        want = fn(torch.nn.functional, torch, a, b, y, pb, getattr(torch, dt))
    with ember.autocast('cpu', dtype=getattr(ember, dt)):
        got = fn(ember.nn.functional, ember, E(a), E(b), ember.tensor(y.numpy()), E(pb), getattr(ember, dt))
    assert str(want.dtype) == 'torch.float32' and got.dtype == ember.float32
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-4, atol=1e-5)


def test_outside_autocast_nothing_is_cast():
    d = {k: E(v) for k, v in _inputs().items()}
    assert (d['a'] @ d['b']).dtype == ember.float32
    with ember.autocast('cpu'):
        pass
    assert (d['a'] @ d['b']).dtype == ember.float32
    assert not ember.is_autocast_enabled('cpu')


def test_nested_and_disabled_regions_match_torch():
    def run(T):
        a, b = T.ones(2, 3), T.ones(3, 2)
        out = []
        with T.autocast('cpu', dtype=T.bfloat16):
            out.append((a @ b).dtype)
            with T.autocast('cpu', enabled=False):
                out.append((a @ b).dtype)
                out.append(T.is_autocast_enabled('cpu'))
            with T.autocast('cpu', dtype=T.float16):
                out.append((a @ b).dtype)
                out.append(T.get_autocast_dtype('cpu'))
            out.append((a @ b).dtype)
            out.append(T.get_autocast_dtype('cpu'))
            out.append(T.is_autocast_enabled())        # no device type: asks about CUDA
        out.append(T.is_autocast_enabled('cpu'))
        return [str(o).replace('torch.', '').replace('ember.', '') for o in out]
    assert run(ember) == run(torch)


def test_decorator_and_amp_namespace():
    @ember.amp.autocast('cpu', dtype=ember.float16)
    def f(a, b):
        return a @ b
    assert f(ember.ones(2, 2), ember.ones(2, 2)).dtype == ember.float16
    assert not ember.is_autocast_enabled('cpu')
    assert ember.autocast is ember.amp.autocast
    assert ember.amp.is_autocast_available('cpu') == torch.amp.is_autocast_available('cpu')
    assert ember.get_autocast_dtype('cpu') == ember.bfloat16 and ember.get_autocast_dtype('cuda') == ember.float16


@pytest.mark.parametrize('dt', ['float32', 'float64'])
def test_unsupported_cpu_dtype_warns_and_disables_as_torch(dt):
    with pytest.warns(UserWarning, match='CPU Autocast only supports dtypes of torch.bfloat16, torch.float16'):
        with ember.autocast('cpu', dtype=getattr(ember, dt)):
            assert not ember.is_autocast_enabled('cpu')
            assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.float32
    with pytest.warns(UserWarning):
        with torch.autocast('cpu', dtype=getattr(torch, dt)):
            assert not torch.is_autocast_enabled('cpu')


def test_device_type_errors():
    with pytest.raises(ValueError, match='device_type'):
        ember.autocast(ember.device('cpu'))
    with pytest.raises(ValueError, match='device_type'):
        torch.autocast(torch.device('cpu'))


@pytest.mark.parametrize('dev', ['mps', 'xpu', 'hpu', 'meta', 'foo'])
def test_other_device_types_as_torch(dev):
    def run(T):
        try:
            with T.autocast(dev):
                return 'ok', T.is_autocast_enabled(dev), str(T.get_autocast_dtype(dev))[6:], \
                    str((T.ones(2, 2) @ T.ones(2, 2)).dtype)[6:]      # CPU tensors: not cast
        except RuntimeError as e:
            return type(e).__name__, str(e)[:40] if dev != 'meta' else ''   # torch: 'unsupported scalarType'
    assert run(ember) == run(torch)


def test_cuda_autocast_without_cuda_warns_and_disables():
    with pytest.warns(UserWarning, match='CUDA is not available'):
        with ember.autocast('cuda'):
            assert not ember.is_autocast_enabled('cuda')


def test_deprecated_aliases_warn_as_torch():
    for T in (torch, ember):
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
            with T.cpu.amp.autocast():
                assert T.is_autocast_enabled('cpu')
                assert (T.ones(2, 2) @ T.ones(2, 2)).dtype == T.bfloat16
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is deprecated"):
            assert T.cuda.amp.GradScaler().is_enabled() is False
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
            s = T.cpu.amp.GradScaler()
        assert s.is_enabled() and s.get_scale() == 2.0 ** 16


def test_autocast_state_functions_match_torch():
    names = ['autocast_decrement_nesting', 'autocast_increment_nesting', 'clear_autocast_cache',
             'get_autocast_cpu_dtype', 'get_autocast_dtype', 'get_autocast_gpu_dtype', 'is_autocast_cache_enabled',
             'is_autocast_cpu_enabled', 'is_autocast_enabled', 'set_autocast_cache_enabled', 'set_autocast_cpu_dtype',
             'set_autocast_cpu_enabled', 'set_autocast_dtype', 'set_autocast_enabled', 'set_autocast_gpu_dtype']
    assert [n for n in names if not hasattr(torch, n)] == []
    assert [n for n in names if not hasattr(ember, n)] == []
    for T in (torch, ember):
        T.set_autocast_enabled('cpu', True)
        T.set_autocast_dtype('cpu', T.float16)
        try:
            assert T.is_autocast_cpu_enabled() and T.get_autocast_cpu_dtype() == T.float16
            assert (T.ones(2, 2) @ T.ones(2, 2)).dtype == T.float16
        finally:
            T.set_autocast_enabled('cpu', False)
            T.set_autocast_dtype('cpu', T.bfloat16)
            T.clear_autocast_cache()
        assert (T.ones(2, 2) @ T.ones(2, 2)).dtype == T.float32


@pytest.mark.parametrize('dt', ['bfloat16', 'float16'])
def test_backward_through_autocast_gives_parameter_dtype_grads(dt):
    g = torch.Generator().manual_seed(1)
    x, w, b = torch.randn(4, 3, generator=g), torch.randn(2, 3, generator=g), torch.randn(2, generator=g)
    w.requires_grad_(), b.requires_grad_()
    ex, ew, eb = E(x), E(w), E(b)
    with torch.autocast('cpu', dtype=getattr(torch, dt)):
        tl = torch.nn.functional.linear(x, w, b)
        tl = (tl * tl).sum()
    with ember.autocast('cpu', dtype=getattr(ember, dt)):
        el = ember.nn.functional.linear(ex, ew, eb)
        el = (el * el).sum()
    assert str(el.dtype)[6:] == str(tl.dtype)[6:]
    tl.float().backward()
    el.float().backward()
    for e, t in ((ew, w), (eb, b)):
        assert str(e.grad.dtype)[6:] == str(t.grad.dtype)[6:] == 'float32'
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=5e-2, atol=5e-2)


def _count_weight_casts(T, cache_enabled):
    """How many dtype casts one region with a weight used three times performs."""
    w = T.ones(3, 3, requires_grad=True)
    x = T.ones(2, 3)
    if T is torch:
        from torch.utils._python_dispatch import TorchDispatchMode
        calls = []

        class Count(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if func is torch.ops.aten._to_copy.default:
                    calls.append(func)
                return func(*args, **(kwargs or {}))
        with T.autocast('cpu', cache_enabled=cache_enabled), Count():
            for _ in range(3):
                T.mm(x, w)
        return len(calls)
    with ember.debug.trace_dispatch(file=None) as lines:
        with T.autocast('cpu', cache_enabled=cache_enabled):
            for _ in range(3):
                T.mm(x, w)
    return sum(1 for l in lines if l.startswith('aten::_to_copy') and '-> AutocastCPU' in l)


def test_cast_cache_for_leaf_weights_as_torch():
    for cache in (True, False):
        assert _count_weight_casts(ember, cache) == _count_weight_casts(torch, cache)
    assert _count_weight_casts(ember, True) < _count_weight_casts(ember, False)


def test_trace_dispatch_shows_autocast_key():
    a, b = ember.ones(2, 2), ember.ones(2, 2)
    with ember.debug.trace_dispatch(file=None) as lines:
        with ember.autocast('cpu'):
            a @ b
            a + b
    mm = [l for l in lines if l.startswith('aten::matmul') and '-> AutocastCPU' in l]
    assert mm and 'autocast_cpu[lower]' in mm[0]
    assert any(l.startswith('aten::add.Tensor') and 'AutocastCPU' in l for l in lines)   # in the key set
    with ember.debug.trace_dispatch(file=None) as lines:
        a @ b
    assert lines and not any('AutocastCPU' in l for l in lines)


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_state():
    seen = {}
    for T in (torch, ember):
        class F(T.autograd.Function):
            @staticmethod
            @T.amp.custom_fwd(device_type='cpu', cast_inputs=T.float32)
            def forward(ctx, x):
                seen[T.__name__, 'fwd'] = (str(x.dtype)[6:], T.is_autocast_enabled('cpu'))
                return x * 2

            @staticmethod
            @T.amp.custom_bwd(device_type='cpu')
            def backward(ctx, g):
                seen[T.__name__, 'bwd'] = T.is_autocast_enabled('cpu')
                return g * 2
        x = T.ones(2, dtype=T.bfloat16, requires_grad=True)
        with T.autocast('cpu'):
            y = F.apply(x)
        y.sum().backward()
        seen[T.__name__, 'out'] = str(y.dtype)[6:]
    for k in ('fwd', 'bwd', 'out'):
        assert seen['ember', k] == seen['torch', k]


# --- GradScaler -----------------------------------------------------------------------

def _mlp(T, tw):
    m = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 3))
    if tw is not None:
        with T.no_grad():
            for p, q in zip(m.parameters(), tw.parameters()):
                p.copy_(E(q))
    return m


@pytest.mark.parametrize('dt', ['bfloat16', 'float16'])
def test_mlp_training_under_autocast_and_grad_scaler_matches_torch(dt):
    torch.manual_seed(0)
    tm = _mlp(torch, None)
    em = _mlp(ember, tm)
    g = torch.Generator().manual_seed(3)
    data = [(torch.randn(16, 4, generator=g), torch.randint(0, 3, (16,), generator=g)) for _ in range(6)]
    losses = {}
    for T, m in ((torch, tm), (ember, em)):
        opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        scaler = T.amp.GradScaler('cpu', init_scale=2.0 ** 10, growth_interval=2)
        out = []
        for x, y in data:
            x, y = (x, y) if T is torch else (E(x), ember.tensor(y.numpy()))
            opt.zero_grad()
            with T.autocast('cpu', dtype=getattr(T, dt)):
                loss = T.nn.functional.cross_entropy(m(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            out.append((loss.item(), str(loss.dtype)[6:], scaler.get_scale()))
        losses[T.__name__] = out
        assert all(p.dtype == T.float32 and p.grad.dtype == T.float32 for p in m.parameters())
    assert len(losses['ember']) == len(data)
    for (el, edt, es), (tl, tdt, ts) in zip(losses['ember'], losses['torch']):
        assert edt == tdt and es == ts
        assert abs(el - tl) < 3e-2 * max(1.0, abs(tl)), (losses['ember'], losses['torch'])


def _scaler_run(T, grads_per_step, **kw):
    """Drive a scaler through steps whose gradient is given; record scale, tracker and the parameter."""
    p = T.nn.Parameter(T.ones(3))
    opt = T.optim.SGD([p], lr=0.5)
    s = T.amp.GradScaler('cpu', **kw)
    rec = []
    for g in grads_per_step:
        opt.zero_grad()
        loss = s.scale((p * T.tensor(g)).sum())
        loss.backward()
        s.step(opt)
        s.update()
        rec.append((s.get_scale(), s._get_growth_tracker(), p.detach().numpy().tolist()))
    return rec, s


def test_grad_scaler_skips_inf_steps_and_updates_scale_as_torch():
    inf, nan = float('inf'), float('nan')
    steps = [[1., 2., 3.], [1., inf, 0.], [1., 1., 1.], [0.5, 0.5, 0.5], [nan, 1., 1.], [1., 1., 1.],
             [1., 1., 1.], [1., 1., 1.]]
    kw = dict(init_scale=8.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=2)
    e, es = _scaler_run(ember, steps, **kw)
    t, ts = _scaler_run(torch, steps, **kw)
    assert len(e) == len(steps)
    assert e == t
    assert e[1][2] == e[0][2]                         # the inf step left the parameter alone
    assert es.state_dict() == ts.state_dict()


def test_grad_scaler_growth_overflow_keeps_scale():
    steps = [[1., 1., 1.]] * 3
    kw = dict(init_scale=3e38, growth_factor=2.0, growth_interval=1)
    e, _ = _scaler_run(ember, steps, **kw)
    t, _ = _scaler_run(torch, steps, **kw)
    assert [r[:2] for r in e] == [r[:2] for r in t]


def test_grad_scaler_misuse_errors_as_torch():
    for T in (torch, ember):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.1)
        s = T.amp.GradScaler('cpu')
        with pytest.raises(AssertionError, match='but _scale is None'):
            s.unscale_(opt)
        s.scale(p.sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match=r'unscale_\(\) has already been called on this optimizer'):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match=r'unscale_\(\) is being called after step\(\)'):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match=r'step\(\) has already been called since the last update\(\)'):
            s.step(opt)
        with pytest.raises(RuntimeError, match='Closure use is not currently supported'):
            s.step(opt, closure=lambda: 0)
        s.update()
        with pytest.raises(AssertionError, match='No inf checks were recorded prior to update'):
            s.update()
        q = T.nn.Parameter(T.ones(2, dtype=T.float16))
        q.grad = T.ones(2, dtype=T.float16)
        with pytest.raises(ValueError, match='Attempting to unscale FP16 gradients'):
            s.unscale_(T.optim.SGD([q], lr=0.1))


def test_grad_scaler_unscale_then_step_and_manual_scale():
    for T in (torch, ember):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=1.0)
        s = T.amp.GradScaler('cpu', init_scale=4.0)
        s.scale((p * 3).sum()).backward()
        assert p.grad.tolist() == [12.0, 12.0]
        s.unscale_(opt)
        assert p.grad.tolist() == [3.0, 3.0]
        s.step(opt)
        s.update(2.0)
        assert s.get_scale() == 2.0 and p.tolist() == [-2.0, -2.0]
        s.update(T.tensor(0.5))
        assert s.get_scale() == 0.5


def test_grad_scaler_disabled_is_pass_through():
    for T in (torch, ember):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=1.0)
        s = T.amp.GradScaler('cpu', enabled=False)
        loss = (p * 2).sum()
        assert s.scale(loss) is loss
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        assert p.tolist() == [-1.0, -1.0]
        assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()


def test_grad_scaler_cuda_without_cuda_warns_and_disables():
    for T in (torch, ember):
        with pytest.warns(UserWarning, match='GradScaler is enabled, but CUDA is not available.  Disabling.'):
            assert not T.amp.GradScaler('cuda').is_enabled()
        with pytest.warns(UserWarning):
            assert not T.amp.GradScaler().is_enabled()


def test_grad_scaler_state_dict_round_trip_and_pickle():
    for T in (torch, ember):
        s = T.amp.GradScaler('cpu', init_scale=16.0, growth_interval=7)
        s.scale(T.ones(1))
        sd = s.state_dict()
        assert sd == {'scale': 16.0, 'growth_factor': 2.0, 'backoff_factor': 0.5, 'growth_interval': 7,
                      '_growth_tracker': 0}
        sd2 = dict(sd, scale=32.0, _growth_tracker=3)
        s2 = T.amp.GradScaler('cpu')
        s2.load_state_dict(sd2)
        assert s2.state_dict() == sd2
        s.load_state_dict(sd2)                      # onto live tensors
        assert s.get_scale() == 32.0 and s._get_growth_tracker() == 3
        assert pickle.loads(pickle.dumps(s)).state_dict() == sd2
        with pytest.raises(RuntimeError, match='The source state dict is empty'):
            s.load_state_dict({})


def test_scale_of_iterables():
    for T in (torch, ember):
        s = T.amp.GradScaler('cpu', init_scale=2.0)
        out = s.scale([T.ones(1), (T.ones(1) * 3,)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].item() == 2.0 and out[1][0].item() == 6.0
