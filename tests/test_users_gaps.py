"""API that published programs and libraries use, found running them under ``ember run`` (llama2.c, Hugging Face
transformers and diffusers, Lightning, torchmetrics, einops programs), each checked against torch."""
import numpy as np
import pytest
import torch

import ember


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- Tensor.view(dtype) ------------------------------------------------------------------------------------------

VIEWS = {
    'same_size': lambda L, x: x.view(L.int32), 'smaller': lambda L, x: x.view(L.float16),
    'bytes': lambda L, x: x.view(L.uint8), 'larger': lambda L, x: x.view(L.float64),
    'keyword': lambda L, x: x.view(dtype=L.int16), 'complex': lambda L, x: x.view(L.complex64),
    'sliced_rows': lambda L, x: x[1:].view(L.float64), 'strided_rows': lambda L, x: x[::2].view(L.int8),
    'bool': lambda L, x: (x > 0).view(L.uint8), 'back': lambda L, x: x.view(L.uint8).view(L.float32),
}


@pytest.mark.parametrize('case', sorted(VIEWS))
def test_view_dtype_reads_the_same_bytes(case):
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
    e, t = VIEWS[case](ember, ember.from_numpy(x.copy())), VIEWS[case](torch, torch.from_numpy(x.copy()))
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert e.storage_offset() == t.storage_offset()
    assert e.numpy().tobytes() == t.numpy().tobytes()


def test_view_dtype_shares_memory_and_is_not_differentiable():
    x = ember.zeros(2, 4)
    x.view(ember.int32)[0, 1] = 1065353216       # the bits of 1.0
    assert x[0, 1].item() == 1.0 and x._version == 1
    y = ember.randn(2, 4, requires_grad=True).view(ember.int32)
    assert not y.requires_grad and y.grad_fn is None
    assert ember.empty(2, 4, device='meta').view(ember.float16).shape == (2, 8)


BAD_VIEWS = [lambda L, x: x[:, :3].view(L.float64), lambda L, x: x[:, ::2].view(L.float16),
             lambda L, x: L.tensor(1.).view(L.float16), lambda L, x: x[:, 1:3].view(L.float64),
             lambda L, x: x.t().view(L.float64), lambda L, x: x.t().contiguous().t()[:, :2].view(L.float64)]


@pytest.mark.parametrize('i', range(len(BAD_VIEWS)))
def test_view_dtype_errors_are_torchs(i):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            BAD_VIEWS[i](L, L.arange(8, dtype=L.float32).reshape(2, 4))
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


# --- torch.linalg.lstsq ------------------------------------------------------------------------------------------

@pytest.mark.parametrize('driver', [None, 'gels', 'gelsy', 'gelsd', 'gelss'])
@pytest.mark.parametrize('shape', [((5, 3), (5, 2)), ((5, 3), (5,)), ((2, 5, 3), (2, 5, 2)), ((3, 5), (3, 2))])
def test_lstsq_matches_torch(driver, shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape[0]), rng.standard_normal(shape[1])
    e = ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b), driver=driver)
    t = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
    for name in ('solution', 'residuals', 'rank', 'singular_values'):
        _same(getattr(e, name), getattr(t, name))


def test_lstsq_rank_deficient_and_gradients():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    a[:, 2] = a[:, 1]
    b = rng.standard_normal((5, 2)).astype(np.float32)
    for field in ('residuals', 'rank'):
        _same(getattr(ember.linalg.lstsq(ember.from_numpy(a), ember.from_numpy(b), driver='gelsd'), field),
              getattr(torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver='gelsd'), field))
    a[:, 2] += rng.standard_normal(5).astype(np.float32)
    grads = []
    for L in (ember, torch):
        A, B = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        (L.linalg.lstsq(A, B).solution ** 2).sum().backward()
        grads.append((A.grad, B.grad))
    _same(grads[0][0], grads[1][0])
    _same(grads[0][1], grads[1][1])


@pytest.mark.parametrize('bad', [lambda L: L.linalg.lstsq(L.randn(3), L.randn(3, 2)),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(5, 2).double()),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(5, 2), driver='x'),
                                 lambda L: L.linalg.lstsq(L.randn(5, 3), L.randn(4, 2)),
                                 lambda L: L.linalg.lstsq(L.ones(5, 3, dtype=L.int32), L.ones(5, 2, dtype=L.int32))])
def test_lstsq_errors_are_torchs(bad):
    msgs = []
    for L in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            bad(L)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


# --- torch function modes (torch.overrides.TorchFunctionMode) ------------------------------------------------------

def _log_mode(L):
    class Log(L.overrides.TorchFunctionMode):
        def __init__(self):
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    return Log


def _logged_calls(L):
    Log = _log_mode(L)
    x = L.ones(2, 3, requires_grad=True)
    with Log() as m:
        y = L.add(x, 1, alpha=2)
        z = L.mul(y, y).sum()
        L.nn.functional.relu(y)
        L.cat([y, y])
        z.backward()
    return m.seen, x.grad.tolist(), L.is_grad_enabled()


def test_torch_function_mode_sees_public_calls_as_torchs():
    assert _logged_calls(ember) == _logged_calls(torch)


def test_torch_function_modes_nest_replace_and_can_be_disabled():
    seen = []
    for L in (torch, ember):
        class Zero(L.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if func.__name__ == 'add':
                    return L.zeros(1)
                return func(*args, **(kwargs or {}))

        Log = _log_mode(L)
        with Zero():
            assert L.add(L.ones(2), 1).tolist() == [0.0] and L.mul(L.ones(2), 3).tolist() == [3.0, 3.0]
        with Log() as a, Log() as b:
            L.sin(L.ones(1))
            with L._C.DisableTorchFunction():
                L.cos(L.ones(1))
        assert a.seen == b.seen
        seen.append(a.seen)
        assert not L._C._is_torch_function_mode_enabled()
    assert seen[1] == seen[0]


# --- optimizers and in-place kernels on 0-d tensors ----------------------------------------------------------------

@pytest.mark.parametrize('name', ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam', 'RAdam',
                                  'ASGD', 'Rprop', 'LBFGS'])
def test_optimizers_step_0d_parameters_as_torch(name):
    out = []
    for L in (torch, ember):
        L.manual_seed(0)
        w, v = L.nn.Parameter(L.tensor(2.)), L.nn.Parameter(L.randn(3))
        opt = getattr(L.optim, name)([w, v], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (w * w + (v * w).sum()) ** 2
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        out.append([w.item(), v.sum().item()])
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_inplace_lerp_addcmul_addcdiv_on_0d():
    for L in (torch, ember):
        a = L.tensor(0.5)
        a.lerp_(L.tensor(1.0), 0.1).addcmul_(L.tensor(2.), L.tensor(3.), value=0.5).addcdiv_(L.tensor(1.), L.tensor(4.))
        assert abs(a.item() - 3.8) < 1e-6


def test_float_of_a_tensor_needing_grad_warns_only_in_grad_mode():
    import warnings
    x = ember.tensor(2., requires_grad=True) * 2
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with ember.no_grad():
            assert float(x) == 4.0


# --- arrays, casts, checkpoints ------------------------------------------------------------------------------------

def test_from_numpy_memmap_and_its_slices(tmp_path):
    f = tmp_path / 'tokens.bin'
    np.arange(20, dtype=np.int64).tofile(f)
    m = np.memmap(f, dtype=np.int64, mode='r+')
    t = ember.from_numpy(m[0:5].astype(np.int64))
    assert t[:-1].tolist() == [0, 1, 2, 3]
    u = ember.from_numpy(m)
    assert u[1:3].tolist() == [1, 2]
    u[0] = 7
    assert m[0] == 7


def test_float_to_int_casts_of_inf_and_nan_are_silent():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        a = ember.tensor([float('-inf'), float('nan'), 1.0])
        assert a.long()[2].item() == 1
        ember.zeros(3, dtype=ember.int64).copy_(a)


def test_load_with_a_callable_map_location_and_non_leaf_requires_grad(tmp_path):
    a = ember.ones(2, requires_grad=True)
    ember.save({'x': ember.arange(3.), 'y': a * 2}, tmp_path / 'c.pt')
    seen = []
    r = ember.load(tmp_path / 'c.pt', map_location=lambda storage, loc: seen.append(loc) or storage)
    assert r['x'].tolist() == [0.0, 1.0, 2.0] and seen and set(seen) == {'cpu'}
    assert r['y'].requires_grad == torch.load(_torch_copy(a, tmp_path), weights_only=True)['y'].requires_grad
    assert ember.load(tmp_path / 'c.pt', map_location=lambda s, loc: None)['x'].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match='map_location should return a storage or None'):
        ember.load(tmp_path / 'c.pt', map_location=lambda s, loc: 3)


