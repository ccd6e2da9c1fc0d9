"""The CUDA backend's mechanism (NOTE [cuda backend] in ember/_backends/cuda) on a machine without a GPU.

The backend registers, for every CPU kernel, a device twin: the kernel's code run with ``np`` bound to the
device's array module, its helpers twinned, its wrappers' cells twinned, and a host fallback for what a twin
cannot do. Here a NumPy stand-in plays CuPy: device arrays are a NumPy subclass (so a result that left the
device shows), and a device registered for PrivateUse1 runs the twins. Every operator's OpInfo samples must
give the CPU's values on it; a twin that fails must fall back with torch's warning, the operator's own values
(the generator rewound) and its own errors. The GPU itself is tested by tests_cuda/ on a GPU machine."""
import types
import warnings

import numpy as np
import pytest

import ember
from ember._backends import cuda as backend
from ember._backends.cuda import _choices as choices
from opinfo import OPS
from _harness import materialize, to_lib, call, flat


class Dev(np.ndarray):
    """A device array of the stand-in: NumPy's, of another class."""


def _dev(a):
    return a.view(Dev) if isinstance(a, np.ndarray) and not isinstance(a, Dev) else a


def _host(a):
    """A host copy, as CuPy's asnumpy makes: a kernel writing into it leaves the device array as it was."""
    return np.array(a.view(np.ndarray)) if isinstance(a, Dev) else a


_MAKERS = frozenset({'empty', 'zeros', 'ones', 'full', 'array', 'asarray', 'ascontiguousarray', 'arange', 'eye',
                     'empty_like', 'zeros_like', 'ones_like', 'full_like', 'linspace'})


class _XP:
    """The stand-in's ``np``: NumPy, whose array-making functions return device arrays; names in ``broken``
    raise, as a NumPy function CuPy lacks would."""

    def __init__(self, broken=()):
        self.broken = frozenset(broken)

    def __getattr__(self, name):
        if name in self.broken:
            def missing(*args, **kwargs):
                raise TypeError(f'the device has no {name}')
            return missing
        v = getattr(np, name)
        if name in _MAKERS:
            return lambda *a, **k: _dev(v(*a, **k))
        return v


def _spec(broken=(), host_only=()):
    def to_device(r):
        if isinstance(r, tuple):
            return tuple(to_device(x) for x in r)
        if isinstance(r, list):
            return [to_device(x) for x in r]
        return _dev(np.asarray(r)) if isinstance(r, (np.ndarray, np.generic)) else r
    return types.SimpleNamespace(
        KERNELS={}, HOST_ONLY=frozenset(host_only), WRITES={'native_batch_norm': (3, 4)},
        HELPERS=choices.HELPERS, CONSTANTS=choices.CONSTANTS,       # the device's choices, as on the GPU
        HOST_MODULES=frozenset({'_parallel', '_process', '_blas', '_fp', '_torch_random'}),
        DRAWS_MODULES=frozenset({'_torch_random'}), XP=lambda: _XP(broken),
        device_ufunc=lambda name: getattr(np, name), numpy_function=lambda fn: None,
        results_to_device=lambda fn: (lambda *a, **k: to_device(fn(*a, **k))), to_device=to_device,
        host_args=lambda args: tuple(_host(a) if not isinstance(a, list) else [_host(x) for x in a] for a in args),
        device_args=lambda args: args)


def _registered(spec):
    """Register a 'twin' device (PrivateUse1) running ``spec``'s twins; returns an undo function."""
    from _registry import snapshot
    restore = snapshot()
    ember.library.register_device('twin', to_host=_host, from_host=lambda a, index=None: _dev(np.array(a)))
    lib = backend.register_kernels(spec, key='PrivateUse1')

    def undo():
        lib._destroy()
        restore()
    return undo


@pytest.fixture(scope='module')
def twin_device():
    undo = _registered(_spec())
    yield
    undo()


def _run(info, args, kwargs, device):
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return call(info, ember, to_lib(args, ember, device=device), to_lib(kwargs, ember, device=device))


def _close(got, want, what):
    """Equal up to the rounding of sums taken in another order: the twins make the device's choices (NOTE
    [device choices]), so a GEMM runs whole rather than in row blocks and softmax always subtracts the row
    maximum. Half a digit of float32 on the output's scale, a few ulps of float64."""
    if got.dtype.kind == 'f' and got.size:
        scale = float(np.nanmax(np.abs(np.where(np.isfinite(want), want, 0)))) if want.dtype.kind == 'f' else 0
        rtol = 1e-5 if got.dtype.itemsize < 8 else 1e-13
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=0, equal_nan=True, err_msg=what)


def _factory(info):
    from ember._dispatch import dispatcher
    name = info.name.split('.')[-1]
    return any(op.schema.name == name and any(a.base_type == 'Device' for a in op.schema.arguments)
               for op in dispatcher.all_ops().values())


