"""torch's API surface as a CPU-only program meets it: device namespaces, switches, legacy tensor types and
constructors, ``Tensor.new_*``. Each answer is compared with torch 2.13 (CPU build) on this machine."""
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings('ignore', message='.*CUDA.*')


def same_outcome(expr):
    """Evaluate ``expr`` with ``T`` bound to torch and to ember: the same value, or the same exception class."""
    out = []
    for lib in (torch, ember):
        try:
            out.append(('ok', eval(expr, {'T': lib, 'np': np})))
        except Exception as e:      # noqa: BLE001  the class is what is compared
            out.append(('err', type(e)))
    return out


QUERIES = [
    'T.cuda.is_available()', 'T.cuda.device_count()', 'T.cuda.manual_seed(1)', 'T.cuda.manual_seed_all(1)',
    'T.cuda.seed()', 'T.cuda.seed_all()', 'T.cuda.current_device()', 'T.cuda.get_device_name()',
    'T.cuda.synchronize()', 'T.cuda.empty_cache()', 'T.cuda.memory_allocated()', 'T.cuda.max_memory_allocated()',
    'T.cuda.memory_reserved()', 'T.cuda.max_memory_reserved()', 'T.cuda.is_bf16_supported()',
    'T.cuda.is_initialized()', 'T.cuda.init()', 'T.cuda.get_rng_state()', 'T.cuda.get_device_capability()',
    'T.cuda.get_device_properties(0)', 'T.cuda.Event()', 'T.cuda.Stream()', 'T.cuda.current_stream()',
    'T.cuda.set_device(-1)', 'T.cuda.initial_seed()', 'T.cuda.get_arch_list()', 'T.cuda.mem_get_info()',
    'T.cuda.get_rng_state_all()', 'T.cuda.is_tf32_supported()', 'dict(T.cuda.memory_stats())',
    'T.accelerator.is_available()', 'T.accelerator.current_accelerator()', 'T.accelerator.device_count()',
    'T.accelerator.current_device_index()', 'T.accelerator.set_device_index(0)', 'T.accelerator.synchronize()',
    'T.backends.cudnn.enabled', 'T.backends.cudnn.benchmark', 'T.backends.cudnn.deterministic',
    'T.backends.cudnn.allow_tf32', 'T.backends.cudnn.is_available()', 'T.backends.cudnn.version()',
    'T.backends.cuda.matmul.allow_tf32', 'T.backends.cuda.is_built()', 'T.backends.cuda.flash_sdp_enabled()',
    'T.backends.cuda.math_sdp_enabled()', 'T.backends.mps.is_available()', 'T.backends.mps.is_built()',
    'T.backends.mkldnn.enabled', 'T.mps.is_available()', 'T.xpu.is_available()', 'T.xpu.device_count()',
    'T.mps.device_count()', 'T.mps.manual_seed(0)', 'T.xpu.manual_seed(0)', 'T.mps.synchronize()',
    'T.are_deterministic_algorithms_enabled()', 'T.get_float32_matmul_precision()',
    'T.is_deterministic_algorithms_warn_only_enabled()',
    # a CUDA tensor without CUDA
    'T.zeros(2, device="cuda")', 'T.ones(2).cuda()', 'T.ones(2).to("cuda")', 'T.ones(2).to("cuda:1")',
    'T.randn(2, device="cuda")', 'T.tensor([1.], device="cuda")', 'T.zeros(2, device="xpu")',
    'T.zeros(2, device="mps")', 'str(T.device("cuda"))', 'T.device("foo")', 'T.ones(2, device=T.device("cuda", 0))',
]


@pytest.mark.parametrize('expr', QUERIES)
def test_cpu_only_answers_match_torch(expr):
    theirs, ours = same_outcome(expr)
    assert ours == theirs


def test_absent_device_messages():
    with pytest.raises(AssertionError, match='Torch not compiled with CUDA enabled'):
        ember.zeros(2, device='cuda')
    with pytest.raises(AssertionError, match='Torch not compiled with CUDA enabled'):
        ember.cuda.current_device()
    with pytest.raises(RuntimeError, match='Cannot access accelerator device when none is available'):
        ember.accelerator.current_device_index()


