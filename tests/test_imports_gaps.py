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


def _close(e, t):          # float results of a BLAS product: the last bit may differ
    assert e.dtype.name == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


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


# --- torch.distributed pieces ------------------------------------------------------------------------------

def _model_pair():
    rng = np.random.default_rng(1)
    sd = {'0.weight': rng.standard_normal((3, 2)).astype(np.float32), '0.bias': rng.standard_normal(3).astype(np.float32),
          '2.weight': rng.standard_normal((1, 3)).astype(np.float32), '2.bias': rng.standard_normal(1).astype(np.float32)}
    out = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        m.load_state_dict({k: lib.tensor(v) for k, v in sd.items()})
        m[2].bias.requires_grad_(False)
        out.append(m)
    return out


def _same_tree(e, t):
    if isinstance(t, torch.Tensor):
        _same(e, t)
    elif isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _same_tree(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same_tree(a, b)
    else:
        assert e == t


def test_checkpoint_state_dict_names():
    import ember.distributed.checkpoint.state_dict as es
    import torch.distributed.checkpoint.state_dict as ts
    me, mt = _model_pair()
    oe, ot = ember.optim.Adam(me.parameters(), lr=0.1), torch.optim.Adam(mt.parameters(), lr=0.1)
    _same_tree(es.get_optimizer_state_dict(me, oe), ts.get_optimizer_state_dict(mt, ot))
    for m, lib in ((me, ember), (mt, torch)):
        m(lib.ones(4, 2)).sum().backward()
    oe.step()
    ot.step()
    _same_tree(es.get_optimizer_state_dict(me, oe), ts.get_optimizer_state_dict(mt, ot))
    flat = dict(flatten_optimizer_state_dict=True)
    assert list(es.get_optimizer_state_dict(me, oe, options=es.StateDictOptions(**flat))) == \
        list(ts.get_optimizer_state_dict(mt, ot, options=ts.StateDictOptions(**flat)))
    frozen = dict(ignore_frozen_params=True)
    assert list(es.get_model_state_dict(me, options=es.StateDictOptions(**frozen))) == \
        list(ts.get_model_state_dict(mt, options=ts.StateDictOptions(**frozen)))
    ke = es.set_model_state_dict(me, {'0.weight': ember.zeros(3, 2)}, options=es.StateDictOptions(strict=False))
    kt = ts.set_model_state_dict(mt, {'0.weight': torch.zeros(3, 2)}, options=ts.StateDictOptions(strict=False))
    assert (ke.missing_keys, ke.unexpected_keys) == (kt.missing_keys, kt.unexpected_keys)
    # loading into a fresh optimizer gives the saved state, indexed as the new optimizer's parameters
    for mod, opt, lib in ((es, oe, ember), (ts, ot, torch)):
        m = me if lib is ember else mt
        o2 = lib.optim.Adam(m.parameters(), lr=0.5)
        mod.set_optimizer_state_dict(m, o2, mod.get_optimizer_state_dict(m, opt))
        if lib is ember:
            got = o2.state_dict()
        else:
            _same_tree(got, o2.state_dict())
    o3 = ember.optim.Adam(me.parameters(), lr=0.5)         # the flat layout loads back (ember's own round trip)
    es.set_optimizer_state_dict(me, o3, es.get_optimizer_state_dict(me, oe, options=es.StateDictOptions(**flat)),
                                options=es.StateDictOptions(**flat))
    flat_loaded = o3.state_dict()
    assert list(flat_loaded['state']) == list(got['state']) and flat_loaded['param_groups'] == got['param_groups']
    for i, st in got['state'].items():
        for k, v in st.items():
            np.testing.assert_array_equal(flat_loaded['state'][i][k].numpy(), v.numpy())


def test_checkpoint_wrapper():
    import ember.distributed.algorithms._checkpoint.checkpoint_wrapper as ec
    import torch.distributed.algorithms._checkpoint.checkpoint_wrapper as tc
    me, mt = _model_pair()
    ec.apply_activation_checkpointing(me, check_fn=lambda m: isinstance(m, ember.nn.Linear))
    tc.apply_activation_checkpointing(mt, check_fn=lambda m: isinstance(m, torch.nn.Linear))
    assert [type(m).__name__ for m in me] == [type(m).__name__ for m in mt]
    assert list(me.state_dict()) == list(mt.state_dict())
    assert [n for n, _ in me.named_parameters()] == [n for n, _ in mt.named_parameters()]
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    ye, yt = me(ember.tensor(x)), mt(torch.tensor(x))
    _close(ye.detach(), yt.detach())
    ye.sum().backward()
    yt.sum().backward()
    _close(me[0].weight.grad, mt[0].weight.grad)
    me.load_state_dict(me.state_dict())
    for impl in ('REENTRANT', 'NO_REENTRANT'):
        we = ec.checkpoint_wrapper(ember.nn.Linear(2, 2), checkpoint_impl=getattr(ec.CheckpointImpl, impl))
        assert we.in_features == 2 and we(ember.ones(1, 2)).shape == (1, 2)


def test_dtensor_spec_and_parallel_styles():
    from ember.distributed._tensor.placement_types import DTensorSpec, TensorMeta, Shard, Replicate, Partial
    from torch.distributed._tensor.placement_types import TensorMeta as TTensorMeta
    assert TensorMeta._fields == TTensorMeta._fields

    class Mesh:
        ndim = 2

        def size(self, dim):
            return (2, 4)[dim]

    spec = DTensorSpec(Mesh(), (Partial(), Shard(0)), TensorMeta((8, 3), (3, 1), ember.float32))
    assert (spec.dim_map, spec.num_shards, spec.num_shards_map, spec.sums, spec.ndim) == ([1, -1], 4, [4, 1], [0], 2)
    assert spec.is_sharded() and not spec.is_replicated()
    again = DTensorSpec.from_dim_map(spec.mesh, spec.dim_map, spec.sums, spec.tensor_meta)
    assert again.placements == spec.placements and again == spec
    with pytest.raises(ValueError, match='tensor_meta is not set'):
        DTensorSpec(Mesh(), (Replicate(),)).shape
    import ember.distributed.tensor.parallel as ep
    import torch.distributed.tensor.parallel as tp
    assert ep.__all__ == tp.__all__
    for name, kw in (('ColwiseParallel', {}), ('RowwiseParallel', {}), ('SequenceParallel', {'sequence_dim': 0}),
                     ('ColwiseParallel', {'output_layouts': 'Shard1', 'use_local_output': False})):
        kw_e = {k: (ember.distributed.tensor.Shard(1) if v == 'Shard1' else v) for k, v in kw.items()}
        kw_t = {k: (torch.distributed.tensor.Shard(1) if v == 'Shard1' else v) for k, v in kw.items()}
        e, t = getattr(ep, name)(**kw_e), getattr(tp, name)(**kw_t)
        assert {k: repr(v) for k, v in vars(e).items()} == {k: repr(v) for k, v in vars(t).items()
                                                             if k in vars(e)}
    m = ember.nn.Sequential(ember.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match='DTensor'):
        ep.parallelize_module(m, None, {'0': ep.ColwiseParallel()})
    with pytest.warns(UserWarning, match='could not be resolved'):
        assert ep.parallelize_module(m, None, {'nothing*': ep.RowwiseParallel()}) is m


def test_c10d_functional_ops_single_rank():
    import ember.distributed as edist
    import torch.distributed as tdist
    import torch.distributed._functional_collectives  # noqa: F401  (registers torch's c10d_functional)
    outs = []
    for lib, dist in ((ember, edist), (torch, tdist)):
        dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)
        try:
            name, f, l = dist.group.WORLD.group_name, lib.ops._c10d_functional, lib.ops.c10d_functional
            x = lib.arange(4.).reshape(2, 2)
            outs.append([f.wait_tensor(f.all_gather_into_tensor(x, 1, name)), f.wait_tensor(f.all_reduce(x, 'sum', name)),
                         f.wait_tensor(f.reduce_scatter_tensor(x, 'sum', 1, name)), f.wait_tensor(f.broadcast(x, 0, name)),
                         f.wait_tensor(f.all_to_all_single(x, [2], [2], name)),
                         l.wait_tensor(l.all_gather_into_tensor(x, '', [0], 1)), l.wait_tensor(l.all_reduce(x, 'sum', '', [0], 1))])
        finally:
            dist.destroy_process_group()
    assert len(outs[0]) == len(outs[1]) == 7
    for e, t in zip(*outs):
        _same(e, t)