@pytest.mark.parametrize('name', sorted(OPS))
def test_twins_give_the_cpu_kernels_values(twin_device, name):
    info = OPS[name]
    dtype = info.dtypes[0]
    before = dict(backend.FALLBACKS)
    for i, s in enumerate(info.samples(dtype)):
        args, kwargs = materialize(s, dtype, seed=i)
        if _factory(info) and not any(isinstance(x, np.ndarray) for x in flat(args) + flat(list(kwargs.values()))):
            tkw = dict(kwargs, device='twin')
        else:
            tkw = kwargs
        try:
            cpu = _run(info, args, kwargs, None)
        except Exception as e:
            with pytest.raises(type(e)):
                _run(info, args, tkw, 'twin')
            continue
        out = _run(info, args, tkw, 'twin')
        for c, t in zip(flat(cpu), flat(out)):
            if isinstance(c, ember.Tensor):
                assert t.device.type == 'twin' and t.dtype is c.dtype and tuple(t.shape) == tuple(c.shape), s
                if 'empty' not in name:     # the same operations; sums in another order where the device's
                    _close(t.cpu().numpy(), c.numpy(), f'{name}({s})')      # choices cut the work otherwise
            else:
                assert t == c or (t != t and c != c), f'{name}({s})'
    # with NumPy as the device module nothing needs the host: every twin ran (linear algebra runs on the host
    # by design, NOTE [cuda backend])
    ran_on_host = {k: backend.REASONS.get(k) for k, n in backend.FALLBACKS.items()
                   if n != before.get(k, 0) and not k.startswith('linalg_')}
    assert not ran_on_host, ran_on_host


def test_cpu_index_tensors_index_a_device_tensor_as_in_torch(twin_device):
    t = ember.arange(6.).reshape(2, 3)
    d = t.to('twin')
    assert d[ember.tensor([1, 0])].cpu().tolist() == t[ember.tensor([1, 0])].tolist()
    assert d[ember.tensor([True, False])].device.type == 'twin'
    d[ember.tensor([0]), ember.tensor([2])] = 9.
    assert d.cpu().tolist() == [[0., 1., 9.], [3., 4., 5.]]
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        d.index_select(0, ember.tensor([0]))        # an operator's tensors must share the device, as in torch


def test_a_fused_adam_step_runs_as_one_twin_with_the_steps_on_the_host(twin_device):
    """NOTE [fused optimizer steps]: the optimizer keeps ``step`` on the CPU (torch's rule for state), so the
    device's kernel gets host step counts beside device arrays, as on a GPU."""
    def run(device):
        ember.manual_seed(0)
        ps = [ember.randn(4, 3).to(device), ember.randn(5).to(device)]
        gs = [ember.randn(4, 3).to(device), ember.randn(5).to(device)]
        ms, vs = [ember.zeros_like(p) for p in ps], [ember.zeros_like(p) for p in ps]
        ember._fused_adamw_(ps, gs, ms, vs, [], [ember.tensor(2.), ember.tensor(2.)], lr=0.1, beta1=0.9,
                            beta2=0.99, weight_decay=0.01, eps=1e-8, amsgrad=False, maximize=False)
        return ps + ms + vs
    before = dict(backend.FALLBACKS)
    for c, t in zip(run('cpu'), run('twin')):
        assert t.device.type == 'twin'
        np.testing.assert_array_equal(t.cpu().numpy(), c.numpy())
    assert backend.FALLBACKS == before


def test_copy_between_devices_and_fill_with_a_host_value_as_in_torch(twin_device):
    """torch's ``copy_`` takes its source from any device (pytorch/examples' dcgan saves a grid of GPU images
    into a host tensor), and ``fill_`` takes a 0-d host tensor on a device tensor (word_language_model's
    generate.py fills a GPU input with a word sampled on the host)."""
    d = ember.zeros(2, 3).to('twin')
    d.copy_(ember.arange(6.).reshape(2, 3))
    assert d.device.type == 'twin' and d.cpu().tolist() == [[0., 1., 2.], [3., 4., 5.]]
    h = ember.zeros(2, 3, dtype=ember.float64)
    assert h.copy_(d * 2).dtype is ember.float64 and h.tolist() == [[0., 2., 4.], [6., 8., 10.]]
    src = ember.ones(3, requires_grad=True)
    out = ember.zeros(2, 3).to('twin').copy_(src)
    out.sum().backward()
    assert out.device.type == 'twin' and src.grad.device.type == 'cpu' and src.grad.tolist() == [2., 2., 2.]
    d.fill_(ember.tensor(7))
    assert d.device.type == 'twin' and d.cpu().tolist() == [[7.] * 3] * 2
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        d.add_(ember.ones(2, 3))        # other operators keep torch's rule
    from ember.vision.utils import make_grid
    g = make_grid(ember.rand(3, 3, 4, 4).to('twin'), nrow=2, padding=1)
    assert g.device.type == 'twin' and tuple(g.shape) == (3, 11, 11)