def test_the_truthful_answers_where_ember_differs_from_torchs_build():
    # torch's CPU wheel links MKL, oneDNN and OpenMP; ember computes with NumPy and Python threads, so it says so
    for lib in (ember.backends.mkl, ember.backends.mkldnn, ember.backends.openmp):
        assert lib.is_available() is False
    assert torch.backends.mkl.is_available() is True


def test_switches_round_trip_like_torch():
    for lib in (torch, ember):
        lib.use_deterministic_algorithms(True, warn_only=True)
        lib.set_float32_matmul_precision('high')
        lib.backends.cudnn.benchmark = True
        got = (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
               lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32, lib.backends.cudnn.benchmark)
        lib.use_deterministic_algorithms(False)
        lib.set_float32_matmul_precision('highest')
        lib.backends.cudnn.benchmark = False
        after = (lib.are_deterministic_algorithms_enabled(), lib.get_float32_matmul_precision(),
                 lib.backends.cuda.matmul.allow_tf32)
        if lib is torch:
            want = (got, after)
        else:
            assert (got, after) == want
    assert want[0] == (True, True, 'high', True, True)
    with ember.backends.cudnn.flags(enabled=False):
        assert ember.backends.cudnn.enabled is False
    assert ember.backends.cudnn.enabled is True


def test_cuda_device_context_and_modules_import():
    import importlib
    for name in ('ember.backends.cudnn', 'ember.backends.cuda', 'ember.backends.mps', 'ember.cuda'):
        assert importlib.import_module(name)
    with ember.cuda.device(-1):
        pass
    with pytest.raises(AssertionError):
        with ember.cuda.device(0):
            pass


# --- legacy types ---------------------------------------------------------------

LEGACY = ['FloatTensor', 'DoubleTensor', 'HalfTensor', 'BFloat16Tensor', 'LongTensor', 'IntTensor', 'ShortTensor',
          'CharTensor', 'ByteTensor', 'BoolTensor']


def _as_np(t):
    t = t.float() if t.dtype in (torch.bfloat16, ember.bfloat16) else t
    return np.asarray(t.tolist())


@pytest.mark.parametrize('name', LEGACY)
@pytest.mark.parametrize('data', ['[1, 0, 3]', '[[1.5, 2], [0, 3]]', 'np.array([1, 0, 2])', 'np.array([1.5, 2.0])',
                                  'np.array(3.0)', 'np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2]'])