def test_elastic_errors(tmp_path, monkeypatch):
    import ember.distributed.elastic.multiprocessing.errors as ee
    import torch.distributed.elastic.multiprocessing.errors as te
    assert ee.__all__ == te.__all__
    data = {}
    for mod in (ee, te):
        path = tmp_path / f'{mod is ee}.json'
        monkeypatch.setenv('TORCHELASTIC_ERROR_FILE', str(path))

        @mod.record
        def main():
            raise ValueError('imports-gaps failure')
        with pytest.raises(ValueError):
            main()
        import json
        data[mod] = json.loads(path.read_text())
        assert mod.record(lambda: 5)() == 5
    assert data[ee]['message']['message'] == data[te]['message']['message'] == 'ValueError: imports-gaps failure'
    assert set(data[ee]['message']['extraInfo']) == set(data[te]['message']['extraInfo'])
    errfile = tmp_path / 'True.json'
    fe = ee.ChildFailedError('trainer', {1: ee.ProcessFailure(0, 123, 1, str(errfile)),
                                         0: ee.ProcessFailure(1, 124, -9, 'absent')})
    ft = te.ChildFailedError('trainer', {1: te.ProcessFailure(0, 123, 1, str(errfile)),
                                         0: te.ProcessFailure(1, 124, -9, 'absent')})
    strip = lambda s: '\n'.join(l for l in s.splitlines() if 'time' not in l)  # noqa: E731
    assert strip(str(fe)) == strip(str(ft))
    assert fe.get_first_failure()[0] == ft.get_first_failure()[0]