def _torch_copy(a, tmp_path):
    ta = torch.ones(2, requires_grad=True)
    torch.save({'x': torch.arange(3.), 'y': ta * 2}, tmp_path / 't.pt')
    return tmp_path / 't.pt'


def test_pytorch_file_reader_reads_records_of_both_libraries(tmp_path):
    torch.save({'a': torch.arange(4.)}, tmp_path / 't.pt')
    ember.save({'a': ember.arange(4.)}, tmp_path / 'e.pt')
    for path in (tmp_path / 't.pt', tmp_path / 'e.pt'):
        r = ember.PyTorchFileReader(str(path))
        assert r.has_record('data.pkl') and not r.has_record('nope') and 'data/0' in r.get_all_records()
        assert r.get_record('data.pkl')[:1] == b'\x80'
        assert r.get_storage_from_record('data/0', 4, ember.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(RuntimeError, match='file not found'):
            r.get_record('nope')


# --- small API points ----------------------------------------------------------------------------------------------

def test_device_equals_only_devices():
    for L in (torch, ember):
        d = L.device('cpu')
        assert (d == 'cpu', d != 'cpu', d == 'npu', d == L.device('cpu')) == (False, True, False, True)


def test_0d_tensors_where_numbers_go():
    for L in (torch, ember):
        assert L.full((2,), L.tensor(1.5)).tolist() == [1.5, 1.5]
        assert L.arange(L.tensor(3)).tolist() == [0, 1, 2]
        assert L.add(L.ones(2), L.ones(2), alpha=L.tensor(2.)).tolist() == [3.0, 3.0]
        with pytest.raises(TypeError, match='must be Number, not Tensor'):
            L.full((2,), L.tensor([1.5]))


def test_factories_take_layout_and_pin_memory():
    for L in (torch, ember):
        assert L.zeros(2, 3, layout=L.sparse_coo).is_sparse
        assert L.zeros_like(L.ones(2), layout=L.strided, requires_grad=True).requires_grad
        assert L.randn(2, layout=L.strided, pin_memory=False).shape == (2,)
        with pytest.raises(RuntimeError, match='not implemented for sparse layout'):
            L.ones(2, layout=L.sparse_coo)
        with pytest.raises(RuntimeError, match='pin_memory=True requires'):
            L.empty(2, pin_memory=True)


def test_optimizer_subclass_without_init_steps():
    for L in (torch, ember):
        class Wrap(L.optim.Optimizer):
            def __init__(self, opt):
                self.optimizer = opt

            @property
            def param_groups(self):
                return self.optimizer.param_groups

            def step(self, closure=None):
                return self.optimizer.step(closure)
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.ones(2)
        Wrap(L.optim.SGD([p], lr=0.1)).step()
        assert p.tolist() == pytest.approx([0.9, 0.9])


def test_streams_and_events_on_the_cpu():
    for L in (torch, ember):
        s, e = L.Stream(), L.Event()
        assert (s.query(), s.synchronize(), s.device_type, s.device_index, s.stream_id) == (True, None, 0, -1, 0)
        assert e.query() and e.synchronize() is None and s.wait_event(e) is None and s == L.Stream()
        for f in (s.record_event, e.record, lambda: s.wait_stream(L.Stream())):
            with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
                f()


def test_torch_c_names_libraries_use():
    for L in (torch, ember):
        assert isinstance(L.Tensor, L._C._TensorMeta) and L._C._log_api_usage_once('x') is None
        assert L._C._get_tracing_state() is None and str(L._C._get_accelerator()) == 'cpu'
        dev, dt, nb, mf = L._C._nn._parse_to('cpu', L.float16, non_blocking=True)
        assert (str(dev), str(dt).split('.')[-1], nb, mf) == ('cpu', 'float16', True, None)
        with pytest.raises(AssertionError, match='not compiled with CUDA'):
            with L.autograd.profiler.emit_nvtx():
                pass
        with L.autograd.profiler.emit_nvtx(enabled=False):
            pass
    with pytest.raises(AttributeError, match='no torch._C.NoSuchName'):
        ember._C.NoSuchName


def test_extra_state_key_and_dynamo_decorators():
    from ember.nn.modules import module
    assert module._EXTRA_STATE_KEY_SUFFIX == torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX

    def f(x):
        return x + 1
    assert ember._dynamo.allow_in_graph(f) is f and ember._dynamo.assume_constant_result(f) is f
    assert ember.cuda.default_generators == torch.cuda.default_generators == ()
    with pytest.raises(RuntimeError, match='dummy base class CUDAGraph'):
        ember.cuda.CUDAGraph()


def test_torch_version_under_ember_run(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / 'v.py'
    prog.write_text("import torch, importlib.metadata as md, ember\n"
                    "print(torch.__version__, torch.__version__ >= (2, 0), torch.__version__ > '2.1',\n"
                    "      md.version('torch'), torch.version.__version__, ember.__version__)\n")
    out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(prog)], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[:5] == ['2.13.0+ember', 'True', 'True', '2.13.0+ember', '2.13.0+ember'] and out[5] == ember.__version__


# --- torch's barebones dtypes: uint16/32/64 and the float8 types ------------------------------------------------

NEW_DTYPES = ['uint16', 'uint32', 'uint64', 'float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz']


@pytest.mark.parametrize('name', NEW_DTYPES)
def test_barebones_dtypes_convert_print_and_inform_as_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert (e.itemsize, e.is_floating_point, e.is_signed) == (t.itemsize, t.is_floating_point, t.is_signed)
    info = (ember.finfo if e.is_floating_point else ember.iinfo)(e)
    tinfo = (torch.finfo if t.is_floating_point else torch.iinfo)(t)
    assert repr(info) == repr(tinfo)
    vals = [0.0, 1.5, 3.0, 200.0] if e.is_floating_point else [0, 1, 7, 250]
    x, y = ember.tensor(vals).to(e), torch.tensor(vals).to(t)
    assert x.to(ember.float64).tolist() == y.to(torch.float64).tolist()
    assert repr(x).replace('ember.', 'torch.') == repr(y)


def test_barebones_dtypes_promote_as_torch():
    pairs = [('uint16', 'int32'), ('uint16', 'float32'), ('uint32', 'uint16'), ('float8_e4m3fn', 'float32'),
             ('float8_e4m3fn', 'float8_e5m2'), ('uint64', 'bool'), ('float16', 'uint32')]
    for a, b in pairs:
        try:
            want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        except RuntimeError as err:
            with pytest.raises(RuntimeError, match=str(err).split(',')[0]):
                ember.promote_types(getattr(ember, a), getattr(ember, b))
        else:
            assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))).replace('ember', 'torch') == want


def test_barebones_dtypes_in_checkpoints_both_ways(tmp_path):
    import subprocess
    import sys
    ember.save({'u': ember.arange(5, dtype=ember.int32).to(ember.uint16)[1:],
                'f8': ember.tensor([1.5, -2.0, 300.]).to(ember.float8_e4m3fn)}, tmp_path / 'e.pt')
    r = torch.load(tmp_path / 'e.pt')
    assert r['u'].dtype == torch.uint16 and r['u'].tolist() == [1, 2, 3, 4]
    assert r['f8'].dtype == torch.float8_e4m3fn and r['f8'].float().tolist() == [1.5, -2.0, 288.0]
    torch.save({'u': torch.tensor([65535], dtype=torch.uint16), 'f': torch.ones(2)}, tmp_path / 't.pt')
    back = ember.load(tmp_path / 't.pt')
    assert back['u'].dtype is ember.uint16 and back['u'].tolist() == [65535] and back['f'].tolist() == [1.0, 1.0]
    m = np.arange(4, dtype=np.uint16)
    assert ember.from_numpy(m).dtype is ember.uint16


# --- torch.distributed.tensor: placements and layout, no DTensor operators ----------------------------------------

