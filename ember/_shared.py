"""Tensors in shared memory: ``Tensor.share_memory_()``, ``is_shared()``, and how they cross processes.

NOTE [shared tensors]
``share_memory_()`` moves a CPU tensor's data into a named POSIX shared-memory
segment (``/dev/shm/ember_shm_<pid>_<n>``) mapped ``MAP_SHARED``, and points
the tensor at it in place (the tensor object, its autograd state and its
version counter stay). A forked child inherits the mapping, so its in-place
writes land in the parent's tensor; a spawned child, or any process a tensor
reaches through a ``multiprocessing`` queue or pipe, gets the segment's name in
the pickle (``reduce_tensor``) and maps the same memory. That is what
Hogwild training needs: several processes updating one model's parameters in
place. As in torch, pickling a tensor for another process first moves it to
shared memory. Limits: views taken before the move keep the old memory (torch
moves the storage under them; ember's views hold their own arrays), and only
the CPU device is supported.

Lifetime: a segment's name is unlinked when the creating process's last array
on it is collected or the process exits (the kernel frees the memory with the
last mapping), so a receiver must map it while the sender still holds the
tensor, the rule torch's ``file_descriptor`` strategy has too.
"""
import itertools
import mmap
import os
import weakref

import numpy as np

try:
    import _posixshmem
except ImportError:     # no POSIX shared memory (Windows)
    _posixshmem = None

_counter = itertools.count()
_SEGMENTS = {}          # id(mmap) -> (name, nbytes): segments this process maps
_OPENED = {}            # name -> mmap, segments received from other processes


HAVE_SHM = _posixshmem is not None
_POPULATE = getattr(mmap, 'MAP_POPULATE', 0)


# --- named segments: the primitives this module and the DataLoader's batch transport (utils/data/_utils/shm.py)
# share ---------------------------------------------------------------------------------------------------------

def create_segment(name, nbytes, populate=False):
    """Create POSIX shared-memory segment ``name`` of ``nbytes`` and map it (MAP_SHARED; ``populate`` maps every
    page at once, one syscall instead of a fault per page)."""
    fd = _posixshmem.shm_open('/' + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, nbytes)
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | (_POPULATE if populate else 0))
    finally:
        os.close(fd)


def map_segment(name, nbytes, populate=False):
    """Map an existing segment ``name``."""
    fd = _posixshmem.shm_open('/' + name, os.O_RDWR, mode=0o600)
    try:
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | (_POPULATE if populate else 0))
    finally:
        os.close(fd)


def unlink_segment(name):
    try:
        _posixshmem.shm_unlink('/' + name)
    except FileNotFoundError:
        pass


def root_array(a):
    """The array that owns ``a``'s memory (the end of its chain of bases)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def data_ptr(a):
    return a.__array_interface__['data'][0]


_root, _ptr = root_array, data_ptr


def segment_of(a):
    """``(name, nbytes, root array)`` of the shared segment ``a`` lives in, or None."""
    root = _root(a)
    owner = getattr(root.base, 'obj', root.base)     # frombuffer keeps a memoryview of the mmap
    entry = _SEGMENTS.get(id(owner)) if owner is not None else None
    return None if entry is None or entry[2]() is not owner else (entry[0], entry[1], root)


def _register(mm, name, nbytes):
    _SEGMENTS[id(mm)] = (name, nbytes, weakref.ref(mm) if _weakrefable(mm) else (lambda: mm))


def _weakrefable(obj):
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def _unlink(name, pid):
    if os.getpid() == pid:      # a forked child inherits the finalizer; only the creator removes the name
        unlink_segment(name)


def shared_copy(a):
    """A C-contiguous copy of array ``a`` in a new named shared segment."""
    if _posixshmem is None:
        raise RuntimeError("share_memory_(): this platform has no POSIX shared memory")
    nbytes = max(a.nbytes, 1)
    name = f'ember_shm_{os.getpid()}_{next(_counter)}'
    mm = create_segment(name, nbytes)
    _register(mm, name, nbytes)
    root = np.frombuffer(mm, np.uint8, nbytes)
    weakref.finalize(root, _unlink, name, os.getpid())
    out = np.ndarray(a.shape, a.dtype, buffer=root)
    np.copyto(out, a)
    return out


def open_segment(name, nbytes):
    mm = _OPENED.get(name)
    if mm is None or len(mm) != nbytes:
        mm = map_segment(name, nbytes)
        _OPENED[name] = mm
        _register(mm, name, nbytes)
    return np.frombuffer(mm, np.uint8, nbytes)


def reduce_tensor(t):
    """Pickle ``t`` for another process: a reference to its shared segment (moving it there first, as torch)."""
    from ._tensor import Tensor
    if t.device.type != 'cpu':
        raise RuntimeError(f"ember cannot share a {t.device.type} tensor between processes")
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                           "does not support crossing process boundaries.  If you just want to transfer the data, "
                           "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    cls = None if type(t) is Tensor else type(t)     # a Parameter arrives as a Parameter (torch's rebuild)
    if not t.is_shared():
        if t._base is not None and cls is not None:
            from .serialization import _reduce_tensor      # by value, as a plain view below
            return _rebuild_subclass, (cls, _reduce_tensor(t.detach()), bool(t.requires_grad))
        if t._base is not None:
            # A view of memory that is not shared: torch moves the whole storage to shared memory, base and views
            # alike; ember's share_memory_ can only give this tensor a copy, whose segment would be unlinked when
            # this (often temporary) view is collected, before the receiver maps it (a DataLoader batch of index
            # views: UvA's FewShotBatchSampler). So a view travels by value, as without torch.multiprocessing.
            return t.__reduce_ex__(2)
        Tensor.share_memory_(t)
    a = t.numpy(force=True)
    name, nbytes, root = segment_of(a)
    return _rebuild_tensor, (name, nbytes, _ptr(a) - _ptr(root), a.shape, a.strides, a.dtype, t.dtype.name,
                             bool(t.requires_grad), cls)


def _rebuild_subclass(cls, reduced, requires_grad):
    fn, args = reduced[:2]
    return cls(fn(*args), requires_grad)


def _rebuild_tensor(name, nbytes, offset, shape, strides, np_dtype, dtype_name, requires_grad, cls=None):
    from . import from_numpy
    a = np.ndarray(shape, np_dtype, buffer=open_segment(name, nbytes), offset=offset, strides=strides)
    t = from_numpy(a)
    if t.dtype.name != dtype_name:
        import ember
        t = t.view(getattr(ember, dtype_name if dtype_name != 'bool' else 'bool'))
    if cls is not None:
        return cls(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def register_reducers():
    """Tensors sent through multiprocessing queues, pipes and process arguments travel by shared memory."""
    from multiprocessing.reduction import ForkingPickler
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)   # its own __reduce_ex__ would share a temporary detach()
