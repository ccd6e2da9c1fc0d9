"""Gaps found running published libraries under `ember run` (2026-11-27 night: lucidrains' libraries, torchani,
MACE, schnetpack, ...), each compared with torch."""
import numpy as np
import pytest
import torch

import ember


def _chain(t):
    names, f = [], t.grad_fn
    while f is not None and type(f).__name__ != 'AccumulateGrad':
        names.append(type(f).__name__)
        f = f.next_functions[0][0]
    return names


@pytest.mark.parametrize('make', [lambda a: a.transpose(1, 2).reshape(2, 12), lambda a: a[:, :2].reshape(4, 2, 2),
                                  lambda a: a.transpose(1, 2).flatten(), lambda a: a.reshape(6, 4)])
def test_reshape_that_copies_is_unsafe_view_of_a_clone(make):
    """torch's reshape copies into a clone seen through _unsafe_view: no view of anything (``_base`` None) and
    the graph UnsafeViewBackward0 over CloneBackward0 (vector-quantize's heads, local-attention's padding)."""
    want = make(torch.randn(2, 3, 4, requires_grad=True))
    got = make(ember.randn(2, 3, 4, requires_grad=True))
    assert _chain(got) == _chain(want)
    assert (got._base is None) == (want._base is None) and got._is_view() == want._is_view()


@pytest.mark.parametrize('call', [
    lambda lib, a, w: lib.addmm(lib.zeros(3), a, w), lambda lib, a, w: lib.addmm(lib.zeros(3).bfloat16(), a, w),
    lambda lib, a, w: lib.addmm(lib.zeros(3), a.float(), w.double()), lambda lib, a, w: a @ w,
    lambda lib, a, w: lib.nn.functional.linear(a, w.t(), lib.zeros(3)),
    lambda lib, a, w: lib.nn.functional.linear(a[None], w.t(), lib.zeros(3)),
    lambda lib, a, w: lib.nn.functional.linear(a.float(), w.t(), lib.zeros(3).double()),
    lambda lib, a, w: lib.nn.functional.linear(a.float()[0], w.t(), lib.zeros(3).double()),
    lambda lib, a, w: lib.nn.functional.linear(a, w.t())])
def test_matrix_product_dtype_errors_use_torchs_words(call):
    """addmm and a linear with bias say "mat1 and mat2 must have the same dtype" (mm's words are its own)."""
    with pytest.raises(RuntimeError) as want:
        call(torch, torch.randn(2, 4).bfloat16(), torch.randn(4, 3))
    with pytest.raises(RuntimeError) as got:
        call(ember, ember.randn(2, 4).bfloat16(), ember.randn(4, 3))
    assert str(got.value) == str(want.value)


def _ulps(got, want):
    import numpy as np
    m = np.isfinite(want) & (np.abs(want) > 1e-300)
    return np.max(np.abs(got[m] - want[m]) / np.spacing(np.abs(want[m])))


def test_erf_family_and_erfinv_are_within_a_few_ulps_of_torch():
    """Cody's erf/erfc/erfcx and AS 241's erfinv (NOTE [special functions without scipy]): float64 within 8 ulps of
    torch's over the whole line, the special values as torch's; float32 erfinv (timm's trunc_normal_) within an
    ulp."""
    import numpy as np
    x = np.concatenate([np.linspace(-30, 30, 60001), [0., -0., 1e-300, 0.46875, 4.0, 26.6, 27.5, np.inf, -np.inf,
                                                      np.nan]])
    for name, want_fn in (('erf', torch.erf), ('erfc', torch.erfc), ('erfcx', torch.special.erfcx)):
        want = want_fn(torch.tensor(x)).numpy()
        got = getattr(ember.special, name)(ember.tensor(x)).numpy()
        assert _ulps(got, want) <= 8, name
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)]), name
    y = np.concatenate([np.linspace(-1, 1, 40001), 1 - np.logspace(-16, -1, 200), [np.nan, 2.0, -1.5]])
    want = torch.erfinv(torch.tensor(y)).numpy()
    got = ember.erfinv(ember.tensor(y)).numpy()
    assert _ulps(got, want) <= 8
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    y32 = np.random.default_rng(0).uniform(-0.96, 0.96, 100_000).astype(np.float32)
    want = torch.erfinv(torch.tensor(y32)).numpy()
    got = ember.erfinv(ember.tensor(y32)).numpy()
    assert _ulps(got, want) <= 1 and np.mean(got == want) > 0.99


