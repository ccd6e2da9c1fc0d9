"""torch.storage: ``UntypedStorage`` (ember's Storage: bytes, a device, an allocator) and ``TypedStorage``, the
deprecated view of those bytes as elements of one dtype that ``Tensor.storage()`` returns.

A TypedStorage holds no memory of its own: reads and writes go to the untyped storage underneath, so writing
``t.storage()[0] = 5`` changes ``t``. Its size counts elements of its dtype; indexing takes one position (torch
refuses slices there: "slices are only supported in UntypedStorage.__getitem__"). The first ``Tensor.storage()``
call in a process warns that TypedStorage is deprecated, as torch's does.
"""
from ._core.storage import UntypedStorage, _converter
from ._core import dtype as D
from ._core import naming
from ._warn import warnings

__all__ = ['UntypedStorage', 'TypedStorage']

_LEGACY_NAMES = {
    'float32': 'FloatStorage', 'float64': 'DoubleStorage', 'float16': 'HalfStorage', 'bfloat16': 'BFloat16Storage',
    'int64': 'LongStorage', 'int32': 'IntStorage', 'int16': 'ShortStorage', 'int8': 'CharStorage',
    'uint8': 'ByteStorage', 'bool': 'BoolStorage', 'complex64': 'ComplexFloatStorage',
    'complex128': 'ComplexDoubleStorage'}

_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
               "storage class. This should only matter to you if you are using storages directly.  To access "
               "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


def _warn_typed_storage_removal():
    warnings.warn_once(_DEPRECATED, UserWarning)


class TypedStorage:
    """The elements of one dtype in an untyped storage (torch.TypedStorage).

    >>> import ember, warnings
    >>> t = ember.arange(4.)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     s = t.storage()
    >>> s.size(), s.dtype, s[2]
    (4, ember.float32, 2.0)
    >>> s[0] = 7.0; t[0].item()
    7.0
    """
    is_sparse = False

    def __init__(self, wrap_storage, dtype):
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(f"expected wrap_storage to be an UntypedStorage, but got {type(wrap_storage).__name__}")
        self._untyped_storage, self.dtype = wrap_storage, dtype

    # --- what it is ---
    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    def untyped(self):
        return self._untyped_storage

    def element_size(self):
        return self.dtype.itemsize

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self.size() * self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def __sizeof__(self):      # the object and its elements' bytes, as torch's (torchinfo reads it)
        return object.__sizeof__(self) + self.nbytes()

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def type(self, dtype=None, non_blocking=False):
        if dtype is not None:
            raise NotImplementedError("TypedStorage.type(dtype): convert with float(), double(), long(), ...")
        return f'{naming.shown}.{self.pickle_storage_type()}'

    def pickle_storage_type(self):
        name = _LEGACY_NAMES.get(self.dtype.name)
        if name is None:
            raise KeyError(f'dtype {self.dtype} is not recognized')
        return name

    # --- the elements ---
    def _array(self):
        data = self._untyped_storage.data
        if data is None:
            raise NotImplementedError(f"Cannot access data of a storage on the {self.device.type} device")
        return data[:self.nbytes()].view(self.dtype.np)

    def _index(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise RuntimeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n if n else idx

    def __getitem__(self, idx):
        return self._array()[self._index(idx)].item()

    def __setitem__(self, idx, value):
        self._array()[self._index(idx)] = value

    def tolist(self):
        return self._array().tolist()

    def fill_(self, value):
        self._array()[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        if source.size() != self.size():
            raise RuntimeError(f"size mismatch, expected {self.size()}, got {source.size()}")
        self._array()[...] = source._array()
        return self

    def _to(self, dtype):
        from ._creation import tensor
        values = tensor(self.tolist(), dtype=self.dtype).to(dtype)
        return TypedStorage(values.untyped_storage(), dtype)

    float, double, half, bfloat16 = map(_converter, ('float32', 'float64', 'float16', 'bfloat16'))
    long, int, short, char, byte, bool = map(_converter, ('int64', 'int32', 'int16', 'int8', 'uint8', 'bool_'))
    complex_float, complex_double = map(_converter, ('complex64', 'complex128'))

    def clone(self):
        return TypedStorage(self._untyped_storage.clone(), self.dtype)

    def to(self, *, device=None, non_blocking=False):
        moved = self._untyped_storage.to(device=device)
        return self if moved is self._untyped_storage else TypedStorage(moved, self.dtype)

    # what the bytes are: the untyped storage's answers
    def is_pinned(self, device='cuda'):
        return self._untyped_storage.is_pinned(device)

    def pin_memory(self, device='cuda'):
        return self._untyped_storage.pin_memory(device)

    def get_device(self):
        return self._untyped_storage.get_device()

    def cpu(self):
        return self

    def __repr__(self):
        body = '\n'.join(f' {v}' for v in self.tolist()) if self.device.type != 'meta' else '...'
        head = (f'[{naming.shown}.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size '
                f'{self.size()}]')
        return f'{body}\n{head}' if body else head

    def __iter__(self):
        return iter(self.tolist())


class _LegacyStorageMeta(type):
    """torch's legacy storage classes (``torch.FloatStorage``, ...): calling one makes a TypedStorage of its dtype
    (``FloatStorage(3)``: three elements; ``FloatStorage([1., 2.])``: those values; ``wrap_storage=``: over those
    bytes), and a TypedStorage of that dtype on the CPU is an instance of it."""

    def __call__(cls, *args, wrap_storage=None, device=None):
        _warn_typed_storage_removal()
        if wrap_storage is not None:
            return TypedStorage(wrap_storage, cls.dtype)
        from ._legacy_types import construct       # the legacy tensor types' argument rules: sizes or values
        t = construct(cls.dtype, args, {})
        return TypedStorage((t if device is None else t.to(device)).untyped_storage(), cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, TypedStorage) and instance.dtype is cls.dtype and instance.device.type == 'cpu'


for _dtype_name, _name in _LEGACY_NAMES.items():
    globals()[_name] = _LegacyStorageMeta(_name, (), {'dtype': getattr(D, 'bool_' if _dtype_name == 'bool' else
                                                                       _dtype_name), '__module__': 'ember'})
__all__ += list(_LEGACY_NAMES.values())
