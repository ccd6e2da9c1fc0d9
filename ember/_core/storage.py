"""Storage: a flat buffer of bytes on a device.

On CPU the buffer is a NumPy ``uint8`` array; a tensor is a strided NumPy view
of it (sizes, strides, offset), so views of one tensor share the same bytes.
Tensors made by a kernel adopt the kernel's result array; their Storage is
built on first request (`Storage.of_array`), which keeps the hot path free of
Storage objects that nobody asks for.
"""
import numpy as np


class MetaArray:
    """What a meta tensor has instead of data: shape, byte strides, dtype, offset.

    It mimics the few ndarray attributes ember reads, so a meta tensor flows
    through the same code as a CPU one without a branch per device.
    """
    __slots__ = ('shape', 'strides', 'dtype', 'offset', 'ndim', 'size', 'itemsize', '__weakref__')   # weak: TensorDataMap

    def __init__(self, shape, dtype, strides=None, offset=0):
        shape = tuple(s if s.__class__ is int or hasattr(s, 'expr') else int(s) for s in shape)   # SymInts stay
        self.shape, self.dtype, self.offset, self.ndim = shape, dtype, offset, len(shape)
        self.itemsize = dtype.itemsize
        n = 1
        for s in shape:
            n *= s
        self.size = n
        self.strides = strides if strides is not None else contiguous_strides(shape, self.itemsize)

    def reshape(self, *shape):
        return MetaArray(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape, self.dtype)


def as_size(s):
    """A size as an int: a plain int, or a symbolic size (a SymInt, NOTE [symbolic sizes]) kept as it is, since
    ``int()`` would drop its expression."""
    return s if s.__class__ is int or hasattr(s, 'expr') else int(s)


def contiguous_strides(shape, itemsize=1):
    n = len(shape)
    if n < 3:     # the common cases, without the loop
        if n == 2:
            return ((shape[1] or 1) * itemsize, itemsize)
        return (itemsize,) if n else ()
    strides, acc = [], itemsize
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


class Storage:
    """An untyped buffer: ``nbytes()``, ``data_ptr()``, ``device``, and the allocator that made it.

    >>> import ember
    >>> t = ember.zeros(4)
    >>> s = t.untyped_storage(); s.nbytes(), s.device.type
    (16, 'cpu')
    """
    __slots__ = ('data', 'device', 'allocator', '_nbytes', '__weakref__')

    def __init__(self, data, device, allocator=None, nbytes=None):
        self.data = data            # uint8 array (NumPy/CuPy), or None on meta
        self.device = device
        self.allocator = allocator
        self._nbytes = int(data.size) if nbytes is None else nbytes

    @classmethod
    def allocate(cls, nbytes, device):
        iface = device._iface
        if iface.allocator is None:
            return cls(None, device, None, nbytes)
        return cls(iface.allocator.allocate(nbytes), device, iface.allocator, nbytes)

    @classmethod
    def of_array(cls, a, device):
        """The storage an adopted array lives in, and the array's element offset in it."""
        root = a
        while isinstance(getattr(root, 'base', None), type(a)):
            root = root.base
        if type(root) is not type(a) and isinstance(root, np.ndarray):
            root = root.view(type(a))       # an np.memmap under a plain view: its memory as the plain array type
        if not root.flags.c_contiguous and not root.flags.f_contiguous and root.ndim > 1:
            # a dense block in permuted order (NumPy ufuncs keep a permuted input's layout): the same
            # memory seen with its axes sorted by stride is C-contiguous
            root = root.transpose(sorted(range(root.ndim), key=lambda d: -root.strides[d]))
        if not root.flags.c_contiguous and not root.flags.f_contiguous:
            raise RuntimeError("internal error: cannot find the storage of a non-contiguous root array")
        order = 'C' if root.flags.c_contiguous else 'F'       # NumPy's 'A' (CuPy's reshape has no 'A')
        flat = root.reshape(-1, order=order).view(np.uint8) if root.size else root.view(np.uint8).reshape(-1)
        if root is a:
            return cls(flat, device, None), 0
        offset_bytes = _ptr(a) - _ptr(root)
        return cls(flat, device, None), offset_bytes // a.itemsize

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return 0 if self.data is None else _ptr(self.data)

    def tolist(self):
        return self.data.tolist()

    def __getitem__(self, i):
        """A byte's value, or for a slice a storage over those bytes (the same memory), as torch's."""
        if isinstance(i, slice):
            return Storage(self.data[i], self.device)
        return int(self.data[i])

    def untyped(self):
        return self

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """torch.UntypedStorage.from_file: the first ``nbytes`` bytes of a file (all of it for 0) as a CPU storage
        mapped into memory; ``shared=True`` writes go to the file, else the mapping is private (copy on write), as
        torch's MAP_SHARED / MAP_PRIVATE. safetensors loads its tensors through it."""
        import os
        from .device import canonical
        size = nbytes or os.path.getsize(filename)
        if size > os.path.getsize(filename):
            raise RuntimeError(f"unexpected EOF, expected {size} bytes but the file {filename} has "
                               f"{os.path.getsize(filename)}")
        data = np.memmap(filename, dtype=np.uint8, mode='r+' if shared else 'c', shape=(size,)) if size else \
            np.empty(0, np.uint8)
        return cls(data.view(np.ndarray), canonical('cpu'))

    def __repr__(self):
        return f' {self.device.type} untyped storage of {self._nbytes} bytes'


def _ptr(a):
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    if hasattr(a, 'data') and hasattr(a.data, 'ptr'):  # CuPy
        return a.data.ptr
    return 0


def is_dense(shape, strides):
    """Non-overlapping and dense: the strides, sorted, are those of a contiguous tensor of the sorted sizes."""
    expected = 1
    for n, st in sorted(zip(shape, strides), key=lambda p: p[1]):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


def follows(t, shape, dtype):
    """A meta result ``(shape, dtype[, strides])`` for an output laid out like its input ``t`` of the same shape, as
    torch's sort and TensorIterator outputs are: ``t``'s strides when it is dense, else contiguous."""
    st = t.stride() if hasattr(t._a, 'strides') else None
    return (shape, dtype, st) if st is not None and is_dense(shape, st) else (shape, dtype)


def format_strides(shape, memory_format):
    """The strides (in elements) of a ``channels_last`` (N, C, H, W) or ``channels_last_3d`` (N, C, D, H, W)
    tensor: the channels innermost, as torch lays them out; None for the other formats."""
    if memory_format == 'channels_last':
        if len(shape) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        _, c, _, w = shape
        return (shape[2] * w * c, 1, w * c, c)
    if memory_format == 'channels_last_3d':
        if len(shape) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        _, c, _, h, w = shape
        return (shape[2] * h * w * c, 1, h * w * c, w * c, c)
    return None