def test_legacy_constructor_from_data(name, data):
    theirs = getattr(torch, name)(eval(data))
    ours = getattr(ember, name)(eval(data))
    assert ours.dtype.name == str(theirs.dtype).split('.')[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(_as_np(ours), _as_np(theirs))


@pytest.mark.parametrize('name', LEGACY)
def test_legacy_constructor_sizes_and_isinstance(name):
    for args in [(2, 3), (0,), (), ]:
        t, e = getattr(torch, name)(*args), getattr(ember, name)(*args)
        assert tuple(e.shape) == tuple(t.shape)
    e = getattr(ember, name)(ember.Size([2, 1]))
    assert tuple(e.shape) == (2, 1)
    for other in LEGACY:
        x, y = getattr(torch, other)(2), getattr(ember, other)(2)
        assert isinstance(y, getattr(ember, name)) == isinstance(x, getattr(torch, name))
    assert not issubclass(getattr(ember, name), ember.Tensor)
    assert getattr(ember, name).__name__ == name


def test_legacy_errors_match_torch():
    for expr in ['T.FloatTensor(2.5)', 'T.FloatTensor(T.ones(2, dtype=T.int64))', 'T.Tensor(3.0)',
                 'T.ones(2).type("float")', 'T.ones(2).type(T.ones(2))']:
        theirs, ours = same_outcome(expr)
        assert theirs[0] == 'err' and ours == theirs, expr


def test_parameter_is_instance_of_float_tensor():
    assert isinstance(ember.nn.Parameter(ember.ones(2)), ember.FloatTensor)
    assert isinstance(torch.nn.Parameter(torch.ones(2)), torch.FloatTensor)


@pytest.mark.parametrize('spec', ['T.DoubleTensor', '"torch.IntTensor"', 'T.float16', '"torch.ByteTensor"',
                                  'T.LongTensor', 'T.BoolTensor'])
def test_type_conversion(spec):
    x = np.array([0.5, -1.5, 2.0])
    t = torch.tensor(x).float().type(eval(spec, {'T': torch}))
    e = ember.tensor(x).float().type(eval(spec, {'T': ember}))
    assert e.dtype.name == str(t.dtype).split('.')[1]
    np.testing.assert_array_equal(_as_np(e), _as_np(t))
    assert e.type().split('.')[1] == t.type().split('.')[1]


def test_type_names():
    for name in LEGACY:
        assert getattr(ember, name)(1).type().split('.') == ['ember', name]
        assert getattr(torch, name)(1).type() == f'torch.{name}'


@pytest.mark.parametrize('expr', ['T.Tensor(2, 3).shape', 'T.Tensor().shape', 'T.Tensor([1, 2]).dtype',
                                  'T.Tensor(np.array([1, 2])).dtype', 'T.Tensor(size=(2,)).shape',
                                  'T.Tensor([True]).tolist()', 'T.Tensor(T.ones(2, dtype=T.int64)).dtype',
                                  'T.Tensor([[1, 2], [3, 4]]).tolist()'])
def test_tensor_constructor_forms(expr):
    theirs, ours = same_outcome(expr)
    norm = lambda v: (v[0], str(v[1]).split('.')[-1] if v[0] == 'ok' and not isinstance(v[1], (list, tuple)) else
                      (tuple(v[1]) if v[0] == 'ok' else v[1]))
    assert norm(ours) == norm(theirs)


def test_tensor_constructor_aliases_its_tensor_argument():
    for lib in (torch, ember):
        a = lib.zeros(3)
        b = lib.Tensor(a)
        b[0] = 5
        assert a[0].item() == 5


@pytest.mark.parametrize('method,args,kw', [('new_zeros', ((2, 3),), {}), ('new_zeros', (2, 3), {}),
                                            ('new_ones', ([4],), {}), ('new_ones', (2,), {'dtype': 'int32'}),
                                            ('new_full', ((2,), 1.5), {}), ('new_empty', ((0, 2),), {}),
                                            ('new_tensor', ([1, 2],), {}), ('new_zeros', ((),), {})])
@pytest.mark.parametrize('src', ['plain', 'int', 'param'])
def test_new_methods_like_torch(method, args, kw, src):
    out = []
    for lib in (torch, ember):
        base = {'plain': lib.ones(2, dtype=lib.float64), 'int': lib.ones(2, dtype=lib.int64),
                'param': lib.nn.Parameter(lib.ones(2))}[src]
        k = {n: getattr(lib, v) for n, v in kw.items()}
        r = getattr(base, method)(*args, **k)
        assert type(r) is lib.Tensor
        vals = r.tolist() if method != 'new_empty' else None
        out.append((tuple(r.shape), str(r.dtype).split('.')[1], r.requires_grad, vals))
    assert out[1] == out[0]
    assert ember.ones(2).new_zeros(2, requires_grad=True).requires_grad


# --- names real programs use (ember/_python_functions/surface.py) ------------------------------------

def _cmp(expr, atol=1e-6):
    """Same values (or the same exception class) from torch and ember for ``expr``."""
    theirs, ours = same_outcome(expr)
    assert ours[0] == theirs[0], (expr, theirs, ours)
    if theirs[0] == 'err':
        assert ours[1].__name__ == theirs[1].__name__, expr
        return
    a, b = theirs[1], ours[1]
    if isinstance(a, (tuple, list)) and a and isinstance(a[0], torch.Tensor):
        assert len(a) == len(b), expr
        for x, y in zip(a, b):
            np.testing.assert_allclose(np.asarray(y.tolist()), np.asarray(x.tolist()), atol=atol, err_msg=expr)
            assert tuple(x.shape) == tuple(y.shape)
    elif isinstance(a, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape), expr
        assert str(a.dtype).split('.')[1] == b.dtype.name, expr
        np.testing.assert_allclose(np.asarray(b.tolist(), dtype=float), np.asarray(a.tolist(), dtype=float),
                                   atol=atol, err_msg=expr)
    elif isinstance(a, tuple):
        assert tuple(b) == a, expr
    else:
        assert a == b or (isinstance(a, float) and np.isnan(a) and np.isnan(b)), expr


SURFACE = [
    'T.pi', 'T.e', 'T.inf', 'T.nan', 'T.newaxis',
    'T.is_complex(T.ones(2))', 'T.is_nonzero(T.tensor([2]))', 'T.is_nonzero(T.tensor([]))',
    'T.is_nonzero(T.ones(2))', 'T.is_same_size(T.ones(2), T.ones(3))', 'T.ones(2).is_signed()',
    'T.ones(2, dtype=T.uint8).is_signed()', 'T.ravel(T.arange(6).reshape(2, 3).t())',
    'T.tensor_split(T.arange(7), 3)', 'T.tensor_split(T.arange(7), [1, 5])', 'T.tensor_split(T.arange(7), [5, 2, 9])',
    'T.tensor_split(T.arange(12).reshape(3, 4), 3, dim=1)', 'T.tensor_split(T.arange(3), 5)',
    'T.tensor_split(T.tensor(1), 2)', 'T.tensor_split(T.arange(6), T.tensor([2, 4]))',
    'T.hsplit(T.arange(12.).reshape(2, 6), 3)', 'T.hsplit(T.arange(6.), [2])', 'T.vsplit(T.arange(12.).reshape(4, 3), 2)',
    'T.dsplit(T.arange(16.).reshape(2, 2, 4), 2)', 'T.hsplit(T.arange(12.).reshape(2, 6), 4)',
    'T.vsplit(T.arange(3.), 1)',
    'T.diagflat(T.tensor([[1, 2], [3, 4]]))', 'T.diagflat(T.tensor([1., 2.]), 1)',
    'T.cov(T.tensor([[0., 1., 2.], [2., 1., 5.]]))', 'T.cov(T.tensor([1., 4., 2.]))',
    'T.cov(T.tensor([[0., 1., 2.], [2., 1., 5.]]), correction=0)',
    'T.cov(T.tensor([[0., 1., 2.], [2., 1., 5.]]), fweights=T.tensor([1, 2, 1]), aweights=T.tensor([0.5, 1., 2.]))',
    'T.cov(T.tensor([[1, 2, 4], [3, 1, 0]]))', 'T.corrcoef(T.tensor([[0., 1., 2.], [2., 1., 5.], [1., 1., 0.]]))',
    'T.dist(T.tensor([1., 2.]), T.tensor([4., 6.]))', 'T.dist(T.tensor([1., 2.]), T.tensor([4., 6.]), 1)',
    'T.tensor([1., 2.]).dist(T.tensor([4., 6.]), float("inf"))',
    'T.isin(T.tensor([1, 2, 3, 4]), T.tensor([2, 4, 7]))', 'T.isin(T.tensor([[1, 2], [3, 4]]), 3)',
    'T.isin(T.tensor([1, 2]), T.tensor([2]), invert=True)',
    'T.trapezoid(T.tensor([1., 2., 4.]))', 'T.trapezoid(T.tensor([1., 2., 4.]), T.tensor([0., 1., 3.]))',
    'T.trapezoid(T.tensor([[1., 2.], [3., 5.]]), dx=0.5, dim=0)', 'T.trapz(T.tensor([1., 2., 4.]))',
    'T.hann_window(5)', 'T.hann_window(5, periodic=False)', 'T.hann_window(1)', 'T.hann_window(0)',
    'T.hamming_window(6)', 'T.blackman_window(7, dtype=T.float64)', 'T.bartlett_window(5)',
    'T.bartlett_window(6, periodic=False)', 'T.scalar_tensor(3)', 'T.asarray([1, 2])', 'T.asarray(np.ones(2))',
    'T.ones(2, 3).sum_to_size(1, 3)', 'T.ones(2, 3, 4).sum_to_size(3, 1)', 'T.ones(2).is_mps', 'T.ones(2).is_xpu',
    'T.ones(2).is_quantized', 'T.ones(2).is_nested', 'T.ones(2).pin_memory()', 'T.ones(2).xpu()',
    'T.ones(2, 3).new(2).shape', 'T.ones(2, dtype=T.int64).new([1, 2])', 'T.ones(2).name',
    'T.get_device_module("cpu").is_available()', 'T.get_device_module("cuda").is_available()',
    'T.cpu.device_count()', 'T.cpu.current_device()',
]


@pytest.mark.parametrize('expr', SURFACE)
def test_surface_matches_torch(expr):
    _cmp(expr)


def test_fill_diagonal_and_apply_like_torch():
    out = []
    for lib in (torch, ember):
        a = lib.zeros(3, 3)
        a.fill_diagonal_(2)
        b = lib.zeros(7, 3)
        b.fill_diagonal_(5, wrap=True)
        c = lib.zeros(2, 2, 2)
        c.fill_diagonal_(1)
        d = lib.arange(4.)
        d.apply_(lambda v: v * v + 1)
        out.append([t.tolist() for t in (a, b, c, d)])
    assert out[0] == out[1]


def test_set_default_tensor_type_and_typename():
    try:
        with pytest.warns(UserWarning):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.ones(1).dtype is ember.float64
        with pytest.warns(UserWarning):
            ember.set_default_tensor_type('torch.FloatTensor')
        assert ember.ones(1).dtype is ember.float32
    finally:
        ember.set_default_dtype(ember.float32)
    assert ember.typename(ember.ones(1)) == 'ember.FloatTensor' and torch.typename(torch.ones(1)) == 'torch.FloatTensor'
    assert ember.typename(3) == torch.typename(3) == 'int'


def test_deliberately_absent_names_say_why():
    m = ember.nn.Linear(2, 2)
    assert ember.compile(m, disable=True) is m
    with pytest.raises(NotImplementedError, match='TorchScript'):
        ember.jit.freeze(m)
    for L in (torch, ember):         # only traced modules are saved (tests/test_jit_save.py)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
            L.jit.save(L.nn.Linear(2, 2), 'never-written.pt')
    with pytest.raises(AttributeError, match='TorchScript'):     # feature tests (hasattr) see it missing
        ember.jit.some_other_name()
    assert not hasattr(ember.jit, 'some_other_name') and hasattr(ember.jit, 'script_if_tracing')
    assert ember.jit.is_scripting() is torch.jit.is_scripting() is False
    f = lambda x: x     # noqa: E731
    assert ember.jit.ignore(f) is f and ember.jit.unused(f) is f


def test_variable_like_torch():
    out = []
    for lib in (torch, ember):
        V = lib.autograd.Variable
        x = lib.ones(2)
        v = V(x, requires_grad=True)
        y = v * 2
        w = V(y)
        out.append((v is x, v.requires_grad, x.requires_grad, v.is_leaf, isinstance(x, V), w.requires_grad,
                    w.grad_fn is None, type(v).__name__))
        with pytest.raises(TypeError, match='Variable data has to be a tensor'):
            V(3)
    assert out[0] == out[1]


@pytest.mark.parametrize('expr', ['T.unravel_index(T.tensor([4, 1]), (2, 3))', 'T.unravel_index(T.tensor([7]), (2, 3))',
                                  'T.unravel_index(T.tensor([-1, -6]), (2, 3))', 'T.unravel_index(T.tensor(5), (2, 3))',
                                  'T.unravel_index(T.tensor([[3, 2]]), (4,))', 'T.unravel_index(T.tensor([1.]), (2, 3))',
                                  'T.unravel_index(T.tensor([0]), ())'])
def test_unravel_index_like_torch(expr):
    _cmp(expr)


def test_interop_threads_and_anomaly_switches():
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError):
        ember.set_num_interop_threads(0)
    ember.set_anomaly_enabled(True)
    assert ember.is_anomaly_enabled() is True
    ember.set_anomaly_enabled(False)
    assert ember.is_anomaly_enabled() is False is torch.is_anomaly_enabled()


