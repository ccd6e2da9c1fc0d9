"""Gaps found by running libraries' own test suites under ``ember run`` (2026-11-28, second session). Each test
compares with torch in the same process."""
import warnings

import pytest
import torch

import ember
from _harness import both


class _Enc:
    """A module with a second method, for trace_module (e3nn traces its modules this way)."""

    @staticmethod
    def make(lib):
        class Enc(lib.nn.Module):
            def __init__(self):
                super().__init__()
                lib.manual_seed(0)
                self.lin = lib.nn.Linear(3, 2)
                self.drop = lib.nn.Dropout(0.5)

            def forward(self, x):
                return self.drop(self.lin(x)).relu()

            def encode(self, x):
                return self.lin(x) * 2
        return Enc()


def test_trace_module_traces_each_method():
    def run(lib):
        m = _Enc.make(lib).eval()
        x = lib.arange(6.).reshape(2, 3)
        t = lib.jit.trace_module(m, {'forward': x, 'encode': [x[:1]]},      # one tensor, a tuple or a list
                                 check_inputs=[{'forward': (x + 1,), 'encode': [x]}])
        return (type(t).__name__, [type(c).__name__ for c in t.children()], t(x).mul(1e4).round().tolist(),
                t.encode(x).mul(1e4).round().tolist(), isinstance(t, lib.jit.ScriptModule))
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


@pytest.mark.parametrize('case', ['not_a_module', 'not_a_dict', 'kwarg_name', 'check_input_fails'])
def test_trace_module_errors(case):
    def run(lib):
        m = _Enc.make(lib)
        x = lib.ones(1, 3)
        {'not_a_module': lambda: lib.jit.trace_module(lambda y: y, {'forward': x}),
         'not_a_dict': lambda: lib.jit.trace_module(m, [x]),
         'kwarg_name': lambda: lib.jit.trace_module(m, {'forward': {'y': x}}, example_inputs_is_kwarg=True),
         'check_input_fails': lambda: lib.jit.trace_module(m, {'forward': x},
                                                           check_inputs=[{'forward': lib.ones(1, 4)}])}[case]()
    (kt, t), (ke, e) = both(run)
    assert kt == ke != 'ok'
    if case != 'check_input_fails':      # torch's check names its own graph comparison
        assert t.split()[:3] == e.split()[:3]


@pytest.mark.parametrize('case', ['module', 'function', 'method'])
def test_a_failing_traced_call_raises_the_interpreters_runtime_error(case):
    """torch runs a trace in its TorchScript interpreter: whatever the operator raised becomes a RuntimeError
    whose first line says so and whose last line is the operator's error (e3nn catches RuntimeError)."""
    def run(lib):
        if case == 'module':
            t = lib.jit.trace(lib.nn.Linear(3, 2), lib.ones(1, 3))
            t(lib.ones(1, 4))
        elif case == 'function':
            t = lib.jit.trace(lambda x: x[..., 2], lib.zeros(3, 4))
            t(lib.zeros(3, 2))
        else:
            t = lib.jit.trace_module(_Enc.make(lib), {'encode': lib.ones(1, 3)})
            t.encode(lib.ones(1, 5))
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'RuntimeError'
    assert t.splitlines()[0] == e.splitlines()[0] == "The following operation failed in the TorchScript interpreter."


def test_traced_module_prints_and_trains_like_torchs():
    """Its repr names the module's classes (``original_name``), ``eval()`` sets its submodules' flags, and
    ``.double()`` reaches the parameters the module computes with."""
    def run(lib):
        lib.manual_seed(0)
        t = lib.jit.trace(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Dropout(0.9)), lib.ones(1, 2))
        t.eval()
        t.double()
        return (repr(t), t.training, [c.training for c in t.children()],
                str(t(lib.ones(1, 2, dtype=lib.float64)).dtype).split('.')[-1], sorted(t.state_dict()))
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


