"""Storage: a flat buffer of bytes on a device.

On CPU the buffer is a NumPy ``uint8`` array; a tensor is a strided NumPy view
of it (sizes, strides, offset), so views of one tensor share the same bytes.
Tensors made by a kernel adopt the kernel's result array; their Storage is
built on first request (`Storage.of_array`), which keeps the hot path free of
Storage objects that nobody asks for.
"""
import sys

import numpy as np

from . import naming


class _Plain:
    pass


class _Slotted:
    __slots__ = ()


# sys.getsizeof adds a header to __sizeof__: the GC's for ember's slotted classes, and a managed __dict__'s too for
# torch's tensors and storages (Python classes on C bases); this is the difference
_HEADER_GAP = (sys.getsizeof(_Plain()) - _Plain().__sizeof__()) - (sys.getsizeof(_Slotted()) - _Slotted().__sizeof__())


def torch_sizeof(basic_size):
    """``__sizeof__`` for an object of a slotted ember class that ``sys.getsizeof`` should measure as torch's
    whose C struct is ``basic_size`` bytes (torch 2.13's storage: 32), as programs that estimate memory read it."""
    return basic_size + _HEADER_GAP


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


def check_in_bounds(size, stride, offset, itemsize, nbytes, where=''):
    """torch's checkInBoundsForStorage: the elements a geometry reaches (in element strides, from element
    ``offset``) must lie within ``nbytes``; a geometry with no elements needs none. ``where`` names the place."""
    if 0 in size:
        return
    need = (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))) * itemsize
    if need > nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {need} are out of bounds for storage of "
                           f"size {nbytes}" + (f" ({where})" if where else ''))


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


def _converter(dtype_name):
    """A storage's ``float()``, ``long()``, ...: its bytes converted to that dtype, as a new TypedStorage."""
    def convert(self):
        from . import dtype as D
        return self._to(getattr(D, dtype_name))
    return convert


