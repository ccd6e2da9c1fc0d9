"""What a ``__torch_dispatch__`` handler is given (NOTE [boxed arguments] in ember/_dispatch/modes.py): the
operator torch's table names for the call, list-typed arguments as lists, and the arguments equal to their
defaults left out as torch's boxing leaves them out, for a mode and for a tensor subclass alike."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import ember
from ember.utils._python_dispatch import TorchDispatchMode as EmberDispatchMode


def _show(v, tensor_type):
    if isinstance(v, tensor_type):
        return 'T'
    if isinstance(v, (list, tuple)):
        return type(v)([_show(e, tensor_type) for e in v])
    if isinstance(v, dict):
        return {k: _show(e, tensor_type) for k, e in v.items()}
    if 'dtype' in type(v).__name__:
        return str(v).split('.')[-1]
    if type(v).__name__ == 'device':
        return str(v)
    return v


def _log(lib, mode_base, fn):
    seen = []

    class Log(mode_base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), _show(list(args), lib.Tensor), _show(kwargs or {}, lib.Tensor)))
            return func(*args, **(kwargs or {}))
    x = lib.arange(6.).reshape(2, 3)
    y = lib.ones(2, 3)
    with Log():
        fn(lib, x, y)
    return seen


CALLS = {
    'add_alpha_float': lambda L, x, y: x.add(y, alpha=1.0),       # 1.0 is not the int default: passed on
    'add_alpha_default': lambda L, x, y: x.add(y, alpha=1),
    'add_alpha_2': lambda L, x, y: x.add(y, alpha=2),
    'sum_all': lambda L, x, y: x.sum(),
    'sum_dtype': lambda L, x, y: x.sum(dtype=L.float64),
    'sum_int_dim': lambda L, x, y: x.sum(0),
    'sum_tuple_dim': lambda L, x, y: x.sum((0,)),
    'sum_keepdim_false': lambda L, x, y: x.sum([0, 1], keepdim=False),
    'sum_keepdim_true': lambda L, x, y: x.sum(1, keepdim=True),
    'mean_all': lambda L, x, y: x.mean(),
    'mean_dim': lambda L, x, y: x.mean(1),
    'prod_all': lambda L, x, y: x.prod(),
    'prod_dim': lambda L, x, y: x.prod(1),
    'any_all': lambda L, x, y: x.any(),
    'all_dims': lambda L, x, y: x.all((0,)),
    'count_nonzero': lambda L, x, y: x.count_nonzero(),
    'logsumexp': lambda L, x, y: x.logsumexp(0),
    'amax': lambda L, x, y: x.amax((0,)),
    'std': lambda L, x, y: x.std(0, unbiased=True),
    'var': lambda L, x, y: x.var(),
    'max': lambda L, x, y: x.max(),
    'max_dim': lambda L, x, y: x.max(1),
    'argmax': lambda L, x, y: x.argmax(),
    'topk': lambda L, x, y: x.topk(2),
    'clamp_min': lambda L, x, y: x.clamp(min=0),
    'clamp_both': lambda L, x, y: x.clamp(0, 1),
    'view': lambda L, x, y: x.view(3, 2),
    'permute': lambda L, x, y: x.permute(1, 0),
    'expand': lambda L, x, y: x.expand(4, 2, 3),
    'cat_list': lambda L, x, y: L.cat([x, y]),
    'cat_tuple_dim': lambda L, x, y: L.cat((x, y), 1),
    'layer_norm': lambda L, x, y: L.nn.functional.layer_norm(x, (3,)),
    'slice_open_end': lambda L, x, y: x[:, 1:],
    'slice_open_start': lambda L, x, y: x[:1, ::2],
    'gt_number': lambda L, x, y: x > 0,
    'eq_float': lambda L, x, y: x == 1.5,
    'lt_tensor': lambda L, x, y: L.lt(x, y),
    'pow_number': lambda L, x, y: x ** 2,
    'rpow': lambda L, x, y: 2 ** x,
    'pow_tensor': lambda L, x, y: x.pow(y),
    'remainder_number': lambda L, x, y: x % 2,
    'rremainder': lambda L, x, y: L.remainder(2, y),
    'fmod_number': lambda L, x, y: L.fmod(x, 2),
    'bitwise_and_number': lambda L, x, y: (x > 1) & True,
    'conv2d': lambda L, x, y: L.nn.functional.conv2d(x.reshape(1, 1, 2, 3), x[0].reshape(1, 1, 1, 3),
                                                     stride=1, padding=(1, 0)),
}


@pytest.mark.parametrize('name', sorted(CALLS))
def test_a_mode_sees_torchs_boxed_call(name):
    assert _log(ember, EmberDispatchMode, CALLS[name]) == _log(torch, TorchDispatchMode, CALLS[name])


@pytest.mark.parametrize('name', ['sum_all', 'mean_dim', 'amax', 'cat_tuple_dim', 'add_alpha_float'])
def test_a_subclass_sees_torchs_boxed_call(name):
    def run(lib):
        seen = []

        class Wrapper(lib.Tensor):
            @staticmethod
            def __new__(cls, inner):
                return lib.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

            def __init__(self, inner):
                self.inner = inner

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append((str(func), _show(list(args), lib.Tensor), _show(kwargs or {}, lib.Tensor)))
                unwrap = lambda a: a.inner if isinstance(a, Wrapper) else (
                    type(a)(unwrap(e) for e in a) if isinstance(a, (list, tuple)) else a)
                return func(*unwrap(args), **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        x = Wrapper(lib.arange(6.).reshape(2, 3))
        CALLS[name](lib, x, Wrapper(lib.ones(2, 3)))
        return seen
    assert run(ember) == run(torch)


def test_the_whole_tensor_overloads_compute_what_the_dim_overloads_do():
    x = ember.arange(1., 7.).reshape(2, 3)
    aten = ember.ops.aten
    assert aten.sum.default(x).item() == 21 and aten.sum.default(x, dtype=ember.float64).dtype == ember.float64
    assert aten.mean.default(x).item() == 3.5 and aten.prod.default(x).item() == 720
    assert aten.all.default(x).item() and aten.any.default(x * 0).item() is False
    assert aten.count_nonzero.default(x - 1).item() == 5 and aten.count_nonzero.default(x - 1, 1).tolist() == [2, 3]


def _make_fx_code(lib):
    def f(x):
        return x.sum() + x.mean() + x.amax() + x.prod() + x.norm() + x.any() + x.logsumexp(0).sum() + x.argmax()
    from_lib = __import__(f'{lib.__name__}.fx.experimental.proxy_tensor', fromlist=['make_fx'])
    return from_lib.make_fx(f)(lib.randn(3, 4)).code


def test_make_fx_of_reductions_reads_as_torchs():
    assert _make_fx_code(ember) == _make_fx_code(torch).replace('torch.', 'ember.')


def test_generated_code_names_torch_under_ember_run(tmp_path):
    """Under ``ember run`` the program imports ember as torch, so generated code says ``torch.ops.aten...`` (and runs)."""
    script = tmp_path / 'prog.py'
    script.write_text(textwrap.dedent('''
        import torch, torch.fx
        from torch.fx.experimental.proxy_tensor import make_fx
        def f(x):
            return torch.relu(x).sum() * 2
        gm = make_fx(f)(torch.randn(3))
        print(gm.code)
        traced = torch.fx.symbolic_trace(f)
        print(traced.code)
        print(gm(torch.ones(3)).item(), traced(torch.ones(3)).item())
    '''))
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(p for p in sys.path if p)}
    ember_out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True,
                               env=env, timeout=120)
    torch_out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert ember_out.returncode == 0, ember_out.stderr
    assert 'torch.ops.aten.relu.default(x_1)' in ember_out.stdout and 'ember' not in ember_out.stdout
    assert ember_out.stdout == torch_out.stdout


FACTORIES = {
    'arange': lambda L: L.arange(5), 'arange_start': lambda L: L.arange(1., 4.),
    'arange_step': lambda L: L.arange(0, 10, 3), 'full': lambda L: L.full((2,), 3.), 'empty': lambda L: L.empty(2),
    'rand_dtype': lambda L: L.rand(2, dtype=L.float64), 'zeros_like': lambda L: L.zeros_like(L.ones(2)),
    'to_dtype': lambda L: L.ones(2).to(L.float64), 'ones_device_str': lambda L: L.ones(2, device='cpu'),
}


@pytest.mark.parametrize('name', sorted(FACTORIES))
def test_factories_reach_torchs_overloads(name):
    """The same operators and arguments, apart from ``pin_memory=False`` and the default device, which torch's
    Python argument parser adds to a factory's call and ember's factories do not take."""
    def run(L):
        seen = _log(L, EmberDispatchMode if L is ember else TorchDispatchMode, lambda L, x, y: FACTORIES[name](L))
        return [(f, a, {k: v for k, v in kw.items() if k != 'pin_memory' and not (
            k == "device" and "device" not in name and str(v) == "cpu")}) for f, a, kw in seen]
    assert run(ember) == run(torch)