def test_asarray_of_a_storage_shares_its_memory_and_storages_build_as_torchs():
    """safetensors' load_file reads each tensor as asarray(storage[a:b], dtype=uint8): torch's is a zero-copy
    view (ember's walked the storage byte by byte: 30 s for a resnet18 Unet)."""
    import numpy as np
    for lib in (torch, ember):
        s = lib.UntypedStorage(8)
        u8 = lib.asarray(s, dtype=lib.uint8)
        u8[4] = 9
        assert s[4] == 9 and u8.shape == (8,) and lib.asarray(s).dtype == lib.int64 and lib.asarray(s).shape == (1,)
        assert lib.asarray(s[0:8], dtype=lib.float16).shape == (4,)
        assert lib.asarray(lib.ones(3).untyped_storage(), dtype=lib.float32).tolist() == [1.0, 1.0, 1.0]
        assert lib.UntypedStorage([1, 2, 3]).tolist() == [1, 2, 3] and lib.UntypedStorage().nbytes() == 0
        for order, want in (('little', [1, 0, 2, 0]), ('big', [0, 1, 0, 2])):
            got = lib.UntypedStorage.from_buffer(b'\x01\x00\x02\x00', byte_order=order, dtype=lib.int16).tolist()
            assert got == (want if np.little_endian else want[::-1])


def test_dropout_output_may_change_in_place_before_backward():
    """native_dropout saves only its mask (speechbrain's Conformer masks the dropped output in place)."""
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.randn(4, 5, requires_grad=True)
        y = lib.nn.functional.dropout(x, 0.5, True)
        y.masked_fill_(lib.arange(5) > 2, 0.0)
        y.sum().backward()
        if lib is torch:
            want = x.grad.numpy()
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_std_backward_is_zero_where_the_deviation_is_zero():
    """pykan's fit takes torch.std of all-zero activations: torch's gradient there is 0, not NaN."""
    for f in (lambda lib, x: lib.std(x, dim=0).sum(), lambda lib, x: x.std(), lambda lib, x: lib.std_mean(x, dim=0)[0].sum(),
              lambda lib, x: lib.std(x, dim=0, correction=0).sum()):
        grads = []
        for lib in (torch, ember):
            x = lib.zeros(4, 3, requires_grad=True)
            f(lib, x).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(grads[1], grads[0])
        assert not np.isnan(grads[1]).any()


def test_implicit_gradient_of_a_complex_loss_raises_as_torchs():
    """neuralop's LpLoss on complex data: torch refuses backward() of a complex scalar without a gradient."""
    for lib in (torch, ember):
        z = (lib.randn(3, dtype=lib.complex64, requires_grad=True) ** 2).sum()
        with pytest.raises(RuntimeError, match='grad can be implicitly created only for real scalar outputs but got '
                                               f'{lib.__name__}.complex64'):
            z.backward()
        assert lib.ones(2, dtype=lib.complex64).sum().requires_grad is False     # nothing to differentiate: no error


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_half_precision_uniform_draws_torchs_values(dtype):
    """torch computes x * (to - from) + from in float32 with one rounding and gives `from` where the rounded draw
    reaches `to`: a bf16 Linear (kaiming_uniform_) starts with torch's weights."""
    for lo, hi in ((-0.1, 0.1), (0., 1.), (0.25, 0.3), (-1 / 3, 0.7)):
        torch.manual_seed(0)
        want = torch.empty(50_000, dtype=getattr(torch, dtype)).uniform_(lo, hi).float().numpy()
        ember.manual_seed(0)
        got = ember.empty(50_000, dtype=getattr(ember, dtype)).uniform_(lo, hi).float().numpy()
        np.testing.assert_array_equal(got, want)
    torch.manual_seed(0)
    ember.manual_seed(0)
    np.testing.assert_array_equal(ember.nn.Linear(64, 64, dtype=ember.bfloat16).weight.detach().float().numpy(),
                                  torch.nn.Linear(64, 64, dtype=torch.bfloat16).weight.detach().float().numpy())


def test_parameter_of_a_tensor_subclass_keeps_the_subclass():
    """torchao's quantize_ assigns nn.Parameter(quantized_weight): torch keeps the subclass (its detach(), flagged
    _is_param), so the module's forward still dispatches to it."""
    for lib in (torch, ember):
        class Sub(lib.Tensor):
            pass
        p = lib.nn.Parameter(lib.ones(2).as_subclass(Sub), requires_grad=False)
        assert type(p) is Sub and isinstance(p, lib.nn.Parameter) and not p.requires_grad
        assert type(lib.nn.Parameter(lib.nn.Buffer(lib.ones(2)))) is lib.nn.Parameter


