"""Gaps found running published libraries under `ember run` (2026-11-27 evening: torchio, asteroid-filterbanks,
torch-audiomentations, POT, torchquad, pytorch-minimize, laplace/asdl, nnsight), each compared with torch."""
import numpy as np
import pytest
import torch

import ember


def test_normal_with_0d_tensor_parameters_and_a_size():
    for lib in (ember, torch):
        lib.manual_seed(0)
        a = lib.normal(lib.tensor(0.), lib.tensor(1.), (5,))
        b = lib.normal(lib.tensor(0.), 2., size=(2, 3))
        c = lib.normal(1., lib.tensor(1.), (4,))
        if lib is ember:
            got = [x.numpy() for x in (a, b, c)]
        else:
            want = [x.numpy() for x in (a, b, c)]
        with pytest.raises(TypeError, match='normal\\(\\) received an invalid combination of arguments'):
            lib.normal(lib.zeros(2), lib.ones(2), (2,))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_hub_tqdm_and_c_is_tracing():
    from ember.hub import tqdm
    with tqdm(total=4, disable=True) as bar:
        bar.update(2)
    assert ember._C._is_tracing() is torch._C._is_tracing() is False


def test_cholesky_solve_and_inverse_read_only_the_factors_triangle():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    a = a @ a.T + 4 * np.eye(4)
    noise, b = np.triu(rng.standard_normal((4, 4)), 1), rng.standard_normal((4, 2))
    res = []
    for lib in (ember, torch):
        L = lib.linalg.cholesky(lib.from_numpy(a))
        Ln = L + lib.from_numpy(noise)
        B = lib.from_numpy(b)
        Lg = L.clone().requires_grad_()
        lib.cholesky_solve(B, Lg).sum().backward()
        res.append([lib.cholesky_solve(B, Ln).numpy(), lib.cholesky_inverse(Ln).numpy(),
                    lib.cholesky_solve(B, Ln.mT, upper=True).numpy(), lib.cholesky_inverse(Ln.mT, upper=True).numpy(),
                    Lg.grad.numpy()])
    for g, w in zip(*res):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_numpy_keyword_names_in_python_functions():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for lib in (ember, torch):
        t = lib.from_numpy(x)
        out = [lib.linalg.norm(t, axis=1, keepdims=True), lib.linalg.vector_norm(t, axis=0, keepdims=True),
               lib.quantile(t, 0.5, axis=1, keepdims=True), lib.special.softmax(t, axis=1)]
        if lib is ember:
            got = [o.numpy() for o in out]
        else:
            want = [o.numpy() for o in out]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_finfo_iinfo_of_python_types():
    for lib in (ember, torch):
        assert lib.finfo(float).bits == 64 and lib.finfo(float).eps == np.finfo(np.float64).eps
        assert lib.iinfo(int).max == 2 ** 63 - 1
        assert lib.finfo(complex).bits == 64
        with pytest.raises(TypeError):
            lib.iinfo(bool)


def test_vmap_internals_and_autograd_functional_helpers():
    from ember._vmap_internals import _vmap
    from ember.autograd.functional import (_construct_standard_basis_for, _tuple_postprocess, _grad_postprocess,
                                           _validate_v, _autograd_grad, _grad_preprocess)
    from torch.autograd import functional as TF
    out = _vmap(lambda x: (x * 2, None), allow_none_pass_through=True)(ember.ones(3, 2))
    assert out[1] is None and out[0].shape == (3, 2)
    got = _construct_standard_basis_for((ember.zeros(2), ember.zeros(3)), (2, 3))
    want = TF._construct_standard_basis_for((torch.zeros(2), torch.zeros(3)), (2, 3))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert _tuple_postprocess((ember.ones(1),), False).shape == (1,)
    assert _tuple_postprocess(((1, 2), (3, 4)), (True, False)) == (1, 3)
    x = ember.ones(2, requires_grad=True)
    (xi,) = _grad_preprocess((x,), create_graph=False, need_graph=True)
    (g,) = _autograd_grad(((xi * 3).sum(),), (xi,))
    assert not _grad_postprocess((g,), False)[0].requires_grad and g.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match='v is a tuple of invalid length'):
        _validate_v((ember.ones(1),), (ember.ones(1), ember.ones(1)), True)


def test_cuda_nvtx_imports_and_raises_torchs_error_without_cuda():
    from ember.cuda import nvtx
    for mod in (nvtx, torch.cuda.nvtx):
        with pytest.raises(RuntimeError, match='NVTX functions not installed'):
            mod.range_push('step')


def test_detect_fake_mode_and_unset_fake_temporarily():
    from ember._guards import detect_fake_mode
    from ember._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily
    assert detect_fake_mode() is None
    with FakeTensorMode() as mode:
        assert detect_fake_mode() is mode
        assert ember.ones(2).device.type == 'meta'
        with unset_fake_temporarily() as was:
            assert was is mode and detect_fake_mode() is None
            assert ember.ones(2).device.type == 'cpu'
        assert detect_fake_mode() is mode
    other = FakeTensorMode()
    assert detect_fake_mode({'x': [other.from_tensor(ember.ones(3))]}) is other


