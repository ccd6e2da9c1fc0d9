"""Intra-op parallelism (ember/_backends/cpu/_parallel.py): kernels split across threads give the same
results as on one thread, errors come back to the caller, nesting runs inline, forks get a fresh pool."""
import os
import platform
import threading
import time

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember._backends.cpu import _blas, _parallel


@pytest.fixture
def threads():
    old = ember.get_num_threads()
    yield
    ember.set_num_threads(old)


def test_set_and_get_num_threads(threads):
    ember.set_num_threads(3)
    assert ember.get_num_threads() == 3
    for bad in (0, -1, 2.5, True):
        with pytest.raises(RuntimeError, match='positive integer'):
            ember.set_num_threads(bad)
    assert ember.get_num_threads() == 3


def test_parallel_for_covers_the_range_once_across_threads(threads):
    ember.set_num_threads(4)
    seen, calls = np.zeros(1000, int), []
    meet = threading.Barrier(4, timeout=10)     # all four ranges must be running at once, on four threads

    def body(lo, hi):
        seen[lo:hi] += 1
        calls.append((lo, hi, threading.current_thread().name))
        if hi - lo == 250:
            meet.wait()
    _parallel.parallel_for(1000, body, 100)
    assert (seen == 1).all()
    assert sorted(c[:2] for c in calls) == [(0, 250), (250, 500), (500, 750), (750, 1000)]
    assert [c[2] for c in calls if c[0] == 0] == [threading.current_thread().name]   # the caller takes the first
    assert any('ember-intraop' in c[2] for c in calls)
    seen[:] = 0
    _parallel.parallel_for(1000, body, 600)        # one grain's worth: runs inline
    assert (seen == 1).all()


def _wait_until_workers_idle(timeout=10):
    deadline = time.monotonic() + timeout
    while any(w.busy for w in _parallel._workers):
        assert time.monotonic() < deadline, 'an intra-op worker never became idle'
        time.sleep(0.001)


def test_parallel_for_reraises_and_nests_inline(threads):
    ember.set_num_threads(2)

    def fails(lo, hi):
        if lo > 0:
            raise ValueError(f'bad range {lo}')
    with pytest.raises(ValueError, match='bad range'):
        _parallel.parallel_for(10, fails, 1)        # returns only once every range is done
    _wait_until_workers_idle()      # a worker that woke late is still leaving that region: it takes no offer
    inner = []
    meet = threading.Barrier(2, timeout=10)         # both outer ranges run at once: caller and worker

    def outer(lo, hi):
        on_worker = threading.current_thread() is not threading.main_thread()
        _parallel.parallel_for(10, lambda a, b: inner.append((on_worker, a, b)), 1)
        meet.wait()
    _parallel.parallel_for(4, outer, 1)
    # a loop started inside a parallel region runs whole, inline, on the thread that started it
    assert sorted(inner) == [(False, 0, 10), (True, 0, 10)]


def test_numpy_error_state_reaches_the_workers(threads):
    ember.set_num_threads(2)
    with np.errstate(all='raise'):
        def body(lo, hi):
            np.float64(1.0) / np.zeros(1)
        with pytest.raises(FloatingPointError):
            _parallel.parallel_for(2, body, 1)


@pytest.mark.parametrize('n', [1, 2, 3])
def test_split_kernels_match_one_thread_and_torch(threads, n):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((6, 2, 96, 16)).astype(np.float32) for _ in range(3))
    x = (rng.standard_normal((5, 70000)) * 3).astype(np.float32)
    ember.set_num_threads(n)
    qe, ke, ve = (ember.tensor(a, requires_grad=True) for a in (q, k, v))
    o = F.scaled_dot_product_attention(qe, ke, ve, is_causal=True)
    o.sum().backward()
    xe = ember.tensor(x, requires_grad=True)
    y = F.gelu(xe)
    y.backward(ember.ones_like(y))
    qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    ot = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
    ot.sum().backward()
    np.testing.assert_allclose(o.detach().numpy(), ot.detach().numpy(), atol=1e-5, rtol=1e-5)
    for e, t in ((qe, qt), (ke, kt), (ve, vt)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-4, rtol=1e-4)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.gelu(xt)
    yt.backward(torch.ones_like(yt))
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), atol=1e-5, rtol=2e-6)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-5, rtol=2e-6)