def test_eager_quantization_entry_points_are_deprecated_as_torchs():
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.Linear(4, 2)).eval()
        with pytest.warns(DeprecationWarning, match='torch.ao.quantization is deprecated') as rec:
            q = lib.ao.quantization.quantize_dynamic(model, {lib.nn.Linear}, dtype=lib.qint8)
        assert rec[0].filename == __file__ and 'deprecated' in lib.ao.quantization.quantize_dynamic.__deprecated__
        assert type(q[0]).__name__ == 'Linear' and q[0].weight().is_quantized


def test_small_gaps_of_speechbrain_smp_learn2learn():
    """The names and checks speechbrain, segmentation_models_pytorch and learn2learn met, each as torch's."""
    import warnings
    from ember.utils.data._utils.pin_memory import pin_memory
    assert pin_memory({'n': [1, (2, 3)], 's': 'a'}) == {'n': [1, (2, 3)], 's': 'a'}     # tensors need a GPU
    assert ember._C._jit_set_profiling_executor(False) is torch._C._jit_set_profiling_executor(False) is True
    assert ember._C._jit_set_profiling_executor(True) is torch._C._jit_set_profiling_executor(True) is False
    for lib in (torch, ember):
        assert lib.IntTensor(range(1, 4)).tolist() == [1, 2, 3] and lib.FloatTensor(range(2)).dtype == lib.float32
        with pytest.warns(UserWarning, match='it will be required to pass the indexing argument'):
            lib.meshgrid(lib.ones(2), lib.ones(3))
        with pytest.warns(UserWarning, match=r'sourceTensor.detach\(\).clone\(\) or'):
            lib.tensor(lib.ones(2))
        with pytest.raises(RuntimeError, match=r'expected weight to be at least 1 at dimension 0, but got weight of '
                                               r'size \[0, 8, 1, 1\] instead'):
            lib.nn.functional.conv2d(lib.ones(2, 8, 4, 4), lib.ones(0, 8, 1, 1))
        x = lib.randn(2, 64, 4, 4).to(memory_format=lib.channels_last)       # 2048 elements: ember's middle path
        assert lib.relu(x).is_contiguous(memory_format=lib.channels_last)
        w = lib.randn(3, requires_grad=True)
        p = w * 2
        p.grad = lib.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter('error')          # a non-leaf's grad that was set: read without a warning
            assert p.grad.tolist() == [1.0, 1.0, 1.0]


def test_swap_tensors_with_a_subclass_hands_calls_to_its_torch_function():
    """torchtune's FrozenNF4Linear: after swap_tensors(plain, subclass_obj) the plain object is the subclass and its
    __torch_function__ runs (ember moved the dispatch keys with the contents, so the bit followed the old class)."""
    got = {}
    for lib in (torch, ember):
        class Tagged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func is lib.Tensor.to:
                    return 'seen'
                with lib._C.DisableTorchFunctionSubclass():
                    return func(*args, **(kwargs or {}))
        a, b = lib.zeros(2), lib.ones(2).as_subclass(Tagged)
        lib.utils.swap_tensors(a, b)
        got[lib] = (type(a).__name__, a.to(lib.float32), type(b).__name__, b.to(lib.float64).dtype == lib.float64)
    assert got[ember] == got[torch] == ('Tagged', 'seen', 'Tensor', True)