def test_dtensor_placements_and_the_dtensor_type():
    from ember.distributed.tensor import DTensor, Shard, Replicate, Partial, distribute_tensor
    from torch.distributed.tensor import Shard as TS, Replicate as TR, Partial as TP
    for e, t in ((Shard(1), TS(1)), (Replicate(), TR()), (Partial(), TP()), (Partial('avg'), TP('avg'))):
        assert (repr(e), str(e), e.is_shard(), e.is_replicate(), e.is_partial()) == \
            (repr(t), str(t), t.is_shard(), t.is_replicate(), t.is_partial())
    assert Shard(0) == Shard(0) != Shard(1) and len({Shard(0), Shard(0), Replicate()}) == 2
    assert [Shard(0)._local_size_and_offset(10, 4, r) for r in range(4)] == [(3, 0), (3, 3), (3, 6), (1, 9)]
    assert not isinstance(ember.ones(2), DTensor)
    with pytest.raises(NotImplementedError, match='no DTensor'):
        distribute_tensor(ember.ones(2))


# --- half precision computed in float32, rounded once (NOTE [half-precision opmath]) -------------------------------

HALF_OPS = {
    'sigmoid': lambda L, x, y: L.sigmoid(x), 'silu': lambda L, x, y: L.nn.functional.silu(x),
    'selu': lambda L, x, y: L.nn.functional.selu(x), 'elu': lambda L, x, y: L.nn.functional.elu(x),
    'softplus': lambda L, x, y: L.nn.functional.softplus(x), 'mish': lambda L, x, y: L.nn.functional.mish(x),
    'hardswish': lambda L, x, y: L.nn.functional.hardswish(x), 'hardsigmoid': lambda L, x, y: L.nn.functional.hardsigmoid(x),
    'logsigmoid': lambda L, x, y: L.nn.functional.logsigmoid(x), 'lerp': lambda L, x, y: L.lerp(x, y, 0.3),
    'addcmul': lambda L, x, y: L.addcmul(x, x, y, value=0.5), 'addcdiv': lambda L, x, y: L.addcdiv(x, x, y.abs() + 1),
    'logit': lambda L, x, y: L.sigmoid(x).logit(),
    'sigmoid_grad': lambda L, x, y: L.autograd.grad(L.sigmoid(x.requires_grad_()).sum(), x)[0],
    'silu_grad': lambda L, x, y: L.autograd.grad(L.nn.functional.silu(x.requires_grad_()).sum(), x)[0],
}


@pytest.mark.parametrize('dtype', ['bfloat16', 'float16'])
@pytest.mark.parametrize('op', sorted(HALF_OPS))
def test_half_precision_rounds_once_as_torch(op, dtype):
    if op == 'sigmoid_grad' and dtype == 'float16':
        pytest.xfail("torch's float16 sigmoid backward rounds between steps in some lanes (266 of 2000 differ)")
    rng = np.random.default_rng(0)
    xs, ys = (rng.standard_normal(2000) * 3).astype(np.float32), rng.standard_normal(2000).astype(np.float32)
    got = []
    for L in (torch, ember):
        d = getattr(L, dtype)
        x, y = L.from_numpy(xs.copy()).to(d), L.from_numpy(ys.copy()).to(d)
        got.append(HALF_OPS[op](L, x, y).float().detach().numpy())
    # rounded once, as torch's: equal but for the rare value where torch's fused multiply-add rounds differently
    # (rounding each NumPy step instead, 10-30% of the values differed)
    assert np.mean(got[1] != got[0]) <= 0.002
    np.testing.assert_allclose(got[1], got[0], rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize('dtype', ['complex64', 'complex128'])
@pytest.mark.parametrize('n', [4, 20, 33])
def test_complex_random_draws_are_torchs(dtype, n):
    got = []
    for L in (torch, ember):
        d = getattr(L, dtype)
        L.manual_seed(0)
        a, b = L.randn(n, dtype=d), L.rand(n, dtype=d)
        c = L.empty(n, dtype=d).normal_(1.0, 2.0)
        e = L.randn(3, n, dtype=d).t()
        f = L.empty(n, dtype=d).uniform_(-1, 3)
        got.append([np.asarray(x.numpy()) for x in (a, b, c, e, f)])
    for x, y in zip(*got):
        np.testing.assert_array_equal(y, x)


# --- interpolate: uint8 images and antialias ---------------------------------------------------------------------

def test_interpolate_uint8_and_antialias_as_torch():
    rng = np.random.default_rng(0)
    for h, w, oh, ow in ((4, 5, 3, 7), (12, 16, 5, 7), (7, 3, 20, 30), (30, 31, 9, 4)):
        x = rng.integers(0, 256, (1, 2, h, w)).astype(np.uint8)
        xf = rng.random((1, 2, h, w)).astype(np.float32)
        for mode in ('bilinear', 'bicubic'):
            for aa in (False, True):
                e = ember.nn.functional.interpolate(ember.from_numpy(x), size=(oh, ow), mode=mode, antialias=aa)
                t = torch.nn.functional.interpolate(torch.from_numpy(x), size=(oh, ow), mode=mode, antialias=aa)
                np.testing.assert_array_equal(e.numpy(), t.numpy())
                e = ember.nn.functional.interpolate(ember.from_numpy(xf), size=(oh, ow), mode=mode, antialias=aa)
                t = torch.nn.functional.interpolate(torch.from_numpy(xf), size=(oh, ow), mode=mode, antialias=aa)
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    for L in (torch, ember):
        with pytest.raises(ValueError, match='Anti-alias option is restricted'):
            L.nn.functional.interpolate(L.ones(1, 1, 4, 4), size=(2, 2), mode='nearest', antialias=True)


def test_python_types_as_dtypes():
    calls = [lambda L: L.tensor(0, dtype=int), lambda L: L.zeros(2, dtype=float), lambda L: L.ones(2, dtype=bool),
             lambda L: L.ones(2).to(int), lambda L: L.ones(2).to(dtype=float), lambda L: L.ones(2).sum(dtype=int),
             lambda L: L.full((1,), 2, dtype=complex), lambda L: L.arange(3, dtype=float),
             lambda L: L.as_tensor([1, 2], dtype=float), lambda L: L.ones(2).to('cpu', int),
             lambda L: L.zeros_like(L.ones(2), dtype=int), lambda L: L.ones(3).softmax(0, dtype=float),
             lambda L: L.ones(2).new_full((2,), 1, dtype=int), lambda L: L.eye(2, dtype=int)]
    for f in calls:
        assert str(f(ember).dtype).split('.')[-1] == str(f(torch).dtype).split('.')[-1]
    with pytest.raises(TypeError, match="must be torch.dtype, not str"):
        ember.zeros(2, dtype='float32')


def test_safetensors_torch_api_loads_under_ember_run(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / 's.py'
    prog.write_text("import torch\n"
                    "from safetensors.torch import save_file, load_file, safe_open\n"
                    f"save_file({{'a': torch.arange(6.).reshape(2, 3), 'b': torch.ones(2, dtype=torch.bfloat16)}}, "
                    f"r'{tmp_path / 'w.st'}')\n"
                    f"r = load_file(r'{tmp_path / 'w.st'}')\n"
                    "print(r['a'].tolist(), r['b'].dtype)\n"
                    f"with safe_open(r'{tmp_path / 'w.st'}', framework='pt') as f:\n"
                    "    print(f.get_slice('a')[1:, :2].tolist())\n")
    out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(prog)], capture_output=True, text=True, check=True)
    assert out.stdout.split('\n')[:2] == ['[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] torch.bfloat16', '[[3.0, 4.0]]']
    s = ember.UntypedStorage.from_file(str(tmp_path / 'w.st'), False, 8)
    assert s.nbytes() == 8 and s.untyped() is s and s[2:6].nbytes() == 4


