"""Gaps found on 2026-11-27 (night): GPU programs of pytorch/examples (the device side is in test_device_twins.py),
the transpose properties, and the fast paths of ``x[i] = v`` and ``copy_``; each against torch."""
import os
import warnings

import numpy as np
import pytest
import torch

import ember


def _warnings_of(lib, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        r = fn(lib)
    return r, [str(x.message).split(' (Triggered internally')[0] for x in w]


@pytest.mark.parametrize('expr', ['randn(3).T', 'randn(2, 3, 4).T', 'tensor(1.).T', 'randn(2, 3).T'])
def test_T_is_a_permute_with_torchs_deprecation_warnings(expr):
    # the warnings are TORCH_WARN_ONCE: forget that ember warned already so each case can be compared
    from ember import _warn
    _warn._WARNED_ONCE.clear()
    t, tw = _warnings_of(torch, lambda lib: eval('lib.' + expr, {'lib': lib}).requires_grad_())
    e, ew = _warnings_of(ember, lambda lib: eval('lib.' + expr, {'lib': lib}).requires_grad_())
    assert tuple(t.shape) == tuple(e.shape)
    x = ember.randn(*([3] if expr.startswith('randn(3)') else [2, 3, 4] if '2, 3, 4' in expr else [2, 3]),
                    requires_grad=True) if 'randn' in expr else None
    if x is not None:
        assert x.T.grad_fn.name() == 'PermuteBackward0' and x.T._base is x
    if tw:      # torch warned in this process before? it warns once; ember must have warned the same text
        assert tw == ew


@pytest.mark.parametrize('expr', ['randn(3).H', 'tensor(1.).H', 'randn(3).mT', 'randn(3).mH', 'tensor(1.).mT',
                                  'randn(2, 2, 2).H', 'randn(2, 3).H', 'randn(2, 3, 4).mH',
                                  'randn(2, 3, dtype=lib.cfloat).H', 'tensor(1 + 2j).mH'])
def test_matrix_transpose_properties_as_torch(expr):
    from ember import _warn
    _warn._WARNED_ONCE.clear()

    def run(lib):
        try:
            r, w = _warnings_of(lib, lambda lib: eval('lib.' + expr, {'lib': lib}))
            return tuple(r.shape), r.dtype.is_complex, w
        except RuntimeError as ex:
            return 'RuntimeError', str(ex)
    t, e = run(torch), run(ember)
    assert t[:2] == e[:2] and (not t[2:] or not t[2] or t[2] == e[2])   # torch warns once per process
    x = ember.randn(2, 3, requires_grad=True)
    assert x.H.grad_fn.name() == 'TransposeBackward0' and x.mT.grad_fn.name() == 'TransposeBackward0'
    s = ember.tensor(1.)
    assert s.mT is s and s.H is s
    assert ember.tensor(1 + 2j).H.item() == 1 - 2j


@pytest.mark.parametrize('case', range(8))
def test_item_assignment_and_copy_as_torch(case):
    def run(lib):
        c = lib.zeros(4, 3, dtype=lib.int64 if case == 3 else lib.float32)
        v = lib.arange(3.) + 0.7
        try:
            if case == 0:
                c[1] = v
            elif case == 1:
                c[-1] = 2.5
            elif case == 2:
                c[4] = v
            elif case == 3:
                c[2] = v                # float into int64: truncated
            elif case == 4:
                c[0] = lib.ones(2)      # cannot broadcast
            elif case == 5:
                c[1] = v[None]          # leading 1 dropped
            elif case == 6:
                c.copy_(lib.ones(2, 1, 3))
            else:
                c[0].copy_(lib.tensor(5.))
        except (RuntimeError, IndexError) as ex:
            return type(ex).__name__, str(ex)
        return c.tolist(), c._version
    assert run(torch) == run(ember)


def test_item_assignment_records_the_graph_as_torch():
    seen = []
    for lib in (torch, ember):
        a = lib.zeros(3, 2)
        w = lib.ones(2, requires_grad=True)
        a[1] = w * 3
        a.sum().backward()
        seen.append((a.grad_fn.name(), a.grad_fn.next_functions[1][0].name(), w.grad.tolist(), a._version))
    assert seen[0] == seen[1]
    x = ember.zeros(3)
    x[1] = np.float64(2.5)
    assert x.tolist() == [0., 2.5, 0.]


def test_pack_padded_sequence_orders_tied_lengths_as_torch():
    """bentrevett's sentiment LSTM: torch's sort(descending=True) decides where tied lengths go, and with it
    which sequences a train-mode LSTM's inter-layer dropout masks fall on."""
    lens = [5, 3, 5, 2, 3, 5, 3, 1, 5, 2, 2, 5, 3, 4, 4, 5, 1, 3]
    got = []
    for lib in (torch, ember):
        x = lib.zeros(max(lens), len(lens), 2)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor(lens), enforce_sorted=False)
        got.append(p.sorted_indices.tolist())
    assert got[0] == got[1]