class UntypedStorage:
    """An untyped buffer (torch.UntypedStorage): ``nbytes()``, ``data_ptr()``, ``device``, and the allocator that
    made it. Tensors are views of it; indexing it reads and writes bytes.

    >>> import ember
    >>> t = ember.zeros(4)
    >>> s = t.untyped_storage(); s.nbytes(), s.device.type
    (16, 'cpu')
    >>> s[0] = 1; s.tolist()[:4]
    [1, 0, 0, 0]
    """
    __slots__ = ('data', 'device', 'allocator', '_nbytes', '__weakref__')
    __module__ = 'ember.storage'        # its public home (torch.storage.UntypedStorage under ember run)
    is_sparse = is_sparse_csr = False

    def __init__(self, data=0, device=None, allocator=None, nbytes=None):
        if device is None or type(device) is str or type(data) in (int, list, tuple):
            data, device = _public_storage(data, device)       # torch.UntypedStorage(8), (8, device='cpu'), ([1, 2])
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

    def __sizeof__(self):      # torch's figure: its C object and the bytes (torchinfo's size estimates read it)
        return torch_sizeof(32) + self.nbytes()

    def __len__(self):
        return self._nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return 0 if self.data is None else _ptr(self.data)

    def tolist(self):
        return self.data.tolist()

    def _byte_index(self, i):
        if isinstance(i, bool) or not isinstance(i, (int, slice, np.integer)):
            raise TypeError(f"can't index a {naming.shown}.UntypedStorage with {type(i).__name__}")
        if isinstance(i, slice):
            return i
        if not -self._nbytes <= i < self._nbytes:
            raise IndexError(f"index {i} out of range for storage of size {self._nbytes}")
        return int(i) % self._nbytes

    def __getitem__(self, i):
        """A byte's value, or for a slice a storage over those bytes (the same memory), as torch's."""
        i = self._byte_index(i)
        if isinstance(i, slice):
            return UntypedStorage(self.data[i], self.device)
        return int(self.data[i])

    def __setitem__(self, i, value):
        """Set a byte, or every byte of a slice, to an integer (kept modulo 256, as torch's uint8 cast)."""
        i = self._byte_index(i)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise RuntimeError(f"can only set storage content with a int types, but got {type(value).__name__} "
                               "instead")
        self.data[i] = int(value) & 0xff

    def __iter__(self):
        return iter(self.tolist())

    def untyped(self):
        return self

    # --- torch's storage methods: copies, conversions, and what the storage is ---
    def fill_(self, value):
        self.data[...] = int(value) & 0xff
        return self

    def copy_(self, src, non_blocking=None):
        """Copy ``src``'s bytes (a storage of the same size) into this one."""
        if not isinstance(src, UntypedStorage) and not hasattr(src, 'untyped'):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be {naming.shown}.Storage, not "
                            f"{type(src).__name__}")
        src = src.untyped()
        if src.nbytes() != self._nbytes:
            raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src was {src.nbytes()} "
                               "bytes")
        if self.device.type != 'meta':
            data = src.data
            if src.device != self.device:
                data = src.to(device=self.device).data
            self.data[...] = data
        return self

    def clone(self):
        return UntypedStorage(None if self.data is None else self.data.copy(), self.device, None, self._nbytes)

    def new(self):
        """An empty storage on the same device."""
        return UntypedStorage(self.data[:0].copy() if self.data is not None else None, self.device, None, 0)

    def to(self, *, device=None, non_blocking=False):
        """This storage, or a copy of its bytes on ``device``."""
        from .device import canonical
        device = canonical('cpu' if device is None else device)
        if device == self.device:
            return self
        if self.data is None or device.type == 'meta':
            return UntypedStorage(None, device, None, self._nbytes)
        host = self.device._iface.to_host(self.data)
        data = host.copy() if device.type == 'cpu' else device._iface.from_host(host, device.index)
        return UntypedStorage(data, device, None, self._nbytes)

    def cpu(self):
        return self.to(device='cpu')

    def type(self, dtype=None, non_blocking=False):
        """The class's name; converting an untyped storage goes through ``float()``, ``long()``, ..."""
        if dtype is not None:
            raise TypeError("UntypedStorage.type(dtype): convert with float(), double(), long(), ... instead")
        return f'{naming.shown}.storage.UntypedStorage'

    def _to(self, dtype):
        """The bytes as uint8 elements converted to ``dtype`` (torch's ``UntypedStorage.float()`` and the like)."""
        from ..storage import TypedStorage
        from . import dtype as D
        return TypedStorage(self, D.uint8)._to(dtype)

    float, double, half, bfloat16 = map(_converter, ('float32', 'float64', 'float16', 'bfloat16'))
    long, int, short, char, byte, bool = map(_converter, ('int64', 'int32', 'int16', 'int8', 'uint8', 'bool_'))
    complex_float, complex_double = map(_converter, ('complex64', 'complex128'))

    def byteswap(self, dtype):
        """Reverse the byte order of each element of ``dtype`` in place."""
        size = dtype.itemsize
        if size > 1:
            self.data.reshape(-1, size)[...] = self.data.reshape(-1, size)[:, ::-1].copy()

    def is_pinned(self, device='cuda'):
        return False

    def pin_memory(self, device='cuda'):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_shared(self):
        if self.device.type != 'cpu' or self.data is None:
            return False
        from .._shared import segment_of
        return segment_of(self.data) is not None

    def get_device(self):
        return self.device.index

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    @property
    def filename(self):
        return None

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

    @classmethod
    def from_buffer(cls, buffer, byte_order='native', count=-1, offset=0, dtype=None):
        """torch.UntypedStorage.from_buffer: a CPU storage holding a copy of ``buffer``'s bytes, read as ``count``
        elements of ``dtype`` (uint8 by default) from byte ``offset`` in ``byte_order`` ('native', 'little' or
        'big') and stored in this machine's order."""
        np_dtype = np.dtype(np.uint8 if dtype is None else dtype.np)
        if byte_order not in ('native', 'little', 'big', None):
            raise ValueError(f"Expected byte_order to be one of 'little', 'big', or 'native', but got '{byte_order}'")
        order = {'little': '<', 'big': '>'}.get(byte_order, '=')
        a = np.frombuffer(buffer, dtype=np_dtype.newbyteorder(order), count=count, offset=offset)
        from .device import canonical
        return cls(a.astype(np_dtype).view(np.uint8).copy(), canonical('cpu'))

    def __repr__(self):
        body = '\n'.join(f' {v}' for v in self.tolist()) if self.data is not None else '...'
        return f'{body or " "}\n[{naming.shown}.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]'


Storage = UntypedStorage        # ember's own name for it


def _public_storage(data, device):
    """The bytes and device of torch's public constructors: ``UntypedStorage(nbytes)`` (uninitialised memory, as
    torch's: here zeros), ``UntypedStorage([byte, ...])``, ``UntypedStorage()``, each with ``device=``."""
    from .device import canonical
    device = canonical('cpu' if device is None else device)
    if isinstance(data, int):
        a = np.zeros(data, np.uint8)
    else:
        a = np.array(data, dtype=np.int64)
        if a.ndim != 1 or ((a < 0) | (a > 255)).any():
            raise TypeError("UntypedStorage(): expected a sequence of integers in [0, 255]")
        a = a.astype(np.uint8)
    if device.type != 'cpu':
        a = device._iface.from_host(a) if hasattr(device._iface, 'from_host') else a
    return a, device


