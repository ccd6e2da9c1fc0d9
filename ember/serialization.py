"""``ember.save`` / ``ember.load`` in PyTorch's own checkpoint format.

The format (torch.save since 1.6) is an uncompressed zip archive::

    archive/data.pkl             the object, pickled (protocol 2); each storage is a
                                 persistent id ('storage', torch.FloatStorage, key, 'cpu', numel)
    archive/data/<key>           the raw little-endian bytes of each storage
    archive/byteorder, version, .format_version, .storage_alignment, .data/serialization_id

Tensors pickle as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())``, so ``torch.load`` reads ember's files and ember
reads torch's, with torch absent: ember writes those global names itself and
maps them back to its own functions when loading.

NOTE [restricted unpickling]: ``weights_only=True`` (the default, as in torch)
resolves only the globals in `_SAFE_GLOBALS`; anything else raises
``pickle.UnpicklingError`` naming it, before any of the file's objects run.
"""
import collections
import io
import os
import pickle
import struct
import sys
import tempfile
import zipfile

import numpy as np

from ._core import dtype as D
from ._core.device import canonical
from ._tensor import Tensor
from ._ops import adapters

_STORAGE_NAMES = {
    'float32': 'FloatStorage', 'float64': 'DoubleStorage', 'float16': 'HalfStorage', 'bfloat16': 'BFloat16Storage',
    'int64': 'LongStorage', 'int32': 'IntStorage', 'int16': 'ShortStorage', 'int8': 'CharStorage',
    'uint8': 'ByteStorage', 'bool': 'BoolStorage', 'complex64': 'ComplexFloatStorage',
    'complex128': 'ComplexDoubleStorage'}
_DTYPE_OF_STORAGE = {v: getattr(D, k if k != 'bool' else 'bool_') for k, v in _STORAGE_NAMES.items()}
_ALIGN = 64


class _TorchGlobal:
    """A name in torch's namespace that ember writes into a pickle without torch being importable."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):     # never called: pickle only checks that a reduce function is callable
        raise RuntimeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_REBUILD_TENSOR = _TorchGlobal('torch._utils', '_rebuild_tensor_v2')
_REBUILD_PARAMETER = _TorchGlobal('torch._utils', '_rebuild_parameter')
_ORDERED_DICT = collections.OrderedDict


# --- saving ---------------------------------------------------------------------

class _Pickler(pickle._Pickler):
    """The pure-Python pickler, extended to write torch globals (`_TorchGlobal`) and tensors."""

    def __init__(self, f, protocol, storages):
        super().__init__(f, protocol)
        self.storages = storages          # id(storage) -> (key, storage, dtype)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            key = self.storages.setdefault(id(obj.storage), (str(len(self.storages)), obj.storage, obj.dtype))[0]
            numel = obj.storage.nbytes() // obj.dtype.itemsize
            return ('storage', _TorchGlobal('torch', _STORAGE_NAMES[obj.dtype.name]), key,
                    _location(obj.storage.device), numel)
        return None

    def save_global(self, obj, name=None):
        if isinstance(obj, _TorchGlobal):
            self.write(pickle.GLOBAL + obj.module.encode() + b'\n' + obj.name.encode() + b'\n')
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _TorchGlobal):
            x = self.memo.get(id(obj))
            if x is not None:
                self.write(self.get(x[0]))
            else:
                self.save_global(obj)
            return
        if isinstance(obj, Tensor):
            x = self.memo.get(id(obj))
            if x is not None:
                self.write(self.get(x[0]))
                return
            return self.save_reduce(obj=obj, *_tensor_reduce_args(obj))
        if isinstance(obj, D.dtype):
            return self.save_global(_TorchGlobal('torch', obj.name))
        super().save(obj, save_persistent_id)

    dispatch = dict(pickle._Pickler.dispatch)


class _StorageRef:
    __slots__ = ('storage', 'dtype')

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


def _location(dev):
    return str(dev) if dev.type != 'cuda' else f'cuda:{dev.index or 0}'


def _tensor_reduce_args(t):
    if t.device.type == 'meta':
        raise RuntimeError("Cannot save a meta tensor: it has no data")
    storage = t.untyped_storage()
    args = (_StorageRef(storage, t.dtype), t.storage_offset(), tuple(t.shape), t.stride(),
            bool(t.requires_grad) and t.is_leaf, _ORDERED_DICT())
    if getattr(t, '_is_param', False) or type(t).__name__ == 'Parameter':
        inner = Tensor.__new__(Tensor)
        inner.__dict__.update({k: v for k, v in t.__dict__.items() if k in ('_a', '_dtype', '_device', '_keys',
                                                                           '_vc', '_storage', '_offset', '_strides')})
        inner._keys = t._device._iface.keyset
        return _REBUILD_PARAMETER, (inner, bool(t.requires_grad), _ORDERED_DICT())
    return _REBUILD_TENSOR, args


def _storage_bytes(storage):
    data = storage.data
    if not isinstance(data, np.ndarray):
        data = storage.device._iface.to_host(data)
    return memoryview(np.ascontiguousarray(data).view(np.uint8).reshape(-1))


class _AlignedZipWriter:
    """Writes uncompressed entries whose data starts on a 64-byte boundary, as torch's writer does."""

    def __init__(self, f, prefix):
        self.zf = zipfile.ZipFile(f, 'w', compression=zipfile.ZIP_STORED, allowZip64=True)
        self.prefix = prefix

    def write(self, name, data):
        full = f'{self.prefix}/{name}'
        info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        start = self.zf.fp.tell() + 30 + len(full.encode())
        pad = (-(start + 4)) % _ALIGN
        info.extra = struct.pack('<HH', 0x4246, pad) + b'Z' * pad    # 'FB' padding, as torch does
        self.zf.writestr(info, bytes(data) if not isinstance(data, (bytes, memoryview)) else data)

    def close(self):
        self.zf.close()


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Save ``obj`` (tensors, state dicts, nested containers) in PyTorch's checkpoint format.

    Writing a path goes to a temporary file in the same folder, renamed into place
    when complete: an interrupted save never leaves a partial file under ``f``.

    >>> import ember, io
    >>> buf = io.BytesIO(); ember.save({'w': ember.ones(2)}, buf); _ = buf.seek(0)
    >>> ember.load(buf)['w']
    tensor([1., 1.])
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember writes only the zip-based format (_use_new_zipfile_serialization=True)")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.', suffix='.tmp', dir=d)
        try:
            with os.fdopen(fd, 'wb') as fh:
                _save(obj, fh, _archive_name(path), pickle_protocol)
                fh.flush()
                os.fsync(fh.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)     # mkstemp makes 0600 files; a checkpoint gets the usual mode
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    else:
        _save(obj, f, 'archive', pickle_protocol)