def test_loading_a_gpu_checkpoint_on_a_cpu_only_machine_says_map_location(tmp_path):
    """Zero to Mastery's going_modular checkpoints were saved on a GPU (storage location 'cuda:0')."""
    import io
    import zipfile
    buf = io.BytesIO()
    torch.save({'w': torch.arange(4.)}, buf)
    src, out = zipfile.ZipFile(io.BytesIO(buf.getvalue())), tmp_path / 'gpu.pt'
    with zipfile.ZipFile(out, 'w') as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith('data.pkl'):      # the location string, length-prefixed in the pickle
                assert b'X\x03\x00\x00\x00cpu' in data
                data = data.replace(b'X\x03\x00\x00\x00cpu', b'X\x06\x00\x00\x00cuda:0')
            z.writestr(info, data)
    msgs = []
    for lib in (torch, ember):
        for kw in ({}, {'weights_only': False}):
            with pytest.raises(RuntimeError) as e:
                lib.load(out, **kw)
            msgs.append(str(e.value))
        assert lib.load(out, map_location='cpu')['w'].tolist() == [0., 1., 2., 3.]
    assert msgs[:2] == msgs[2:] and 'map_location' in msgs[0]


def test_convolution_dtype_errors_as_torch():
    """learnpytorch notebook 04 shows a uint8 image into a float Conv2d on purpose."""
    def run(lib):
        F = lib.nn.functional
        x8, x = lib.zeros(1, 2, 5, 5, dtype=lib.uint8), lib.zeros(1, 2, 5, 5)
        w, wt, b = lib.ones(3, 2, 3, 3), lib.ones(2, 3, 3, 3), lib.ones(3)
        cases = [lambda: F.conv2d(x8, w, b), lambda: F.conv2d(x8, w), lambda: F.conv2d(x, w, b.double()),
                 lambda: F.conv2d(x, w.double(), b.double()), lambda: F.conv_transpose2d(x8, wt, b),
                 lambda: F.conv_transpose2d(x, wt.double(), b.double()), lambda: F.conv2d(x.bool(), w.bool()),
                 lambda: F.conv_transpose2d(x.int(), wt.int()), lambda: F.conv2d(x.int(), w.int()).dtype,
                 lambda: F.conv_transpose2d(x.long(), wt.long()).dtype,
                 lambda: F.conv_transpose2d(x, wt, b.double()).dtype]
        out = []
        for c in cases:
            try:
                out.append(str(c()).replace('ember.', 'torch.'))
            except (RuntimeError, NotImplementedError) as ex:
                out.append((type(ex).__name__, str(ex)))
        return out
    assert run(torch) == run(ember)


def test_ember_run_leaves_the_current_directory_off_sys_path(tmp_path):
    """``python script.py`` puts only the script's folder on sys.path; ``python -m ember run`` did the same plus the
    current directory (notebook 08's ``from going_modular import ...`` imported under ember only)."""
    import subprocess
    import sys
    script_dir, cwd = tmp_path / 'scripts', tmp_path / 'work'
    script_dir.mkdir()
    cwd.mkdir()
    (cwd / 'only_in_cwd.py').write_text('X = 1\n')
    (script_dir / 's.py').write_text('import importlib.util\nprint(importlib.util.find_spec("only_in_cwd") is None)\n')
    for cmd in ([sys.executable, str(script_dir / 's.py')],
                [sys.executable, '-m', 'ember', 'run', str(script_dir / 's.py')]):
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
        assert r.stdout.strip() == 'True', (cmd, r.stdout, r.stderr)


# --- pytorch/tutorials' intermediate and advanced scripts -------------------------------------------------------