def _ptr(a):
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    if hasattr(a, 'data') and hasattr(a.data, 'ptr'):  # CuPy
        return a.data.ptr
    return 0


# NOTE [output strides]: torch gives a new tensor computed from others the layout of its inputs, so that
# ``x.t().sin()`` is transposed as ``x.t()`` is and a channels_last activation stays channels_last. Three rules:
#
# - **TensorIterator** (every pointwise operator: ``iterator_strides``). When all inputs have one shape (a Python
#   number is a 0-d input) its fast setup takes their common layout: contiguous if all are, channels_last if all
#   are, their strides if all are dense with equal strides. Otherwise it orders the dimensions from the
#   fastest-moving to the slowest (``reorder_dimensions``): an insertion sort from C order, where a pair of
#   dimensions is decided by the first input, in argument order, with a non-zero stride in both (a broadcast
#   dimension counts as stride 0): the smaller stride goes first; on equal strides the larger size goes last,
#   else the next input decides; no input deciding leaves the pair as it is. The output is dense in that order
#   (every size, 0 and 1 included, multiplies the next stride). So ``x.t() + y`` follows ``x.t()``, ``y + x.t()``
#   follows ``y``, and an expanded or non-dense input still lends its order.
# - **preserve_format** (``clone``, ``to``, ``empty_like`` and the ``*_like`` factories, ``sort``, ``flip``:
#   ``preserve_strides``): a dense input's strides as they are, else dense strides in the order the same sort
#   gives for the input alone (``infer_dense_strides``, where sizes 0 and 1 do not multiply).
# - **a common memory format** (``cat``, and so ``stack`` along an existing dimension: torch stacks by cat and a
#   view): when every input's ``suggest_memory_format`` is channels_last (or every one channels_last_3d) the
#   result is laid out so, else it is contiguous, whatever the inputs' strides (``cat_strides``).
#
# Meta results follow these rules exactly. On CPU, preserve_format copies of a non-C-contiguous input are laid out
# by ``preserve_strides`` too; pointwise results keep the layout of the kernel's NumPy result, which checking would
# cost every call: NumPy's ufuncs (order='K') agree but where two inputs' orders conflict (NumPy takes C order)
# and for the strides of size-1 dimensions; a few kernels compute in C order (tests/test_pointwise_strides.py).

def is_dense(shape, strides):
    """Non-overlapping and dense (torch's ``is_non_overlapping_and_dense``): the strides, sorted, are those of a
    contiguous tensor of the sorted sizes; dimensions of size 0 and 1 do not count."""
    expected = 1
    for n, st in sorted(zip(shape, strides), key=lambda p: p[1]):
        if n < 2:
            continue
        if st != expected:
            return False
        expected *= n
    return True


def _contiguous(shape, strides):
    """torch's ``is_contiguous()``: C order, ignoring dimensions of size 1; an empty tensor is contiguous."""
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if st != expected:
                return False
            expected *= n
    return True