def test_distributed_autograd_without_rpc():
    import ember.distributed.autograd as ea
    assert ea.is_available() is False and ember.distributed.rpc.is_available() is False
    with pytest.raises(RuntimeError, match='rpc'):
        with ea.context():
            pass


# --- torch._C pieces, pytree, misc ------------------------------------------------------------------------------

def test_c_profiler_config_and_cpu_capability():
    from ember._C._profiler import _ExperimentalConfig
    c = _ExperimentalConfig(verbose=True, custom_profiler_config='x')
    t = torch._C._profiler._ExperimentalConfig(verbose=True, custom_profiler_config='x')
    assert (c.custom_profiler_config, c.trace_only) == (t.custom_profiler_config, t.trace_only) and c.verbose
    import ember._C._cpu as ecpu
    e, tc = ecpu._get_cpu_capability(), torch._C._cpu._get_cpu_capability()
    assert set(e) == set(tc)
    for k in ('avx', 'avx2', 'avx512_f', 'avx512_vnni', 'fma3', 'amx_tile', 'num_logical_cores', 'architecture'):
        assert e[k] == tc[k], k
    assert ecpu._init_amx() == torch._C._cpu._init_amx()


def test_pytree_register_constant():
    import dataclasses
    import ember.utils._pytree as ep
    import torch.utils._pytree as tp
    for mod in (ep, tp):
        @dataclasses.dataclass(frozen=True)
        class Config:
            norm: str
        mod.register_constant(Config)
        leaves, spec = mod.tree_flatten({'c': Config('l2'), 'x': [1, 2]})
        assert leaves == [1, 2] and mod.tree_unflatten(leaves, spec)['c'] == Config('l2')

        class NoEq:
            pass
        with pytest.raises(TypeError, match='non-default `__eq__`'):
            mod.register_constant(NoEq)


def test_has_compatible_shallow_copy_type():
    cases = [lambda l: (l.ones(2), l.zeros(3)), lambda l: (l.ones(2), l.ones(2).to_sparse()),
             lambda l: (l.ones(2, 2).to_sparse_csr(), l.ones(2, 2).to_sparse_csc()),
             lambda l: (l.ones(2), l.ones(2, device='meta')), lambda l: (l.ones(2, 2).to_sparse(), l.ones(2, 2).to_sparse())]
    for case in cases:
        assert ember._has_compatible_shallow_copy_type(*case(ember)) == torch._has_compatible_shallow_copy_type(*case(torch))


# --- torchao 0.18's names ------------------------------------------------------------------------------------

def _grouped_cases(lib):
    g = np.random.default_rng(3)
    r = lambda *s: lib.tensor(g.standard_normal(s).astype(np.float32))  # noqa: E731
    i32 = lambda v: lib.tensor(v, dtype=lib.int32)  # noqa: E731
    bf = lib.bfloat16
    return [((r(8, 8), r(3, 8, 8), i32([2, 5, 8])), {}), ((r(3, 4, 8), r(3, 8, 4)), {}),
            ((r(8, 16), r(16, 8), i32([4, 12, 16])), {}), ((r(3, 4, 8), r(8, 12), i32([4, 8, 12])), {}),
            ((r(3, 8, 8).to(bf), r(3, 8, 8).to(bf)), {}), ((r(3, 8, 4).transpose(-2, -1), r(3, 8, 4)), {}),
            ((r(3, 8, 8), r(3, 8, 8).to(bf)), {}), ((r(3, 8, 8), r(3, 8, 8).double()), {}),
            ((r(3, 4, 8), r(3, 8, 4)), {'out_dtype': bf}), ((r(3, 4, 8), r(3, 8, 4)), {'bias': r(3, 4)}),
            ((r(8, 8), r(3, 8, 8)), {}), ((r(8, 8), r(3, 8, 8), i32([2, 5, 8]).long()), {}),
            ((r(3, 4, 8), r(2, 8, 4)), {}), ((r(3, 4, 8), r(3, 4, 4)), {}), ((r(8), r(3, 8, 8)), {}),
            ((r(3, 4, 6), r(3, 6, 4)), {}), ((r(8, 8), r(3, 8, 8), i32([[2, 5, 8]])), {}),
            ((r(8, 8), r(3, 8, 8), i32([2, 8])), {}), ((r(3, 4, 8).to(bf), r(3, 8, 4).to(bf)), {}),
            ((r(3, 4, 8), r(3, 8, 4).expand(3, 8, 4)[:, :, :4]), {})]


