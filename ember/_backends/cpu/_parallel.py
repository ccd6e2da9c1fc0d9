"""Intra-op parallelism for CPU kernels (torch's ``at::parallel_for``; ``ember.set_num_threads``).

NumPy releases the GIL inside ufunc loops and BLAS calls, so a kernel whose work splits into independent
ranges (blocks of an elementwise chain, rows of a matrix product, samples of a batch) can run those
ranges on a few persistent worker threads, the calling thread taking the first. Only work large enough to
repay the hand-off is split: each kernel passes its ``grain``, the least work per range.

- Hand-off: each worker sleeps on its own lock; the caller sets the task and releases it, and waits for
  the result by polling with the GIL released (``time.sleep(0)``), since a blocking wait costs a ~20 us
  wake-up on top (measured: a round trip of an empty task 53 us through concurrent.futures, ~15 us here).
- Workers run each task in a copy of the caller's context, so NumPy's error state (``_fp.quiet``) holds
  there too.
- A loop started inside a parallel region (on a worker or the caller) runs inline: nested parallelism
  never waits on its own workers.
- After ``fork`` (DataLoader workers) the child starts fresh workers on first use: threads do not survive
  a fork.
- The BLAS runs single-threaded inside these threads (NOTE [BLAS threads] in _blas.py).
"""
import _thread
import contextvars
import os
import threading

from ._blas import controlled as _blas_controlled, set_blas_threads as _set_blas_threads


def _default_threads():
    if not _blas_controlled:        # the BLAS keeps its own threads: ember's would fight them
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


_num_threads = _default_threads()
_set_blas_threads(1)                # NOTE [BLAS threads]: ember's threads run the GEMMs
_workers = []
_workers_lock = threading.Lock()
_inside = threading.local()


class _Worker:
    """One thread, handed one task at a time: ``start(fn, lo, hi)``, then ``join()`` (re-raises)."""

    def __init__(self, i):
        self._go, self._done = _thread.allocate_lock(), _thread.allocate_lock()
        self._go.acquire()
        self._done.acquire()
        self._task, self._error = None, None
        threading.Thread(target=self._loop, name=f'ember-intraop-{i}', daemon=True).start()

    def _loop(self):
        _inside.active = True
        while True:
            self._go.acquire()
            ctx, fn, lo, hi = self._task
            try:
                ctx.run(fn, lo, hi)
            except BaseException as e:      # handed to the caller by join()
                self._error = e
            self._task = None
            self._done.release()

    def start(self, fn, lo, hi):
        self._task, self._error = (contextvars.copy_context(), fn, lo, hi), None
        self._go.release()

    def join(self):
        self._done.acquire()
        if self._error is not None:
            e, self._error = self._error, None
            raise e


def set_num_threads(n):
    global _num_threads
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    _num_threads = n


def get_num_threads():
    return _num_threads


def _get_workers(k):
    if len(_workers) < k:
        with _workers_lock:
            while len(_workers) < k:
                _workers.append(_Worker(len(_workers)))
    return _workers


def _reset_after_fork():
    global _workers, _workers_lock
    _workers, _workers_lock = [], threading.Lock()


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(after_in_child=_reset_after_fork)


def parallel_for(n, fn, grain):
    """Run ``fn(lo, hi)`` over ``[0, n)`` in up to ``get_num_threads()`` contiguous ranges of at least
    ``grain`` items; returns when all are done, re-raising the first error."""
    k = min(_num_threads, n // max(grain, 1))
    if k <= 1 or getattr(_inside, 'active', False):
        fn(0, n)
        return
    bounds = [n * i // k for i in range(k + 1)]
    workers = _get_workers(k - 1)
    with _workers_lock:         # one caller at a time hands out work (other threads' kernels queue here)
        for i in range(1, k):
            workers[i - 1].start(fn, bounds[i], bounds[i + 1])
        _inside.active = True
        try:
            fn(bounds[0], bounds[1])
        finally:
            _inside.active = False
            errors = []
            for w in workers[:k - 1]:
                try:
                    w.join()
                except BaseException as e:
                    errors.append(e)
            if errors:
                raise errors[0]
