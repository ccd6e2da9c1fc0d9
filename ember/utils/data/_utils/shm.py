"""Shared-memory transport of batches from DataLoader workers to the main process.

NOTE [DataLoader shared memory]
A worker collates a batch straight into POSIX shared-memory segments (``empty``
below, which default_collate uses), and a tensor a custom collate_fn made
elsewhere is copied into one. What travels through the pipe is a pickle in
which every tensor is only ``(worker, segment name, size, offset, shape,
strides, dtype)``; the main process maps the segment once (it keeps the
mapping) and wraps it with ``ember.from_numpy``, zero copy.

Segments are a pool that each worker reuses, because a fresh segment costs a
page fault and zero-filling per 4 KiB page, more than collating into it. The
lifetime rule: every array the main process builds on a segment hangs off one
root array per received segment (NumPy keeps that root as the ``.base`` of
every view, and an ember tensor keeps its array), and
``weakref.finalize(root)`` tells the owning worker (through its index queue)
that the segment is free once the last tensor or view on it is gone; only then
does the worker write into it again. Names are unlinked when the iterator
shuts down (``unlink_prefix``: every name carries the iterator's prefix, so
segments of killed workers and batches still in flight go too) or when a
worker exits; a mapping the user still holds stays valid after its name is
unlinked, and the kernel frees the memory with the last mapping.

Tensors under 4 KiB (labels, say) travel inline in the pickle: a segment
round trip costs more than copying them.
"""
import collections
import io
import itertools
import os
import pickle
import sys
import threading
import weakref

import numpy as np

import ember

from ...._shared import (HAVE_SHM, create_segment, map_segment, unlink_segment as unlink,  # noqa: E402
                         root_array as _root, data_ptr as _ptr)    # ember's one set of segment primitives

SHM_DIR = '/dev/shm'
_SHM_MIN = 1 << 12   # below this, a segment costs more than pickling the bytes
_FREE_PER_SIZE = 8   # spare segments a worker keeps per size


def _create(name, nbytes):
    """Create segment ``name`` of ``nbytes`` and map it, every page at once (one syscall instead of a page
    fault per 4 KiB page); the name is not registered with any tracker."""
    return create_segment(name, nbytes, populate=True)


def _open(name, nbytes):
    return map_segment(name, nbytes, populate=True)


def unlink_prefix(prefix):
    """Remove every segment whose name starts with ``prefix`` (Linux lists them in /dev/shm)."""
    if not os.path.isdir(SHM_DIR):
        return
    for name in os.listdir(SHM_DIR):
        if name.startswith(prefix):
            unlink(name)


# --- worker side --------------------------------------------------------------
class _Arena:
    """A worker's segments: spare ones by size, those of the batch being built, those the main process holds."""

    def __init__(self, prefix, worker_id):
        self.prefix, self.worker_id = prefix, worker_id
        self.counter = itertools.count()
        self.spare = {}   # nbytes -> [(name, mmap)]
        self.live = {}    # id(mmap) -> (name, mmap, nbytes): handed out for the current batch
        self.lent = {}    # name -> (mmap, nbytes): sent; free again when the main process says so

    def empty(self, shape, dtype):
        dtype = np.dtype(dtype)
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, 1)
        pool = self.spare.get(nbytes) or []
        mm = None
        while pool and mm is None:
            name, mm = pool.pop()
            if sys.getrefcount(mm) > 2:   # code in this worker still holds an array on it: never overwrite that
                unlink(name)              # (the name goes; that array keeps the memory)
                mm = None
        if mm is None:
            name = f'{self.prefix}{next(self.counter)}'
            mm = _create(name, nbytes)
        self.live[id(mm)] = (name, mm, nbytes)
        return np.ndarray(shape, dtype, buffer=mm)

    def batch_sent(self, sent):
        """The batch went out: its segments in ``sent`` are lent to the main process, the others are spare."""
        for name, mm, nbytes in self.live.values():
            if name in sent:
                self.lent[name] = (mm, nbytes)
            else:
                self._keep(name, mm, nbytes)
        self.live.clear()

    def release(self, name):
        entry = self.lent.pop(name, None)
        if entry is not None:
            self._keep(name, *entry)

    def _keep(self, name, mm, nbytes):
        pool = self.spare.setdefault(nbytes, [])
        if len(pool) < _FREE_PER_SIZE:
            pool.append((name, mm))
        else:
            unlink(name)

    def close(self):
        for pool in self.spare.values():
            for name, _ in pool:
                unlink(name)
        for name in list(self.lent) + [e[0] for e in self.live.values()]:
            unlink(name)
        self.spare, self.lent, self.live = {}, {}, {}