def test_fsdp_names_and_wrap_policies():
    import functools
    from ember.distributed.fsdp import CPUOffload, ShardingStrategy, FullyShardedDataParallel, MixedPrecision
    from ember.distributed.fsdp.wrap import transformer_auto_wrap_policy, size_based_auto_wrap_policy, wrap
    import torch.distributed.fsdp as tf
    import torch.distributed.fsdp.wrap as tw
    assert [s.name for s in ShardingStrategy] == [s.name for s in tf.ShardingStrategy]
    assert repr(CPUOffload()) == repr(tf.CPUOffload()) and MixedPrecision(param_dtype=ember.bfloat16).param_dtype
    for L, pol, size in ((ember, transformer_auto_wrap_policy, size_based_auto_wrap_policy),
                         (torch, tw.transformer_auto_wrap_policy, tw.size_based_auto_wrap_policy)):
        m = L.nn.TransformerEncoderLayer(8, 2)
        p = functools.partial(pol, transformer_layer_cls={L.nn.TransformerEncoderLayer})
        assert (p(m, False, 0), p(m, True, 0), p(L.nn.Linear(1, 1), False, 0)) == (True, True, False)
        assert (size(m, True, 10 ** 9), size(L.nn.ModuleList(), False, 10 ** 9)) == (True, False)
    m = ember.nn.Linear(1, 1)
    assert wrap(m) is m
    with pytest.raises(NotImplementedError, match='no FSDP'):
        FullyShardedDataParallel(m)


def test_distributed_modules_libraries_import():
    import importlib
    for name in ('_composable.fsdp', 'fsdp.fully_sharded_data_parallel', 'checkpoint.hf_storage', 'algorithms.join',
                 'tensor.placement_types', 'tensor._utils', 'device_mesh', '_functional_collectives', 'constants'):
        importlib.import_module(f'ember.distributed.{name}')
        importlib.import_module(f'torch.distributed.{name}')
    from ember.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
    from ember.distributed.algorithms.join import Join, JoinHook
    with pytest.raises(NotImplementedError, match='no torch.distributed.checkpoint'):
        HuggingFaceStorageReader('path')
    assert JoinHook().main_hook() is None
    with Join([], enable=False):
        pass
    assert not isinstance(ember.nn.Linear(1, 1), ember.ScriptModule) and ember.ScriptModule is ember.jit.ScriptModule


def test_reprs_name_torch_under_ember_run_and_ember_otherwise(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / 'r.py'
    prog.write_text("import torch\n"
                    "print(torch.float32, torch.ones(2).shape, torch.ones(2, dtype=torch.int32), torch.strided,\n"
                    "      torch.ones(2).type(), str(torch.float16).replace('torch.', ''), torch.max(torch.ones(2, 2), 1))\n")
    want = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, check=True).stdout
    got = subprocess.run([sys.executable, '-m', 'ember', 'run', str(prog)], capture_output=True, text=True,
                         check=True).stdout
    assert got == want
    assert repr(ember.float32) == 'ember.float32' and repr(ember.ones(2).shape) == 'ember.Size([2])'


# --- names from torch's documentation -------------------------------------------------------------------------------

def test_documented_names_ember_lacked():
    import warnings
    got = []
    for L in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            r = [L.range(1, 4).tolist(), L.range(0, 1, 0.25).tolist(), str(L.range(1, 4, dtype=L.int64).dtype)[-5:]]
        e = L.empty_permuted((2, 3, 5), (0, 2, 1))
        r += [tuple(e.shape), e.stride()]
        r += [L.nonzero_static(L.tensor([0, 1, 0, 2]), size=3).tolist(),
              L.nonzero_static(L.tensor([[1, 0], [0, 1]]), size=1, fill_value=-5).tolist()]
        r += [L.as_strided_scatter(L.zeros(3, 3), L.ones(2), (2,), (4,)).tolist()]
        L.manual_seed(0)
        x = L.rand(50, 3)
        h = L.histogramdd(x, bins=4)
        r += [h.hist.tolist(), [b.tolist() for b in h.bin_edges]]
        r += [L.histogramdd(x, bins=2, range=[0., 1., 0., 0.5, 0., 1.], density=True).hist.tolist()]
        r += [L.histogramdd(x[:, :2], bins=[L.tensor([0, .5, 1.]), L.tensor([0, 1.])],
                            weight=L.arange(50.)).hist.tolist()]
        r += [L.ones(2, 3, 4).dim_order(), L.ones(2, 3, 4).permute(2, 0, 1).contiguous().permute(1, 2, 0).dim_order()]
        r += [L.nn.functional.native_channel_shuffle(L.arange(8.).reshape(1, 4, 2), 2).tolist()]
        got.append(r)
    for a, b in zip(got[1], got[0]):
        if isinstance(a, (str, tuple)):
            assert a == b
        else:
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-6)
    assert ember.set_flush_denormal(True) is False      # no access to the FPU's flags from NumPy


def test_multi_grad_hook_as_torch():
    out = []
    for L in (torch, ember):
        a, b, c = (L.ones(2, requires_grad=True) for _ in range(3))
        seen = []
        h = L.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: seen.append(
            [None if g is None else g.tolist() for g in gs]))
        (a * 2 + b * 3).sum().backward()
        (a * 5).sum().backward()
        h.remove()
        (a * 7).sum().backward()
        first = []
        L.autograd.graph.register_multi_grad_hook((a, b), lambda g: first.append(g.tolist()), mode='any')
        (a * 2 + b * 3).sum().backward()
        (b * 4).sum().backward()
        out.append((seen, first))
    assert out[1] == out[0]


def test_inference_version_and_disabled_saved_hooks_raise_as_torch():
    for L in (torch, ember):
        with L.inference_mode():
            y = L.ones(2) * 2
        with pytest.raises(RuntimeError, match='Inference tensors do not track version counter'):
            y._version
        with L.autograd.graph.disable_saved_tensors_hooks('no hooks here'):
            with pytest.raises(RuntimeError, match='no hooks here'):
                with L.autograd.graph.save_on_cpu():
                    pass
        with L.autograd.graph.save_on_cpu():      # allowed again outside
            pass