ASSERT_CLOSE = [
    ('T.tensor([1., 2.])', 'T.tensor([1., 2.1])', {}), ('T.tensor([1., 2.])', 'T.tensor([1., 2. + 1e-7])', {}),
    ('T.tensor([1., 2.])', 'T.tensor([1., 2.], dtype=T.float64)', {}),
    ('T.tensor([1., 2.])', 'T.tensor([1., 2.], dtype=T.float64)', {'check_dtype': False}),
    ('T.tensor([1., 2.])', 'T.tensor([1., 2., 3.])', {}), ('T.tensor([1., float("nan")])', 'T.tensor([1., float("nan")])', {}),
    ('T.tensor([1., float("nan")])', 'T.tensor([1., float("nan")])', {'equal_nan': True}),
    ('T.tensor([1, 2])', 'T.tensor([1, 3])', {}), ('T.tensor([1, 2])', 'T.tensor([1, 2])', {}),
    ('1.0', '1.0 + 1e-9', {}), ('T.tensor([1., 2.])', '[1., 2.]', {}),
    ('T.tensor([1., 2.])', 'T.tensor([1.5, 2.])', {'rtol': 0.5, 'atol': 0.0}),
    ('T.tensor([1., 2.])', 'T.tensor([1.5, 2.])', {'rtol': 0.5}),
    ('[T.ones(2), {"a": T.zeros(1)}]', '[T.ones(2), {"a": T.zeros(1)}]', {}),
    ('[T.ones(2), {"a": T.zeros(1)}]', '[T.ones(2), {"a": T.ones(1)}]', {}),
    ('T.ones(2, dtype=T.float16)', 'T.ones(2, dtype=T.float16) + 5e-4', {}),
]