@pytest.mark.skipif(not hasattr(os, 'fork'), reason='fork-only behaviour')
def test_a_forked_child_gets_a_working_pool(threads):
    ember.set_num_threads(2)
    _parallel.parallel_for(4, lambda lo, hi: None, 1)         # the parent's pool has threads now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            out = np.zeros(4)

            def body(lo, hi):
                out[lo:hi] = 1
            _parallel.parallel_for(4, body, 1)
            os.write(w, b'ok' if out.all() else b'no')
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 2) == b'ok'


@pytest.mark.parametrize('n', [1, 2, 3])
def test_batch_split_conv_and_pool_match_torch(threads, n):
    # batch 24 of 8->12 channels at 14x14: large enough that each kernel splits its batch across threads
    rng = np.random.default_rng(1)
    x = rng.standard_normal((24, 8, 14, 14)).astype(np.float64)
    w = rng.standard_normal((12, 8, 3, 3)).astype(np.float64)
    b = rng.standard_normal(12).astype(np.float64)
    ember.set_num_threads(n)
    out = {}
    for lib, F_ in ((ember, F), (torch, torch.nn.functional)):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = F_.max_pool2d(F_.conv2d(xs, ws, bs, padding=1), 2)
        v, idx = F_.max_pool2d(xs, 2, return_indices=True)
        y.backward(lib.ones_like(y))
        out[lib] = [y.detach().numpy(), v.detach().numpy(), idx.numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()]
    for e, t in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-10)


def test_blas_runs_inside_embers_threads_unless_told_otherwise():
    """NOTE [process settings]: nothing changes at import; the first split of ember's pool puts the BLAS on one
    thread; set_process_tuning(False) gives it its threads back (and ember's pool stays inline)."""
    import subprocess
    import sys
    code = ("import ember; from ember._backends.cpu import _blas; "
            "before = _blas.blas_threads(); a = ember.randn(512, 512); a @ a; "
            "during = _blas.blas_threads(); ember.backends.cpu.set_process_tuning(False); "
            "print(ember.get_num_threads(), _blas.controlled, before, during, _blas.blas_threads(), "
            "ember.backends.cpu.process_tuning()['applied'])")
    run = lambda env: subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                                     env={**os.environ, 'OPENBLAS_NUM_THREADS': '2', **env}).stdout.split()
    n, controlled, before, during, after, applied = run({})
    if controlled == 'True':            # numpy's OpenBLAS found: ember's threads, BLAS on one thread meanwhile
        assert int(n) == len(os.sched_getaffinity(0))
        assert (before, after, applied) == ('2', '2', 'False')
        assert during == ('1' if int(n) > 1 else '2')       # one core: the pool never splits, nothing changes
    n, controlled, before, during, after, applied = run({'EMBER_BLAS_THREADS': 'native'})
    assert (n, controlled, before, during) == ('1', 'False', 'None', 'None')   # the BLAS keeps its threads


