"""Intra-op parallelism for CPU kernels (torch's ``at::parallel_for``; ``ember.set_num_threads``).

NumPy releases the GIL inside ufunc loops and BLAS calls, so a kernel whose work splits into independent
ranges (blocks of an elementwise chain, rows of a matrix product, samples of a batch) can run those
ranges on a few persistent worker threads, the calling thread taking the first. Only work large enough to
repay the hand-off is split: each kernel passes its ``grain``, the least work per range.

- Hand-off: each idle worker is offered the region and woken through its own lock; the ranges are claimed
  from a shared counter, so the caller takes any range no worker has started (a wake-up costs ~25 us
  here, and far more when another process's threads hold the other core).
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
import itertools
import os
import threading

from ._blas import controlled as _blas_controlled
from ._process import _state as _process_state, apply as _apply_process_settings


def _default_threads():
    if not _blas_controlled:        # the BLAS keeps its own threads: ember's would fight them
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


_num_threads = _default_threads()
_workers = []
_workers_lock = threading.Lock()
_inside = threading.local()


class _Region:
    """One parallel_for: ranges that any thread may claim (``next`` on a count is atomic under the GIL), and
    a lock released when the last range is done. A worker that wakes late (its core busy with another
    process's threads: a torch op run in the same process leaves OpenMP threads spinning for a while)
    finds its range already taken by the caller, who never waits for a thread that has not started."""

    def __init__(self, fn, bounds):
        self.fn, self.bounds, self.error = fn, bounds, None
        self.claims, self.finished = itertools.count(), itertools.count(1)
        self.all_done = _thread.allocate_lock()
        self.all_done.acquire()

    def drain(self):
        last = len(self.bounds) - 1
        while True:
            i = next(self.claims)
            if i >= last:
                return
            try:
                self.fn(self.bounds[i], self.bounds[i + 1])
            except BaseException as e:      # re-raised by the caller
                if self.error is None:
                    self.error = e
            if next(self.finished) == last:
                self.all_done.release()


class _Worker:
    """One thread that helps with whichever region it is handed, when it is idle."""

    def __init__(self, i):
        self._go = _thread.allocate_lock()
        self._go.acquire()
        self.busy, self._job = False, None
        threading.Thread(target=self._loop, name=f'ember-intraop-{i}', daemon=True).start()

    def _loop(self):
        _inside.active = True
        while True:
            self._go.acquire()
            ctx, region = self._job
            self._job = None
            ctx.run(region.drain)
            self.busy = False

    def offer(self, region):
        if self.busy:               # still finishing (or never woke for) an earlier region
            return
        self.busy = True
        self._job = (contextvars.copy_context(), region)
        self._go.release()


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


def large_work_inline():
    """A kernel runs work large enough to split on the calling thread alone, because ember has one intra-op
    thread: the process settings pay there too (large temporaries), so apply them now, once (NOTE [process
    settings])."""
    if not _process_state['applied'] and _process_state['enabled']:
        _apply_process_settings()


def parallel_for(n, fn, grain):
    """Run ``fn(lo, hi)`` over ``[0, n)`` in up to ``get_num_threads()`` contiguous ranges of at least
    ``grain`` items; returns when all are done, re-raising the first error."""
    k = min(_num_threads, n // max(grain, 1))
    if k <= 1 or getattr(_inside, 'active', False):
        if _num_threads == 1 and not _process_state['applied'] and n >= 2 * grain:
            large_work_inline()
        fn(0, n)
        return
    if not _process_state['applied']:
        if not _process_state['enabled']:      # set_process_tuning(False): the BLAS has its threads back
            fn(0, n)
            return
        _apply_process_settings()        # NOTE [process settings]: the BLAS to one thread, before ember's threads run
    region = _Region(fn, [n * i // k for i in range(k + 1)])
    for w in _get_workers(k - 1)[:k - 1]:
        w.offer(region)
    _inside.active = True
    try:
        region.drain()
    finally:
        _inside.active = False
    region.all_done.acquire()
    if region.error is not None:
        raise region.error