@pytest.mark.parametrize('a,b,kw', ASSERT_CLOSE)
def test_assert_close_like_torch(a, b, kw):
    msgs = []
    for lib in (torch, ember):
        try:
            lib.testing.assert_close(eval(a, {'T': lib}), eval(b, {'T': lib}), **kw)
            msgs.append(None)
        except (AssertionError, TypeError, ValueError) as e:
            msgs.append((type(e).__name__, str(e).replace('torch.', '').replace('ember.', '')))
    if msgs[0] is None or msgs[0][0] != 'AssertionError' or 'not close' not in msgs[0][1]:
        assert (msgs[1] and msgs[1][0]) == (msgs[0] and msgs[0][0])
        if msgs[0] and 'attribute' in msgs[0][1]:
            assert msgs[1][1] == msgs[0][1]
    else:   # the report's first lines agree (numbers are printed from float64 in ember)
        assert msgs[1][1].split('\n')[:3] == msgs[0][1].split('\n')[:3]


def test_version_fields_like_a_cpu_build():
    assert ember.version.cuda is torch.version.cuda is None
    assert ember.version.hip is torch.version.hip is None
    assert ember.version.__version__ == ember.__version__


@pytest.mark.parametrize('start,size', [((6,), (2, 2)), ((2, 3), (6,)), ((2, 3), (3, 3)), ((4,), (0,)),
                                        ((2, 2), ()), ((3,), (2, 5))])