@pytest.mark.parametrize('order', ['ember first', 'einops first'])
def test_einops_on_ember_tensors_with_import_ember_as_torch(order):
    import subprocess
    import sys
    pytest.importorskip('einops')
    imports = 'import ember as torch\nimport einops\n' if order == 'ember first' else \
        'import einops\nimport ember as torch\n'
    # gc.collect(): the backend class must outlive a garbage collection (einops holds its backends weakly)
    code = imports + ("import gc\ngc.collect()\nx = torch.arange(24.).reshape(2, 3, 4)\n"
                      "y = x.clone().requires_grad_()\n"
                      "einops.rearrange(y, 'a b c -> c (b a)').sum().backward()\n"
                      "print(tuple(einops.rearrange(x, 'a b c -> (a c) b').shape), "
                      "einops.reduce(x, 'a b c -> a', 'mean').tolist(), y.grad.sum().item())\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.split('\n')[0] == '(8, 3) [5.5, 17.5] 24.0'


# --- third pass: PyG, torchdiffeq, Pyro, GPyTorch ------------------------------------------------------------------

def test_jit_feature_detection_and_eager_decorators():
    assert ember.jit.script_if_tracing(len) is len and ember.jit._overload(len) is len
    assert ember.jit._overload_method(len) is len and issubclass(ember.jit.TracerWarning, Warning)
    assert getattr(ember.jit, 'not_a_name', 'default') == 'default'


def test_cholesky_ex_and_inv_ex_report_info_as_torch():
    got = []
    for L in (torch, ember):
        A = L.tensor([[1., 2.], [2., 1.]])
        B = L.stack([L.eye(2), A, L.tensor([[4., 2.], [2., 5.]])])
        C = L.tensor([[2., 0, 0], [0, -1., 0], [0, 0, 1.]])
        r = [L.linalg.cholesky_ex(A), L.linalg.cholesky_ex(B), L.linalg.cholesky_ex(C),
             L.linalg.cholesky_ex(L.tensor([[4., 2.], [2., 5.]]), upper=True)]
        r = [(x.L.tolist(), x.info.tolist()) for x in r]
        r += [L.linalg.inv_ex(L.zeros(2, 2)).info.tolist(), L.linalg.inv_ex(L.tensor([[1., 2.], [2., 4.]])).info.tolist(),
              L.linalg.inv_ex(L.eye(2) * 2).inverse.tolist()]
        with pytest.raises(RuntimeError, match='leading minor of order 2 is not positive-definite'):
            L.linalg.cholesky_ex(A, check_errors=True)
        got.append(r)
    assert got[1] == got[0]


def test_sizes_and_broadcast_shapes_are_sizes():
    for L in (torch, ember):
        assert type(L.broadcast_shapes((2, 1), (1, 3))) is L.Size and L.broadcast_shapes(2, (3, 1)) == (3, 2)
        assert type((1,) + L.Size([2])) is L.Size and type(L.Size([2]) * 2) is L.Size and type(2 * L.Size([2])) is L.Size


def test_autograd_function_saved_views_and_data_versions():
    for L in (torch, ember):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = L.empty(3, 2)
                out[0], out[1], out[2] = x, x * 2, x * 3
                ctx.save_for_backward(out, (x.unsqueeze(-1) * 2).squeeze(-1))
                return out

            @staticmethod
            def backward(ctx, g):
                out, mu = ctx.saved_tensors
                return (g * out[-1]).sum(0) + mu.unsqueeze(0).sum(0) * 0
        x = L.ones(2, requires_grad=True)
        F.apply(x).sum().backward()
        assert x.grad.tolist() == [9.0, 9.0]
        y = L.ones(3)
        y.data[0] = 5
        assert y._version == 0 and y[0].item() == 5
        assert L.tensor(0.05).clamp(L.tensor(0.), L.tensor(float('inf'))).item() == pytest.approx(0.05)


LAYOUT_CASES = {
    'index': lambda L, x, t: x[:, L.tensor([0, 2, 3])], 'mask': lambda L, x, t: x[:, L.tensor([True, False] * 3)],
    'cat': lambda L, x, t: L.cat([t, t]), 'roll': lambda L, x, t: t.roll(1, 0), 'cumsum': lambda L, x, t: t.cumsum(0),
    'cummax': lambda L, x, t: t.cummax(0)[0], 'scatter_add': lambda L, x, t: t.scatter_add(0, L.zeros(6, 4, dtype=L.long), t),
    'index_add': lambda L, x, t: t.index_add(0, L.tensor([0]), t[:1]), 'masked_fill': lambda L, x, t: t.masked_fill(t > 3, 0),
    'scatter_reduce': lambda L, x, t: t.scatter_reduce(0, L.zeros(6, 4, dtype=L.long), t, 'sum'),
}


@pytest.mark.parametrize('case', sorted(LAYOUT_CASES))
def test_results_torch_writes_contiguously(case):
    got = []
    for L in (torch, ember):
        x = L.arange(24.).view(4, 6)
        r = LAYOUT_CASES[case](L, x, x.t())
        got.append((r.is_contiguous(), r.reshape(-1).tolist()))
        r.view(-1)      # what a later .view needs
    assert got[1] == got[0]


def test_segment_reduce_as_torch():
    got = []
    for L in (torch, ember):
        d = L.tensor([1., 2., 3., 4., 5.])
        r = [L._segment_reduce(d, how, lengths=L.tensor([2, 0, 3])).tolist() for how in ('sum', 'max', 'min', 'prod')]
        r += [L._segment_reduce(d, 'mean', offsets=L.tensor([0, 2, 2, 5])).tolist(),
              L._segment_reduce(d, 'prod', lengths=L.tensor([2, 0, 3]), initial=7.).tolist(),
              L._segment_reduce(L.arange(12.).reshape(4, 3), 'sum', lengths=L.tensor([1, 3])).tolist(),
              L._segment_reduce(d, 'mean', offsets=L.tensor([0, 2, 2, 5]), initial=1.).tolist(),     # PyG's ptr path
              L._segment_reduce(d, 'amax', offsets=L.tensor([0, 2, 5])).tolist()]
        x = d.clone().requires_grad_()
        L._segment_reduce(x, 'mean', lengths=L.tensor([2, 3])).sum().backward()
        r.append(x.grad.tolist())
        got.append(r)
    np.testing.assert_equal(got[1], got[0])


def test_names_pyg_and_pyro_import():
    import importlib
    for L, name in ((torch, 'torch'), (ember, 'ember')):
        assert isinstance(L.channels_last, L.memory_format) and L.sparse_csr != L.strided
        assert 'built with' in L.__config__.show()
        assert L._C._disabled_torch_function_impl(L.add, (), (L.ones(1), 1)).tolist() == [2.0]
        assert issubclass(L._C._LinAlgError, RuntimeError)
        for mod in ('types', 'utils.dlpack', 'distributed.rpc'):
            importlib.import_module(f'{name}.{mod}')
        assert L.serialization.MAP_LOCATION is not None
        assert L._tensor_str._tensor_str(L.arange(6.).reshape(2, 3), 0) == '[[0., 1., 2.],\n [3., 4., 5.]]'
        a = L.ops.aten
        assert a.sort.stable(L.tensor([3., 1., 2.]), stable=True)[1].tolist() == [1, 2, 0]
        assert a.squeeze.default(L.ones(1, 2)).shape == (2,) and a.squeeze.dim(L.ones(1, 2), 0).shape == (2,)
        assert L.arange(L.tensor(1.), L.tensor(3.)).tolist() == [1.0, 2.0]
    assert ember.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(ember.arange(3.))).tolist() == [0.0, 1.0, 2.0]


def test_products_with_inf_and_nan_are_silent():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert ember.tensor([[float('inf'), 1.]]).matmul(ember.ones(2, 2)).isinf().all()
        ember.nn.functional.linear(ember.tensor([[float('nan'), 1.]]), ember.ones(2, 2))


def test_where_of_integers_with_nan_or_inf_promotes_as_torch():
    got = []
    for L in (torch, ember):
        m, x = L.tensor([True, False]), L.tensor([1, 2])
        got.append([str(L.where(m, x, v).dtype).split('.')[-1] + str(L.where(m, x, v).tolist())
                    for v in (float('nan'), float('inf'), 2.5, 3)])
    assert got[1] == got[0]


def test_parameter_rebuilt_from_its_dict_as_accelerate_does():
    for L in (torch, ember):
        p = L.nn.Parameter(L.ones(2))
        q = type(p)(p.to('cpu'), **dict(p.__dict__, requires_grad=True))
        assert type(q) is L.nn.Parameter and q.tolist() == [1.0, 1.0] and q.requires_grad
        with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
            L.nn.Parameter(L.ones(1), foo=1)


def test_bernoulli_draws_as_torch():
    got = []
    for L in (torch, ember):
        L.manual_seed(5)
        a = L.bernoulli(L.tensor([.2, .9]).expand(3, 2)).tolist()
        L.manual_seed(0)
        x = L.zeros(2, 3).t()
        x.bernoulli_(0.5)
        L.manual_seed(3)
        got.append((a, x.tolist(), L.distributions.Bernoulli(L.tensor([0.3, 0.6])).sample((4,)).tolist()))
    assert got[1] == got[0]


def test_jit_trace_runs_the_function_as_torchs_tracer():
    import warnings
    got = []
    for L in (torch, ember):
        nxt = []
        for kw in ({}, {'check_trace': False}):
            L.manual_seed(0)
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                L.jit.trace(lambda a: L.rand(1) + a, (L.ones(1),), **kw)
            nxt.append(L.rand(1).item())
        got.append(nxt)
    assert got[1] == got[0]


def test_sort_and_flip_keep_a_dense_inputs_layout_as_torchs():
    # torch's sort writes into strides like its input's (dense ones kept, else dense in the input's order);
    # flip is a TensorIterator op. Before, ember returned C-contiguous results, so strides and .view differed.
    def strides(L):
        x = L.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
        y = L.arange(24.).reshape(4, 6)[:, ::2]
        out = []
        for t in (x, y, y.t()):
            for d in range(t.dim()):
                v, i = L.sort(t, d, descending=bool(d % 2))
                out += [v.stride(), i.stride(), L.argsort(t, d).stride(), L.flip(t, [d]).stride(), v.tolist()]
        out += [L.flip(x, [0, 2]).stride(), L.flip(x, [0, 2]).tolist(), L.msort(x).stride(), L.fliplr(x).stride()]
        m = L.empty(2, 3, 4, device='meta').permute(2, 0, 1)      # the meta functions give the same layouts
        out += [L.sort(m, 1)[0].stride(), L.sort(m, 1)[1].stride(), L.argsort(m, 2).stride(), L.flip(m, [0]).stride(),
                L.flip(L.empty(4, 6, device='meta')[:, ::2], [0]).stride()]
        return out
    assert strides(ember) == strides(torch)
    x = ember.arange(6.).reshape(2, 3).t().requires_grad_()
    ember.sort(x, 0, descending=True)[0].flip([1]).sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0]] * 3