def test_shape_env_takes_torchs_settings():
    from ember.fx.experimental.symbolic_shapes import ShapeEnv
    env = ShapeEnv(assume_static_by_default=True, specialize_zero_one=False)
    assert env.settings['assume_static_by_default'] is True


def test_copy_from_a_number():
    for lib in (ember, torch):
        t = lib.zeros(3, dtype=lib.int64)
        t.copy_(5.7)
        f = lib.zeros(2)
        f.copy_(True)
        assert t.tolist() == [5, 5, 5] and f.tolist() == [1.0, 1.0]


def test_parameter_metaclass_counts_marked_tensors():
    from ember.nn.parameter import _ParameterMeta
    assert type(ember.nn.Parameter) is _ParameterMeta
    for lib in (ember, torch):
        t = lib.zeros(2)
        t._is_param = True
        assert isinstance(t, lib.nn.Parameter) and not isinstance(lib.zeros(1), lib.nn.Parameter)


def test_is_set_to():
    for lib in (ember, torch):
        a = lib.zeros(4)
        assert a.is_set_to(a) and a.is_set_to(a.view(4)) and not a.is_set_to(a.view(2, 2))
        assert not a.is_set_to(lib.zeros(4)) and not a[1:].is_set_to(a)


def test_from_file(tmp_path):
    res = []
    for lib in (ember, torch):
        f = str(tmp_path / f'{lib.__name__}.bin')
        t = lib.from_file(f, shared=True, size=6, dtype=lib.float32)
        t[:] = lib.arange(6.)
        private = lib.from_file(f, shared=False, size=6, dtype=lib.float32)
        private[0] = 100
        res.append((lib.from_file(f, shared=True, size=6, dtype=lib.float32).tolist(), private.tolist()))
        with pytest.raises(RuntimeError):
            lib.from_file(f, shared=False, size=100, dtype=lib.float32)
    assert res[0] == res[1]


def test_rpc_names_and_tensorboard_writer_module():
    assert ember.distributed.rpc.is_available() is False
    assert not isinstance(1, ember._C._distributed_rpc.PyRRef)
    import importlib.util
    if importlib.util.find_spec('tensorboardX') is not None:
        from ember.utils.tensorboard.writer import SummaryWriter
        assert SummaryWriter is ember.utils.tensorboard.SummaryWriter


def test_rnn_cells_have_docstrings():
    for name in ('RNNCell', 'LSTMCell', 'GRUCell', 'RNNCellBase'):
        assert getattr(ember.nn, name).__doc__


RUN_AS_TORCH = '''
import pickle, torch
print(torch.Tensor.__module__, torch.Size.__module__, torch.dtype.__module__, torch.Generator.__module__)
t = torch.tensor([1., 2.])
print(t, repr(torch.zeros(1, dtype=torch.float16)))
print(pickle.loads(pickle.dumps(torch.Tensor)) is torch.Tensor, pickle.loads(pickle.dumps(t)).tolist())
'''


