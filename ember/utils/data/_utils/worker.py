"""What runs inside a DataLoader worker process, and ``get_worker_info()``.

A worker reads ``(task index, sampler output)`` from its index queue, fetches
and collates the batch (into shared memory, see NOTE [DataLoader shared
memory] in shm.py) and writes it to its own result pipe. Errors travel as an
``ExceptionWrapper`` that the main process re-raises with the worker's
traceback. A worker ends on ``None``, when the main process closes its pipe,
or when its parent process is gone.
"""
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

import ember
from . import shm
from .fetch import create_fetcher

MP_STATUS_CHECK_INTERVAL = 5.0   # seconds between a worker's checks that its parent is alive


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` (this worker's copy) of the current worker; read-only."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ', '.join(f'{k}={getattr(self, k)}' for k in self.__keys)
        return f'{self.__class__.__name__}({items})'


_worker_info = None


def get_worker_info():
    """The current worker's ``WorkerInfo`` inside a DataLoader worker process, ``None`` in the main process.

    An IterableDataset uses it to give each worker its own shard::

        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(self.items[start::step])

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception with its formatted traceback, to re-raise in another process (torch._utils.ExceptionWrapper)."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = ''.join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)   # KeyError would repr() the message and mangle its newlines
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of each new epoch; they answer with the same object. ``seed``:
    the epoch's seed for a DataPipe's random pipes (the same in every worker, so shuffles agree before sharding)."""

    def __init__(self, seed=None):
        self.seed = seed


def _generate_state(base_seed, worker_id):
    """NumPy's global seed for a worker: torch's SeedSequence-style hash of (base_seed, worker_id).

    The same function as torch's, so a worker seeds NumPy as a torch worker with the same base seed would.
    """
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        r = (((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)) & MASK32
        return (r ^ (r >> XSHIFT)) & MASK32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b, state = INIT_B, []
    for v in pool:
        v = (v ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        v = (v * hash_const_b) & MASK32
        state.append((v ^ (v >> XSHIFT)) & MASK32)
    return state


def _send(conn, obj, arena):
    try:
        payload = shm.dumps_batch(obj, arena)
    except Exception:   # the batch (or an exception) cannot be pickled: report that instead
        wrapper = ExceptionWrapper(where="in DataLoader worker process while sending a batch")
        original = obj[1]
        if isinstance(original, ExceptionWrapper):   # the exception's own class could not be pickled
            wrapper.exc_type, wrapper.where = RuntimeError, original.where
            wrapper.exc_msg = original.exc_msg
        payload = shm.dumps_batch((obj[0], wrapper), arena)
    conn.send_bytes(payload)


def _seed_datapipe(dataset, seed):
    """A DataPipe's random pipes seeded from the loader's shared seed (other datasets unchanged)."""
    from ..datapipes.datapipe import IterDataPipe
    if not isinstance(dataset, IterDataPipe):
        return dataset
    if seed is None:
        raise AssertionError("shared_seed must be provided for IterDataPipe workers")
    from ..graph_settings import apply_random_seed
    return apply_random_seed(dataset, ember.Generator().manual_seed(seed))


def _worker_loop(iterable, dataset, index_queue, result_conn, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, shm_prefix, shared_seed=None):
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        ember.manual_seed(seed)
        np.random.seed(_generate_state(base_seed, worker_id))
        dataset = _seed_datapipe(dataset, shared_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        arena = shm.set_worker_arena(f'{shm_prefix}{worker_id}_', worker_id)
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        # a watchdog: stop when the parent is gone (the main process; under 'forkserver' the fork server,
        # which ends with the main process), i.e. when this worker has been re-parented
        manager_pid = os.getppid()
        while os.getppid() == manager_pid:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, shm.FreeSegment):
                arena.release(r.name)
                continue
            if isinstance(r, _ResumeIteration):
                _send(result_conn, (r, None), arena)
                iteration_end = False
                dataset = _seed_datapipe(dataset, r.seed)
                if init_exception is None:
                    fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue   # wait for the final None without working
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data, iteration_end = _IterableDatasetStopIteration(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            _send(result_conn, (idx, data), arena)
            del data, idx, index, r   # free the worker's mapping of the batch now
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError, EOFError):
        pass   # the main process is shutting down (or raising KeyboardInterrupt itself)
    finally:
        if shm._worker_arena is not None:
            shm._worker_arena.close()   # the main process's mappings stay valid; the names go
        try:
            result_conn.close()
        except OSError:
            pass


def _reduce_tensor_for_process(t):
    """Tensors passed to a spawned worker (inside its dataset, say) travel as a copy of their data; a tensor
    already in shared memory travels as a reference to it (NOTE [shared tensors] in ember/_shared.py)."""
    if t.is_shared():
        from ...._shared import reduce_tensor
        return reduce_tensor(t)
    a = t.numpy(force=True)
    return shm._rebuild_inline, (np.ascontiguousarray(a), t.dtype, t.requires_grad, str(t.device))


def register_process_reducer():
    from multiprocessing.reduction import ForkingPickler
    if ember.Tensor in ForkingPickler._extra_reducers:   # ember.multiprocessing's (shared-memory) reducer stays
        return
    ForkingPickler.register(ember.Tensor, _reduce_tensor_for_process)