def test_repr_helpers_pyg_edge_index_calls():
    # PyG's EdgeIndex.__repr__ compares the device with torch._C._get_default_device() and lays out its suffixes
    # with torch._tensor_str._add_suffixes(..., force_newline=False)
    out = []
    for L in (torch, ember):
        t = L._tensor_str._add_suffixes('EdgeIndex([[0, 1]]', ['nnz=2', 'sort_order=row'], 10, force_newline=False)
        f = L._tensor_str._add_suffixes('X([1]', ['nnz=1', 'a=2'], 2, force_newline=True)
        out.append((L._C._get_default_device(), t, f))
    assert out[0] == out[1]


def test_fastai_drives_the_loader_iterators_with_a_loader_of_its_own():
    # fastai's _FakeLoader: torch's private iterator reads loader._dataset_kind against _DatasetKind
    out = []
    for L in (torch, ember):
        from importlib import import_module
        dl = import_module(L.__name__ + '.utils.data.dataloader')

        class FakeLoader:
            _IterableDataset_len_called, _auto_collation, drop_last, in_order = None, False, False, True
            _index_sampler, generator, prefetch_factor = iter(int, 1), None, 2
            _dataset_kind = dl._DatasetKind.Iterable
            collate_fn = staticmethod(lambda x: x)
            pin_memory, num_workers, timeout, persistent_workers, pin_memory_device = False, 0, 0, False, ''

            def __init__(self):
                self.dataset = self

            def __iter__(self):
                return iter([L.ones(2), L.zeros(2)])
        out.append(([b.tolist() for b in dl._SingleProcessDataLoaderIter(FakeLoader())],
                    (dl._DatasetKind.Map, dl._DatasetKind.Iterable),
                    L.utils.data.DataLoader([1, 2])._dataset_kind))
    assert out[0] == out[1]


def test_private_utils_fastai_and_monai_import():
    import importlib
    import torch._utils as tu
    import ember._utils as eu
    out = []
    for L, u in ((torch, tu), (ember, eu)):
        ts = [L.ones(2, 2), L.zeros(3, dtype=L.float64), L.arange(5.)]
        flat = u._flatten_dense_tensors([ts[0], ts[2]])
        groups = [[tuple(t.shape) for t in g] for g in u._take_tensors(ts + [L.ones(30)], 60)]
        zoo = importlib.import_module(L.__name__ + '.utils.model_zoo')
        out.append((flat.tolist(), [tuple(t.shape) for t in u._unflatten_dense_tensors(flat, [ts[0], ts[2]])],
                    groups, L.serialization.DEFAULT_PROTOCOL, zoo.load_url is L.hub.load_state_dict_from_url,
                    u._import_dotted_name('collections.OrderedDict').__name__))
    assert out[0] == out[1]


def test_backends_flags_frozen_and_the_mutation_bracket():
    out = []
    for L in (torch, ember):
        b = L.backends
        allow = getattr(b, '__allow_nonbracketed_mutation')
        b.disable_global_flags()
        try:
            frozen = b.flags_frozen()
            with pytest.raises(RuntimeError) as err:
                b.cudnn.benchmark = True
            with allow():
                b.cudnn.deterministic = True
                b.cudnn.deterministic = False
            with b.cudnn.flags(enabled=False):
                inside = b.cudnn.enabled
            out.append((frozen, str(err.value).replace('ember.', 'torch.'), inside, b.cudnn.enabled))
        finally:        # undo disable_global_flags (torch keeps the switch in its module's globals)
            if L is ember:
                b._mutation['allowed'] = True
            else:
                b.flags_frozen.__globals__['__allow_nonbracketed_mutation_flag'] = True
        out.append(b.flags_frozen())
    assert out[0] == out[2] and out[1] is out[3] is False


def test_default_collate_keeps_a_tensor_subclass():
    out = []
    for L in (torch, ember):
        class M(L.Tensor):
            pass
        b = [L.ones(2).as_subclass(M), L.zeros(2).as_subclass(M)]
        collated = L.utils.data.default_collate(b)
        out.append((type(collated).__name__, collated.tolist(),
                    type(L.utils.data.default_collate([L.ones(2), L.zeros(2)])).__name__))
    assert out[0] == out[1]


def test_stack_of_permuted_inputs_is_contiguous_as_torchs():
    # fastai stacks CHW images permuted from HWC; np.stack kept their layout, so the batch's .view failed
    out = []
    for L in (torch, ember):
        a = [L.arange(48, dtype=L.uint8).reshape(4, 4, 3).permute(2, 0, 1) for _ in range(2)]
        b = [L.arange(48.).reshape(3, 4, 4).transpose(1, 2) for _ in range(3)]
        out.append((L.stack(a).stride(), L.stack(a, 2).stride(), L.stack(b, -1).stride(), L.stack(a).view(2, -1).shape,
                    L.stack(b).tolist(), str(L.stack([L.ones(2), L.zeros(2, dtype=L.int64)]).dtype).split('.')[1]))


# --- torch.quasirandom.SobolEngine (botorch) ---------------------------------------------------------------------

def test_sobol_state_is_torchs_for_every_dimension():
    # _sobol_engine_initialize_state_ from the Joe-Kuo table shipped as ember/data/sobol_directions.npz
    from ember.quasirandom import SobolEngine as E
    from torch.quasirandom import SobolEngine as T
    assert np.array_equal(E(21201).sobolstate.numpy(), T(21201).sobolstate.numpy())
    with pytest.raises(ValueError, match=r'\[1, 21201\]'):
        E(21202)


def _sobol_session(L, d, dtype, **kw):
    e = L.quasirandom.SobolEngine(d, **kw)
    out = [e.draw(1, dtype=dtype), e.draw(7, dtype=dtype)]
    e.fast_forward(5)
    out += [e.draw(3, dtype=dtype), e.draw(16, dtype=dtype)]
    e.reset()
    out.append(e.draw_base2(3, dtype=dtype))
    f = L.quasirandom.SobolEngine(d, **kw).fast_forward(4)
    out += [f.draw(5, dtype=dtype), f.draw(0, dtype=dtype), repr(e)]
    o = L.zeros(2)
    f.draw(2, out=o)
    return out + [o]


@pytest.mark.parametrize('d', [1, 4, 300])
@pytest.mark.parametrize('dtype', [None, 'float64'])
@pytest.mark.parametrize('scramble', [False, True])
def test_sobol_draws_torchs_points(d, dtype, scramble):
    # draw, fast_forward, reset, draw_base2 and out= as torch's; scrambling (seeded) draws torch's random bits
    kw = dict(scramble=True, seed=d) if scramble else {}
    got = _sobol_session(ember, d, dtype and getattr(ember, dtype), **kw)
    want = _sobol_session(torch, d, dtype and getattr(torch, dtype), **kw)
    assert len(got) == len(want) == 9
    for g, w in zip(got, want):
        if isinstance(w, str):
            assert g == w
        else:
            assert str(g.dtype) == str(w.dtype).replace('torch', 'ember') and np.array_equal(g.numpy(), w.numpy())


def test_sobol_engine_errors_and_ops():
    from ember.ops import aten
    e, t = ember.quasirandom.SobolEngine(2), torch.quasirandom.SobolEngine(2)
    e.draw(3), t.draw(3)
    for s in (e, t):
        with pytest.raises(ValueError, match='power of 2. 3 points have been previously generated'):
            s.draw_base2(2)
    for L in (ember, torch):        # a first draw(0) asks the operator for -1 points
        with pytest.raises(RuntimeError, match=r'negative dimension -1: \[-1, 2\]'):
            L.quasirandom.SobolEngine(2).draw(0)
    with pytest.raises(RuntimeError, match='"_sobol_engine_draw" not implemented for \'Long\''):
        aten._sobol_engine_draw(e.quasi, 2, e.sobolstate, 2, 0, dtype=ember.int64)
    with pytest.raises(RuntimeError, match='sobolstate needs to be of type Long'):
        aten._sobol_engine_ff_(e.quasi, 2, e.sobolstate.float(), 2, 0)
    # the operators run on Meta too (shapes only)
    r, q = aten._sobol_engine_draw(e.quasi.to('meta'), 5, e.sobolstate.to('meta'), 2, 3, dtype=None)
    assert r.shape == (5, 2) and r.dtype == ember.float32 and q.dtype == ember.int64
    st = ember.zeros(3, 30, dtype=ember.long)
    aten._sobol_engine_initialize_state_(st, 3)
    aten._sobol_engine_scramble_(st, ember.ones(3, 30, 30, dtype=ember.long).tril(), 3)
    tt = torch.zeros(3, 30, dtype=torch.long)
    torch._sobol_engine_initialize_state_(tt, 3)
    torch._sobol_engine_scramble_(tt, torch.ones(3, 30, 30, dtype=torch.long).tril(), 3)
    assert st.tolist() == tt.tolist()