@pytest.mark.parametrize('name', ['conv2d', 'conv3d', 'zeros', 'cat'])
def test_a_builtin_kept_as_class_attribute_binds_no_self(name):
    """torch's builtins do not bind: kornia's HausdorffERLoss keeps ``conv = torch.conv2d`` and calls
    ``self.conv(x, weight=k)``."""
    def run(lib):
        class Loss:
            f = getattr(lib, name)
        x = lib.ones(1, 1, 3, 3, 3) if name == 'conv3d' else lib.ones(1, 1, 3, 3)
        call = {'conv2d': lambda f: f(x, weight=x, padding=1), 'conv3d': lambda f: f(x, x),
                'zeros': lambda f: f(2, 3), 'cat': lambda f: f([x, x])}[name]
        return call(Loss().f).sum().item(), call(Loss.f).shape == call(getattr(lib, name)).shape
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


def test_builtin_functions_pickle_by_name_and_keep_their_signature():
    import inspect
    import pickle
    assert pickle.loads(pickle.dumps(ember.conv2d)) is ember.conv2d
    assert pickle.loads(pickle.dumps(ember.zeros)) is ember.zeros
    assert list(inspect.signature(ember.conv2d).parameters)[:3] == ['input', 'weight', 'bias']
    assert ember.conv2d.__name__ == 'conv2d' and 'conv2d' in repr(ember.conv2d)


def _scriptable(lib, width=4):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            lib.manual_seed(0)
            self.lin = lib.nn.Linear(3, width)
            self.k = 5

        def forward(self, x):
            assert x.shape[-1] == 3, "bad shape"
            if x.shape[0] > 100:
                raise ValueError("too big")
            return self.lin(x)[..., 3]

        def helper(self):
            return 1

        @lib.jit.export
        def exported(self):
            return self.k
    return Net()


def test_a_scripted_module_is_torchs_recursive_script_module():
    """e3nn, kornia, PyG and torchinfo check the type, repr, attributes and refused hooks of a scripted
    module; training it reaches the module's own parameters."""
    def run(lib):
        m = lib.jit.script(_scriptable(lib))
        out = [type(m).__name__, repr(m), m.k, m.exported(), m.original_name, isinstance(m, lib.jit.ScriptModule),
               lib.jit.script(m) is m, sorted(m.state_dict())]
        m.k = 7
        out.append(m.exported())
        for hook in ('register_forward_hook', 'register_forward_pre_hook', 'register_full_backward_hook'):
            try:
                getattr(m, hook)(lambda *a: None)
            except RuntimeError as e:
                out.append(str(e))
        try:
            m.helper()
        except AttributeError as e:
            out.append(type(e).__name__)
        m.eval()
        m.double()
        out += [m.training, m.lin.training, str(m.lin.weight.dtype).split('.')[-1]]
        return out
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


@pytest.mark.parametrize('case', ['operator', 'assert', 'raise'])
def test_a_scripted_module_fails_as_torchscript_does(case):
    """An operator's error is the interpreter's RuntimeError; the code's own assert or raise is jit.Error."""
    def run(lib):
        m = lib.jit.script(_scriptable(lib, width=2 if case == 'operator' else 4))
        m({'operator': lib.ones(1, 3), 'assert': lib.ones(1, 4), 'raise': lib.ones(101, 3)}[case])
    (kt, t), (ke, e) = both(run)
    assert kt == ke == ('RuntimeError' if case == 'operator' else 'Error')
    assert t.splitlines()[0] == e.splitlines()[0]
    cause = {'operator': 'RuntimeError: ', 'assert': 'RuntimeError: AssertionError: bad shape',
             'raise': 'builtins.ValueError: too big'}[case]
    assert cause in t and cause in e       # (pytest's assert rewriting adds lines to this file's assert)


def test_a_scripted_module_takes_scripted_submodules_only():
    def run(lib):
        m = lib.jit.script(_scriptable(lib))
        m.lin = lib.jit.script(lib.nn.Linear(3, 4))
        m.lin = lib.nn.Linear(3, 4)
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'RuntimeError' and t == e


def test_script_with_the_jit_disabled_returns_the_module(monkeypatch):
    monkeypatch.setenv('PYTORCH_JIT', '0')
    m = ember.nn.Linear(2, 2)
    assert ember.jit.script(m) is m