def _archive_name(path):
    base = os.path.basename(path)
    return os.path.splitext(base)[0] or 'archive'


def _save(obj, fh, prefix, protocol):
    storages = {}
    buf = io.BytesIO()
    _Pickler(buf, protocol, storages).dump(obj)
    w = _AlignedZipWriter(fh, prefix)
    w.write('data.pkl', buf.getvalue())
    w.write('.format_version', b'1')
    w.write('.storage_alignment', b'64')
    w.write('byteorder', sys.byteorder.encode())
    for key, storage, dtype in sorted(storages.values(), key=lambda v: int(v[0])):
        w.write(f'data/{key}', _storage_bytes(storage))
    w.write('version', b'3\n')
    w.write('.data/serialization_id', str(int.from_bytes(os.urandom(16), 'little')).encode())
    w.close()


# --- loading --------------------------------------------------------------------

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    flat, dev, dtype = storage
    isz = dtype.itemsize
    size, stride = tuple(size), tuple(stride)
    if dtype is D.bfloat16:
        npd = D.bfloat16.np
    else:
        npd = dtype.np
    if len(size) and 0 in size:
        arr = np.empty(size, npd)
    else:
        arr = np.ndarray(size, npd, flat, storage_offset * isz, tuple(s * isz for s in stride))
    t = adapters.make_tensor(arr, dtype, canonical('cpu'))
    if dev.type != 'cpu':
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks, *extra):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        p.__dict__.update(state)
    return p


def _device(type, index=None):
    from ._core.device import device
    return device(type, index)


def _size(*a):
    from ._tensor import Size
    return Size(*a)


def _encode(s, enc='latin1'):
    import codecs
    return codecs.encode(s, enc)


_SAFE_GLOBALS = {
    ('torch._utils', '_rebuild_tensor_v2'): _rebuild_tensor_v2,
    ('torch._utils', '_rebuild_parameter'): _rebuild_parameter,
    ('torch._utils', '_rebuild_parameter_with_state'): _rebuild_parameter_with_state,
    ('collections', 'OrderedDict'): collections.OrderedDict,
    ('torch', 'device'): _device,
    ('torch', 'Size'): _size,
    ('_codecs', 'encode'): _encode,
    ('builtins', 'set'): set,
    ('builtins', 'frozenset'): frozenset,
    ('builtins', 'slice'): slice,
    ('builtins', 'complex'): complex,
}
for (_m, _n), _v in list(_SAFE_GLOBALS.items()):   # protocol 2 spells builtins '__builtin__'
    if _m == 'builtins':
        _SAFE_GLOBALS[('__builtin__', _n)] = _v
for _name, _dt in _DTYPE_OF_STORAGE.items():
    _SAFE_GLOBALS[('torch', _name)] = ('storage-type', _dt)