# --- torch.optim.<algorithm> modules (botorch, pytorch-forecasting, torch-optimizer) -------------------------------

OPTIM_MODULES = ('adam', 'adamw', 'sgd', 'rmsprop', 'adagrad', 'adadelta', 'adamax', 'asgd', 'nadam', 'radam', 'rprop',
                 'lbfgs', 'sparse_adam', '_adafactor', '_muon', 'optimizer')


@pytest.mark.parametrize('name', OPTIM_MODULES)
def test_optim_algorithm_modules(name):
    import importlib
    e, t = importlib.import_module(f'ember.optim.{name}'), importlib.import_module(f'torch.optim.{name}')
    names = getattr(t, '__all__')
    assert sorted(getattr(e, '__all__', names)) == sorted(names)
    for n in names:
        assert callable(getattr(e, n))
        if n[0].isupper():
            assert getattr(e, n) is getattr(ember.optim, n)


def test_optim_adamw_function_is_decoupled_adam():
    from ember.optim.adamw import adamw
    from torch.optim.adamw import adamw as t_adamw
    out = []
    for L, fn in ((ember, adamw), (torch, t_adamw)):
        p, g = L.ones(3), L.arange(3.)
        m, v = L.zeros(3), L.zeros(3)
        fn([p], [g], [m], [v], [L.zeros(3)], [L.tensor(1.)], amsgrad=False, beta1=0.9, beta2=0.999, lr=0.1,
           weight_decay=0.5, eps=1e-8, maximize=False)
        out.append(p.tolist())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6)


def test_global_optimizer_step_hooks():
    import importlib
    logs = []
    for L in (ember, torch):
        log = []
        mod = importlib.import_module(f'{L.__name__}.optim.optimizer')
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.ones(2)
        opt = L.optim.SGD([p], lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: log.append('own pre'))
        opt.register_step_post_hook(lambda o, a, k: log.append('own post'))
        handles = [mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append(('pre', type(o).__name__))),
                   mod.register_optimizer_step_post_hook(lambda o, a, k: log.append('post'))]
        opt.step()
        for h in handles:
            h.remove()
        opt.step()
        bad = mod.register_optimizer_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError, match='must return None or a tuple of'):
            opt.step()
        bad.remove()
        logs.append(log)
    assert logs[0] == logs[1] and len(logs[0]) == 6


# --- names kornia, botorch, e3nn and transformers reach for ------------------------------------------------------

_RUN_PROG = '''
import torch
from torch.optim.adam import Adam
from torch.optim.adamw import AdamW
from torch.fx.experimental.proxy_tensor import get_proxy_mode
from torch.quasirandom import SobolEngine
print(torch.torch is torch, torch.torch.Tensor is torch.Tensor, Adam is torch.optim.Adam, AdamW.__name__)
print(get_proxy_mode(), torch._C._are_functorch_transforms_active(), isinstance(3, torch.SymInt), torch.complex32)
print(SobolEngine(3, scramble=True, seed=7).draw(2).tolist())
'''


