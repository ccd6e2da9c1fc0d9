"""The dispatcher and ember.library: priority order, fallbacks, caching, modes, tracing, schemas."""
import numpy as np
import pytest

import ember
from ember.library import Library
from ember._core.dispatch_key import DispatchKey, keyset, highest, keyset_names
from ember._dispatch.schema import parse_schema
from ember._dispatch.modes import EmberDispatchMode


def test_keyset_priority_order():
    ks = keyset(DispatchKey.CPU, DispatchKey.Autograd, DispatchKey.Python, DispatchKey.AutocastCPU)
    assert highest(ks) == DispatchKey.Python
    assert highest(keyset(DispatchKey.CPU, DispatchKey.Autograd)) == DispatchKey.Autograd
    assert keyset_names(ks) == 'DispatchKeySet(Python, AutocastCPU, Autograd, CPU)'


def test_schema_parsing():
    s = parse_schema('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor')
    assert (s.name, s.overload) == ('add', 'Tensor')
    assert [(a.name, a.type, a.kwarg_only) for a in s.arguments] == [
        ('self', 'Tensor', False), ('other', 'Tensor', False), ('alpha', 'Scalar', True)]
    assert s.arguments[2].default == 1
    s = parse_schema('max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)')
    assert s.returns == ('Tensor', 'Tensor')
    s = parse_schema('add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)')
    assert s.arguments[0].is_write and s.is_mutable
    s = parse_schema('conv(Tensor x, int[2] stride=1, int[]? dims=None, float eps=1e-05) -> Tensor')
    assert s.arguments[1].default == (1, 1) and s.arguments[2].optional and s.arguments[3].default == 1e-05
    with pytest.raises(ValueError):
        parse_schema('broken(Tensor -> Tensor')


def test_generated_entry_point_checks_types():
    with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor"):
        ember.add(ember.ones(2), 'x')
    with pytest.raises(TypeError):
        ember.ones(2).view('a')


def test_library_define_impl_and_ops_namespace():
    with Library('tlib', 'DEF') as lib:
        lib.define('twice(Tensor x) -> Tensor')
        lib.impl('twice', lambda a: a * 2, 'CPU')
        out = ember.ops.tlib.twice(ember.tensor([1., 2.]))
        assert out.tolist() == [2., 4.]
        assert ember.ops.tlib.twice.default(ember.tensor([3.])).tolist() == [6.]
    with pytest.raises(AttributeError):
        ember.ops.tlib.twice


def test_registering_twice_raises():
    with Library('tlib2', 'DEF') as lib:
        lib.define('f(Tensor x) -> Tensor')
        lib.impl('f', lambda a: a, 'CPU')
        with pytest.raises(RuntimeError, match='already a kernel registered'):
            lib.impl('f', lambda a: a, 'CPU')
        with pytest.raises(RuntimeError, match='multiple times'):
            lib.define('f(Tensor x) -> Tensor')


def test_priority_autograd_before_backend_and_redispatch():
    calls = []
    with Library('tlib3', 'DEF') as lib:
        lib.define('g(Tensor x) -> Tensor')
        lib.impl('g', lambda a: (calls.append('cpu'), a + 1)[1], 'CPU')

        def ag(ks, x):
            calls.append('autograd')
            return ember.ops.tlib3.g.default.redispatch(ks & ember._core.dispatch_key.below(DispatchKey.Autograd), x)
        lib.impl('g', ag, 'Autograd', with_keyset=True)
        ember.ops.tlib3.g(ember.ones(2))
        assert calls == ['cpu']                 # no Autograd key without requires_grad
        calls.clear()
        ember.ops.tlib3.g(ember.ones(2, requires_grad=True))
        assert calls == ['autograd', 'cpu']