def test_feature_pyramid_network_as_torchvision_documents_it():
    """torchgeo's FarSeg imports torchvision.ops.FeaturePyramidNetwork: lateral 1x1 convolutions, a top-down sum
    of nearest-upsampled coarser levels, 3x3 smoothing; torchvision's module names (its state dicts load)."""
    from collections import OrderedDict
    from ember.vision.ops import FeaturePyramidNetwork
    from ember.vision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7
    F = ember.nn.functional
    ember.manual_seed(0)
    fpn = FeaturePyramidNetwork([4, 8], 6, extra_blocks=LastLevelMaxPool())
    assert sorted(fpn.state_dict()) == ['inner_blocks.0.0.bias', 'inner_blocks.0.0.weight', 'inner_blocks.1.0.bias',
                                        'inner_blocks.1.0.weight', 'layer_blocks.0.0.bias', 'layer_blocks.0.0.weight',
                                        'layer_blocks.1.0.bias', 'layer_blocks.1.0.weight']
    assert float(fpn.inner_blocks[0][0].bias.abs().sum()) == 0.0
    a, b = ember.rand(1, 4, 8, 8), ember.rand(1, 8, 4, 4)
    out = fpn(OrderedDict(a=a, b=b))
    assert list(out) == ['a', 'b', 'pool'] and tuple(out['pool'].shape) == (1, 6, 2, 2)
    inner_b = fpn.inner_blocks[1](b)
    want_a = fpn.layer_blocks[0](fpn.inner_blocks[0](a) + F.interpolate(inner_b, size=(8, 8), mode='nearest'))
    np.testing.assert_allclose(out['a'].detach().numpy(), want_a.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(out['b'].detach().numpy(), fpn.layer_blocks[1](inner_b).detach().numpy(), rtol=1e-6)
    p67 = FeaturePyramidNetwork([4, 8], 6, extra_blocks=LastLevelP6P7(8, 6))(OrderedDict(a=a, b=b))
    assert list(p67) == ['a', 'b', 'p6', 'p7'] and tuple(p67['p7'].shape) == (1, 6, 1, 1)
    with pytest.raises(TypeError, match='extra_blocks should be of type ExtraFPNBlock'):
        FeaturePyramidNetwork([4], 6, extra_blocks=ember.nn.ReLU())


def test_mse_loss_is_torchs_operator():
    """print(loss.grad_fn) in the 60-minute blitz says MseLossBackward0, and a create_graph gradient goes through
    MseLossBackwardBackward0 (torchopt's graphs); values and gradients bit for bit."""
    xs = np.random.default_rng(0).standard_normal((37, 5)).astype(np.float32)
    ts = np.random.default_rng(1).standard_normal((37, 5)).astype(np.float32)
    for red in ('mean', 'sum', 'none'):
        out = []
        for lib in (torch, ember):
            x, t = lib.tensor(xs, requires_grad=True), lib.tensor(ts)
            loss = lib.nn.functional.mse_loss(x, t, reduction=red)
            g, = lib.autograd.grad(loss.sum(), x, create_graph=True)
            out.append((type(loss.grad_fn).__name__, type(g.grad_fn).__name__, loss.detach().numpy(),
                        g.detach().numpy()))
        assert out[1][:2] == out[0][:2] == (('MseLossBackward0' if red != 'none' else 'MseLossBackward0'),
                                            'MseLossBackwardBackward0')
        np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-6)    # a mean's summation order may differ
        np.testing.assert_array_equal(out[1][3], out[0][3])


def test_every_listed_saved_attribute_is_readable():
    """torchviz's make_dot(show_attrs=True, show_saved=True) reads every `_saved_*` name dir(grad_fn) lists and
    hashes the values: what a node lists it saved, and int lists come out as tuples, as torch's."""
    F = ember.nn.functional
    x, w = ember.randn(2, 3, 8, 8, requires_grad=True), ember.randn(4, 3, 3, 3, requires_grad=True)
    a = ember.randn(3, requires_grad=True)
    for out in (F.conv2d(x.detach(), w, stride=2, padding=1), F.conv2d(x, w), a ** 2, a.mean(),
                F.adaptive_avg_pool2d(x, 1), ember.cat([a, a]), F.max_pool2d(x, 2)):
        fn = out.grad_fn
        for name in (n for n in dir(fn) if n.startswith('_saved_')):
            v = getattr(fn, name)
            assert not isinstance(v, list), (type(fn).__name__, name)
            if not isinstance(v, ember.Tensor) and not (isinstance(v, tuple) and v and isinstance(v[0], ember.Tensor)):
                hash(v)


def test_torchscript_ir_classes_exist_for_annotations_and_isinstance():
    """fvcore annotates `-> torch._C.Graph` at import, torchview imports torch._C.ScriptMethod for an isinstance
    check: the names exist as in torch; ember has no TorchScript, so none is ever instantiated."""
    for name in ('Graph', 'Node', 'Value', 'Block', 'ScriptMethod', 'ScriptObject'):
        assert isinstance(getattr(torch._C, name), type) and isinstance(getattr(ember._C, name), type)
        assert not isinstance(ember.nn.Linear(2, 2), getattr(ember._C, name))
        with pytest.raises(RuntimeError, match='no TorchScript'):
            getattr(ember._C, name)()