class FreeSegment:
    """Main process -> worker: the main process no longer uses segment ``name``."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name


_worker_arena = None


def set_worker_arena(prefix, worker_id):
    global _worker_arena
    _worker_arena = _Arena(prefix, worker_id)
    return _worker_arena


def empty(shape, dtype):
    """An uninitialised array: in shared memory inside a DataLoader worker, ordinary memory elsewhere."""
    if _worker_arena is None or not HAVE_SHM or \
            int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize < _SHM_MIN:
        return np.empty(shape, dtype)
    return _worker_arena.empty(shape, dtype)


class _BatchPickler(pickle.Pickler):
    """Pickles tensors as references to shared-memory segments (copying them into one when they are not)."""

    def __init__(self, file, arena):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.arena = arena
        self.sent = set()

    def reducer_override(self, obj):
        if not isinstance(obj, ember.Tensor):
            return NotImplemented
        a = obj.numpy(force=True)   # the CPU array itself (force: also when it requires grad)
        root = _root(a)
        entry = self.arena.live.get(id(root.base))
        if entry is None or entry[1] is not root.base:
            if a.nbytes < _SHM_MIN or not HAVE_SHM:
                return _rebuild_inline, (np.ascontiguousarray(a), obj.dtype, obj.requires_grad, str(obj.device))
            copy = self.arena.empty(a.shape, a.dtype)
            np.copyto(copy, a)
            a, root = copy, copy
            entry = self.arena.live[id(root.base)]
        name, _, nbytes = entry
        self.sent.add(name)
        return _rebuild_shm, (self.arena.worker_id, name, nbytes, _ptr(a) - _ptr(root), a.shape, a.strides, a.dtype,
                              obj.dtype, obj.requires_grad, str(obj.device))


def dumps_batch(obj, arena):
    buf = io.BytesIO()
    p = _BatchPickler(buf, arena)
    done = False
    try:
        p.dump(obj)
        done = True
    finally:
        arena.batch_sent(p.sent if done else ())
    return buf.getvalue()


# --- main side ----------------------------------------------------------------
class Receiver:
    """The main process's end: mappings of the workers' segments, and who to tell when one is free again."""

    _MAX_MAPS = 64

    def __init__(self):
        self.maps = {}        # name -> mmap, kept while the iterator lives: reused segments need no new mapping
        # (worker id, name) of segments no array uses any more. A finalizer may run inside any allocation (a
        # garbage collection), so it only appends here (atomic, no lock); the iterator tells the workers later.
        self.freed = collections.deque()

    def _release(self, worker_id, name):
        self.freed.append((worker_id, name))

    def take_freed(self):
        """The (worker id, name) of segments freed since the last call."""
        out = []
        while self.freed:
            wid, name = self.freed.popleft()
            if len(self.maps) > self._MAX_MAPS:   # workers may drop spare segments: do not pin all mappings
                self.maps.pop(name, None)
            out.append((wid, name))
        return out

    def loads(self, data):
        _current.receiver, _current.roots = self, {}
        try:
            return pickle.loads(data)
        finally:
            _current.receiver = _current.roots = None

    def root(self, worker_id, name, nbytes):
        roots = _current.roots
        root = roots.get(name)
        if root is None:
            mm = self.maps.get(name)
            if mm is None or len(mm) != nbytes:
                mm = self.maps[name] = _open(name, nbytes)
            root = roots[name] = np.frombuffer(mm, np.uint8, nbytes)
            weakref.finalize(root, self._release, worker_id, name).atexit = False
        return root

    def close(self):
        self.maps = {}   # dropping (not closing) the mappings: arrays still using them keep them alive


_current = threading.local()


def _finish(t, dtype, requires_grad, device):
    if t.dtype != dtype:
        t = t.view(dtype)
    if device != 'cpu':
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_shm(worker_id, name, nbytes, offset, shape, strides, np_dtype, dtype, requires_grad, device):
    root = _current.receiver.root(worker_id, name, nbytes)
    a = np.ndarray(shape, np_dtype, buffer=root, offset=offset, strides=strides)
    return _finish(ember.from_numpy(a), dtype, requires_grad, device)


def _rebuild_inline(a, dtype, requires_grad, device):
    return _finish(ember.from_numpy(a), dtype, requires_grad, device)
