"""Intra-op parallelism for CPU kernels (torch's ``at::parallel_for``; ``ember.set_num_threads``).

NumPy releases the GIL inside ufunc loops and BLAS calls, so a kernel whose work splits into independent
ranges (blocks of an elementwise chain, samples of a batch, rows of a normalisation) can run those ranges
on a small persistent thread pool, the calling thread taking the first. Only work large enough to repay
the hand-off (~10 us per task) is split: each kernel passes its ``grain``, the least work per task.

- Workers run each task in a copy of the caller's context, so NumPy's error state (``_fp.quiet``) holds
  there too.
- A task started from inside a worker runs inline: nested parallelism never waits on its own pool.
- After ``fork`` (DataLoader workers) the child gets a fresh pool on first use: threads do not survive a fork.
"""
import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor


def _default_threads():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


_num_threads = _default_threads()
_pool = None
_pool_lock = threading.Lock()
_inside = threading.local()


def set_num_threads(n):
    global _num_threads, _pool
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    with _pool_lock:
        if n != _num_threads and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _num_threads = n


def get_num_threads():
    return _num_threads


def _get_pool():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(_num_threads - 1, thread_name_prefix='ember-intraop')
    return _pool


def _reset_after_fork():
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _task(fn, lo, hi):
    _inside.active = True
    try:
        fn(lo, hi)
    finally:
        _inside.active = False


def parallel_for(n, fn, grain):
    """Run ``fn(lo, hi)`` over ``[0, n)`` in up to ``get_num_threads()`` contiguous ranges of at least
    ``grain`` items; returns when all are done, re-raising the first error."""
    k = min(_num_threads, n // max(grain, 1))
    if k <= 1 or getattr(_inside, 'active', False):
        fn(0, n)
        return
    bounds = [n * i // k for i in range(k + 1)]
    pool = _get_pool()
    futures = [pool.submit(contextvars.copy_context().run, _task, fn, bounds[i], bounds[i + 1]) for i in range(1, k)]
    try:
        fn(bounds[0], bounds[1])
    finally:
        for f in futures:
            f.result()