def test_jit_isinstance_checks_typing_generics_eagerly():
    """MONAI's BasicUNet calls torch.jit.isinstance in its forward."""
    import typing
    from typing import Dict, List, Optional, Tuple, Union
    cases = [(lambda L: L.zeros(2), 'T'), (lambda L: None, 'T'), (lambda L: [L.zeros(2)], List['T']),
             (lambda L: {'a': L.zeros(2)}, Dict[str, 'T']), (lambda L: [1], List['T']), (lambda L: [], List[int]),
             (lambda L: (1, L.zeros(1)), Tuple[int, 'T']), (lambda L: (1,), Tuple[int, int]),
             (lambda L: None, Optional[int]), (lambda L: 'a', Union[int, str]), (lambda L: [[1.]], list[list[int]]),
             (lambda L: 1, (str, int)), (lambda L: 1, [int]), (lambda L: [1], list), (lambda L: {}, dict),
             (lambda L: [1], typing.List), (lambda L: {'a': [L.zeros(1)]}, Dict[str, List['T']])]

    def resolve(tp, L):
        if tp == 'T':
            return L.Tensor
        if isinstance(tp, (list, tuple)):
            return type(tp)(resolve(t, L) for t in tp)
        args = typing.get_args(tp)
        if args and any(a == 'T' or typing.get_args(a) for a in args):
            return typing.get_origin(tp)[tuple(resolve(a, L) for a in args)] if typing.get_origin(tp) in (
                list, dict, tuple) else {List: List, Dict: Dict, Tuple: Tuple}[getattr(typing, tp._name)][
                tuple(resolve(a, L) for a in args)]
        return tp

    for make, tp in cases:
        def run(lib):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                r = lib.jit.isinstance(make(lib), resolve(tp, lib))
            return r, [str(m.message) for m in w]
        assert both(run)[0] == both(run)[1], tp


def test_jit_attribute_and_fusion_settings():
    def run(lib):
        a = lib.jit.Attribute(3, int)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with lib.jit.strict_fusion():
                pass
            old = lib.jit.set_fusion_strategy([('STATIC', 3)])
            back = lib.jit.set_fusion_strategy(old)
        return repr(a), a.value, a.type, tuple(a), old, back, [str(m.message) for m in w], \
            lib.jit.onednn_fusion_enabled()
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


def test_a_real_tensor_is_no_fake_tensor():
    """transformers' is_tracing(t) asks isinstance(t, FakeTensor): every eager run looked like a trace."""
    import torch._subclasses.fake_tensor as TF
    import ember._subclasses.fake_tensor as EF
    for lib, F in ((torch, TF), (ember, EF)):
        x = lib.ones(2)
        assert not isinstance(x, F.FakeTensor) and not isinstance(x, lib._subclasses.FakeTensor)
        with F.FakeTensorMode() as mode:
            assert isinstance(mode.from_tensor(x), F.FakeTensor)
    assert issubclass(EF.FakeTensor, ember.Tensor)


@pytest.mark.parametrize('call', ['squeeze', 'squeeze_', 'count_nonzero', 'squeeze_one', 'squeeze_list'])
def test_a_methods_only_int_list_takes_varargs(call):
    """transformers' speculative sampling calls q.squeeze(0, 1)."""
    def run(lib):
        x = lib.zeros(1, 1, 3)
        r = {'squeeze': lambda: x.squeeze(0, 1), 'squeeze_': lambda: x.clone().squeeze_(0, 1),
             'count_nonzero': lambda: x.count_nonzero(0, 1), 'squeeze_one': lambda: x.squeeze(1),
             'squeeze_list': lambda: x.squeeze([0, 2])}[call]()
        return tuple(r.shape)
    assert both(run)[0] == both(run)[1]