for _d in D.ALL:
    _SAFE_GLOBALS[('torch', _d.name)] = _d
for _alias, _d in D.ALIASES.items():
    _SAFE_GLOBALS[('torch', _alias)] = _d

_extra_safe = {}


def add_safe_globals(objs):
    """Allow more globals in ``weights_only`` loads (torch.serialization.add_safe_globals)."""
    for o in objs:
        _extra_safe[(o.__module__, o.__qualname__)] = o


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh, load_storage, weights_only):
        super().__init__(fh)
        self.load_storage = load_storage
        self.weights_only = weights_only

    def find_class(self, module, name):
        hit = _SAFE_GLOBALS.get((module, name)) or _extra_safe.get((module, name))
        if hit is not None:
            return hit
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an allowed global "
                f"by default. Loading with weights_only=False would execute code from the file: do it only if "
                f"you trust its source. To allow this global, use ember.serialization.add_safe_globals([{name}]).")
        if module.startswith('torch'):
            mapped = _map_torch_global(module, name)
            if mapped is not None:
                return mapped
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == 'storage'):
            raise pickle.UnpicklingError(f"Unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        dtype = stype[1] if isinstance(stype, tuple) else D.uint8
        return self.load_storage(key, dtype, location)


def _map_torch_global(module, name):
    """weights_only=False: resolve torch.nn classes etc. to ember's namesakes where they exist."""
    import importlib
    mod = 'ember' + module[len('torch'):]
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return None


def _map_location(location, map_location):
    if map_location is None:
        return canonical(location)
    if callable(map_location):
        raise NotImplementedError("a callable map_location is not supported; pass a device or a dict")
    if isinstance(map_location, dict):
        return canonical(map_location.get(location, location))
    return canonical(map_location)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=False, **pickle_load_args):
    """Load an object saved by ``ember.save`` or ``torch.save`` (zip format).

    ``weights_only=True`` (default) uses a restricted unpickler (NOTE [restricted
    unpickling]); ``mmap=True`` maps storages from the file instead of reading them.
    """
    opened = isinstance(f, (str, os.PathLike))
    fh = open(f, 'rb') if opened else f
    try:
        try:
            zf = zipfile.ZipFile(fh)
            names = zf.namelist()
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: failed finding central directory "
                               f"(the file is truncated, corrupt, or not a checkpoint): {e}") from None
        pkl = next((n for n in names if n.endswith('/data.pkl') or n == 'data.pkl'), None)
        if pkl is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        prefix = pkl[:-len('data.pkl')]
        mm = np.memmap(f, dtype=np.uint8, mode='c') if (mmap and opened) else None
        if mmap and not opened:
            raise ValueError("mmap=True requires a file path")
        cache = {}

        def load_storage(key, dtype, location):
            hit = cache.get(key)
            if hit is None:
                name = f'{prefix}data/{key}'
                try:
                    info = zf.getinfo(name)
                    if mm is not None and info.compress_type == zipfile.ZIP_STORED:
                        start = _data_offset(fh, info)
                        flat = mm[start:start + info.file_size]
                    else:
                        flat = np.frombuffer(bytearray(zf.read(name)), dtype=np.uint8)
                except (KeyError, zipfile.BadZipFile, EOFError, OSError, struct.error) as e:
                    raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}") from None
                hit = cache[key] = flat
            return (hit, _map_location(location, map_location), dtype)

        try:
            data = zf.read(pkl)
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file data.pkl: {e}") from None
        return _Unpickler(io.BytesIO(data), load_storage, weights_only).load()
    finally:
        if opened:
            fh.close()


def _data_offset(fh, info):
    fh.seek(info.header_offset)
    h = fh.read(30)
    if h[:4] != b'PK\x03\x04':
        raise RuntimeError("PytorchStreamReader failed reading zip archive: bad local header")
    n, m = struct.unpack('<HH', h[26:30])
    return info.header_offset + 30 + n + m


# --- plain pickling (copy.deepcopy, multiprocessing) -------------------------------------

def _reduce_tensor(t):
    return (_from_pickle, (np.array(t.detach()._host()) if t.device.type != 'meta' else None, t.dtype.name,
                           str(t.device), tuple(t.shape), bool(t.requires_grad) and t.is_leaf))


def _from_pickle(arr, dtype_name, device, shape, requires_grad):
    dt = getattr(D, dtype_name if dtype_name != 'bool' else 'bool_')
    from ._core.storage import MetaArray
    if arr is None:
        t = adapters.make_tensor(MetaArray(shape, dt.np), dt, canonical('meta'))
    else:
        t = adapters.make_tensor(arr, dt, canonical('cpu'))
        if device != 'cpu':
            t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t