def test_fallback_order_composite_explicit_perkey_and_error():
    with Library('tlib4', 'DEF') as lib:
        lib.define('h(Tensor x) -> Tensor')
        with pytest.raises(NotImplementedError, match=r"Could not run 'tlib4::h' with arguments from the 'CPU' backend"):
            ember.ops.tlib4.h(ember.ones(2))
        lib.impl('h', lambda x: x * 3, 'CompositeExplicitAutograd')
        assert ember.ops.tlib4.h(ember.ones(1)).item() == 3        # cache was invalidated
        lib.impl('h', lambda x: x * 5, 'CompositeImplicitAutograd')
        assert ember.ops.tlib4.h(ember.ones(1)).item() == 5        # implicit beats explicit at a backend key
        lib.impl('h', lambda a: a * 7, 'CPU')
        assert ember.ops.tlib4.h(ember.ones(1)).item() == 7        # a direct kernel beats both


def test_per_key_fallback_for_all_operators():
    seen = []
    with Library('_', 'FRAGMENT') as lib:
        def fb(op, ks, *args):
            seen.append(op.name)
            return op.redispatch(ks & ember._core.dispatch_key.below(DispatchKey.AutocastCPU), *args)
        lib.fallback(fb, 'AutocastCPU', with_keyset=True)
        st = ember._dispatch.dispatcher.STATE
        st.include |= 1 << DispatchKey.AutocastCPU
        try:
            (ember.ones(2) * 2).tolist()
        finally:
            st.include &= ~(1 << DispatchKey.AutocastCPU)
    assert seen == ['aten::ones', 'aten::mul.Tensor']


def test_cache_is_used_and_cleared():
    op = ember.ops.aten.mul.Tensor
    ember.ones(2) * 2
    assert op.cache                       # resolved once, cached by key set
    with Library('tlib5', 'DEF') as lib:
        lib.define('k(Tensor x) -> Tensor')
        lib.impl('k', lambda a: a, 'CPU')
        k = ember.ops.tlib5.k.default
        k(ember.ones(2))
        assert op.cache and k.cache       # another operator's kernel leaves mul's resolution alone
        lib.impl('k', lambda a: a * 3, 'Meta')
        assert not k.cache and op.cache   # a kernel registered for k clears k's cache only
        assert ember.ops.tlib5.k.default(ember.ones(2)).tolist() == [1.0, 1.0]
    ember.ones(2) * 2
    assert op.cache
    from ember._dispatch import dispatcher
    from ember._core.dispatch_key import DispatchKey
    dispatcher.register_fallback(DispatchKey.PrivateUse1, lambda op_, ks, *args: None)
    try:
        assert not op.cache               # a fallback may change any operator's resolution: every cache clears
    finally:
        dispatcher.unregister_fallback(DispatchKey.PrivateUse1)


class Recorder(EmberDispatchMode):
    def __init__(self, tag, log):
        self.tag, self.log = tag, log

    def __ember_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.tag, func.name))
        return func(*args, **(kwargs or {}))


def test_mode_sees_every_call_and_modes_stack():
    log = []
    with Recorder('outer', log):
        with Recorder('inner', log):
            y = ember.ones(3) + 1
    assert log == [('inner', 'aten::ones'), ('outer', 'aten::ones'),
                   ('inner', 'aten::add.Tensor'), ('outer', 'aten::add.Tensor')]
    assert y.tolist() == [2., 2., 2.]
    log.clear()
    ember.ones(2) + 1
    assert log == []                      # the Python key is gone once the modes exit


def test_mode_can_replace_results():
    class Zero(EmberDispatchMode):
        def __ember_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 0 if func.name == 'aten::add.Tensor' else out
    with Zero():
        r = ember.ones(2) + 5
    assert r.tolist() == [0., 0.]


def test_a_mode_written_for_torch_works_unchanged():
    from ember.utils._python_dispatch import TorchDispatchMode as TDM
    seen = []

    class Count(TDM):         # torch's spelling: only __torch_dispatch__
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))
    with Count():
        r = ember.ones(2) * 3
    assert r.tolist() == [3., 3.] and seen == ['aten.ones.default', 'aten.mul.Tensor']