def test_resize_like_torch(start, size):
    out = []
    for lib in (torch, ember):
        x = lib.arange(float(np.prod(start))).reshape(start).clone()
        r = x.resize_(*size) if size else x.resize_(size)
        keep = min(int(np.prod(start)), int(np.prod(size)))
        out.append((r is x, tuple(x.shape), x.reshape(-1)[:keep].tolist()))
    assert out[0] == out[1]
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match='cannot resize variables that require grad'):
            lib.ones(2, requires_grad=True).resize_(3)
        assert tuple(lib.zeros(2).resize_as_(lib.ones(3, 1)).shape) == (3, 1)


def test_onnx_export_takes_torchs_arguments(tmp_path):
    onnx = pytest.importorskip('onnx')
    import ember.onnx
    assert ember.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    seen = []

    class Probe(ember.nn.Linear):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return super().forward(x)
    ember.onnx.export(Probe(2, 2), ember.ones(1, 2), str(tmp_path / 'm.onnx'))      # args: one tensor, as torch
    assert seen == [True] and ember.onnx.is_in_onnx_export() is False
    onnx.checker.check_model(onnx.load(str(tmp_path / 'm.onnx')))


@pytest.mark.parametrize('call', ['t_()', 'transpose_(0, 1)', 'swapdims_(1, 0)', 'swapaxes_(0, 1)', 'unsqueeze_(0)',
                                  'unsqueeze_(-1)', 'squeeze_()', 'squeeze_(1)'])
def test_inplace_view_ops_like_torch(call):
    out = []
    for lib in (torch, ember):
        base = lib.arange(6.).reshape(2, 1, 3) if 'squeeze_' in call and 'un' not in call else lib.arange(6.).reshape(2, 3)
        alias = base.view(-1)
        v0 = base._version
        r = eval(f'base.{call}')
        alias[0] = 7.0                      # the geometry changed, the memory did not
        out.append((r is base, tuple(base.shape), base.stride(), base.tolist(), base._version - v0))
        y = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
            eval(f'y.{call}') if 'squeeze_' not in call or 'un' in call else y.unsqueeze_(0)
    assert out[0] == out[1]