@pytest.mark.parametrize('dtype', ['float32', 'float16', 'bfloat16', 'complex64', 'float64', 'int32'])
@pytest.mark.parametrize('op', ['cumsum', 'cumprod'])
def test_cumulative_ops_carry_torchs_accumulator(op, dtype):
    """Every diffusers scheduler computes alphas_cumprod = cumprod(1 - betas): torch carries a float32 running
    product in double, so ember's float32 one drifted (timesteps 998 for 999)."""
    import numpy as np
    rng = np.random.default_rng(0)
    n = 3000 if op == 'cumsum' else 1000
    base = rng.uniform(0.9, 1.0, (4, n)) if op == 'cumprod' else rng.uniform(0, 1, (4, n))
    if dtype == 'complex64':
        base = base + 1j * rng.uniform(-0.01, 0.01, base.shape)
    if dtype == 'int32':
        base = rng.integers(-3, 4, (4, n)) if op == 'cumsum' else rng.integers(1, 2, (4, n))

    def run(lib):
        x = lib.tensor(base).to(getattr(lib, dtype))
        r = getattr(lib, op)(x, 1)
        return r.to(lib.complex128 if dtype == 'complex64' else lib.float64).numpy()
    (_, t), (_, e) = both(run)
    np.testing.assert_array_equal(e, t)


def _double_rounding_values():
    """Doubles whose float16 differs when rounded directly and through float32 (torch's way)."""
    import numpy as np
    base = np.random.default_rng(0).uniform(0, 2000, 400000)
    return base[base.astype(np.float16) != base.astype(np.float32).astype(np.float16)][:8]


@pytest.mark.parametrize('how', ['to', 'tensor_list', 'tensor_scalar', 'full', 'fill_', 'index_fill', 'masked_fill',
                                 'where', 'add', 'new_full', 'copy_', 'bfloat16_to', 'from_int64'])
def test_half_values_are_made_through_float32_as_torchs(how):
    """torch makes a Half or BFloat16 from a float, so a double rounds twice (a cumsum test of diffusers' met the
    difference through torch.tensor(...).half())."""
    import numpy as np
    vals = _double_rounding_values()

    def run(lib):
        h = lib.float16
        out = []
        for v in vals.tolist():
            out.append({'to': lambda: lib.tensor([v]).to(h), 'tensor_list': lambda: lib.tensor([v], dtype=h),
                        'tensor_scalar': lambda: lib.tensor(v, dtype=h), 'full': lambda: lib.full((1,), v, dtype=h),
                        'fill_': lambda: lib.zeros(1, dtype=h).fill_(v),
                        'index_fill': lambda: lib.zeros(1, dtype=h).index_fill(0, lib.tensor([0]), v),
                        'masked_fill': lambda: lib.zeros(1, dtype=h).masked_fill(lib.tensor([True]), v),
                        'where': lambda: lib.where(lib.tensor([True]), v, lib.zeros(1, dtype=h)),
                        'add': lambda: lib.zeros(1, dtype=h) + v, 'new_full': lambda: lib.zeros(1, dtype=h).new_full((1,), v),
                        'copy_': lambda: lib.zeros(1, dtype=h).copy_(lib.tensor([v], dtype=lib.float64)),
                        'bfloat16_to': lambda: lib.tensor([v * 1e3]).to(lib.bfloat16),
                        'from_int64': lambda: lib.tensor([int(v * 1e5)]).to(lib.bfloat16)}[how]().item())
        return out
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok'
    np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize('case', ['cl+x', 'x+cl', 'cl*x', 'cl-bias', 'bias+cl', 't+c', 'c+t', 't*2', 'cl+expanded',
                                  'atan2', 'cl+double', 'lerp', 'addcmul'])
def test_pointwise_results_follow_the_first_operands_layout(case):
    """torch's TensorIterator lays a result out as its first operand where the operands' layouts conflict: the
    residual add after diffusers' attention stays channels_last, and randn_like of it draws in that order."""
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(2, 3, 4, 5)
        cl = x.contiguous(memory_format=lib.channels_last)
        t, c = x.transpose(1, 3), lib.randn(2, 5, 4, 3)
        bias = lib.randn(1, 3, 1, 1)
        r = {'cl+x': lambda: cl + x, 'x+cl': lambda: x + cl, 'cl*x': lambda: cl * x, 'cl-bias': lambda: cl - bias,
             'bias+cl': lambda: bias + cl, 't+c': lambda: t + c, 'c+t': lambda: c + t, 't*2': lambda: t * 2,
             'cl+expanded': lambda: cl + x[:, :1].expand(2, 3, 4, 5), 'atan2': lambda: lib.atan2(t, c),
             'cl+double': lambda: cl + x.double(), 'lerp': lambda: lib.lerp(cl, x, 0.3),
             'addcmul': lambda: lib.addcmul(cl, x, x)}[case]()
        return r.stride(), lib.randn_like(r).flatten()[:6].tolist()
    assert both(run)[0] == both(run)[1]