def test_grouped_mm():
    for (ae, ke), (at, kt) in zip(_grouped_cases(ember), _grouped_cases(torch), strict=True):
        try:
            want = torch._grouped_mm(*at, **kt)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                ember._grouped_mm(*ae, **ke)
            assert str(got.value) == str(e)
            continue
        got = ember.ops.aten._grouped_mm.default(*ae, **ke)
        assert got.dtype.name == str(want.dtype).split('.')[-1] and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2 if got.dtype == ember.bfloat16
                                   else 1e-5, atol=1e-4)
    xs = [lib.tensor(np.linspace(-1, 1, 96, dtype=np.float32).reshape(3, 4, 8), requires_grad=True)
          for lib in (ember, torch)]
    ws = [lib.tensor(np.linspace(-2, 1, 96, dtype=np.float32).reshape(3, 8, 4), requires_grad=True)
          for lib in (ember, torch)]
    for lib, x, w in ((ember, xs[0], ws[0]), (torch, xs[1], ws[1])):
        (lib._grouped_mm(x, w) * lib.arange(48.).reshape(3, 4, 4)).sum().backward()
    _close(xs[0].grad, xs[1].grad)
    _close(ws[0].grad, ws[1].grad)


def test_to_overloads():
    x = np.arange(6.).reshape(2, 3).astype(np.float32)
    for lib in (ember, torch):
        t, a = lib.tensor(x), lib.ops.aten
        got = (a.to.dtype_layout(t, dtype=lib.float64), a.to.device(t, 'cpu', lib.int32), a.to.other(t, lib.ones(1, dtype=lib.int16)))
        assert a.to.dtype_layout(t, dtype=lib.float32) is t and a.to.dtype_layout(t, dtype=lib.float32, copy=True) is not t
        if lib is ember:
            eg = got
    for e, t in zip(eg, got, strict=True):
        _same(e, t)


def test_scaling_types_and_scaled_grouped_mm():
    import torch.nn.functional as TF
    EF = ember.nn.functional
    for e, t in ((EF.ScalingType, TF.ScalingType), (EF.SwizzleType, TF.SwizzleType)):
        assert [(m.name, m.value) for m in e] == [(k, v.value) for k, v in t.__members__.items()]
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend"):
        EF.scaled_grouped_mm(ember.ones(3, 16, 16), ember.ones(3, 16, 16), ember.ones(3, 16), EF.ScalingType.RowWise,
                             ember.ones(3, 16), EF.ScalingType.RowWise)


def test_semi_structured_sparse_cpu_error():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match=r'Error original_tensor.device= cpu is not supported! Only CUDA tensors'):
            lib.sparse.to_sparse_semi_structured(lib.ones(64, 64).half())
        assert issubclass(lib.sparse.SparseSemiStructuredTensorCUSPARSELT, lib.sparse.SparseSemiStructuredTensor)
        assert not isinstance(lib.ones(2), lib.sparse.SparseSemiStructuredTensor)


def test_wrap_tensor_autograd_and_load_library(tmp_path):
    import torch.distributed._functional_collectives  # noqa: F401
    grads = []
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = lib.ops._c10d_functional._wrap_tensor_autograd.default(x * 2)
        assert type(y).__name__ == 'AsyncCollectiveTensor' and y.requires_grad
        (y * 3).sum().backward()
        grads.append(x.grad)
    _same(*grads)
    bogus = tmp_path / 'not_a_library.so'
    bogus.write_bytes(b'no')
    for lib in (ember, torch):
        with pytest.raises(OSError, match='Could not load this library'):
            lib.ops.load_library(str(bogus))
