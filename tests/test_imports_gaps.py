"""Names torchao, torchtune, torchopt, avalanche and learn2learn reach at import, compared with torch 2.13."""
import importlib
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember


def _same(e, t):
    assert e.dtype.name == str(t.dtype).split('.')[-1]
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def _raises_like(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    assert str(ee.value) == str(te.value)


# --- dtypes, Tag -------------------------------------------------------------------------------------------

@pytest.mark.parametrize('name', [f'{u}int{b}' for u in ('u', '') for b in range(1, 8)])
def test_sub_byte_dtypes(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert (e.itemsize, e.is_signed, e.is_floating_point, e.is_complex) == \
        (t.itemsize, t.is_signed, t.is_floating_point, t.is_complex)
    assert repr(e) == repr(t).replace('torch', 'ember')
    assert pickle.loads(pickle.dumps(e)) is e
    with pytest.raises(TypeError):
        torch.iinfo(t)
    with pytest.raises(TypeError):
        ember.iinfo(e)


def test_tag():
    assert [m.name for m in ember.Tag] == [m for m in torch.Tag.__members__]
    assert ember._C.Tag is ember.Tag
    assert str(ember.Tag.core) == str(torch.Tag.core)
    assert ember.Tag.pointwise in ember.ops.aten.add.Tensor.tags or 'pointwise' not in ember.ops.aten.add.Tensor.tags


# --- small helpers ---------------------------------------------------------------------------------------------

def test_warn_once():
    from ember._dynamo.utils import warn_once
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        warn_once('imports-gaps message')
        warn_once('imports-gaps message')
    assert [str(x.message) for x in w] == ['imports-gaps message']


@pytest.mark.parametrize('shape', [(), (3,), (2, 3, 4), (2, 0, 4), (5, 1), (0,)])
@pytest.mark.parametrize('row_major', [True, False])
def test_make_contiguous_strides_for(shape, row_major):
    from ember._prims_common import make_contiguous_strides_for as e
    from torch._prims_common import make_contiguous_strides_for as t
    assert e(shape, row_major) == t(shape, row_major)


def test_has_triton_and_triton_helpers():
    from ember.utils._triton import has_triton
    assert has_triton() is False
    import ember.sparse._triton_ops as eo
    import torch.sparse._triton_ops as to
    a, b = (2, 1, 3, 4), (5, 4, 6)
    assert tuple(eo.broadcast_batch_dims('f', ember.ones(*a), ember.ones(*b))) == \
        tuple(to.broadcast_batch_dims('f', torch.ones(*a), torch.ones(*b)))
    _raises_like(lambda: eo.broadcast_batch_dims('f', ember.ones(2, 3, 3), ember.ones(4, 3, 3)),
                 lambda: to.broadcast_batch_dims('f', torch.ones(2, 3, 3), torch.ones(4, 3, 3)))
    x = np.arange(24.).reshape(4, 6)
    _same(eo.tile_to_blocksize(ember.tensor(x), (2, 3)).contiguous(), to.tile_to_blocksize(torch.tensor(x), (2, 3)).contiguous())
    assert list(eo.ptr_stride_extractor(ember.ones(2, 3)))[1:] == list(to.ptr_stride_extractor(torch.ones(2, 3)))[1:]
    _raises_like(lambda: eo.check_blocksize('f', (8, 16)), lambda: to.check_blocksize('f', (8, 16)))
    _raises_like(lambda: eo.check_mm_compatible_shapes('f', ember.ones(2, 3), ember.ones(4, 2)),
                 lambda: to.check_mm_compatible_shapes('f', torch.ones(2, 3), torch.ones(4, 2)))
    calls_e, calls_t = [], []
    eo.launch_kernel(lambda g, t: calls_e.append((g, tuple(t.shape))), {ember.ones(10, 4): (0, None)}, (10,), (3,))
    to.launch_kernel(lambda g, t: calls_t.append((g, tuple(t.shape))), {torch.ones(10, 4): (0, None)}, (10,), (3,))
    assert calls_e == calls_t and len(calls_e) == 4


def test_triton_ops_meta_minimize_and_table():
    import ember.sparse._triton_ops_meta as em
    import torch.sparse._triton_ops_meta as tm
    f = lambda p: float((p['a'] - 3) ** 2 + (p['b'] + 1) ** 2 + 1.0)  # noqa: E731
    step = lambda n, v, d, p: max(-5, min(5, v + d))  # noqa: E731
    assert em.minimize(f, {'a': 0, 'b': 0}, {'a': 0, 'b': 0}, step) == \
        tm.minimize(f, {'a': 0, 'b': 0}, {'a': 0, 'b': 0}, step)
    assert em.get_meta('bsr_dense_addmm', (16, 16, 16, 16, 16, 1, 0)) is None
    em.update('bsr_dense_addmm', 'test-dev', (0, 'v'), (1, 2), (4, 1, 2, 4))
    assert em.get_meta('bsr_dense_addmm', (1, 2), device_name='test-dev', version=(0, 'v')) == \
        {'GROUP_SIZE_ROW': 4, 'SPLIT_N': 1, 'num_stages': 2, 'num_warps': 4}
    assert em.get_meta('bsr_dense_addmm', ('*', 2), device_name='test-dev', version=(0, 'v')) == \
        {(1, 2): {'GROUP_SIZE_ROW': 4, 'SPLIT_N': 1, 'num_stages': 2, 'num_warps': 4}}


def test_library_infer_schema_and_inductor_decomposition():
    from ember._library.infer_schema import infer_schema as ei
    from torch._library.infer_schema import infer_schema as ti

    def fe(x: ember.Tensor, n: int, s: float = 1.0) -> ember.Tensor: ...
    def ft(x: torch.Tensor, n: int, s: float = 1.0) -> torch.Tensor: ...
    assert ei(fe, mutates_args=()) == ti(ft, mutates_args=())
    from ember._inductor import decomposition as d
    op = ember.ops.aten.special_entr.default
    d.register_decomposition(op)(lambda x: -x * x.log())
    assert op in d.select_decomp_table()


def test_optimizer_params_t_and_fake_converter():
    import typing
    from ember.optim.optimizer import ParamsT
    from torch.optim.optimizer import ParamsT as TParamsT
    shape = lambda tp: [typing.get_origin(typing.get_args(a)[0]) or typing.get_args(a)[0].__name__  # noqa: E731
                        for a in typing.get_args(tp)]
    assert shape(ParamsT) == shape(TParamsT) and len(shape(ParamsT)) == 3
    from ember._subclasses.fake_tensor import FakeTensorConverter, FakeTensorMode
    mode, conv, t = FakeTensorMode(), FakeTensorConverter(), ember.ones(2, 3)
    f = conv.from_real_tensor(mode, t)
    assert f.shape == (2, 3) and f.device.type == 'meta' and conv.from_real_tensor(mode, t) is f


# --- torch._ops and higher-order operators ---------------------------------------------------------------------

def test_torch_ops_classes():
    import ember._ops as eo
    assert isinstance(ember.ops.aten.add.Tensor, eo.OpOverload)
    assert isinstance(ember.ops.aten.add, eo.OpOverloadPacket)
    assert isinstance(ember.ops.higher_order.cond, eo.HigherOrderOperator)

    class MyOp(eo.HigherOrderOperator):
        def __init__(self):
            super().__init__('imports_gaps_double')

    op = MyOp()
    op.py_impl(ember.DispatchKey.CompositeExplicitAutograd)(lambda x: x * 2)
    assert ember.ops.higher_order.imports_gaps_double is op and op(ember.ones(1)).item() == 2


def test_out_dtype():
    from ember._higher_order_ops.out_dtype import out_dtype as eo
    from torch._higher_order_ops.out_dtype import out_dtype as to
    a = np.array([[100, 100], [-7, 3]], dtype=np.int8)
    _same(eo(ember.ops.aten.mm.default, ember.int32, ember.tensor(a), ember.tensor(a.T.copy())),
          to(torch.ops.aten.mm.default, torch.int32, torch.tensor(a), torch.tensor(a.T.copy())))
    x = np.array([1.5, -2.25], dtype=np.float32)
    _same(eo(ember.ops.aten.mul.Tensor, ember.float64, ember.tensor(x), ember.tensor(x)),
          to(torch.ops.aten.mul.Tensor, torch.float64, torch.tensor(x), torch.tensor(x)))
    for lib, op in ((ember, eo), (torch, to)):       # the allowed list differs (ember lacks mul.Scalar): the class
        with pytest.raises(ValueError, match='out_dtype only allows the following operators'):
            op(lib.ops.aten.add.Tensor, lib.int32, lib.ones(1), lib.ones(1))
    with pytest.raises(ValueError, match='must be an OpOverload'):
        eo(ember.mm, ember.int32, ember.ones(1))
    for lib, op in ((ember, eo), (torch, to)):
        r = op(lib.ops.aten.mul.Tensor, lib.float64, lib.ones(2, requires_grad=True), lib.ones(2))
        assert r.requires_grad
        with pytest.raises(RuntimeError, match='Autograd not implemented for out_dtype'):
            r.sum().backward()


# --- operators -------------------------------------------------------------------------------------------------

def test_int_mm():
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 127, (32, 64), dtype=np.int8)
    b = rng.integers(-128, 127, (64, 16), dtype=np.int8)
    _same(ember._int_mm(ember.tensor(a), ember.tensor(b)), torch._int_mm(torch.tensor(a), torch.tensor(b)))
    _same(ember.ops.aten._int_mm.default(ember.tensor(a), ember.tensor(b)),
          torch.ops.aten._int_mm.default(torch.tensor(a), torch.tensor(b)))
    u = rng.integers(0, 255, (3, 64), dtype=np.uint8)
    _same(ember._int_mm(ember.tensor(u), ember.tensor(b)), torch._int_mm(torch.tensor(u), torch.tensor(b)))
    _same(ember._int_mm(ember.zeros(0, 4, dtype=ember.int8), ember.ones(4, 3, dtype=ember.int8)),
          torch._int_mm(torch.zeros(0, 4, dtype=torch.int8), torch.ones(4, 3, dtype=torch.int8)))
    bad = [((4, 8), 'float32', (8, 3), 'int8'), ((4, 8), 'int8', (8, 3), 'float32'), ((8,), 'int8', (8, 3), 'int8'),
           ((4, 8), 'int8', (8,), 'int8'), ((4, 8), 'int8', (4, 3), 'int8'), ((2, 2, 2), 'int8', (2, 2), 'int8'),
           ((4, 8), 'int8', (8, 3), 'uint8')]
    for sa, da, sb, db in bad:
        _raises_like(lambda: ember._int_mm(ember.ones(*sa, dtype=getattr(ember, da)), ember.ones(*sb, dtype=getattr(ember, db))),
                     lambda: torch._int_mm(torch.ones(*sa, dtype=getattr(torch, da)), torch.ones(*sb, dtype=getattr(torch, db))))


def test_aten_overloads_named_by_libraries():
    x = np.arange(6.).reshape(2, 3).astype(np.float32)
    for lib in (ember, torch):
        t = lib.tensor(x)
        a = lib.ops.aten
        yield_ = (a.new_zeros.default(t, [2, 2]), a.new_zeros.default(t, [1], dtype=lib.int64),
                  a.to.dtype(t, lib.float64), a.lerp.Scalar(t, t + 1, 0.25))
        if lib is ember:
            got = yield_
        else:
            for e, tt in zip(got, yield_, strict=True):
                _same(e, tt)
        assert a.to.dtype(t, lib.float32) is t and a.to.dtype(t, lib.float32, copy=True) is not t
        assert a.is_pinned.default(t) is False
    ge = ember.tensor(x, requires_grad=True)
    gt = torch.tensor(x, requires_grad=True)
    ember.ops.aten.lerp.Scalar(ge, ge * 2, 0.5).sum().backward()
    torch.ops.aten.lerp.Scalar(gt, gt * 2, 0.5).sum().backward()
    _same(ge.grad, gt.grad)