def test_compile_turns_distribution_validation_off_as_torchs(tmp_path):
    """torch.compile's first use in a process (TorchPatcher.patch) sets Distribution.set_default_validate_args(False):
    an invalid Normal then builds without a ValueError. Run in fresh processes (the patch happens once)."""
    import subprocess
    import sys
    prog = tmp_path / 'prog.py'
    prog.write_text("import torch\n"
                    "print(torch.distributions.Distribution._validate_args)\n"
                    "torch.compile(lambda x: x + 1)\n"
                    "print(torch.distributions.Distribution._validate_args)\n"
                    "print(float(torch.distributions.Normal(torch.tensor(0.), torch.tensor(-1.)).scale))\n")
    outs = [subprocess.run(cmd + [str(prog)], capture_output=True, text=True, timeout=300, check=True).stdout.split()
            for cmd in ([sys.executable], [sys.executable, '-m', 'ember', 'run'])]
    assert outs[0] == outs[1] == ['True', 'False', '-1.0']


def test_reduce_lr_on_plateau_steps_through_torchs_methods():
    """ignite reduces one param group only by overriding _reduce_lr."""
    def run(lib):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{'params': [p]}, {'params': [lib.nn.Parameter(lib.ones(1))]}], lr=1.0)
        seen = []

        class OneGroup(lib.optim.lr_scheduler.ReduceLROnPlateau):
            def _reduce_lr(self, epoch):
                seen.append(epoch)
                opt.param_groups[0]['lr'] *= self.factor
        s = OneGroup(opt, factor=0.5, patience=0)
        for m in (1.0, 2.0, 3.0):
            s.step(m)
        return seen, [g['lr'] for g in opt.param_groups], s._is_better(0.5, 1.0), s.mode_worse
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t == e


def test_save_writes_through_a_symlink_and_keeps_the_mode(tmp_path):
    import os
    for lib in (torch, ember):
        real, link = tmp_path / f'{lib.__name__}_real.pt', tmp_path / f'{lib.__name__}_latest.pt'
        real.write_bytes(b'')
        os.chmod(real, 0o640)
        os.symlink(real, link)
        lib.save({'w': lib.ones(3)}, link)
        assert os.path.islink(link) and oct(os.stat(real).st_mode & 0o777) == '0o640'
        assert lib.load(real)['w'].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize('call', ['positional', 'keyword', 'dtype', 'no_values'])
def test_sparse_coo_tensor_of_a_size_only(call):
    def run(lib):
        t = {'positional': lambda: lib.sparse_coo_tensor((5, 3)), 'keyword': lambda: lib.sparse_coo_tensor(size=(5, 3)),
             'dtype': lambda: lib.sparse_coo_tensor(size=(2,), dtype=lib.float64),
             'no_values': lambda: lib.sparse_coo_tensor(lib.zeros(1, 0, dtype=lib.int64), size=(3,))}[call]()
        return str(t.layout)[6:], str(t.dtype)[6:], tuple(t.shape), t._nnz()
    (kt, t), (ke, e) = both(run)
    assert kt == ke and (kt != 'ok' or t == e)