def test_modes_see_mixed_devices_before_the_check():
    cpu, meta = ember.ones(2), ember.ones(2, device='meta')
    msg = 'Expected all tensors to be on the same device'
    with pytest.raises(RuntimeError, match=msg):
        cpu + meta
    log = []
    with Recorder('only', log):           # a mode that does not resolve the mix: the check runs below it
        with pytest.raises(RuntimeError, match=msg):
            cpu + meta
    assert log == [('only', 'aten::add.Tensor')]

    class ToMeta(EmberDispatchMode):      # one that does (FakeTensorMode's job) runs the call on one device
        def __ember_dispatch__(self, func, types, args=(), kwargs=None):
            args = [a.to('meta') if isinstance(a, ember.Tensor) else a for a in args]
            return func(*args, **(kwargs or {}))
    with ToMeta():
        r = cpu + meta
    assert r.device.type == 'meta' and tuple(r.shape) == (2,)


def test_tensor_data_map_knows_a_saved_output_by_its_data():
    from ember.utils._python_dispatch import TensorDataMap
    x = ember.randn(3, requires_grad=True)
    y = x.tanh()                          # tanh saves its output: backward reads a new handle on it
    m = TensorDataMap()
    m[y] = 'y'
    saved = y.grad_fn._saved_result
    assert saved is not y and m.get(saved) == 'y' and saved in m
    assert m.get(x) is None and m.get(y.detach().clone()) is None
    meta = ember.empty(2, device='meta')  # meta tensors too (their arrays take weak references)
    m[meta] = 'meta'
    assert m.get(meta) == 'meta' and len(m) == 2


def test_trace_dispatch_prints_key_and_kernel():
    with ember.debug.trace_dispatch(file=None) as lines:
        ember.ones(2, requires_grad=True) * 2
    mul = [l for l in lines if 'aten::mul.Tensor' in l]
    assert len(mul) == 2
    assert 'DispatchKeySet(Autograd, CPU)' in mul[0] and '-> Autograd' in mul[0]
    assert '-> CPU' in mul[1] and 'cpu::mul.Tensor' in mul[1]


def test_thread_local_include_set():
    import threading
    log = []
    res = {}

    def other():
        res['t'] = (ember.ones(1) + 1).item()
    with Recorder('m', log):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert res['t'] == 2.0
    assert log == []                      # the other thread's calls bypass this thread's mode


def test_generated_code_shows_in_tracebacks_and_in_debug_source():
    import traceback
    try:
        ember.add(ember.ones(2), ember.ones(3))
    except RuntimeError:
        tb = traceback.format_exc()
    # the frames of the generated entry point and adapter show their source lines
    assert '<ember op aten::add.Tensor>' in tb and '_k(ks, input, other, alpha)' in tb
    assert '<ember adapter cpu::aten::add.Tensor>' in tb and '_meta(self, other, alpha)' in tb
    text = ember.debug.source(ember.add, file=None)
    # (add also takes torch's deprecated scalar-first order: NOTE [deprecated scalar-first overloads])
    assert text.startswith('# entry point: <ember op aten::add.Tensor>\ndef add(input, other, *_dep, alpha=1):')
    assert '# CPU kernel: generated\ndef kernel(_ks, self, other, alpha):' in text
    assert '# Meta kernel: generated' in text
    with pytest.raises(TypeError, match='expects an operator'):
        ember.debug.source(len)


def test_public_functions_show_the_schema_arguments():
    import inspect
    assert str(inspect.signature(ember.add)) == '(input, other, *, alpha=1, out=None)'
    assert str(inspect.signature(ember.nn.functional.linear)) == '(input, weight, bias=None)'
    assert 'requires_grad' in inspect.signature(ember.zeros).parameters
