"""Gaps found on 2026-11-27 (night): GPU programs of pytorch/examples (the device side is in test_device_twins.py),
the transpose properties, and the fast paths of ``x[i] = v`` and ``copy_``; each against torch."""
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