def test_torch_names_under_ember_run(tmp_path):
    import os
    import subprocess
    import sys
    (tmp_path / 'prog.py').write_text(_RUN_PROG)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    got = subprocess.run([sys.executable, '-m', 'ember', 'run', 'prog.py'], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    want = subprocess.run([sys.executable, 'prog.py'], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and len(want.stdout.splitlines()) == 3


def test_get_proxy_mode_inside_make_fx():
    import importlib
    seen = []
    for L in (ember, torch):
        pt = importlib.import_module(f'{L.__name__}.fx.experimental.proxy_tensor')

        def f(x):
            seen.append(type(pt.get_proxy_mode()).__name__)
            return x + 1
        pt.make_fx(f)(L.ones(2))
        seen.append(pt.get_proxy_mode())
    assert seen == ['ProxyTorchDispatchMode', None] * 2


def _transforms_active(L):
    active = L._C._are_functorch_transforms_active
    seen = [active()]

    def f(x):
        seen.append(active())
        return x * 2
    one = L.ones(2)
    L.func.vmap(f)(one)
    L.func.grad(lambda x: f(x).sum())(one)
    L.func.jvp(f, (one,), (one,))
    L.func.vjp(f, one)
    L.func.functionalize(f)(one)
    L.func.jacrev(f)(one)
    fw = __import__(f'{L.__name__}.autograd.forward_ad', fromlist=['dual_level'])
    with fw.dual_level():       # a plain dual level is no functorch transform
        seen.append(active())

    def g(x):
        seen.append((L._C._functorch.is_batchedtensor(x), L._C._functorch.is_legacy_batchedtensor(x)))
        return x
    L.func.vmap(g)(one)
    g(one)
    return seen + [active()]


def test_functorch_transforms_active():
    assert _transforms_active(ember) == _transforms_active(torch) == \
        [False] + [True] * 6 + [False, (True, False), (False, False), False]


def test_sym_types_and_complex32():
    for L in (ember, torch):
        assert not isinstance(3, L.SymInt) and not isinstance(3.0, L.SymFloat) and not isinstance(True, L.SymBool)
    c, t = ember.complex32, torch.complex32
    assert ember.chalf is c and repr(c) == 'ember.complex32'
    assert (c.itemsize, c.is_complex, c.is_floating_point, c.is_signed) == \
        (t.itemsize, t.is_complex, t.is_floating_point, t.is_signed)
    assert c.to_real() is ember.float16 and c.to_complex() is c
    import pickle
    assert pickle.loads(pickle.dumps(c)) is c
    for name in ('bool', 'uint8', 'int64', 'float16', 'bfloat16', 'float32', 'float64', 'complex64', 'complex128'):
        for a, b in ((c, getattr(ember, name)), (getattr(ember, name), c)):
            want = torch.promote_types(*(t if x is c else getattr(torch, name) for x in (a, b)))
            assert repr(ember.promote_types(a, b)) == repr(want).replace('torch', 'ember')
    for other in ('uint16', 'float8_e4m3fn'):
        with pytest.raises(RuntimeError, match='attempted to promote ComplexHalf and'):
            ember.promote_types(c, getattr(ember, other))
    with pytest.raises(TypeError, match='cannot store or compute complex32'):     # NumPy has no complex half
        ember.zeros(2, dtype=c)


def _checks(L):
    import warnings
    out = []

    def run(f):
        try:
            out.append(('ok', f()))
        except Exception as e:
            out.append((type(e).__name__, str(e).replace('ember._tensor.', 'torch.').replace('ember.', 'torch.')))
    run(lambda: L._assert_async(L.tensor(0)))
    run(lambda: L._assert_async(L.tensor([1, 1])))
    run(lambda: L._assert_async(L.tensor([])))
    run(lambda: L._assert_async(L.tensor(0.0), 'bad'))
    run(lambda: L._assert_async(L.tensor(float('nan')), 'bad'))
    run(lambda: L._check(L.tensor(True)))
    run(lambda: L._check(1))
    run(lambda: L._check(False))
    run(lambda: L._check(False, 'x'))
    run(lambda: L._check(False, lambda: 'x'))
    run(lambda: L._check_index(False, lambda: 'x'))
    run(lambda: L._check_value(False, lambda: 3))
    run(lambda: L._check_type(False))
    run(lambda: L._check_not_implemented(False, lambda: 'ni'))
    run(lambda: L._check_with(Warning, False, None))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        run(lambda: L._check_is_size(-1, lambda: 'neg'))
        run(lambda: L._check_is_size(3, max=2))
        run(lambda: L._check_is_size(2, max=2))
    out.append([(str(x.message), x.category) for x in w])
    run(lambda: L._check_tensor_all(L.tensor([True, False]), lambda: 'all'))
    run(lambda: L._check_tensor_all(L.tensor([True, True])))
    run(lambda: L._check_tensor_all(L.tensor([1, 1])))
    run(lambda: L._check_tensor_all(True))
    run(lambda: L._shape_as_tensor(L.ones(2, 3)).tolist())
    run(lambda: [str(getattr(L, '_cast_' + n)(L.ones(1)).dtype).split('.')[1]
                 for n in ('Byte', 'Char', 'Double', 'Float', 'Half', 'Int', 'Long', 'Short')])
    run(lambda: (L.sym_int(3.7), L.sym_int(-3.7), L.sym_float(2), L.sym_max(1, 2.0), L.sym_min(1, 2), L.sym_not(1),
                 L.sym_ite(True, 1, 2), L.sym_max(True, 2), L.sym_min(np.int64(3), 2), L.sym_max(np.float32(1.5), 1)))
    run(lambda: L.sym_max(1, '2'))
    run(lambda: L.sym_min(L.tensor(1), 2))
    run(lambda: (L.sym_int(L.tensor(3.5)), L.sym_float(L.tensor(3))))
    run(lambda: L.sym_ite(1, 1, 2))
    run(lambda: L.sym_ite(True, 1, 2.0))
    return out


def test_checks_and_sym_helpers():
    got, want = _checks(ember), _checks(torch)
    assert len(got) == len(want) == 31
    for g, w in zip(got, want):
        assert g == w


# --- indexing with an empty list (kornia) -------------------------------------------------------------------------

@pytest.mark.parametrize('idx', ['[[]]', '([],)', '[[], []]', '[[1.7]]', 'np.array([1.7])',
                                 'np.array([], dtype=np.float64)', 'np.array([2, 0], dtype=np.int32)', '(Ellipsis, [])',
                                 '[True, False, True]', '(slice(None), [])'])
def test_list_indices_are_long_unless_masks(idx):
    import warnings
    out = []
    for L in (ember, torch):
        x = L.arange(6.).reshape(3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            r = x[eval(idx)]
            x[eval(idx)] = -1.0
        out.append((tuple(r.shape), r.tolist(), x.tolist()))
    assert out[0] == out[1]


# --- torch.utils.tensorboard.summary (pytorch-forecasting, Lightning's hparams logging) --------------------------

def test_tensorboard_summary_builders():
    import importlib
    out = []
    for L in (ember, torch):
        s = importlib.import_module(f'{L.__name__}.utils.tensorboard.summary')
        exp, start, end = s.hparams({'lr': 0.1, 'opt': 'adam'}, {'loss': 1.0})
        sc = s.scalar('loss', L.tensor(2.5))
        h = s.histogram('w', L.arange(10.), 'auto')
        im = s.image('im', L.ones(3, 4, 5), dataformats='CHW')
        out.append([type(x).__name__ for x in (exp, start, end)] + [sc.value[0].tag, sc.value[0].simple_value,
                   h.value[0].histo.num, h.value[0].histo.sum, im.value[0].image.height, im.value[0].image.width])
    assert out[0] == out[1]


# --- checkpoint's device states, TorchScript's type classes (e3nn, torch-optimizer) ------------------------------

def test_checkpoint_device_states_on_cpu():
    from ember.utils import checkpoint as ec
    from torch.utils import checkpoint as tc
    for m, L in ((ec, ember), (tc, torch)):
        assert m.get_device_states(L.ones(2), [L.zeros(1)], 3) == ([], [])
        assert m.set_device_states([], []) is None
        assert m.DefaultDeviceType.get_device_type() == 'cpu'


def test_device_and_stream_obj_types():
    for L in (ember, torch):
        def f(device: str | L.DeviceObjType):
            return device
        assert f('cpu') == 'cpu'
        assert not isinstance(L.device('cpu'), L.DeviceObjType) and issubclass(L.StreamObjType, L.Type)
        assert (L.DeviceObjType.__name__, str(L.DeviceObjType.get()), str(L.StreamObjType.get())) == \
            ('DeviceObjType', 'Device', 'Stream')


# --- einsum's one-list form under __torch_function__ (opt_einsum's torch backend, e3nn) ----------------------------

def test_einsum_operand_list_reaches_torch_function_unpacked():
    import importlib
    out = []
    for L in (ember, torch):
        fx = importlib.import_module(f'{L.__name__}.fx')
        g = fx.Graph()
        tr = fx.proxy.GraphAppendingTracer(g)
        a, b = fx.Proxy(g.placeholder('a'), tr), fx.Proxy(g.placeholder('b'), tr)
        L.einsum('ij,jk->ik', (a, b))
        L.einsum('ij,jk->ik', [a, b])
        L.einsum('ij,jk->ik', a, b)
        out.append([(n.target.__name__, n.args) for n in g.nodes if n.op == 'call_function'])
        x, y = L.arange(6.).reshape(2, 3), L.ones(3, 2)
        out.append([L.einsum('ij,jk->ik', [x, y]).tolist(), L.einsum(x, [0, 1], y, [1, 2], [0, 2]).tolist()])
    assert str(out[:2]) == str(out[2:]) and len(out[0]) == 3
    assert ember.einsum is ember._python_functions.linalg.einsum       # not wrapped twice


# --- torch.dsmm / torch.hsmm, torch._tensor_str.printoptions ------------------------------------------------------

def _sparse_products(L):
    s = L.sparse_coo_tensor([[0, 2, 2], [1, 0, 1]], [2., 3., 4.], (4, 2))
    d = L.arange(6.).reshape(2, 3)
    h = L.hsmm(s, d)
    e = L.hsmm(L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0), (3, 2)), d)
    return [L.dsmm(s, d).tolist(), L.dsmm(L.ones(2, 2), d).tolist(), str(h.layout).split('.')[1], h.sparse_dim(),
            h.dense_dim(), h.is_coalesced(), h._indices().tolist(), h._values().tolist(), tuple(h.shape),
            h.to_dense().tolist(), tuple(e._indices().shape), tuple(e._values().shape), tuple(e.shape)]


def test_dsmm_and_hsmm():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        assert _sparse_products(ember) == _sparse_products(torch)


def test_printoptions_context():
    out = []
    for L in (ember, torch):
        before = L._tensor_str.get_printoptions()
        with L._tensor_str.printoptions(precision=2, sci_mode=False):
            inside = repr(L.tensor([1.23456, 1e-5]))
        out.append((inside, repr(L.tensor([1.23456])), before == L._tensor_str.get_printoptions(), sorted(before)))
    assert out[0] == out[1]


def test_deprecated_scalar_first_overloads():
    # torch-optimizer's Ranger (pytorch_ranger) and older code: a.add_(2.0, b), a.addcmul_(0.5, b, c), addmm(beta,
    # M, alpha, A, B) reordered as torch's deprecated.yaml says (NOTE [deprecated scalar-first overloads])
    import warnings
    out = []
    for L in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            a, b, c = L.ones(2), L.full((2,), 2.), L.full((2,), 3.)
            a.add_(2.0, b)
            r1 = L.add(a, 2.0, b)
            a.addcmul_(0.5, b, c)
            a.addcdiv_(2.0, b, c)
            M, A = L.ones(2, 2), L.eye(2)
            r2, r3, r4 = L.addmm(0.5, M, 2.0, A, A), L.addmm(0.5, M, A, A), M.addmm(0.5, 2.0, A, A)
            a.sub_(1.0, b)
            out.append((a.tolist(), r1.tolist(), r2.tolist(), r3.tolist(), r4.tolist(), L.sub(a, 2, b).tolist(),
                        L.baddbmm(0.5, L.ones(1, 2, 2), L.ones(1, 2, 2), L.ones(1, 2, 2)).tolist()))
    assert out[0] == out[1]


def test_deprecated_overload_warns_once_as_torch():
    import subprocess
    import sys
    code = ("import warnings\nwarnings.simplefilter('always')\nimport {L} as L\na, b = L.ones(2), L.ones(2)\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    a.add_(2.0, b); a.addcmul_(0.5, b, b); L.add(a, 2.0, b)\nprint(len(w), str(w[0].message))\n")
    got = [subprocess.run([sys.executable, '-c', code.format(L=L)], capture_output=True, text=True, check=True).stdout
           for L in ('torch', 'ember')]
    assert got[0].split(' (Triggered internally')[0] == got[1].strip()      # torch names its C++ line
