"""Shared-memory transport of batches from DataLoader workers to the main process.

NOTE [DataLoader shared memory]
A worker collates a batch straight into POSIX shared-memory segments (``empty``
below, used by default_collate), and tensors a custom collate_fn made
elsewhere are copied into one. What travels through the pipe is a pickle in
which every tensor is only ``(segment name, offset, shape, strides, dtype)``;
the main process maps the segment and wraps it with ``ember.from_numpy``, zero
copy.

Lifetime: the main process unlinks a segment's name as soon as it has mapped
it, so nothing stays in /dev/shm once a batch is received; the memory itself
is released by the kernel when the last array viewing the mapping is freed (a
tensor, or any view of it that outlives it, keeps the mmap alive through its
NumPy base; unmapping on the tensor's own finalizer would leave such views
dangling). Segments that were created but never received (the iterator shut
down with batches in flight, a worker was killed) carry the iterator's name
prefix, and ``unlink_prefix`` removes them when the iterator shuts down.
"""
import io
import itertools
import mmap
import os
import pickle
import threading

import numpy as np

import ember

try:
    import _posixshmem
except ImportError:   # not POSIX: fall back to the standard library's class
    _posixshmem = None

SHM_DIR = '/dev/shm'
_SHM_MIN = 1 << 12   # below this, a segment costs more than pickling the bytes


def _create(name, nbytes):
    """Create segment ``name`` of ``nbytes`` and map it; the name is not registered with any tracker."""
    if _posixshmem is None:
        from multiprocessing import shared_memory
        seg = shared_memory.SharedMemory(name, create=True, size=nbytes)
        return seg._mmap
    fd = _posixshmem.shm_open('/' + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, nbytes)
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


def _open_and_unlink(name, nbytes):
    fd = _posixshmem.shm_open('/' + name, os.O_RDWR, mode=0o600)
    try:
        mm = mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)
        _posixshmem.shm_unlink('/' + name)
    return mm


def unlink(name):
    try:
        _posixshmem.shm_unlink('/' + name)
    except (FileNotFoundError, AttributeError):
        pass


def unlink_prefix(prefix):
    """Remove every leftover segment whose name starts with ``prefix`` (Linux lists them in /dev/shm)."""
    if not os.path.isdir(SHM_DIR):
        return
    for name in os.listdir(SHM_DIR):
        if name.startswith(prefix):
            unlink(name)


# --- worker side --------------------------------------------------------------
class _Arena:
    """The segments a worker creates for the batch it is working on."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.counter = itertools.count()
        self.live = {}   # id(mmap) -> (name, mmap, nbytes)

    def empty(self, shape, dtype):
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        name = f'{self.prefix}{next(self.counter)}'
        mm = _create(name, max(nbytes, 1))
        self.live[id(mm)] = (name, mm, max(nbytes, 1))
        return np.ndarray(shape, dtype, buffer=mm)

    def drop_unsent(self, sent):
        """After a batch went out, forget its segments; unlink those the main process will never open."""
        for key, (name, _, _) in self.live.items():
            if name not in sent:
                unlink(name)
        self.live.clear()


_worker_arena = None


def set_worker_arena(prefix):
    global _worker_arena
    _worker_arena = _Arena(prefix)
    return _worker_arena


def empty(shape, dtype):
    """An uninitialised array: in shared memory inside a DataLoader worker, ordinary memory elsewhere."""
    if _worker_arena is None or int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize < _SHM_MIN:
        return np.empty(shape, dtype)
    return _worker_arena.empty(shape, dtype)


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _ptr(a):
    return a.__array_interface__['data'][0]


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
            if a.nbytes < _SHM_MIN:   # small tensors travel inline
                return _rebuild_inline, (np.ascontiguousarray(a), obj.dtype, obj.requires_grad, str(obj.device))
            copy = self.arena.empty(a.shape, a.dtype)
            np.copyto(copy, a)
            a, root = copy, copy
            entry = self.arena.live[id(root.base)]
        name, _, nbytes = entry
        self.sent.add(name)
        offset = _ptr(a) - _ptr(root)
        return _rebuild_shm, (name, nbytes, offset, a.shape, a.strides, a.dtype, obj.dtype, obj.requires_grad,
                              str(obj.device))


def dumps_batch(obj, arena):
    buf = io.BytesIO()
    p = _BatchPickler(buf, arena)
    p.dump(obj)
    arena.drop_unsent(p.sent)
    return buf.getvalue()


# --- main side ----------------------------------------------------------------
_receiving = threading.local()   # name -> mmap for the message being unpickled (a segment may back several tensors)


def loads_batch(data):
    _receiving.maps = {}
    try:
        return pickle.loads(data)
    finally:
        _receiving.maps = None


def _finish(t, dtype, requires_grad, device):
    if t.dtype != dtype:
        t = t.view(dtype)
    if device != 'cpu':
        t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_shm(name, nbytes, offset, shape, strides, np_dtype, dtype, requires_grad, device):
    maps = getattr(_receiving, 'maps', None)
    mm = maps.get(name) if maps is not None else None
    if mm is None:
        mm = _open_and_unlink(name, nbytes)
        if maps is not None:
            maps[name] = mm
    a = np.ndarray(shape, np_dtype, buffer=mm, offset=offset, strides=strides)
    return _finish(ember.from_numpy(a), dtype, requires_grad, device)


def _rebuild_inline(a, dtype, requires_grad, device):
    return _finish(ember.from_numpy(a), dtype, requires_grad, device)
