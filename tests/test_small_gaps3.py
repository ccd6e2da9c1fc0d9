"""Small torch names checked against torch: nn.init.eye/dirac, nn.utils.skip_init, nn.utils.stateless,
the conv weight memory-format converters, and autograd's engine flags, anomaly_mode and kineto_available."""
import importlib
import warnings

import numpy as np
import pytest
import torch

import ember


def _caught(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        out = fn(*args, **kwargs)
    return out, [(x.category, str(x.message)) for x in w]


# --- nn.init.eye / nn.init.dirac -------------------------------------------------------------

@pytest.mark.parametrize('name, shape, kw', [('eye', (3, 5), {}), ('dirac', (4, 2, 3), dict(groups=2)),
                                             ('dirac', (2, 2, 3, 3), {})])
def test_deprecated_init_aliases(name, shape, kw):
    ours, ow = _caught(getattr(ember.nn.init, name), ember.full(shape, 7.), **kw)
    theirs, tw = _caught(getattr(torch.nn.init, name), torch.full(shape, 7.), **kw)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ow == tw and len(tw) == 1 and tw[0][0] is FutureWarning
    assert getattr(ember.nn.init, name).__name__ == name
    assert name in ember.nn.init.__all__ and name in torch.nn.init.__all__


# --- nn.utils.skip_init --------------------------------------------------------------------

class _Counting(ember.nn.Module):
    """Records the device its parameters were built on: skip_init must construct on meta."""
    seen = []

    def __init__(self, n, device=None):
        super().__init__()
        self.w = ember.nn.Parameter(ember.full((n,), 3., device=device))
        _Counting.seen.append(self.w.device.type)


def test_skip_init_builds_on_meta_then_allocates():
    _Counting.seen.clear()
    m = ember.nn.utils.skip_init(_Counting, 4)
    assert _Counting.seen == ['meta']
    assert m.w.device.type == 'cpu' and not m.w.is_meta and tuple(m.w.shape) == (4,)
    assert isinstance(m.w, ember.nn.Parameter) and m.w.requires_grad
    lin = ember.nn.utils.skip_init(ember.nn.Linear, 3, 2, bias=False, device='cpu')
    tlin = torch.nn.utils.skip_init(torch.nn.Linear, 3, 2, bias=False, device='cpu')
    assert tuple(lin.weight.shape) == tuple(tlin.weight.shape) and lin.bias is None and tlin.bias is None
    assert lin.weight.requires_grad == tlin.weight.requires_grad


def test_skip_init_errors_as_torch():
    class NoDevice(ember.nn.Module):
        def __init__(self):
            super().__init__()

    class TNoDevice(torch.nn.Module):
        def __init__(self):
            super().__init__()

    for lib, nodev in ((ember, NoDevice), (torch, TNoDevice)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            lib.nn.utils.skip_init(nodev)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)


# --- nn.utils.stateless ----------------------------------------------------------------------

def test_stateless_functional_call_warns_and_swaps():
    w = np.array([[1., 2.]], np.float32)
    x = np.array([[3., 4.]], np.float32)
    res = []
    for lib in (ember, torch):
        lin = lib.nn.Linear(2, 1)
        before = lin.weight.detach().clone()
        out, caught = _caught(lib.nn.utils.stateless.functional_call, lin, {'weight': lib.tensor(w)}, lib.tensor(x))
        assert np.array_equal(lin.weight.detach().numpy(), before.numpy())      # restored afterwards
        res.append((out.detach().numpy() - lin.bias.detach().numpy(), caught))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][0], [[11.]])
    assert res[0][1] == res[1][1] and res[1][1][0][0] is FutureWarning
    assert ember.nn.utils.stateless.__all__ == torch.nn.utils.stateless.__all__ == ['functional_call']


# --- conv weight memory formats ----------------------------------------------------------------

def _net(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.ConvTranspose2d(4, 2, 3), lib.nn.Conv3d(2, 2, 3),
                             lib.nn.ConvTranspose3d(2, 2, 3), lib.nn.Linear(3, 3))


def _strides(m):
    return [tuple(p.stride()) for p in m.parameters()]


