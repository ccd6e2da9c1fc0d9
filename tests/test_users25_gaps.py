"""Gaps found by running published programs and libraries' test suites in the session of 2026-11-28 (third):
each test compares ember with torch in the same process."""
import numpy as np
import pytest
import torch

import ember


def test_clip_grad_norm_computes_as_torch():
    """torch's get_total_norm: each gradient's vector_norm, then the norm of their stack (not a sum of squares)."""
    rng = np.random.default_rng(1)
    shapes = [(64, 32), (512,), (65, 12), (7,), (3, 5, 2)]
    grads = [(rng.standard_normal(s) * 1e-2).astype('float32') for s in shapes]
    out = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.zeros(s)) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(ps, 0.5)
        norms = [lib.nn.utils.get_total_norm([p.grad for p in ps], q).item() for q in (1, float('inf'), 0, 3.5)]
        out.append((total.item(), norms, [p.grad.numpy().copy() for p in ps]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)
    for a, b in zip(out[0][2], out[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)
    assert ember.nn.utils.get_total_norm([]).item() == torch.nn.utils.get_total_norm([]).item() == 0.0
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match='non-finite'):
            lib.nn.utils.get_total_norm([lib.tensor([float('inf')]), lib.ones(2)], error_if_nonfinite=True)


def test_svd_takes_torchs_driver_keyword():
    """peft's IncrementalPCA calls ``linalg.svd(X, full_matrices=False, driver=None)``."""
    a = np.random.default_rng(2).standard_normal((6, 4)).astype('float32')
    for fn in ('svd', 'svdvals'):
        t = getattr(torch.linalg, fn)(torch.tensor(a), driver=None)
        e = getattr(ember.linalg, fn)(ember.tensor(a), driver=None)
        np.testing.assert_allclose((e[1] if fn == 'svd' else e).numpy(), (t[1] if fn == 'svd' else t).numpy(),
                                   rtol=1e-5)
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as info:
                getattr(lib.linalg, fn)(lib.tensor(a), driver='gesvd')
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]


_DIST_PROGRAM = '''
import gc, os, sys, tempfile
import torch, torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1])
tmp = tempfile.NamedTemporaryFile(delete=False); tmp.close()
dist.init_process_group("gloo", rank=0, world_size=1, store=dist.FileStore(tmp.name, 1))
gc.collect()
print("store_file_kept", os.path.exists(tmp.name))
print("backend", dist.get_backend(), dist.get_backend() == dist.Backend.GLOO)
torch.manual_seed(0)
m = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 2))
with m.no_sync():
    m(torch.randn(2, 3)).sum().backward()
m.reducer.prepare_for_backward([])
m(torch.randn(2, 3)).sum().backward()
print("grad", round(m.module.weight.grad.norm().item(), 5))
dist.destroy_process_group()
os.path.exists(tmp.name) and os.unlink(tmp.name)
'''


def test_process_group_keeps_its_store_names_its_backend_and_ddp_has_a_reducer(tmp_path):
    """accelerate's debug_launcher rendezvous file (its FileStore's file must outlive init_process_group), its
    "Backend: gloo" and its ``trigger_sync_in_backward`` (``ddp.reducer.prepare_for_backward([])``)."""
    import subprocess
    import sys
    prog = tmp_path / 'prog.py'
    prog.write_text(_DIST_PROGRAM)
    outs = [subprocess.run(cmd + [str(prog), port], capture_output=True, text=True, timeout=300, check=True).stdout
            for cmd, port in (([sys.executable], '29631'), ([sys.executable, '-m', 'ember', 'run'], '29632'))]
    assert outs[0] == outs[1] and 'store_file_kept True' in outs[1], outs


def test_torch_testing_internal_testcase_assert_equal():
    """timm's optimizer tests import torch.testing._internal.common_utils.TestCase for assertEqual on tensors and
    state dicts (torch's needs the expecttest package, absent here, so the cases state torch's documented rules)."""
    from ember.testing._internal.common_utils import TestCase
    tc = TestCase()
    w = ember.randn(3, 2)
    tc.assertEqual({'state': {0: {'step': ember.tensor(3.), 'exp_avg': w}}, 'param_groups': [{'lr': 0.1}]},
                   {'state': {0: {'step': ember.tensor(3.), 'exp_avg': w + 1e-7}}, 'param_groups': [{'lr': 0.1}]})
    tc.assertEqual(ember.tensor([1., float('nan')]), [1., float('nan')])        # NaN equal; a list as a tensor
    tc.assertEqual(ember.tensor(2), 2)
    for a, b, kw in [(w, w + 1e-3, {}), (ember.ones(2), ember.ones(2, dtype=ember.float64), {}),
                     ({'a': 1}, {'b': 1}, {}), ([1, 2], [1, 2, 3], {}), ('x', 'y', {}),
                     (w, w + 1e-3, {'atol': 1e-5, 'rtol': 0})]:
        with pytest.raises(AssertionError):
            tc.assertEqual(a, b, **kw)
    tc.assertEqual(w, w + 1e-3, atol=1e-2, rtol=0)
    tc.assertEqual(ember.ones(2), ember.ones(2, dtype=ember.float64), exact_dtype=False)
    tc.assertNotEqual(w, w + 1)


def test_uint8_fill_wraps_negative_ints_and_overflow_is_torchs_error():
    """torchio's RandomLabelsToImage writes -1 into a uint8 tensor: torch's uint8 takes -255..255 (negatives wrap);
    other out-of-range ints are torch's RuntimeError."""
    out = []
    for lib in (torch, ember):
        t = lib.zeros(3, dtype=lib.uint8)
        t[0] = -1
        t[lib.tensor([False, True, False])] = -2
        r = [t.tolist(), lib.full((2,), -255, dtype=lib.uint8).tolist(), lib.zeros(2, dtype=lib.uint8).fill_(-3).tolist()]
        for dt, v in ((lib.uint8, 256), (lib.uint8, -256), (lib.int8, 200), (lib.int16, 40000)):
            with pytest.raises(RuntimeError) as info:
                lib.full((1,), v, dtype=dt)
            r.append(str(info.value))
        out.append(r)
    assert out[0] == out[1]


def test_deprecated_build_flags():
    """neuralop's tests read ``torch.has_cuda``: the deprecated flags, with torch's warnings for the four that warn."""
    import warnings
    for name in ('has_cuda', 'has_mps', 'has_cudnn', 'has_mkldnn', 'has_openmp', 'has_lapack', 'has_mkl',
                 'has_spectral'):
        msgs = []
        for lib in (torch, ember):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                value = getattr(lib, name)
            assert isinstance(value, bool)
            msgs.append([str(x.message) for x in w])
        assert msgs[0] == msgs[1], name
    assert ember.has_cuda is False and ember.has_lapack is True