def test_affine_grid_base_coordinates_round_as_torch():
    """spatial_transformer_tutorial: at the identity theta one ulp moves sample points across pixel centres, and
    grid_sample's gradient with respect to theta changes completely."""
    for n in (5, 28, 31):
        theta = [[[1., 0., 0.], [0., 1., 0.]]]
        t = torch.nn.functional.affine_grid(torch.tensor(theta), (1, 1, n, n), align_corners=False)
        e = ember.nn.functional.affine_grid(ember.tensor(theta), (1, 1, n, n), align_corners=False)
        assert np.array_equal(t.numpy(), e.numpy())


def test_qat_conv_bn_draws_its_batch_norm_parameters_as_torch():
    def run(lib):
        import importlib
        nniqat = importlib.import_module(lib.__name__ + '.ao.nn.intrinsic.qat')
        qconfig = lib.ao.quantization.get_default_qat_qconfig('x86')
        lib.manual_seed(2)
        c = nniqat.ConvBn2d(3, 4, 3, bias=True, qconfig=qconfig)
        return c.bn.weight.tolist(), c.bias.tolist(), c.bn.training, lib.rand(1).item()
    assert run(torch) == run(ember)


def test_upper_left_causal_bias_is_sdpa_with_is_causal():
    from torch.nn.attention import bias as tb
    from ember.nn.attention import bias as eb
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 6, 8)).astype(np.float32) for _ in range(3))
    for L, S in ((6, 6), (6, 6)):
        e = [ember.nn.functional.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), attn_mask=m)
             for m in (eb.causal_upper_left(L, S), eb.causal_lower_right(L, S))]
        causal = ember.nn.functional.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), is_causal=True)
        assert all(np.array_equal(x.numpy(), causal.numpy()) for x in e)     # bit for bit, as torch's dispatch
    with pytest.raises(ValueError, match='should not be used with causal=True'):
        ember.nn.functional.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)), attn_mask=eb.causal_upper_left(6, 6),
                                                         is_causal=True)
    t = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k[:, :, :4], v[:, :, :4])),
                                                         attn_mask=tb.causal_lower_right(6, 4))
    with pytest.warns(UserWarning, match='Lower right causal bias will produce NaNs'):
        lower = eb.causal_lower_right(6, 4)
    e = ember.nn.functional.scaled_dot_product_attention(*map(ember.tensor, (q, k[:, :, :4], v[:, :, :4])),
                                                         attn_mask=lower)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)