HIST = ['T.histogram(X, bins=4)', 'T.histogram(X, bins=3, range=(0., 3.))', 'T.histogram(X, bins=T.tensor([0., 1.5, 2., 5.]))',
        'T.histogram(X, bins=4, weight=T.tensor([1., 2, 1, 1, 3]), density=True)', 'T.histogram(T.ones(3), bins=2)',
        'T.histogram(T.tensor([]), bins=2)', 'T.histogram(X.double(), 2)', 'T.histogram(X, 7, range=(-1., 10.))',
        'X.histogram(5)', 'T.histogram(T.tensor([[0.1, 0.2], [0.9, 0.5]]), 3, weight=T.tensor([[1., 2.], [3., 4.]]))',
        'T.histogram(T.tensor([1, 2]), 2)', 'T.histogram(X, 0)', 'T.histogram(X, 2, range=(3., 1.))',
        'T.histogram(T.tensor(np.linspace(0, 1, 101), dtype=T.float32), 10)', 'T.histogram(T.tensor(np.linspace(-1, 3, 57)), 8)']


@pytest.mark.parametrize('expr', HIST)
def test_histogram_like_torch(expr):
    out = []
    for lib in (torch, ember):
        try:
            r = eval(expr, {'T': lib, 'np': np, 'X': lib.tensor([1., 2, 1, 4, 2.5])})
            out.append(('ok', type(r).__name__, [np.asarray(t.tolist()) for t in r], [t.dtype.__repr__().split('.')[-1] for t in r]))
        except Exception as e:      # noqa: BLE001
            out.append(('err', type(e).__name__))
    assert out[0][:2] == out[1][:2]
    if out[0][0] == 'ok':
        assert out[0][3] == out[1][3]
        for a, b in zip(out[0][2], out[1][2]):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
        assert len(out[1][2]) == 2


def test_public_functions_pickle_by_reference():
    """Modules keep functions as attributes (TransformerEncoderLayer.activation = F.relu) and programs save
    whole models: every public function of ember and ember.nn.functional pickles to itself, as torch's do."""
    import pickle
    import types
    import ember.nn.functional as F
    checked = 0
    for ns in (ember, F):
        for name in dir(ns):
            fn = getattr(ns, name)
            if name.startswith('_') or not isinstance(fn, types.FunctionType):
                continue
            assert pickle.loads(pickle.dumps(fn)) is fn, f'{ns.__name__}.{name}'
            checked += 1
    assert checked > 200
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16)
    assert pickle.loads(pickle.dumps(layer)).activation is F.relu


def test_peak_memory_resets_are_no_ops():
    # torch's CPU build fails on a missing C binding here (AttributeError: torch._C._cuda_resetPeakMemoryStats);
    # benchmark scripts call them next to max_memory_allocated(), whose answer (0) they leave unchanged
    for name in ('reset_peak_memory_stats', 'reset_accumulated_memory_stats', 'reset_max_memory_allocated',
                 'reset_max_memory_cached'):
        assert hasattr(torch.cuda, name)
        assert getattr(ember.cuda, name)() is None
    assert ember.cuda.max_memory_allocated() == 0 and ember.cuda.memory_stats() == {}


# NOTE [numpy keyword aliases]: torch's argument parser takes axis= for dim= and keepdims= for keepdim=
NUMPY_NAMES = [
    'x.sum(1, keepdims=True)', 'x.sum(axis=1)', 'T.sum(x, axis=0, keepdims=True)', 'x.mean(axis=1, keepdims=True)',
    'T.mean(x, axis=0)', 'T.max(x, axis=1)', 'x.max(axis=1, keepdims=True)', 'x.amax(axis=0)', 'x.argmax(axis=1)',
    'x.argmin(axis=0, keepdims=True)', 'x.cumsum(axis=1)', 'x.squeeze(axis=0)', 'x.unsqueeze(axis=0)',
    'x.softmax(axis=1)', 'x.logsumexp(axis=1)', 'x.prod(axis=1)', 'x.all(axis=1)', 'x.any(axis=0)',
    'x.nansum(axis=1)', 'x.count_nonzero(axis=1)', 'x.median(axis=1)', 'x.sort(axis=1)', 'x.topk(1, axis=1)',
    'x.std(axis=1)', 'x.var(axis=1, keepdims=True)', 'T.std_mean(x, axis=1)', 'T.var_mean(x, axis=1)',
    'T.cat([x, x], axis=1)',
    # errors stay errors: an alias beside its own name, an unknown keyword, a required dim missing
    'x.sum(dim=1, axis=1)', 'x.sum(foo=1)', 'x.cumsum()', 'x.std(dim=0, axis=1)',
]