@pytest.mark.parametrize('value', [['a', 'b'], [1.0, 2.0], {'a': 1}, None])
def test_tensorboard_add_scalar_refuses_what_torchs_make_np_refuses(value, tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TW
    from ember.utils.tensorboard import SummaryWriter as EW
    out = []
    for W, d in ((TW, tmp_path / 't'), (EW, tmp_path / 'e')):
        w = W(str(d))
        try:
            w.add_scalar('x', value, 1)
            out.append('ok')
        except Exception as e:      # noqa: BLE001 - compared
            out.append((type(e).__name__, str(e)))
        w.close()
    assert out[0] == out[1] and out[0][0] == 'NotImplementedError'


@pytest.mark.parametrize('shapes', [((2,), (3,)), ((1, 2), (3, 1), (4, 1, 5)), ((2, 3), (4, 3), (5, 3)), ((), (2,)),
                                    ((2,), (1, 3)), (3, (2, 1)), ((0, 1), (1, 4)), ((2, -1),), ()])
def test_broadcast_shapes_as_torchs(shapes):
    """botorch matches broadcast_shapes' message with a regex."""
    (kt, t), (ke, e) = both(lambda lib: tuple(lib.broadcast_shapes(*shapes)))
    assert (kt, t) == (ke, e)


@pytest.mark.parametrize('dtype,digits', [('float32', 20), ('float64', 100)])
def test_log_ndtr_gradient_is_torchs_formula_far_in_the_tail(dtype, digits):
    """log_ndtr is an operator with torch's derivative, grad * exp(-(result + x^2/2)) / sqrt(2 pi), whose
    cancellation gives inf or 0 far in the lower tail; botorch's test asserts the infs."""
    import numpy as np

    def run(lib):
        ten = lib.tensor(10, dtype=getattr(lib, dtype))
        d = lib.arange(0, digits, dtype=getattr(lib, dtype))
        x = lib.cat((-(ten ** d.flip(-1)), ten ** d)).requires_grad_()
        y = lib.special.log_ndtr(x)
        y.sum().backward()
        return type(y.grad_fn).__name__, y.detach().double().numpy(), x.grad.double().numpy()
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok' and t[0] == e[0]
    np.testing.assert_allclose(e[2], t[2], rtol=1e-5)       # the infs and zeros where torch has them
    np.testing.assert_allclose(e[1], t[1], rtol=1e-6)


@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('upper', [True, False])
def test_solve_triangular_of_a_singular_matrix_gives_infs_as_torchs(left, upper):
    """torch's trsm does not check the diagonal (botorch's cached-root test meets a zero pivot)."""
    import numpy as np
    A = np.array([[[2., 1., 0.], [1., 0., 1.], [3., 1., 4.]], [[0., 0., 0.], [0., 0., 0.], [0., 0., 0.]]])
    B = np.arange(6.).reshape(3, 2) if left else np.arange(6.).reshape(2, 3)

    def run(lib):
        return lib.linalg.solve_triangular(lib.tensor(A), lib.tensor(B), upper=upper, left=left).numpy()
    (kt, t), (ke, e) = both(run)
    assert kt == ke == 'ok'
    np.testing.assert_allclose(e, t, rtol=1e-12)


@pytest.mark.parametrize('pair', [(1.0, 'f64'), (1.0, 'f32'), ('f32', 'f64'), (1, 'i64'), (1, 1.0), (True, 'b'),
                                  (1.0, 1.1), ('i32', 'i64'), (1, 2), (1 + 1j, 1 + 2j), (float('nan'), 1.0),
                                  (True, False), (1.0, 0.0)])
def test_assert_close_of_numbers_as_torchs(pair):
    """botorch compares a Python float with a NumPy float64 (torch: the number it holds)."""
    import numpy as np
    conv = {'f64': np.float64(1.0), 'f32': np.float32(1.0), 'i64': np.int64(1), 'i32': np.int32(1), 'b': np.bool_(True)}
    a, b = (conv.get(x, x) if isinstance(x, str) else x for x in pair)
    (kt, t), (ke, e) = both(lambda lib: lib.testing.assert_close(a, b))
    assert (kt, t) == (ke, e)


@pytest.mark.parametrize('case', ['same', 'dtypes', 'values', 'shapes'])
def test_assert_close_of_numpy_arrays_as_torchs(case):
    import numpy as np
    a = np.ones(4)
    b = {'same': np.ones(4), 'dtypes': np.ones(4, np.float32), 'values': np.ones(4) + 1e-3,
         'shapes': np.ones((2, 2))}[case]
    (kt, t), (ke, e) = both(lambda lib: lib.testing.assert_close(a, b))
    assert kt == ke and (kt == 'ok' or t.splitlines()[0].replace('torch.', '') == e.splitlines()[0].replace('ember.', ''))