def test_core_classes_name_torchs_modules_under_ember_run(tmp_path):
    import subprocess
    import sys
    script = tmp_path / 'prog.py'
    script.write_text(RUN_AS_TORCH)
    out = subprocess.run([sys.executable, '-m', 'ember', 'run', str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.stdout == want.stdout


def test_vmap_over_a_registered_container():
    res = []
    for lib in (ember, torch):
        pytree = lib.utils._pytree

        class Box:
            def __init__(self, a, b):
                self.a, self.b = a, b

        pytree.register_pytree_node(Box, lambda bx: ([bx.a, bx.b], None), lambda leaves, ctx: Box(*leaves))
        try:
            x = Box(lib.arange(6.).reshape(3, 2), lib.ones(3, 4))
            out = lib.vmap(lambda bx: Box(bx.a * 2 + bx.b.sum(), bx.b), (0,))(x)
            res.append((out.a.tolist(), out.b.shape))
        finally:
            pytree._deregister_pytree_node(Box)
    assert res[0] == res[1]


class _Point:
    def __init__(self, x):
        self.x = x


def test_get_unsafe_globals_in_checkpoint(tmp_path):
    import collections
    for lib in (ember, torch):
        p = str(tmp_path / f'{lib.__name__}.pt')
        lib.save({'sd': collections.OrderedDict(w=lib.ones(2)), 'n': 3}, p)
        assert lib.serialization.get_unsafe_globals_in_checkpoint(p) == []
        lib.save({'p': _Point(1), 't': lib.ones(1)}, p)
        assert lib.serialization.get_unsafe_globals_in_checkpoint(p) == [f'{__name__}._Point']
        with lib.serialization.safe_globals([_Point]):
            assert lib.serialization.get_unsafe_globals_in_checkpoint(p) == []


def test_a_users_pickle_module_never_sees_storage_classes(tmp_path):
    import pickle
    seen = []

    class PM:
        class Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                seen.append((module, name))
                if 'Storage' in name:
                    raise pickle.UnpicklingError(f'refused {module}.{name}')
                if module.split('.')[0] == 'torch':       # as under `ember run`, where torch is ember
                    module = 'ember' + module[len('torch'):]
                return super().find_class(module, name)
    p = str(tmp_path / 'c.pt')
    torch.save({'t': torch.tensor([0.5, 1.5]), 'i': torch.arange(3)}, p)
    out = ember.load(p, weights_only=False, pickle_module=PM)
    assert out['t'].tolist() == [0.5, 1.5] and out['i'].tolist() == [0, 1, 2]
    assert not any('Storage' in n for _, n in seen)


def test_legacy_storage_classes():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for lib in (ember, torch):
            s = lib.FloatStorage(3)
            assert isinstance(s, lib.TypedStorage) and isinstance(s, lib.FloatStorage)
            assert not isinstance(s, lib.LongStorage) and s.size() == 3 and s.dtype == lib.float32
            assert lib.LongStorage([1, 2]).tolist() == [1, 2] and lib.FloatStorage.dtype == lib.float32


def test_setitem_of_a_value_that_does_not_broadcast_gives_torchs_expand_error():
    msgs = []
    for lib in (ember, torch):
        x = lib.zeros(4, 10)
        row = []
        for idx, val in ((slice(None), lib.zeros(3, 10)), (slice(1, 3), lib.zeros(3, 10)),
                         (slice(None), lib.ones(2, 1, 10))):
            with pytest.raises(RuntimeError) as e:
                x[idx] = val
            row.append(str(e.value).replace('ember.', 'torch.'))
        x[1:2] = lib.ones(1, 1, 10) * 5
        row.append(x.sum().item())
        msgs.append(row)
    assert msgs[0] == msgs[1]


def test_import_paths_mmengine_and_segment_anything_use():
    from ember.nn.modules.conv import _ConvTransposeMixin, _ConvTransposeNd
    from ember.distributed.fsdp.api import ShardingStrategy, StateDictType  # noqa: F401
    from ember.vision.ops.boxes import batched_nms, box_area  # noqa: F401
    assert issubclass(_ConvTransposeMixin, _ConvTransposeNd)
    for name in ('BoolTensor', 'LongTensor', 'FloatTensor', 'HalfTensor'):
        cls = getattr(ember.cuda, name)
        assert hasattr(torch.cuda, name) and not isinstance(ember.ones(1, dtype=cls.dtype), cls)
    with pytest.raises(RuntimeError, match='no TorchScript tracer'):
        ember.jit._get_trace_graph(lambda x: x, (ember.ones(1),))


def test_numpy_ufuncs_given_a_tensor_return_a_tensor():
    import warnings
    res = []
    for lib in (ember, torch):
        t, a = lib.ones(2), np.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)      # torch's own __array_wrap__ signature
            out = [t + a, t * a, np.exp(t), np.add(t, 1), np.greater(t, 0.5), np.exp(lib.tensor(1.))]
        res.append([(type(r).__name__, str(r.dtype).split('.')[-1], tuple(r.shape), r.tolist()) for r in out])
    assert res[0] == res[1]


def test_pad_packed_sequence_batch_first_is_a_transposed_view():
    res = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        seqs = [lib.randn(4, 2), lib.randn(3, 2), lib.randn(1, 2)]
        packed = lib.nn.utils.rnn.pack_sequence(seqs)
        out, lengths = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)
        lib.manual_seed(1)
        mask = lib.nn.functional.dropout(out, 0.5).ne(0)
        res.append((out.stride(), out.is_contiguous(), lengths.tolist(), mask.flatten().tolist()))
    assert res[0] == res[1]


def test_load_from_an_object_without_seekable():
    import io
    import mmap
    buf = io.BytesIO()
    ember.save({'w': ember.arange(3.)}, buf)
    raw = buf.getvalue()
    m = mmap.mmap(-1, len(raw))
    m.write(raw)
    m.seek(0)
    assert ember.load(m)['w'].tolist() == [0.0, 1.0, 2.0]


def test_jit_script_module_is_torchs_jit_disabled_base():
    for lib in (ember, torch):
        class M(lib.jit.ScriptModule):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))

            @lib.jit.script_method
            def forward(self, x):
                return x * self.w
        m = M()
        assert isinstance(m, lib.nn.Module) and m(lib.ones(2)).tolist() == [1.0, 1.0]
    assert not isinstance(ember.nn.Linear(1, 1), ember.jit.ScriptModule)


def test_foreach_with_an_empty_second_list_names_the_scalar_list():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match='Tensor list must have same number of elements as scalar list'):
            lib._foreach_mul_([lib.ones(2), lib.ones(2)], [])
        with pytest.raises(RuntimeError, match='Tensor lists must have the same number of tensors, got 1 and 2'):
            lib._foreach_add([lib.ones(2)], [lib.ones(2), lib.ones(2)])