def test_deprecation_warnings_and_class_paths_as_torchs(tmp_path):
    """functorch's transforms warn (FutureWarning at the caller: torchopt's implicit differentiation shows it),
    torch.jit.script/trace warn DeprecationWarning; MultiheadAttention and DataParallel name torch's modules."""
    import subprocess
    import sys
    prog = tmp_path / 'p.py'
    prog.write_text("import warnings, torch, functorch\nwarnings.simplefilter('always')\n"
                    "with warnings.catch_warnings(record=True) as r:\n"
                    "    functorch.grad(lambda x: x.sum())(torch.ones(2)); functorch.vmap(lambda x: x)(torch.ones(2))\n"
                    "    torch.jit.script(torch.nn.Linear(2, 2))\n"
                    "print(sorted({(w.category.__name__, str(w.message)[:70]) for w in r}))\n"
                    "print(torch.nn.MultiheadAttention.__module__, torch.nn.DataParallel.__module__)\n")
    want = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=120)
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    got = subprocess.run([sys.executable, '-m', 'ember', 'run', str(prog)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and 'FutureWarning' in got.stdout and 'DeprecationWarning' in got.stdout


def test_adaptive_log_softmax_with_loss_as_torchs():
    """nn.AdaptiveLogSoftmaxWithLoss (torch.nn.modules.adaptive): seeded init, outputs, loss, gradients, log_prob,
    predict and errors as torch's; a tail cluster narrower than 1 (in_features // div_value**k == 0) is a Linear
    of no features, which ember's linear kernel refused."""
    got = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[5, 12, 18], div_value=4.0)
        x = lib.randn(7, 16, requires_grad=True)
        out = m(x, lib.tensor([0, 4, 5, 11, 12, 19, 18]))
        out.loss.backward()
        single = m(x[0].detach(), lib.tensor(13))
        got[lib] = [out.output.detach().numpy(), out.loss.detach().numpy(), x.grad.numpy(),
                    m.log_prob(x).detach().numpy(), np.array(m.predict(x).tolist()), single.output.detach().numpy(),
                    np.array(type(out).__name__ == '_ASMoutput')]
        for bad in ((x, lib.tensor([0, 25, 1, 2, 3, 4, 5])), (x, lib.zeros(7, 2, dtype=lib.long))):
            with pytest.raises(RuntimeError):
                m(*bad)
        with pytest.raises(ValueError, match='cutoffs should be a sequence of unique'):
            lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[12, 5])
    for g, w in zip(got[ember], got[torch]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_overload_packets_have_torchs_names():
    """Dispatch modes key their tables by ``func.overloadpacket.__name__`` (flop counters, torchtnt-style
    trackers): the packet's name and qualified name are torch's."""
    from ember.utils._python_dispatch import TorchDispatchMode
    for lib in (torch, ember):
        p = lib.ops.aten.mm
        assert (p.__name__, p._qualified_op_name) == ('mm', 'aten::mm')
    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))
    a = ember.ones(2, 2)
    with Names():
        ember.mm(a, a)
    assert seen == ['mm']


def test_numpy_of_a_quantized_tensor_raises_as_torchs():
    for lib in (torch, ember):
        q = lib.quantize_per_tensor(lib.ones(2), 0.1, 0, lib.quint8)
        with pytest.raises(TypeError, match='Got unsupported ScalarType QUInt8'):
            q.numpy()


@pytest.mark.parametrize('p', [0.1, 0.5, 1 / 3])
def test_dropout_masks_from_integer_draws_equal_torchs(p):
    """Dropout compares the draws' 53 bits with an integer bound instead of forming float64 uniforms (a third of
    the memory traffic): the masks stay torch's, for contiguous and transposed inputs."""
    for make in (lambda lib: lib.ones(1000, 37), lambda lib: lib.ones(40, 30).t()):
        torch.manual_seed(0)
        want = torch.nn.functional.dropout(make(torch), p).numpy()
        ember.manual_seed(0)
        np.testing.assert_array_equal(ember.nn.functional.dropout(make(ember), p).numpy(), want)


def test_quantized_engines_as_torchs():
    assert ember.backends.quantized.supported_engines == torch.backends.quantized.supported_engines
    for name in ('none', 'foo'):
        with pytest.raises(RuntimeError) as want:
            torch.backends.quantized.engine = name
        with pytest.raises(RuntimeError) as got:
            ember.backends.quantized.engine = name
        assert str(got.value) == str(want.value)
    assert ember.backends.quantized.engine == torch.backends.quantized.engine == 'x86'


def test_quantized_conv_bias_is_a_parameter_as_torchs():
    types = []
    for lib in (torch, ember):
        tq = lib.ao.quantization
        m = lib.nn.Sequential(tq.QuantStub(), lib.nn.Conv2d(3, 4, 3), tq.DeQuantStub()).eval()
        m.qconfig = tq.default_qconfig
        tq.prepare(m, inplace=True)
        m(lib.randn(1, 3, 5, 5))
        tq.convert(m, inplace=True)
        types.append((type(m.state_dict()['1.bias']).__name__, type(m[1].bias()).__name__))
    assert types[1] == types[0] == ('Parameter', 'Parameter')