def test_custom_op_namespace_reached_through_the_torch_alias(tmp_path):
    import subprocess
    import sys
    f = tmp_path / 'p.py'
    f.write_text("import torch\n"
                 "@torch.library.custom_op('mylib21::twice', mutates_args=())\n"
                 "def twice(x: torch.Tensor) -> torch.Tensor:\n"
                 "    return x * 2\n"
                 "print(torch.ops.mylib21.twice(torch.ones(2)).tolist())\n")
    r = subprocess.run([sys.executable, '-m', 'ember', 'run', str(f)], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "[2.0, 2.0]", r.stderr


def test_lbfgs_gathers_gradients_as_torch():
    """torch views each gradient (a gradient laid out unlike its parameter raises) and takes complex ones as
    real pairs; ember reshaped them (complex parameters diverged)."""
    def run(lib, kind):
        lib.manual_seed(0)
        if kind == 'complex':
            p = lib.nn.Parameter(lib.randn(3, dtype=lib.cfloat))
            target = lib.randn(3, dtype=lib.cfloat)
            loss = lambda: (p - target).abs().pow(2).sum()      # noqa: E731
        else:
            p = lib.nn.Parameter(lib.randn(3, 4).t())
            loss = lambda: (p.t().contiguous() * lib.arange(12.).reshape(3, 4)).sum()     # noqa: E731
        opt = lib.optim.LBFGS([p], lr=0.5, max_iter=5)

        def closure():
            opt.zero_grad()
            v = loss()
            v.backward()
            return v
        try:
            return [round(opt.step(closure).item(), 4) for _ in range(3)]
        except RuntimeError as ex:
            return type(ex).__name__, str(ex)[:60]
    for kind in ('complex', 'permuted'):
        assert run(torch, kind) == run(ember, kind)


@pytest.mark.parametrize('shape,dim', [((4_000_000,), None), ((3, 1 << 20), -1), ((1 << 20, 3), 0),
                                       ((5, 300_001), -1), ((64, 16, 28, 28), (0, 2, 3))])
def test_large_float32_sums_are_as_accurate_as_torchs(shape, dim):
    """A BLAS dot product over a 4M-element row lost ~5e-6 relative; rows are cut to 4096 now (~1e-7, as
    torch's cascade sum)."""
    x = np.random.default_rng(1).random(shape, dtype=np.float32) * 2
    ref = x.astype(np.float64).sum(axis=dim)
    e = (ember.from_numpy(x).sum() if dim is None else ember.from_numpy(x).sum(dim)).numpy()
    t = (torch.from_numpy(x).sum() if dim is None else torch.from_numpy(x).sum(dim)).numpy()
    err_e, err_t = np.max(np.abs(e - ref) / ref), np.max(np.abs(t - ref) / ref)
    assert err_e <= max(4 * err_t, 3e-7), (err_e, err_t)


def test_summary_writer_keeps_tags_and_names_files_as_torch(tmp_path):
    """tensorboard_tutorial writes 'training loss' and reads it back by that tag."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    seen = []
    import importlib
    for lib in (torch, ember):
        d = tmp_path / lib.__name__
        w = importlib.import_module(lib.__name__ + '.utils.tensorboard').SummaryWriter(str(d))
        w.add_scalar('training loss', 1.5, 0)
        w.add_histogram('w eights', lib.arange(4.), 0)
        w.close()
        ea = EventAccumulator(str(d))
        ea.Reload()
        name = os.listdir(d)[0].split('.')
        seen.append((sorted(ea.Tags()['scalars']), sorted(ea.Tags()['histograms']), len(name), name[-2] == str(os.getpid())))
    assert seen[0] == seen[1]


# --- the UvA deep-learning course notebooks ---------------------------------------------------------------------

def test_summary_writer_reused_after_close_opens_a_new_file(tmp_path):
    """Lightning's logger closes the writer after fit and writes again at each trainer.test: torch opens a new event
    file (a new uid); two files named alike in the same second lost the first one's events."""
    import glob
    import importlib
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    seen = []
    for lib in (torch, ember):
        d = tmp_path / lib.__name__
        w = importlib.import_module(lib.__name__ + '.utils.tensorboard').SummaryWriter(str(d))
        for i in range(3):
            w.add_scalar('x', float(i), i)
            w.close()
        files = sorted(glob.glob(str(d / 'events*')))
        steps = sorted(e.step for f in files for e in EventFileLoader(f).Load() if e.HasField('summary'))
        seen.append((len(files), steps))
    assert seen[0] == seen[1] == (3, [0, 1, 2])


def test_add_graph_of_a_data_dependent_model_warns_instead_of_failing(tmp_path):
    """UvA tutorial 11 logs the graph of a flow whose distribution validates its argument (a branch on a value):
    torch's jit.trace draws it; ember's exporter, tracing with fake tensors, cannot, and training must go on."""
    from ember.utils.tensorboard import SummaryWriter

    class M(ember.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x
    w = SummaryWriter(str(tmp_path))
    with pytest.warns(UserWarning, match='add_graph: the graph of M could not be exported'):
        w.add_graph(M(), ember.ones(3))
    w.add_scalar('after', 1.0, 0)
    w.close()


_INDEX_VIEWS = '''
import torch, torch.utils.data as data
import torch.multiprocessing      # (Lightning imports it: tensors then travel by shared memory)
class DS(data.Dataset):
    def __len__(self): return 60
    def __getitem__(self, i): return torch.tensor(float(i))
class Sampler:
    def __init__(self):
        self.per_class = {c: torch.where(torch.arange(60) % 5 == c)[0] for c in range(5)}
    def __iter__(self):
        for it in range(4):
            batch = []
            for c in range(5):
                batch.extend(self.per_class[c][it:it + 3])    # 0-d views of an index tensor
            yield batch
    def __len__(self): return 4
if __name__ == "__main__":
    print([b.sum().item() for b in data.DataLoader(DS(), batch_sampler=Sampler(), num_workers=2)])
'''


def test_dataloader_workers_take_batches_of_index_views(tmp_path):
    """UvA tutorial 16's FewShotBatchSampler yields 0-d views; each was copied to its own shared segment, unlinked
    when the temporary view was collected, before the worker mapped it."""
    import subprocess
    import sys
    f = tmp_path / 'views.py'
    f.write_text(_INDEX_VIEWS)
    out = [subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path).stdout.strip()
           for cmd in ([sys.executable, str(f)], [sys.executable, '-m', 'ember', 'run', str(f)])]
    assert out[0] == out[1] and out[0].startswith('[')