def _channels_last(shape, strides):
    """torch's ``is_contiguous(memory_format=torch.channels_last)`` (4-D only)."""
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _fastest_first(shape, inputs):
    """The dimensions from the fastest-moving to the slowest, as TensorIterator's ``reorder_dimensions`` sorts
    them for ``inputs``' strides (broadcast to ``shape``; NOTE [output strides])."""
    def order(d0, d1):      # 1: d0 goes after d1, -1: before, 0: no input decides
        for st in inputs:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = order(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _broadcast_strides(shape, sizes, strides):
    """An input's strides over the output's ``shape``: 0 where it broadcasts (a missing dimension, or size 1 in
    the input where the output's is not)."""
    lead = len(shape) - len(sizes)
    return (0,) * lead + tuple(0 if n == 1 and shape[lead + i] != 1 else st
                               for i, (n, st) in enumerate(zip(sizes, strides)))


def iterator_strides(shape, inputs):
    """The strides (in elements) of the output of shape ``shape`` of a pointwise operator on ``inputs``, a
    ``(sizes, strides)`` pair per tensor argument in order (``((), ())`` for a Python number), as torch's
    TensorIterator lays it out (NOTE [output strides]); None for contiguous."""
    if all(sizes == shape for sizes, _ in inputs):
        if all(_contiguous(sizes, st) for sizes, st in inputs):
            return None
        if all(_channels_last(sizes, st) for sizes, st in inputs):
            return format_strides(shape, 'channels_last')
        st = inputs[-1][1]
        if all(s == st for _, s in inputs) and is_dense(shape, st):
            return tuple(st)
    perm = _fastest_first(shape, [_broadcast_strides(shape, sizes, st) for sizes, st in inputs])
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    out, acc = [0] * len(shape), 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def preserve_strides(shape, strides):
    """The strides (in elements) of a ``preserve_format`` copy of a tensor of these sizes and strides (clone, to,
    empty_like; NOTE [output strides]): its own when it is dense, else dense strides in its dimensions' order."""
    if is_dense(shape, strides):
        return tuple(strides)
    out, acc = [0] * len(shape), 1
    for d in _fastest_first(shape, [strides]):
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def follows(t, shape, dtype):
    """A meta result ``(shape, dtype[, strides])`` for an output laid out like its input ``t`` of the same shape
    with ``preserve_format``, as torch's sort and flip are (NOTE [output strides])."""
    if not hasattr(t._a, 'strides'):
        return shape, dtype
    return shape, dtype, preserve_strides(shape, t.stride())


def _strides_like(shape, strides, order):
    """torch's ``is_channels_last_strides_2d``/``_3d``: the strides grow along ``order`` (the channels first, the
    batch last), with the ambiguous layouts (a zero channel stride, a batch stride equal to the channels') read
    as contiguous."""
    if strides[1] == 0:
        return False
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return False
        least = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggest_memory_format(shape, strides):
    """The memory format torch reads from a tensor's strides (``Tensor.suggest_memory_format``): channels_last
    for a 4-D tensor whose strides grow C, W, H, N, channels_last_3d for a 5-D one ordered C, W, H, D, N, else
    contiguous_format. Operators whose output takes its inputs' common format (cat) ask it."""
    if len(shape) == 4 and _strides_like(shape, strides, (1, 3, 2, 0)):
        return 'channels_last'
    if len(shape) == 5 and _strides_like(shape, strides, (1, 4, 3, 2, 0)):
        return 'channels_last_3d'
    return 'contiguous_format'


def cat_strides(shape, inputs):
    """The strides (in elements) of ``cat``'s result of shape ``shape`` for ``inputs``, a ``(sizes, strides)``
    pair per tensor (NOTE [output strides]): the inputs' memory format when they all suggest the same
    channels_last one; None for contiguous."""
    formats = {suggest_memory_format(sizes, st) for sizes, st in inputs}
    return format_strides(shape, formats.pop()) if len(formats) == 1 else None


# NOTE [channels_last outputs]: torch's CPU convolutions, batch norm, group norm, max pooling, 2-D average and
# adaptive pooling, upsampling and padding lay their result out in the memory format their input suggests (a
# convolution: its input's or its weight's; mkldnn's rule), and their backwards the input gradient likewise. A
# channels_last tensor comes from more than ``.to(memory_format=...)``: ``x.permute(0, 3, 1, 2)`` of NHWC data is
# one, and so is everything computed from it. So a network fed permuted images (ConvNeXt, SegFormer, most
# vision transformers' stems) runs channels_last in torch, and a dropout mask drawn over such an activation falls
# in memory order: the result's layout decides which elements a seeded draw zeroes. ember's metas return these
# strides (``channels_last_strides``) and the kernels' NCHW arrays are copied into them (adapters.laid_out).

def channels_last_strides(shape, *tensors):
    """The strides (in elements) of a result of ``shape`` laid out in the channels_last (4-D) or channels_last_3d
    (5-D) format the first of ``tensors`` that suggests one does (NOTE [channels_last outputs]); None when none
    does or the result's rank has no such format. ``tensors``: TensorImpls or None."""
    if len(shape) not in (4, 5):
        return None
    for t in tensors:
        if t is None:
            continue
        a = t._a
        if a.ndim != len(shape) or getattr(getattr(a, 'flags', None), 'c_contiguous', False):
            continue        # a C-contiguous array never suggests channels_last (storage.suggest_memory_format)
        isz = a.itemsize
        fmt = suggest_memory_format(a.shape, tuple(st // isz for st in a.strides))
        if fmt != 'contiguous_format':
            return format_strides(shape, fmt)
    return None


def with_layout(m, *tensors):
    """A meta result ``(shape, dtype)`` with the strides of the channels_last format ``tensors`` suggest, if any
    (NOTE [channels_last outputs])."""
    st = channels_last_strides(m[0], *tensors)
    return m if st is None else (m[0], m[1], st)


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