@pytest.mark.parametrize('expr', NUMPY_NAMES)
def test_numpy_keyword_aliases(expr):
    out = []
    for lib in (torch, ember):
        x = lib.arange(6.).reshape(2, 3)
        try:
            r = eval(expr, {'T': lib, 'x': x})
            out.append([np.asarray(v) for v in r] if isinstance(r, tuple) else np.asarray(r))
        except TypeError:
            out.append(TypeError)
    theirs, ours = out
    if theirs is TypeError or ours is TypeError:
        assert theirs is ours
    else:
        for t, o in zip(theirs if isinstance(theirs, list) else [theirs], ours if isinstance(ours, list) else [ours]):
            np.testing.assert_allclose(o, t, rtol=1e-6)


def test_numpy_keyword_aliases_leave_the_documented_signatures():
    import inspect
    assert str(inspect.signature(ember.cumsum)) == '(input, dim, *, dtype=None, out=None)'
    assert str(inspect.signature(ember.Tensor.amax)) == '(input, dim=(), keepdim=False)'


def test_functions_take_input_as_torch_names_self():
    """NOTE [input, not self]: torch's functions call the schema's ``self`` ``input``, by keyword and in their
    TypeErrors (pytorch/tutorials call torch.matmul(input=..., other=...))."""
    for lib in (torch, ember):
        a, b = lib.ones(2, 3), lib.ones(3, 2)
        assert lib.matmul(input=a, other=b).shape == (2, 2)
        assert lib.add(input=a, other=1).sum().item() == 12
        assert lib.sum(input=a, dim=1).shape == (2,)
        assert lib.max(input=a, dim=0).values.shape == (3,)
        assert lib.softmax(input=a, dim=1).shape == (2, 3)
        assert lib.where(a > 0, input=a, other=0.0).shape == (2, 3)
        with pytest.raises(TypeError, match=r"sin\(\): argument 'input' \(position 1\) must be Tensor, not float"):
            lib.sin(1.0)


def test_histogram_default_bins_and_the_scalar_warning():
    x = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    (th, te), (eh, ee) = torch.histogram(torch.tensor(x), density=True), ember.histogram(ember.tensor(x), density=True)
    np.testing.assert_allclose(eh.numpy(), th.numpy(), rtol=1e-5)
    np.testing.assert_allclose(ee.numpy(), te.numpy(), rtol=1e-6)
    # float() of a tensor that requires grad warns once per process, as torch's TORCH_WARN_ONCE
    import warnings
    from ember import _tensor
    _tensor._scalar_warned.clear()
    t = ember.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        float(t[0]), '%.2f' % t[1], float(t.detach()[0])
    assert [str(m.message).split('\n')[0] for m in w] == [
        'Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.']


def test_triangular_and_cholesky_solves_match_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4))
    a = a @ a.transpose(0, 2, 1) + 4 * np.eye(4)
    b = rng.standard_normal((3, 4, 2))
    for kw in ({'upper': False}, {'upper': True}, {'upper': True, 'left': False}, {'upper': False, 'unitriangular': True}):
        outs = []
        for lib in (torch, ember):
            A = lib.tensor(a, requires_grad=True)
            B = lib.tensor(b if kw.get('left', True) else b.transpose(0, 2, 1).copy(), requires_grad=True)
            X = lib.linalg.solve_triangular(A, B, **kw)
            X.sum().backward()
            outs.append((X.detach().numpy(), A.grad.numpy(), B.grad.numpy()))
        for t, e in zip(*outs):
            np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)
    for upper in (False, True):
        outs = []
        for lib in (torch, ember):
            L = lib.linalg.cholesky(lib.tensor(a), upper=upper).detach().requires_grad_(True)
            B = lib.tensor(b, requires_grad=True)
            X, inv = lib.cholesky_solve(B, L, upper=upper), L.cholesky_inverse(upper=upper)
            (X.sum() + inv.sum()).backward()
            outs.append((X.detach().numpy(), inv.detach().numpy(), L.grad.numpy(), B.grad.numpy()))
        for t, e in zip(*outs):
            np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-10)


def test_top_level_aliases():
    assert ember.GradScaler is ember.amp.GradScaler and torch.GradScaler is torch.amp.GradScaler
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError and issubclass(ember.OutOfMemoryError, RuntimeError)
    assert torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
