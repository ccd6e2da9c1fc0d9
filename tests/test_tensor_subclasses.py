"""Tensor subclasses with ``__torch_function__`` and ``__torch_dispatch__`` (NOTE [tensor subclasses]), against torch.

Each case builds the same subclass for both libraries from a factory that takes the library, runs the same
program on both and compares what a user sees: result classes, the calls a handler receives, values, gradients.
"""
import pytest
import torch

import ember


def _libs():
    return [(torch, torch.nn.functional, torch.utils._pytree), (ember, ember.nn.functional, ember.utils._pytree)]


def _plain(lib):
    class M(lib.Tensor):
        pass
    return M


def test_operators_on_a_plain_subclass_return_the_subclass():
    seen = []
    for lib, F, _ in _libs():
        M = _plain(lib)
        x = lib.arange(6.).reshape(2, 3).as_subclass(M)
        results = [x + 1, x[0], x.sum(), lib.add(x, 1), F.relu(x), F.gelu(x), x.max(0).values, x.split(1)[0],
                   lib.cat([lib.ones(2, 3), x]), lib.nn.Linear(3, 2)(x), x.t(), x.clone(), x.to(lib.float64), x.data]
        seen.append(([type(r).__name__ for r in results], type(x.max(0)).__name__, type(x.split(1)).__name__,
                     type(x.tolist()).__name__, [r.tolist() for i, r in enumerate(results[:9]) if i != 5],
                     results[5].reshape(-1).tolist()))
    assert seen[0][:5] == seen[1][:5]
    assert seen[1][5] == pytest.approx(seen[0][5], rel=1e-6)      # gelu: float32 rounding
    assert seen[1][0] == ['M'] * 14


def test_parameters_buffers_and_plain_tensors_give_plain_tensors():
    for lib, _, _ in _libs():
        p = lib.nn.Parameter(lib.ones(2))
        assert type(p * 2) is lib.Tensor and type(p.detach()) is lib.Tensor and type(p.data) is lib.Tensor
        assert type(lib.ones(2) + 1) is lib.Tensor
        b = lib.nn.Buffer(lib.ones(2))
        assert type(b * 2) is lib.Tensor


def test_repr_names_the_subclass():
    reprs = []
    for lib, _, _ in _libs():
        M = _plain(lib)
        x = lib.ones(2, 3).as_subclass(M)
        reprs.append((repr(x), repr(x.t()), repr(lib.nn.Parameter(lib.ones(2)))))
    assert reprs[0] == reprs[1]
    assert reprs[1][0].startswith('M([[1., 1., 1.],\n   [1., 1., 1.]])')


def test_as_subclass_is_an_alias_with_history():
    out = []
    for lib, _, _ in _libs():
        M = _plain(lib)
        leaf = lib.tensor([1., 2., 3.], requires_grad=True)
        y = leaf.as_subclass(M)
        z = (y * y).sum()
        z.backward()
        out.append((y.is_leaf, type(y.grad_fn).__name__, type(z.grad_fn).__name__, leaf.grad.tolist(),
                    y.data_ptr() == leaf.data_ptr(), y._version == leaf._version))
    assert out[0] == out[1]
    assert out[1][:2] == (False, 'AliasBackward0')


def test_make_subclass_makes_a_leaf_sharing_memory():
    out = []
    for lib, _, _ in _libs():
        M = _plain(lib)
        data = lib.zeros(3)
        m = lib.Tensor._make_subclass(M, data, True)
        with lib.no_grad():
            data.add_(1)
        out.append((type(m).__name__, m.requires_grad, m.is_leaf, m.tolist(), m._version))
    assert out[0] == out[1]