@pytest.mark.parametrize('steps', [
    [('2d', 'channels_last')],
    [('2d', 'channels_last'), ('2d', 'contiguous_format')],
    [('3d', 'channels_last_3d')],
    [('3d', 'channels_last_3d'), ('2d', 'channels_last'), ('3d', 'contiguous_format')],
])
def test_conv_weight_memory_format_strides_match_torch(steps):
    m, tm = _net(ember), _net(torch)
    weights = [p for p in m.parameters()]
    values = [p.detach().numpy().copy() for p in weights]
    for kind, fmt in steps:
        getattr(ember.nn.utils, f'convert_conv{kind}_weight_memory_format')(m, fmt)
        getattr(torch.nn.utils, f'convert_conv{kind}_weight_memory_format')(tm, getattr(torch, fmt))
    assert _strides(m) == _strides(tm)
    assert _strides(m) != _strides(_net(ember)) or steps[-1][1] == 'contiguous_format'
    ps = list(m.parameters())
    assert len(ps) == len(weights) and all(a is b for a, b in zip(ps, weights))     # same Parameter objects
    assert all(np.array_equal(p.detach().numpy(), v) for p, v in zip(ps, values))
    assert all(p.requires_grad for p in ps)


def test_channels_last_weight_computes_the_same_and_trains():
    conv = ember.nn.Conv2d(2, 3, 3)
    x = ember.randn(1, 2, 5, 5)
    y0 = conv(x).detach().numpy()
    ember.nn.utils.convert_conv2d_weight_memory_format(conv, ember.channels_last)
    assert conv.weight.stride() == (18, 1, 6, 2)
    y = conv(x)
    np.testing.assert_allclose(y.detach().numpy(), y0, rtol=1e-6, atol=1e-6)
    y.sum().backward()
    assert tuple(conv.weight.grad.shape) == (3, 2, 3, 3)


@pytest.mark.parametrize('kind, fmt', [('2d', 'preserve_format'), ('3d', 'channels_last'),
                                       ('2d', 'channels_last_3d')])
def test_conv_weight_memory_format_errors_as_torch(kind, fmt):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.utils, f'convert_conv{kind}_weight_memory_format')(_net(torch), getattr(torch, fmt))
    with pytest.raises(RuntimeError) as ours:
        getattr(ember.nn.utils, f'convert_conv{kind}_weight_memory_format')(_net(ember), fmt)
    assert str(ours.value) == str(theirs.value)


def test_nn_utils_all_covers_torch():
    assert set(torch.nn.utils.__all__) <= set(ember.nn.utils.__all__)


# --- autograd flags and names ------------------------------------------------------------------

def _flag_sequence(lib):
    a, seen = lib.autograd, []
    seen.append(a.is_multithreading_enabled())
    with a.set_multithreading_enabled(False):
        seen.append(a.is_multithreading_enabled())
    seen.append(a.is_multithreading_enabled())
    a.set_multithreading_enabled(False)         # as a function: takes effect at once
    seen.append(a.is_multithreading_enabled())
    a.set_multithreading_enabled(True)
    seen.append(a.is_view_replay_enabled())
    with a._force_original_view_tracking(True):
        seen.append(a.is_view_replay_enabled())
    seen.append(a.is_view_replay_enabled())

    @a._force_original_view_tracking(True)
    def inside():
        return a.is_view_replay_enabled()
    seen += [a.is_view_replay_enabled(), inside(), a.is_view_replay_enabled()]
    return seen


def test_engine_flags_follow_torch():
    ours = _flag_sequence(ember)
    assert ours == _flag_sequence(torch)
    assert ours == [True, False, True, False, False, True, False, False, True, False]


def test_engine_flags_are_thread_local():
    import threading
    out = []
    with ember.autograd.set_multithreading_enabled(False):
        t = threading.Thread(target=lambda: out.append(ember.autograd.is_multithreading_enabled()))
        t.start()
        t.join()
        assert ember.autograd.is_multithreading_enabled() is False
    assert out == [True]


def test_backward_unchanged_under_the_flags():
    x = ember.tensor([1., 2., 3.], requires_grad=True)
    with ember.autograd.set_multithreading_enabled(False), ember.autograd._force_original_view_tracking(True):
        b = x * 1
        b[1:].mul_(2)
        b.sum().backward()
    assert x.grad.tolist() == [1., 2., 2.]


def test_anomaly_mode_module():
    ours = importlib.import_module('ember.autograd.anomaly_mode')
    theirs = importlib.import_module('torch.autograd.anomaly_mode')
    assert ours is ember.autograd.anomaly_mode
    assert ours.__all__ == theirs.__all__ == ['detect_anomaly', 'set_detect_anomaly']
    assert ours.detect_anomaly is ember.autograd.detect_anomaly
    assert ours.set_detect_anomaly is ember.autograd.set_detect_anomaly


def test_kineto_available_and_saved_tensors_hooks():
    assert ember.autograd.kineto_available() is False       # ember has no Kineto tracer (torch's build may)
    assert isinstance(torch.autograd.kineto_available(), bool)
    x = ember.tensor([2.], requires_grad=True)
    packed = []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        y = x * x
    y.backward()
    assert packed and x.grad.tolist() == [4.]