def test_process_tuning_on_one_thread():
    """With one intra-op thread nothing splits, so the settings come with the first large kernel run on the
    calling thread (a 256x256 GEMM), not with small ones; set_process_tuning(False) keeps them off then, and
    set_process_tuning(True, now=True) applies them at once (what a distributed rank does, NOTE [threads per
    rank])."""
    import subprocess
    import sys
    code = ("import ember; from ember._backends.cpu import _blas; ember.set_num_threads(1); "
            "t = ember.backends.cpu.process_tuning; s = ember.randn(8, 8); s @ s; s + s; small = t()['applied']; "
            "a = ember.randn(256, 256); a @ a; large = t()['applied']; "
            "print(small, large, _blas.controlled, t()['blas_threads'])")
    env = {**os.environ, 'OPENBLAS_NUM_THREADS': '2'}
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    assert out[:2] == ['False', 'True']
    if out[2] == 'True':
        assert out[3] == '1'
    code = ("import ember; ember.set_num_threads(1); t = ember.backends.cpu.process_tuning; "
            "ember.backends.cpu.set_process_tuning(False); x = ember.randn(1 << 20); x + x; off = t()['applied']; "
            "ember.backends.cpu.set_process_tuning(True, now=True); print(off, t()['applied'])")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    assert out == ['False', 'True']


def test_the_caller_takes_ranges_a_busy_worker_has_not_started(threads):
    ember.set_num_threads(2)
    release, busy = threading.Event(), threading.Event()

    def hold(lo, hi):
        if lo:
            busy.set()
            release.wait(10)
    # keep the worker busy with a region of its own, from another thread
    blocker = threading.Thread(target=lambda: _parallel.parallel_for(2, hold, 1))
    seen = []
    try:
        blocker.start()
        assert busy.wait(10)        # the worker is inside the blocker's region
        _parallel.parallel_for(4, lambda lo, hi: seen.append((lo, hi, threading.current_thread().name)), 1)
    finally:
        release.set()
        blocker.join()
    assert sorted(x[:2] for x in seen) == [(0, 2), (2, 4)]
    assert {x[2] for x in seen} == {threading.current_thread().name}   # done by the caller, without waiting


@pytest.mark.parametrize('n', [1, 2, 3])
def test_split_gemms_match_torch(threads, n):
    # row and column splits, transposed operands, the batched-left fold and linear's fused backward
    rng = np.random.default_rng(3)
    ember.set_num_threads(n)
    for (m, k, p), ta, tb in [((300, 200, 100), False, False), ((128, 300, 500), False, True),
                              ((500, 128, 300), True, False), ((64, 600, 200), True, True)]:
        a = rng.standard_normal((k, m) if ta else (m, k))
        b = rng.standard_normal((p, k) if tb else (k, p))
        ea, eb = ember.tensor(a), ember.tensor(b)
        ea, eb = (ea.t() if ta else ea), (eb.t() if tb else eb)
        ta_, tb_ = torch.tensor(a), torch.tensor(b)
        ta_, tb_ = (ta_.t() if ta else ta_), (tb_.t() if tb else tb_)
        np.testing.assert_allclose((ea @ eb).numpy(), (ta_ @ tb_).numpy(), rtol=1e-10, atol=1e-10)
    x, w, bias = rng.standard_normal((4, 100, 64)), rng.standard_normal((300, 64)), rng.standard_normal(300)
    res = {}
    for lib in (ember, torch):
        xs, ws, bs = (lib.tensor(v, requires_grad=True) for v in (x, w, bias))
        y = lib.nn.functional.linear(xs, ws, bs)
        y.backward(lib.ones_like(y))
        res[lib] = [y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()]
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-9)


def test_process_tuning_reports_the_blas_kernels():
    """process_tuning()['blas_core'] names the kernel set OpenBLAS loaded (here the one OPENBLAS_CORETYPE asks
    for, which any x86-64 CPU with SSE4.2 runs)."""
    import subprocess
    import sys
    code = "import ember; print(ember.backends.cpu.process_tuning()['blas_core'])"
    env = {k: v for k, v in os.environ.items() if k != 'OPENBLAS_CORETYPE'}
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True,
                         env={**env, 'OPENBLAS_CORETYPE': 'Nehalem'}).stdout
    if platform.machine() in ('x86_64', 'AMD64') and _blas.controlled:    # numpy's OpenBLAS is visible
        assert out.strip() == 'Nehalem'