def _logging_function_subclass(lib, seen):
    class L(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    return L


def test_torch_function_sees_public_calls_and_methods():
    logs = []
    for lib, F, _ in _libs():
        seen = []
        L = _logging_function_subclass(lib, seen)
        a = lib.ones(2, 2).as_subclass(L)
        _ = a + 1, a[0], a.sum(), lib.relu(a), F.gelu(a), len(a), a.clone(), str(a)
        a.add_(1)
        a[0] = 2
        lib.cat([a, lib.ones(2, 2)])
        lib.stack((a, a))
        lib.nn.Linear(2, 2)(a)
        _ = a[0, 0].item(), a.tolist(), a.to(lib.float64)
        logs.append(seen)
    assert logs[0] == logs[1]
    assert logs[1][:8] == ['add', '__getitem__', 'sum', 'relu', 'gelu', '__len__', 'clone', '__repr__']


def test_torch_function_can_replace_results_and_refuse():
    out = []
    for lib, _, _ in _libs():
        class Answer(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func.__name__ == 'mul':
                    return 42
                if func.__name__ == 'sub':
                    return NotImplemented
                return super().__torch_function__(func, types, args, kwargs)
        x = lib.ones(2).as_subclass(Answer)
        with pytest.raises(TypeError) as err:
            lib.sub(x, 1)
        out.append((x * 3, lib.mul(x, 3), type(x + 1).__name__, err.type))
        with lib._C.DisableTorchFunctionSubclass():
            out.append(((x * 3).tolist(), type(x * 3).__name__))
    assert out[0] == out[2] and out[1] == out[3]
    assert out[2][0] == 42 and out[3] == ([3.0, 3.0], 'Tensor')


def test_disabled_torch_function_keeps_plain_results():
    out = []
    for lib, _, _ in _libs():
        class Quiet(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl
        x = lib.ones(2).as_subclass(Quiet)
        out.append((type(x).__name__, type(x + 1).__name__, type(x[0]).__name__))
    assert out[0] == out[1] == ('Quiet', 'Tensor', 'Tensor')


def _logging_tensor(lib, pytree, log):
    """torch's documented wrapper subclass: no data of its own, unwraps in __torch_dispatch__ and logs the operator."""
    class LoggingTensor(lib.Tensor):
        __slots__ = ['elem']

        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                  storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                                  layout=elem.layout, device=elem.device, requires_grad=requires_grad)
            r.elem = elem.detach() if requires_grad else elem
            return r

        def __repr__(self):
            return f'LoggingTensor({self.elem})'

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            unwrap = lambda e: e.elem if isinstance(e, LoggingTensor) else e
            wrap = lambda e: LoggingTensor(e) if isinstance(e, lib.Tensor) else e
            out = func(*pytree.tree_map(unwrap, args), **pytree.tree_map(unwrap, kwargs or {}))
            log.append(str(func))
            return pytree.tree_map(wrap, out)

        __torch_function__ = lib._C._disabled_torch_function_impl
    return LoggingTensor


def test_wrapper_subclass_geometry_and_autograd():
    out = []
    for lib, _, pytree in _libs():
        log = []
        LT = _logging_tensor(lib, pytree, log)
        x = LT(lib.tensor([1., 2., 3.]), requires_grad=True)
        meta = (type(x).__name__, tuple(x.shape), x.stride(), str(x.dtype).split('.')[1], x.device.type,
                x.requires_grad, x.is_leaf)
        y = (x * 2 + 1).sin()
        y.backward(LT(lib.ones(3)))
        out.append((meta, type(y).__name__, type(y.grad_fn).__name__, type(x.grad).__name__,
                    x.grad.elem.tolist(), list(log)))
    assert out[0][:4] == out[1][:4]
    assert out[0][4] == pytest.approx(out[1][4])
    assert out[0][5] == out[1][5]
    assert out[1][5][:3] == ['aten.mul.Tensor', 'aten.add.Tensor', 'aten.sin.default']


def test_wrapper_subclass_sees_the_seed_and_composites_decomposed():
    out = []
    for lib, F, pytree in _libs():
        log = []
        LT = _logging_tensor(lib, pytree, log)
        x = LT(lib.tensor([1., 2., 3.]), requires_grad=True)
        (x * x).sum().backward()
        seed = [f for f in log if 'like' in f or 'expand' in f]
        log.clear()
        z = F.linear(LT(lib.ones(2, 3)), LT(lib.ones(4, 3)))
        linear = list(log)
        log.clear()
        w = LT(lib.arange(6.).reshape(2, 3))
        rows = (w[0].elem.tolist(), w.t().stride(), w.sum().item())
        out.append((seed, linear, z.elem.tolist(), rows, log[-1]))
    assert out[0] == out[1]
    assert out[1][0] == ['aten.ones_like.default', 'aten.expand.default']
    assert out[1][1] == ['aten.t.default', 'aten.mm.default']
    assert out[1][4] == 'aten._local_scalar_dense.default'


def test_returning_notimplemented_from_torch_dispatch_is_a_type_error():
    for lib, _, _ in _libs():
        class Nope(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
            __torch_function__ = lib._C._disabled_torch_function_impl
        with pytest.raises(TypeError, match='Multiple dispatch failed'):
            lib.add(Nope(lib.ones(2)), 1)


def test_subclass_with_data_and_torch_dispatch_calls_super():
    """A subclass holding real data whose handler defers to Tensor's (the disabled) implementation."""
    out = []
    for lib, _, _ in _libs():
        seen = []

        class Counting(lib.Tensor):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return super().__torch_dispatch__(func, types, args, kwargs)
            __torch_function__ = lib._C._disabled_torch_function_impl
        c = lib.Tensor._make_subclass(Counting, lib.tensor([1., 2.]))
        r = c * 3
        out.append((type(r).__name__, r.tolist(), seen))
    assert out[0] == out[1]
    assert out[1] == ('Tensor', [3.0, 6.0], ['aten.mul.Tensor'])


def test_plain_tensors_carry_no_subclass_keys():
    """The mechanism costs ordinary tensors nothing: their key sets are those of their device and autograd."""
    from ember._core.dispatch_key import PYTHON_SUBCLASS_BIT, TORCH_FUNCTION_BIT
    x = ember.ones(2, requires_grad=True)
    p = ember.nn.Parameter(ember.ones(2))
    for t in (x, x * 2, x[0], p, p * 2):
        assert not t._keys & (PYTHON_SUBCLASS_BIT | TORCH_FUNCTION_BIT)
    m = x.as_subclass(_plain(ember))
    assert m._keys & TORCH_FUNCTION_BIT and not m._keys & PYTHON_SUBCLASS_BIT


def test_subclass_constructors_as_torchs_documentation_writes_them():
    """``super().__new__(cls, data)`` in a subclass's ``__new__``, an ``__init__`` taking extra arguments, the
    legacy constructor on a subclass, and a Parameter subclass."""
    out = []
    for lib, _, _ in _libs():
        class MetadataTensor(lib.Tensor):
            @staticmethod
            def __new__(cls, x, extra_data, *args, **kwargs):
                return super().__new__(cls, x, *args, **kwargs)

            def __init__(self, x, extra_data):
                self.extra_data = extra_data

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                r = super().__torch_function__(func, types, args, kwargs)
                if isinstance(r, MetadataTensor) and not hasattr(r, 'extra_data'):
                    r.extra_data = 'propagated'
                return r

        class Legacy(lib.Tensor):
            pass

        class P(lib.nn.Parameter):
            pass
        m = MetadataTensor([[1, 2], [3, 4]], {'a': 1})
        t = Legacy([1., 2.])
        p = P(lib.ones(2))
        out.append((type(m).__name__, m.extra_data, str(m.dtype).split('.')[1], (m + 1).extra_data,
                    type(m.sum()).__name__, repr(t), t.requires_grad, repr(Legacy(lib.ones(2)) * 2),
                    type(p).__name__, type(p * 2).__name__, p.requires_grad, tuple(lib.Tensor(2, 3).shape)))
    assert out[0] == out[1]


class Saved(torch.Tensor):
    pass


class SavedEmber(ember.Tensor):
    pass


def test_save_load_and_pickle_keep_the_subclass_and_its_attributes(tmp_path):
    import io
    import pickle
    out = []
    for lib, cls in ((torch, Saved), (ember, SavedEmber)):
        x = lib.arange(4.).as_subclass(cls)
        x.tag = 'hello'
        buf = io.BytesIO()
        lib.save({'x': x}, buf)
        buf.seek(0)
        y = lib.load(buf, weights_only=False)['x']
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError):
            lib.load(buf)                       # the class is not an allowed global
        buf.seek(0)
        with lib.serialization.safe_globals([cls]):
            z = lib.load(buf)['x']
        w = pickle.loads(pickle.dumps(x))
        out.append([(type(t).__name__, t.tag, t.tolist()) for t in (y, z, w)] +
                   [type(x.new_zeros(2)).__name__, type(lib.zeros_like(x)).__name__])
    norm = lambda o: [(t[0].replace('SavedEmber', 'Saved'), *t[1:]) if isinstance(t, tuple)
                      else t.replace('SavedEmber', 'Saved') for t in o]
    assert norm(out[1]) == out[0]
    assert out[0][0] == ('Saved', 'hello', [0.0, 1.0, 2.0, 3.0])


def test_dict_holds_only_the_users_attributes():
    """fastai replaces a result's __dict__ with a copy of its input's, MONAI updates it (NOTE [tensor __dict__])."""
    import copy
    out = []
    for lib, _, _ in _libs():
        class Meta(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                ret = super().__torch_function__(func, types, args, kwargs)
                if isinstance(ret, Meta):
                    ret.__dict__.update(args[0].__dict__)
                return ret
        m = lib.arange(4.).as_subclass(Meta)
        m.foo = 'meta'
        r = m + 1
        y = lib.zeros(4).as_subclass(Meta)
        y.__dict__ = copy.copy(m.__dict__)
        out.append((r.as_subclass(lib.Tensor).tolist(), tuple(r.sum().shape), dict(r.__dict__), y.tolist(), vars(y),
                    dict(lib.ones(2).__dict__), dict(vars(lib.nn.Parameter(lib.ones(2)))), 'foo' in m.__dict__,
                    len(m.__dict__)))
        if lib is ember:        # torch's deepcopy refuses a subclass without new_empty of its own; ember's copies
            d = copy.deepcopy(m)
            out.append((type(d).__name__, d.foo, d.tolist()))
    assert out[0] == out[1]
    assert out[2] == ('Meta', 'meta', [0.0, 1.0, 2.0, 3.0])


def test_dict_of_a_subclass_with_a_plain_python_mixin():
    """MONAI's MetaTensor(MetaObj, Tensor): the mixin's own __dict__ descriptor precedes Tensor's in the MRO."""
    out = []
    for lib, _, _ in _libs():
        class MetaObj:
            def copy_meta_from(self, other, copy_attr=True):
                first = other.__dict__
                if not copy_attr:
                    self.__dict__ = {a: first[a] for a in first.keys()}
                else:
                    self.__dict__.update({a: first[a] for a in first.keys()})
                return self

        class MetaTensor(MetaObj, lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                ret = super().__torch_function__(func, types, args, kwargs)
                if isinstance(ret, MetaTensor):
                    ret.copy_meta_from(args[0], copy_attr=func.__name__ != 'sum')
                return ret
        m = lib.arange(12.).reshape(3, 4).as_subclass(MetaTensor)
        m.meta = {'affine': 1}
        s, r = m.sum(), m + 1
        out.append((tuple(s.shape), s.item(), r.as_subclass(lib.Tensor).tolist(), r.meta, sorted(vars(m)),
                    isinstance(m, MetaObj)))
    assert out[0] == out[1]


def _two_tensor(lib, pytree):
    """torch's TwoTensor test subclass: every operator runs on both halves; mutating operators return their input
    (read from the schema's alias information, as torch's subclasses do)."""
    class TwoTensor(lib.Tensor):
        @staticmethod
        def __new__(cls, a, b):
            return lib.Tensor._make_wrapper_subclass(cls, a.shape, strides=a.stride(), storage_offset=a.storage_offset(),
                                                     device=a.device, layout=a.layout, requires_grad=a.requires_grad,
                                                     dtype=a.dtype)

        def __init__(self, a, b):
            self.a, self.b = a, b

        @classmethod
        def __torch_dispatch__(cls, func, types, args, kwargs=None):
            kwargs = kwargs or {}
            half = lambda which: [pytree.tree_map_only(TwoTensor, lambda x: getattr(x, which), v) for v in (args, kwargs)]
            (aa, ka), (ab, kb) = half('a'), half('b')
            out_a, out_b = func(*aa, **ka), func(*ab, **kb)
            ret = func._schema.returns
            if isinstance(out_a, lib.Tensor) and ret and ret[0].alias_info is not None and ret[0].alias_info.is_write:
                return args[0]
            if isinstance(out_a, lib.Tensor):
                return TwoTensor(out_a, out_b)
            if isinstance(out_a, (tuple, list)):
                return type(out_a)(TwoTensor(x, y) for x, y in zip(out_a, out_b))
            return out_a
    return TwoTensor


def test_two_tensor_views_inplace_and_autograd():
    out = []
    for lib, _, pytree in _libs():
        TT = _two_tensor(lib, pytree)
        t = TT(lib.ones(2, 3), lib.zeros(2, 3))
        s = t + 1
        v = t.view(3, 2)
        same = t.add_(2)
        c = lib.cat([t, t])
        x = TT(lib.ones(3, requires_grad=True), lib.full((3,), 2., requires_grad=True))
        (x * x).sum().backward()
        piece = t.split(1)[0]
        out.append((s.a.tolist(), s.b.tolist(), tuple(v.shape), t.t().stride(), same is t, t.a.tolist(), t.b.tolist(),
                    tuple(c.shape), type(x.grad).__name__, x.grad.a.tolist(), x.grad.b.tolist(), piece.b.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize('name', ['add_.Tensor', 'split.Tensor', 'max.dim', 'amax.default', 'view.default',
                                  'mul.Tensor', 'copy_.default', 'transpose.int', 'native_layer_norm.default'])
def test_op_schema_as_torch_reports_it(name):
    """``func._schema`` inside a handler: names, arguments, defaults and alias information as torch's."""
    def describe(op):
        s = op._schema
        arg = lambda a: (a.name, a.kwarg_only, a.default_value, a.has_default_value(), a.is_write, a.is_out,
                         None if a.alias_info is None else (a.alias_info.is_write, sorted(a.alias_info.before_set)))
        return (s.name, s.overload_name, s.is_mutable, [arg(a) for a in s.arguments],
                [(r.name, None if r.alias_info is None else r.alias_info.is_write) for r in s.returns],
                op.name(), str(op.overloadpacket), op._overloadname, op.is_view)
    packet, overload = name.split('.')
    got = describe(getattr(getattr(ember.ops.aten, packet), overload))
    want = describe(getattr(getattr(torch.ops.aten, packet), overload))
    assert got == want


def test_return_and_correct_aliasing_and_dispatch_mode_helpers():
    out = []
    for lib, _, pytree in _libs():
        pd = __import__(lib.__name__ + '.utils._python_dispatch', fromlist=['x'])

        class Wrap(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

            def __init__(self, elem):
                self.elem = elem

            def __tensor_flatten__(self):
                return ['elem'], None

            @staticmethod
            def __tensor_unflatten__(inner, meta, size, stride):
                return Wrap(inner['elem'])

            @classmethod
            def __torch_dispatch__(cls, func, types, args, kwargs=None):
                kwargs = kwargs or {}
                raw = func(*pytree.tree_map_only(Wrap, lambda x: x.elem, args),
                           **pytree.tree_map_only(Wrap, lambda x: x.elem, kwargs))
                wrapped = pytree.tree_map_only(lib.Tensor, Wrap, raw)
                return pd.return_and_correct_aliasing(func, args, kwargs, wrapped)
            __torch_function__ = lib._C._disabled_torch_function_impl
        w = Wrap(lib.arange(6.).reshape(2, 3))
        same = w.mul_(2)
        v = w.view(3, 2)
        pieces = w.split(1)
        out.append((same is w, v._base is w, v._is_view(), pieces[0]._base is w, w.elem.tolist(),
                    pd.is_traceable_wrapper_subclass(w), pd.is_traceable_wrapper_subclass(lib.ones(1)),
                    pd._get_current_dispatch_mode(), pd._len_torch_dispatch_stack()))

        class Log(pd.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        with Log() as m:
            inner = (pd._get_current_dispatch_mode() is m, pd._len_torch_dispatch_stack())
            with pd._disable_current_modes() as modes:
                off = (pd._len_torch_dispatch_stack(), modes == [m])
            inner += off + (pd._len_torch_dispatch_stack(),)
        out.append(inner)
    assert out[0] == out[2] and out[1] == out[3]
    assert out[0][:4] == (True, True, True, True)


def test_refusals_read_as_torchs():
    """An operator (torch's C++ functions) says "Multiple dispatch failed"; a function written in Python (F.relu)
    says "no implementation found"."""
    out = []
    for lib, F, _ in _libs():
        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        a = lib.ones(2).as_subclass(A)
        msgs = []
        for call in (lambda: lib.add(a, 1), lambda: a[0], lambda: F.relu(a), lambda: a.sum(), lambda: a.shape,
                     lambda: a + 1):
            with pytest.raises(TypeError) as err:
                call()
            msgs.append(str(err.value).replace(lib.__name__ + '.', 'LIB.').replace('test_tensor_subclasses.', ''))
        out.append(msgs)
    assert out[0] == out[1]


def test_a_subclass_made_in_a_function_is_not_kept_alive():
    import gc
    import weakref

    def make():
        class Temp(ember.Tensor):
            pass
        t = ember.ones(2).as_subclass(Temp)
        assert type(t + 1) is Temp
        return weakref.ref(Temp)
    ref = make()
    gc.collect()
    assert ref() is None
