"""``ember.save`` / ``ember.load`` in PyTorch's own checkpoint format.

The format (torch.save since 1.6) is an uncompressed zip archive::

    archive/data.pkl             the object, pickled (protocol 2); each storage is a
                                 persistent id ('storage', torch.FloatStorage, key, 'cpu', numel)
    archive/data/<key>           the raw little-endian bytes of each storage
    archive/byteorder, version, .format_version, .storage_alignment, .data/serialization_id

Tensors pickle as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())`` (quantized ones as ``_rebuild_qtensor``, NOTE [quantized tensors]), so ``torch.load`` reads ember's files and ember
reads torch's, with torch absent: ember writes those global names itself and
maps them back to its own functions when loading. The format before 1.6 (``_use_new_zipfile_serialization=False``)
is read and written too: NOTE [legacy format].

NOTE [restricted unpickling]: ``weights_only=True`` (the default, as in torch) reads the
pickle with ember's own opcode interpreter (``_weights_only.py``), not Python's: globals
resolve only from `_DEFAULT_SAFE` and ``add_safe_globals``, only allowed callables run,
and state (BUILD) or items are set only on objects the load itself made. Anything else
raises ``pickle.UnpicklingError`` naming it. SECURITY.md states the guarantees.
"""
import collections
import contextlib
import io
import os
import pickle
import types
import struct
import sys
import tempfile
import zipfile

import numpy as np

from . import _weights_only

from ._core import dtype as D
from ._core.device import canonical
from ._core.storage import check_in_bounds
from ._tensor import Tensor, Size

# torch.serialization.MAP_LOCATION: what load's map_location may be
MAP_LOCATION = 'Callable[[Storage, str], Storage] | device | str | dict[str, str] | None'
from ._core.device import device as _device_cls
from ._core.tensor_impl import make_tensor, fields
from ._core.coo import layout as _layout_cls, strided as _strided, sparse_coo as _sparse_coo, _layout_by_name

from ._core.quantized import QArray, STORAGE as _QSTORAGE, qscheme as _qscheme, _SCHEMES, per_tensor_affine, \
    per_channel_affine, per_channel_affine_float_qparams
from .storage import _LEGACY_NAMES   # dtype name -> torch's legacy storage class name
# quantized tensors' storages are named for their dtype too (torch.QUInt8Storage), read by _rebuild_qtensor
_STORAGE_NAMES = dict(_LEGACY_NAMES, qint8='QInt8Storage', quint8='QUInt8Storage', qint32='QInt32Storage',
                      quint4x2='QUInt4x2Storage', quint2x4='QUInt2x4Storage')
_DTYPE_OF_STORAGE = {v: getattr(D, k if k != 'bool' else 'bool_') for k, v in _STORAGE_NAMES.items()}
_ALIGN = 64


class _TorchGlobal:
    """A name in torch's namespace that ember writes into a pickle without torch being importable. One object
    per name, as a class is one object: the pickler's memo then writes a repeated name as a reference, as in
    torch's files (``torch.FloatStorage`` once per file, not once per tensor)."""
    _interned = {}

    def __new__(cls, module, name):
        g = cls._interned.get((module, name))
        if g is None:
            g = cls._interned[module, name] = object.__new__(cls)
            g.module, g.name = module, name
        return g

    def __call__(self, *args):     # never called: pickle only checks that a reduce function is callable
        raise RuntimeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_REBUILD_TENSOR = _TorchGlobal('torch._utils', '_rebuild_tensor_v2')
# uint16/32/64 and the float8 types have no legacy storage class: torch writes them as an untyped (byte) storage
# and _rebuild_tensor_v3, which names the dtype
_REBUILD_TENSOR_V3 = _TorchGlobal('torch._utils', '_rebuild_tensor_v3')
_UNTYPED_STORAGE = _TorchGlobal('torch.storage', 'UntypedStorage')
_REBUILD_PARAMETER = _TorchGlobal('torch._utils', '_rebuild_parameter')
_REBUILD_FROM_TYPE = _TorchGlobal('torch._tensor', '_rebuild_from_type_v2')
# quantized tensors: _rebuild_qtensor(storage, offset, size, stride, quantizer params, requires_grad, hooks), the
# params (torch.per_tensor_affine, scale, zero_point) or (torch.per_channel_affine, scales, zero_points, axis)
_REBUILD_QTENSOR = _TorchGlobal('torch._utils', '_rebuild_qtensor')
# sparse tensors pickle as their index and value tensors: _rebuild_sparse_tensor(_get_layout('torch.sparse_csr'),
# (crow_indices, col_indices, values, size)); COO: (indices, values, size, is_coalesced)
_REBUILD_SPARSE = _TorchGlobal('torch._utils', '_rebuild_sparse_tensor')
_GET_LAYOUT = _TorchGlobal('torch.serialization', '_get_layout')
_ORDERED_DICT = collections.OrderedDict
DEFAULT_PROTOCOL = 2         # the pickle protocol torch.save writes with


# --- saving ---------------------------------------------------------------------

class _Pickler(pickle._Pickler):
    """The pure-Python pickler, extended to write torch globals (`_TorchGlobal`) and tensors."""

    def __init__(self, f, protocol, storages, legacy_format=False):
        super().__init__(f, protocol)
        self.storages = storages          # id(storage) -> (key, storage, dtype)
        self.view_field = (None,) if legacy_format else ()     # a legacy id ends in its (unused) view metadata

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            key = self.storages.setdefault(id(obj.storage), (str(len(self.storages)), obj.storage, obj.dtype))[0]
            legacy = _STORAGE_NAMES.get(obj.dtype.name)
            location, numel = _location(obj.storage.device), obj.storage.nbytes() // _element_size(obj.dtype)
            # the dtypes without a legacy storage class: torch's untyped storage, in bytes
            stype = _UNTYPED_STORAGE if legacy is None else _TorchGlobal('torch', legacy)
            return ('storage', stype, key, location, numel) + self.view_field
        return None

    def save_global(self, obj, name=None):
        if isinstance(obj, _TorchGlobal):
            x = self.memo.get(id(obj))      # one object per name (interned): a repeated name is a reference
            if x is not None:
                self.write(self.get(x[0]))
                return
            self.write(pickle.GLOBAL + obj.module.encode() + b'\n' + obj.name.encode() + b'\n')
            self.memoize(obj)
            return
        module = getattr(obj, '__module__', None)
        if isinstance(module, str) and (module == 'ember' or module.startswith('ember.')):
            # an ember class or function (a whole model's modules): torch's name for it, so that torch loads
            # ember's file (NOTE [torch's module paths] in nn/modules/normalization.py); ember maps it back
            return self.save_global(_TorchGlobal(_torch_module(module), name or obj.__qualname__))
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _TorchGlobal):
            return self.save_global(obj)        # (which writes a name already written as a reference)
        x = self.memo.get(id(obj))
        if x is not None:       # written already: a reference, as pickle's own save begins (a layout, a Size,
            self.write(self.get(x[0]))      # a device or a tensor met twice; torch's weights_only reader knows no POP)
            return
        if isinstance(obj, Tensor):
            return self.save_reduce(obj=obj, *_tensor_reduce_args(obj))
        if isinstance(obj, (D.dtype, _qscheme)):
            return self.save_global(_TorchGlobal('torch', obj.name))
        if isinstance(obj, Size):            # torch's names, so that torch and ember read each other's files
            return self.save_reduce(_TorchGlobal('torch', 'Size'), (tuple(obj),), obj=obj)
        if isinstance(obj, _device_cls):
            # a new string, as torch's C++ __reduce__ makes: pickle's memo would otherwise write a reference to
            # the storage location's 'cpu', and the file's bytes would differ from torch's
            kind = ''.join(obj.type)
            args = (kind,) if obj.index is None else (kind, obj.index)
            return self.save_reduce(_TorchGlobal('torch', 'device'), args, obj=obj)
        if isinstance(obj, _layout_cls):
            return self.save_reduce(_GET_LAYOUT, (f'torch.{obj.name}',), obj=obj)
        super().save(obj, save_persistent_id)

    dispatch = dict(pickle._Pickler.dispatch)
    # functions go straight to the base class's save_global in that table: through this class's instead
    dispatch[types.FunctionType] = dispatch[types.BuiltinFunctionType] = save_global


class _StorageRef:
    __slots__ = ('storage', 'dtype')

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


def _element_size(dtype):
    """The size of one element of the storage a tensor of ``dtype`` is written as (1 for an untyped storage)."""
    return dtype.itemsize if dtype.name in _STORAGE_NAMES else 1


def _location(dev):
    return str(dev) if dev.type != 'cuda' else f'cuda:{dev.index or 0}'


def location_tag(storage):
    """The location string a checkpoint records for a tensor's or storage's device (``'cpu'``, ``'cuda:0'``)."""
    return _location(storage.device)


def normalize_storage_type(storage_type):
    """The public storage class ``storage_type`` stands for (torch's helper names it by class name; ember has one
    untyped storage class, ``ember.UntypedStorage``, and the TypedStorage view)."""
    import ember
    return getattr(ember, storage_type.__name__, storage_type)


def _tensor_reduce_args(t):
    if t.is_nested:         # a nested tensor is its parts (ember.nested: torch's _rebuild_njt)
        return t.__reduce_ex__(2)
    if type(t) is not Tensor and not _is_ember_class(type(t)) and not getattr(t, '_is_param', False):
        # a user's Tensor subclass: torch's _rebuild_from_type_v2 rebuilds the tensor, makes it an instance of the
        # class (as_subclass) and restores the attributes the user set on it
        plain = t.as_subclass(Tensor) if t._grad_fn is None else t.detach().as_subclass(Tensor)
        func, args = _tensor_reduce_args(plain)
        return _REBUILD_FROM_TYPE, (func, type(t), args, t._user_state())
    if t.device.type == 'meta':
        raise RuntimeError("Cannot save a meta tensor: it has no data")
    if t.layout is not _strided:
        return _REBUILD_SPARSE, (t.layout, _sparse_data(t))
    storage = t.untyped_storage()
    if t.is_quantized:      # NOTE [quantized tensors]
        return _REBUILD_QTENSOR, (_StorageRef(storage, t.dtype), t.storage_offset(), tuple(t.shape), t.stride(),
                                  _quantizer_params(t), bool(t.requires_grad), _ORDERED_DICT())
    args = (_StorageRef(storage, t.dtype), t.storage_offset(), tuple(t.shape), t.stride(),
            bool(t.requires_grad), _ORDERED_DICT())
    if getattr(t, '_is_param', False) or type(t).__name__ == 'Parameter':
        inner = object.__new__(Tensor)
        src = fields(t)
        fields(inner).update({k: src[k] for k in ('_a', '_dtype', '_device', '_vc', '_storage', '_offset', '_strides')
                              if k in src})
        inner._keys = t._device._iface.keyset
        return _REBUILD_PARAMETER, (inner, bool(t.requires_grad), _ORDERED_DICT())
    if t.dtype.name not in _STORAGE_NAMES:
        return _REBUILD_TENSOR_V3, args + (t.dtype,)
    return _REBUILD_TENSOR, args


def _quantizer_params(t):
    """torch's tuple for a quantized tensor's quantizer; it names float-qparams tensors per_channel_affine too (their
    float zero points tell them apart when loaded)."""
    if t.qscheme() is per_tensor_affine:
        return per_tensor_affine, t.q_scale(), t.q_zero_point()
    return per_channel_affine, t.q_per_channel_scales(), t.q_per_channel_zero_points(), t.q_per_channel_axis()


def _sparse_data(t):
    t = t.detach()
    if t.layout is _sparse_coo:
        return t._indices(), t._values(), Size(t.shape), t.is_coalesced()
    if t.is_sparse_csr:
        return t.crow_indices(), t.col_indices(), t.values(), Size(t.shape)
    return t.ccol_indices(), t.row_indices(), t.values(), Size(t.shape)


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


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True):
    """Save ``obj`` (tensors, state dicts, nested containers) in PyTorch's checkpoint format.

    Writing a path goes to a temporary file in the same folder, renamed into place
    when complete: an interrupted save never leaves a partial file under ``f``.

    >>> import ember, io
    >>> buf = io.BytesIO(); ember.save({'w': ember.ones(2)}, buf); _ = buf.seek(0)
    >>> ember.load(buf)['w']
    tensor([1., 1.])
    """
    write = _save if _use_new_zipfile_serialization else _legacy_save
    if isinstance(f, (str, os.PathLike)):
        write_atomically(f, lambda fh, prefix: write(obj, fh, prefix, pickle_protocol))
    else:
        write(obj, f, 'archive', pickle_protocol)


def write_atomically(path, write):
    """``write(fh, archive_name)`` into a temporary file beside ``path``, renamed to ``path`` once complete: a
    failed or interrupted write leaves no partial file (checkpoints here, TorchScript archives in ember.jit).
    A symbolic link is written through, as torch's in-place write does (``latest.pt`` pointing at a checkpoint
    updates the checkpoint, and stays a link), and an existing file keeps its permissions."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(target) + '.', suffix='.tmp',
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, 'wb') as fh:
            write(fh, _archive_name(path))
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            mode = os.stat(target).st_mode & 0o777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask        # mkstemp makes 0600 files; a checkpoint gets the usual mode
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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


# NOTE [legacy format]: torch.save before 1.6 (and since, with _use_new_zipfile_serialization=False) writes one
# stream of consecutive pickles, then raw data:
#
#     _LEGACY_MAGIC, _LEGACY_PROTOCOL, sys_info    three small pickles of plain data
#     the object                                   storages as persistent ids ('storage', torch.FloatStorage, key,
#                                                  location, numel, view) where view is None or (key, offset, numel)
#     [key, ...]                                   the storages' keys, in the order their data follows
#     per key: numel (int64, little-endian), then the storage's bytes (numel elements of its storage class)
#
# The data comes after the object that refers to it, and an element's size is known only from the persistent ids,
# so loading scans the object's pickle first with ember's own interpreter, every global an inert stand-in
# (`_StorageScan`: nothing from the file runs), reads the data, then unpickles the object as a zip archive's data.pkl
# is, storages in hand. The scan reads the opcodes the restricted loader reads (those torch.save writes, protocols 2
# to 5), with weights_only=False too.
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PROTOCOL = 1001


def _legacy_save(obj, fh, prefix, protocol):
    storages = {}
    buf = io.BytesIO()                         # the object pickled before anything is written, as _save does
    _Pickler(buf, protocol, storages, legacy_format=True).dump(obj)
    sys_info = {'protocol_version': _LEGACY_PROTOCOL, 'little_endian': sys.byteorder == 'little',
                'type_sizes': {'short': struct.calcsize('=h'), 'int': struct.calcsize('=i'),
                               'long': struct.calcsize('=l')}}
    for header in (_LEGACY_MAGIC, _LEGACY_PROTOCOL, sys_info):
        pickle.dump(header, fh, protocol=protocol)
    fh.write(buf.getvalue())
    records = sorted(storages.values(), key=lambda v: int(v[0]))
    pickle.dump([key for key, _, _ in records], fh, protocol=protocol)
    for key, storage, dtype in records:
        data = _storage_bytes(storage)
        fh.write(struct.pack('<q', data.nbytes // _element_size(dtype)))
        fh.write(data)


# --- loading --------------------------------------------------------------------

class _Storage:
    """A storage read from a checkpoint: its bytes (a uint8 array), dtype, device and key (for errors). A callable
    ``map_location(storage, location)`` receives it on the CPU and may move it (``storage.cuda(1)``) or return
    None for the location saved."""
    __slots__ = ('flat', 'device', 'dtype', 'key')

    def __init__(self, flat, device, dtype, key):
        self.flat, self.device, self.dtype, self.key = flat, device, dtype, key

    def to(self, device):
        return _Storage(self.flat, canonical(device), self.dtype, self.key)

    def cpu(self):
        return self.to('cpu')

    def cuda(self, device=None, non_blocking=False):
        return self.to('cuda' if device is None else device if not isinstance(device, int) else f'cuda:{device}')

    def nbytes(self):
        return self.flat.size

    def size(self):
        return self.flat.size


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_layout(storage, offset, size, stride):
    """Sizes, strides and offset against the storage, before any array is made (torch's setStorage check),
    with an error naming the storage entry."""
    where = f"tensor on storage '{storage.key}'"
    if not (isinstance(size, tuple) and isinstance(stride, tuple) and len(size) == len(stride)
            and all(_is_int(v) for v in size + stride) and _is_int(offset)):
        raise RuntimeError(f"invalid checkpoint: {where} has a malformed size {size!r}, stride {stride!r} or "
                           f"storage offset {offset!r}")
    if any(v < 0 for v in size):
        raise RuntimeError(f"invalid checkpoint: {where} has a negative size {list(size)}")
    if any(v < 0 for v in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)} ({where})")
    if offset < 0:
        raise RuntimeError(f"invalid checkpoint: {where} has a negative storage offset {offset}")
    check_in_bounds(size, stride, offset, storage.dtype.itemsize, storage.flat.size, where)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2 expects a storage, got {type(storage).__name__}")
    size, stride = tuple(size) if isinstance(size, (tuple, list)) else size, \
        tuple(stride) if isinstance(stride, (tuple, list)) else stride
    _check_layout(storage, storage_offset, size, stride)
    dtype, isz = storage.dtype, storage.dtype.itemsize
    if 0 in size:
        arr = np.empty(size, dtype.np)
    else:
        arr = np.ndarray(size, dtype.np, storage.flat, storage_offset * isz, tuple(v * isz for v in stride))
    t = make_tensor(arr, dtype, canonical('cpu'))
    if storage.device.type != 'cpu':
        t = t.to(storage.device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """A tensor of ``dtype`` over an untyped (byte) storage: the storage read as that dtype."""
    if not isinstance(storage, _Storage) or not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError("_rebuild_tensor_v3 expects a storage and a dtype")
    if storage.flat.size % dtype.itemsize:
        raise RuntimeError(f"invalid checkpoint: storage '{storage.key}' of {storage.flat.size} bytes is not a whole "
                           f"number of {dtype} elements")
    typed = _Storage(storage.flat, storage.device, dtype, storage.key)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _channel_params(values, size, axis, what):
    """Per-channel scales or zero points of a checkpoint as an array (a tensor, or a list in old files), checked
    against the size along ``axis`` as torch's _rebuild_qtensor checks them."""
    a = np.asarray(values.tolist() if isinstance(values, Tensor) else values)
    if a.ndim != 1 or a.dtype.kind not in 'iuf':
        raise pickle.UnpicklingError(f"_rebuild_qtensor: per_channel {what} must be a list or 1-d tensor of numbers")
    if a.size != size[axis]:
        raise ValueError(f"_rebuild_qtensor: per_channel scales/zero_points length must equal size[axis]="
                         f"{size[axis]}, got {what}={a.size}")
    return a


def _quantizer(params, size):
    """A QArray's (scale, zero_point, axis, scheme) from torch's quantizer params, checked."""
    if not isinstance(params, tuple) or not params or params[0] not in _SCHEMES.values():
        raise pickle.UnpicklingError(f"_rebuild_qtensor: malformed quantizer params {params!r}")
    if params[0] is per_tensor_affine and len(params) == 3:
        scale, zero_point = params[1:]
        if not isinstance(scale, (float, int)) or not _is_int(zero_point):
            raise pickle.UnpicklingError("_rebuild_qtensor: a per-tensor scale is a float, its zero point an int")
        return float(scale), zero_point, None, per_tensor_affine
    if params[0] in (per_channel_affine, per_channel_affine_float_qparams) and len(params) == 4:
        axis = params[3]
        if not _is_int(axis) or not 0 <= axis < len(size):
            raise ValueError(f"_rebuild_qtensor: per_channel axis {axis} out of range for size {tuple(size)}")
        scales, zps = (_channel_params(v, size, axis, w) for v, w in ((params[1], 'scales'), (params[2], 'zero_points')))
        if zps.dtype.kind == 'f' or params[0] is per_channel_affine_float_qparams:
            return scales.astype(np.float32), zps.astype(np.float32), axis, per_channel_affine_float_qparams
        return scales.astype(np.float64), zps.astype(np.int64), axis, per_channel_affine
    raise RuntimeError(f"Can't deserialize quantized tensor with qscheme {params[0]}")


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad=False,
                     backward_hooks=None):
    """A quantized tensor over a checkpoint's integer storage (NOTE [quantized tensors])."""
    from ._ops.quantized import make_quantized
    if not isinstance(storage, _Storage) or storage.dtype.name not in ('qint8', 'quint8', 'qint32'):
        raise pickle.UnpicklingError("_rebuild_qtensor expects a storage of qint8, quint8 or qint32")
    size, stride = tuple(size) if isinstance(size, (tuple, list)) else size, \
        tuple(stride) if isinstance(stride, (tuple, list)) else stride
    _check_layout(storage, storage_offset, size, stride)
    scale, zero_point, axis, scheme = _quantizer(quantizer_params, size)
    np_dtype, isz = _QSTORAGE[storage.dtype], storage.dtype.itemsize
    ints = np.empty(size, np_dtype) if 0 in size else \
        np.ndarray(size, np_dtype, storage.flat, storage_offset * isz, tuple(v * isz for v in stride))
    t = make_quantized(QArray(ints, storage.dtype, scale, zero_point, axis, scheme))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks, *extra):
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"_rebuild_parameter expects a tensor, got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        if not isinstance(state, dict) or not all(isinstance(k, str) and not k.startswith('_') for k in state):
            raise pickle.UnpicklingError("a parameter's pickled state may set only public attributes")
        p.__dict__.update(state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor rebuilt by ``func(*args)`` as an instance of the Tensor subclass ``new_type``, its attributes set from
    ``state`` (by its ``__setstate__`` when it defines one). Under weights_only, ``new_type`` is only ever a class the
    caller allowed (find_class refuses the rest)."""
    if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2 expects a Tensor subclass, got {new_type!r}")
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if getattr(new_type, '__setstate__', None) is not getattr(Tensor, '__setstate__', None):
        ret.__setstate__(state)
    elif state:
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise pickle.UnpicklingError("a tensor subclass's pickled state must be a dict of attributes")
        ret.__dict__.update(state)
    return ret


def _rebuild_sparse_tensor(layout, data):
    from . import sparse
    if not isinstance(layout, _layout_cls) or not isinstance(data, tuple) or \
            not all(isinstance(x, Tensor) for x in data[:2 if layout is _sparse_coo else 3]):
        raise pickle.UnpicklingError("_rebuild_sparse_tensor expects a layout and a tuple of tensors and a size")
    if layout is _sparse_coo:
        indices, values, size = data[:3]
        return sparse.sparse_coo_tensor(indices, values, size, is_coalesced=data[3] if len(data) > 3 else None)
    compressed, plain, values, size = data
    return sparse.sparse_compressed_tensor(compressed, plain, values, size, layout=layout)


def _get_layout(name):
    if not isinstance(name, str) or not name.startswith('torch.'):
        raise pickle.UnpicklingError(f"_get_layout: unknown layout {name!r}")
    try:
        return _layout_by_name(name[len('torch.'):])
    except KeyError:
        raise pickle.UnpicklingError(f"_get_layout: unknown layout {name!r}") from None


def _device(type, index=None):
    from ._core.device import device
    return device(type, index)


def _size(*a):
    from ._tensor import Size
    return Size(*a)


def _storage_type(name, dtype):
    """A legacy storage class name (``torch.FloatStorage``), as it appears in a storage's persistent id."""
    return ('storage-type', name, dtype)


_DEFAULT_SAFE = {
    ('torch._utils', '_rebuild_tensor_v2'): _rebuild_tensor_v2,
    ('torch._utils', '_rebuild_tensor_v3'): _rebuild_tensor_v3,
    ('torch.storage', 'UntypedStorage'): ('storage-type', 'UntypedStorage', D.uint8),
    ('torch._utils', '_rebuild_parameter'): _rebuild_parameter,
    ('torch._utils', '_rebuild_parameter_with_state'): _rebuild_parameter_with_state,
    ('torch._tensor', '_rebuild_from_type_v2'): _rebuild_from_type_v2,
    ('torch._utils', '_rebuild_sparse_tensor'): _rebuild_sparse_tensor,
    ('torch._utils', '_rebuild_qtensor'): _rebuild_qtensor,
    ('torch.serialization', '_get_layout'): _get_layout,
    ('collections', 'OrderedDict'): collections.OrderedDict,
    ('collections', 'Counter'): collections.Counter,
    ('torch', 'device'): _device,
    ('torch', 'Size'): _size,
    ('_codecs', 'encode'): _weights_only.encode,
    ('builtins', 'bytearray'): bytearray,
    ('builtins', 'set'): set,
    ('builtins', 'complex'): complex,
}
for _name, _dt in _DTYPE_OF_STORAGE.items():      # old files name a CUDA tensor's storage torch.cuda.FloatStorage
    _DEFAULT_SAFE[('torch', _name)] = _DEFAULT_SAFE[('torch.cuda', _name)] = _storage_type(_name, _dt)
for _d in D.ALL + D.QUANTIZED:
    _DEFAULT_SAFE[('torch', _d.name)] = _d
for _s in _SCHEMES.values():
    _DEFAULT_SAFE[('torch', _s.name)] = _s
for _alias, _d in D.ALIASES.items():
    _DEFAULT_SAFE[('torch', _alias)] = _d

_user_safe = {}      # (module, name) -> object, from add_safe_globals


def _key_of(obj):
    if isinstance(obj, tuple):
        if len(obj) != 2 or not isinstance(obj[1], str):
            raise TypeError("add_safe_globals takes objects or (object, 'module.name') pairs")
        module, _, name = obj[1].rpartition('.')
        return (module, name), obj[0]
    return (obj.__module__, obj.__qualname__), obj


def add_safe_globals(safe_globals):
    """Allow these globals in ``weights_only`` loads (torch.serialization.add_safe_globals): classes and
    functions, or ``(obj, 'module.name')`` pairs for a name that differs from where the object lives.
    Instances of an allowed class may be constructed and given state by a file: allow only types whose
    construction runs no code you do not trust.

    >>> import ember, collections
    >>> class Point: pass
    >>> ember.serialization.add_safe_globals([Point])
    >>> Point in ember.serialization.get_safe_globals()
    True
    >>> ember.serialization.clear_safe_globals()
    """
    for obj in safe_globals:
        key, value = _key_of(obj)
        _user_safe[key] = value
        if key[0] == 'ember' or key[0].startswith('ember.'):     # files name it as torch does (ember's included:
            _user_safe[(_torch_module(key[0]), key[1])] = value   # NOTE [torch's module paths])


def get_safe_globals():
    """The globals added by ``add_safe_globals`` (ember's defaults are not listed, as in torch)."""
    return list({id(v): v for v in _user_safe.values()}.values())


def clear_safe_globals():
    """Forget every global added by ``add_safe_globals``."""
    _user_safe.clear()


class safe_globals:
    """``with ember.serialization.safe_globals([Point]): ember.load(f)`` allows the globals inside the block."""

    def __init__(self, safe_globals):
        self.globals = list(safe_globals)

    def __enter__(self):
        self.saved = dict(_user_safe)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _user_safe.clear()
        _user_safe.update(self.saved)


class _Unpickler(pickle.Unpickler):
    """``weights_only=False``: Python's unpickler, which runs any code the file names. torch names map to
    ember's namesakes where they exist."""

    def __init__(self, fh, persistent_load):
        super().__init__(fh)
        self._persistent_load = persistent_load

    def find_class(self, module, name):
        key = ('builtins' if module == '__builtin__' else module, name)
        hit = _DEFAULT_SAFE.get(key) or _user_safe.get(key)
        if hit is not None:
            return hit
        if module.startswith('torch'):
            mapped = _map_torch_global(module, name)
            if mapped is not None:
                return mapped
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._persistent_load(pid)


def _is_ember_class(cls):
    """ember's own Tensor subclasses (Parameter, Buffer), named as torch's under ``ember run`` (NOTE [torch's class
    names under ember run] in compat.py), and not a user's subclass."""
    return cls.__module__.startswith(('ember.', 'torch.'))


def _torch_module(module):
    """``ember.nn.modules.linear`` -> ``torch.nn.modules.linear``; ``ember.vision.models`` -> ``torchvision.models``."""
    if module == 'ember.vision' or module.startswith('ember.vision.'):
        return 'torchvision' + module[len('ember.vision'):]
    return 'torch' + module[len('ember'):]


def _ember_module(module):
    """The inverse of _torch_module."""
    if module == 'torchvision' or module.startswith('torchvision.'):
        return 'ember.vision' + module[len('torchvision'):]
    return 'ember' + module[len('torch'):]


def _map_torch_global(module, name):
    """weights_only=False: resolve torch.nn classes etc. to ember's namesakes where they exist."""
    import importlib
    mod = _ember_module(module)
    try:
        return getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError):
        return None


def _mapped(storage, location, map_location):
    """The storage on the device ``map_location`` gives it (torch's rules: None keeps the saved location; a dict
    renames locations; a callable gets the CPU storage and the saved location, and returns a storage or None)."""
    if map_location is None:
        return _restored(storage, location)
    if callable(map_location) and not isinstance(map_location, (str, _device_cls)):
        moved = map_location(storage, location)
        if moved is None:
            return _restored(storage, location)
        if not isinstance(moved, _Storage):
            raise RuntimeError(f"map_location should return a storage or None, got {type(moved).__name__}")
        return moved
    if isinstance(map_location, dict):
        return _restored(storage, map_location.get(location, location))
    return _restored(storage, map_location)


def _restored(storage, location):
    """``storage`` moved to ``location``, refused as torch's default_restore_location refuses a CUDA location this
    process cannot use (a checkpoint saved on a GPU, loaded without map_location on a CPU-only machine)."""
    dev = _device_cls(location) if isinstance(location, str) else location
    if isinstance(dev, _device_cls) and dev.type == 'cuda':
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        n = cuda.device_count()
        if (dev.index or 0) >= n:
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {dev.index or 0} but "
                               f"torch.cuda.device_count() is {n}. Please use torch.load with map_location to map "
                               f"your storages to an existing device.")
    return storage.to(location)


_TRUE = ('1', 'y', 'yes', 'true')


def _resolve_weights_only(weights_only, pickle_module):
    """torch's rules: None means the default (restricted, unless a pickle_module is given);
    TORCH_FORCE_WEIGHTS_ONLY_LOAD forces it on; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD turns it off only where the
    caller did not pass weights_only."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force_on = os.getenv('TORCH_FORCE_WEIGHTS_ONLY_LOAD', '0').lower() in _TRUE
    force_off = os.getenv('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', '0').lower() in _TRUE
    if force_on and force_off:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force_on:
        weights_only = True
    elif force_off and not_set:
        from ember._warn import warnings
        from ._core import naming
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"   # sic: torch's
                      f"`weights_only` argument was not explicitly passed to `{naming.shown}.load`, forcing "
                      "weights_only=False.",
                      UserWarning, stacklevel=3)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return bool(weights_only)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=False, **pickle_load_args):
    """Load an object saved by ``ember.save`` or ``torch.save``: the zip format, or the legacy one of torch before 1.6
    (NOTE [legacy format]).

    ``weights_only`` (None means True, as in torch 2.6+; see SECURITY.md for the environment switches) uses
    a restricted unpickler that runs no code from the file (NOTE [restricted unpickling]); only an explicit
    ``weights_only=False`` unpickles arbitrary objects. ``mmap=True`` maps storages from the file instead of
    reading them.
    """
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("mmap=True requires a file path")
    opened = isinstance(f, (str, os.PathLike))
    fh = open(f, 'rb') if opened else f
    if not opened and not hasattr(fh, 'seekable'):
        # torch reads any object with read/seek/tell (flair hands it an mmap.mmap); zipfile also asks seekable()
        fh = _Seekable(fh)
    try:
        return _load(f, fh, opened, map_location, weights_only, mmap, pickle_module)
    finally:
        if opened:
            fh.close()


class _Seekable:
    """A file-like object with read/seek/tell, as torch.load takes, given the ``seekable()`` zipfile asks for."""

    def __init__(self, raw):
        self._raw = raw

    def seekable(self):
        return True

    def __getattr__(self, name):
        return getattr(self._raw, name)


def _load(f, fh, opened, map_location, weights_only, mmap, pickle_module):
    start = fh.tell()
    head = fh.read(262)
    fh.seek(start)
    if head[:4] != b'PK\x03\x04':             # torch's test for a zip archive: a local header first
        if head[257:262] == b'ustar':
            raise RuntimeError("this checkpoint is in PyTorch's oldest format, a tar archive, which ember does not "
                               "read: load it with torch and save it again")
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with `torch.save(_use_new_zipfile_"
                               "serialization=True), please torch.save your checkpoint with this option in order "
                               "to use mmap.")
        return _legacy_load(fh, map_location, weights_only, pickle_module)
    try:
        zf = zipfile.ZipFile(fh)
        names = zf.namelist()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: failed finding central directory "
                           f"(the file is truncated, corrupt, or not a checkpoint): {e}") from None
    pkl = next((n for n in names if n.endswith('/data.pkl') or n == 'data.pkl'), None)
    if pkl is None:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[:-len('data.pkl')]
    mm = np.memmap(f, dtype=np.uint8, mode='c') if (mmap and opened) else None
    persistent_load = _storage_loader(zf, fh, prefix + 'data/', map_location, mm)
    try:
        data = zf.read(pkl)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise RuntimeError(f"PytorchStreamReader failed reading file data.pkl: {e}") from None
    return _unpickle(data, persistent_load, weights_only, pickle_module)


def _storage_loader(zf, fh, folder, map_location, mm=None):
    """The ``persistent_load`` of a zip archive's pickle: each storage read (once) from ``<folder><key>`` and checked
    against the size its persistent id declares (``folder`` is ``<archive>/data/``; TorchScript archives also keep
    their constants' storages in ``<archive>/constants/``)."""
    cache = {}

    def read_storage(key, name, dtype, location, numel):
        hit = cache.get(key)
        if hit is None:
            entry = f'{folder}{key}'
            try:
                info = zf.getinfo(entry)
                if mm is not None and info.compress_type == zipfile.ZIP_STORED:
                    start = _data_offset(fh, info)
                    flat = mm[start:start + info.file_size]
                else:
                    flat = np.frombuffer(bytearray(zf.read(entry)), dtype=np.uint8)
            except (KeyError, zipfile.BadZipFile, EOFError, OSError, struct.error, ValueError) as e:
                raise RuntimeError(f"PytorchStreamReader failed reading file {entry}: {e}") from None
            if not _is_int(numel) or numel < 0 or flat.size != numel * dtype.itemsize:     # as torch checks
                raise RuntimeError(f"record size ({flat.size} bytes) does not match expected size ({numel!r} "
                                   f"elements of {name}) for storage '{entry}'")
            hit = cache[key] = _mapped(_Storage(flat, canonical('cpu'), dtype, entry), location, map_location)
        elif hit.dtype is not dtype:
            raise RuntimeError(f"invalid checkpoint: storage '{folder}{key}' is read as two dtypes")
        return hit

    def persistent_load(pid):
        return read_storage(*_storage_pid(pid, 5))
    return persistent_load


def _storage_pid(pid, n):
    """``(key, storage class name, dtype, location, numel)`` from a storage's persistent id, checked: ``n`` fields, 5
    in a zip archive, 6 in a legacy file (NOTE [legacy format])."""
    if not (isinstance(pid, tuple) and len(pid) == n and pid[0] == 'storage'):
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid!r}")
    stype, key, location, numel = pid[1:5]
    if not (isinstance(stype, tuple) and stype[:1] == ('storage-type',)):
        raise pickle.UnpicklingError(f"unknown storage type {stype!r} in a persistent id")
    if not (isinstance(key, str) and key.isdigit() and isinstance(location, str)):
        raise pickle.UnpicklingError(f"malformed storage persistent id {pid!r}")
    return key, stype[1], stype[2], location, numel


def _unpickle(data, persistent_load, weights_only, pickle_module):
    """The object pickled in ``data``, storages given by ``persistent_load``: restricted or not (NOTE [restricted
    unpickling])."""
    if weights_only:
        allowed = dict(_DEFAULT_SAFE)
        allowed.update(_user_safe)
        build_types = (collections.OrderedDict,) + tuple(v for v in _user_safe.values() if isinstance(v, type))
        unpickler = _weights_only.RestrictedUnpickler(io.BytesIO(data), allowed, persistent_load, build_types)
        return _restricted(unpickler)
    return _Unpickler(io.BytesIO(data), persistent_load).load() if pickle_module is None else \
        _foreign_unpickler(pickle_module, data, persistent_load)


def _restricted(unpickler):
    """``unpickler.load()`` for ember's interpreter: a malformed file's error is a clear one, never a half-built
    object."""
    try:
        return unpickler.load()
    except (pickle.UnpicklingError, RuntimeError, ImportError):
        raise
    except Exception as e:
        raise pickle.UnpicklingError(f"Weights only load failed: the pickle data is malformed "
                                     f"({type(e).__name__}: {e})") from None


class _Inert:
    """What every global, call and object of a pickle becomes in `_StorageScan`: it takes any items, does nothing."""

    def __setitem__(self, key, value):
        pass

    def append(self, item):
        pass

    extend = update = append


class _StorageScan(_weights_only.RestrictedUnpickler):
    """ember's own pickle interpreter, reading a legacy file's object pickle for its storages' persistent ids only
    (NOTE [legacy format]): a global is a storage class or dtype, or else `_Inert`; calls, constructions, state and
    items make or change nothing, so nothing the file names is imported or run, whatever ``weights_only`` says."""

    def __init__(self, fh):
        self.pids = []
        super().__init__(fh, {}, lambda pid: self.pids.append(pid) or _Inert())

    def find(self, module, name):
        hit = _DEFAULT_SAFE.get((module, name))
        return hit if isinstance(hit, (tuple, D.dtype)) else _Inert

    def call(self, func, args):
        return _Inert()

    def new(self, cls, args, kwargs=None):
        return _Inert()

    def build(self, inst, state):
        pass

    def fill_target(self, kind, types):
        self.top()
        return _Inert()


def _plain_pickle(fh):
    """One of a legacy file's pickles of plain data (no globals, no persistent ids)."""
    def refuse(pid):
        raise pickle.UnpicklingError(f"unexpected persistent id {pid!r} in a legacy checkpoint's header")
    return _restricted(_weights_only.RestrictedUnpickler(fh, {}, refuse))


def _legacy_load(fh, map_location, weights_only, pickle_module):
    """A file in torch's format before 1.6 (NOTE [legacy format]): read as torch's _legacy_load does, the object
    unpickled as a zip archive's is."""
    data, sizes = _legacy_object(fh)
    flats = _legacy_storages(fh, sizes)
    cache = {}

    def persistent_load(pid):
        if isinstance(pid, tuple) and pid[:1] == ('module',) and len(pid) == 4:
            return pid[1]                    # a whole module's class, saved with its source (which torch compares)
        key, _, dtype, location, _ = _storage_pid(pid, 6)
        if key not in flats or sizes[key][0] is not dtype:
            raise RuntimeError(f"invalid checkpoint: storage '{key}' has no data or is read as two dtypes")
        view, flat = pid[5], flats[key]
        if view is not None:                 # (key, offset, numel) of a part of the storage: written before 1.0
            vkey, offset, vnumel = view
            flat = flat[offset * dtype.itemsize:(offset + vnumel) * dtype.itemsize]
            key = (key, vkey)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = _mapped(_Storage(flat, canonical('cpu'), dtype, str(key)), location, map_location)
        return hit

    return _unpickle(data, persistent_load, weights_only, pickle_module)


def _legacy_object(fh):
    """The header checked, the object's pickle (bytes) and ``{key: (dtype, numel)}`` of the storages it names."""
    start = fh.tell()
    if not fh.read(1):
        raise EOFError("Ran out of input")
    fh.seek(start)
    try:
        magic = _plain_pickle(fh)
    except pickle.UnpicklingError as e:                    # neither a zip archive nor a legacy file: torch's error
        raise pickle.UnpicklingError(f"not a checkpoint (neither a zip archive nor torch's legacy format): "
                                     f"{e}") from None
    if magic != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = _plain_pickle(fh)
    if version != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {version}")
    _plain_pickle(fh)                                       # sys_info: the data is little-endian whatever it says
    begin = fh.tell()
    scan = _StorageScan(fh)
    _restricted(scan)
    end = fh.tell()
    fh.seek(begin)
    data = fh.read(end - begin)
    sizes = {}
    for pid in scan.pids:
        if isinstance(pid, tuple) and pid[:1] == ('module',):
            continue
        key, _, dtype, _, numel = _storage_pid(pid, 6)
        if sizes.setdefault(key, (dtype, numel)) != (dtype, numel):
            raise RuntimeError(f"invalid checkpoint: storage '{key}' is read as two dtypes or sizes")
    return data, sizes


def _legacy_storages(fh, sizes):
    """``{key: bytes as a uint8 array}``: the list of keys, then each storage's element count and data."""
    keys, flats = _plain_pickle(fh), {}
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise RuntimeError("invalid checkpoint: the list of storage keys is missing")
    for key in keys:
        if key not in sizes or key in flats:
            raise RuntimeError(f"invalid checkpoint: storage key {key!r} not found in the object")
        dtype, numel = sizes[key]
        head = fh.read(8)
        count = struct.unpack('<q', head)[0] if len(head) == 8 else -1
        if count < 0 or count != numel:
            raise RuntimeError(f"invalid checkpoint: storage '{key}' holds {count} elements, not {numel!r}")
        flat = flats[key] = np.frombuffer(bytearray(fh.read(count * dtype.itemsize)), dtype=np.uint8)
        if flat.size != count * dtype.itemsize:
            raise RuntimeError(f"invalid checkpoint: the data of storage '{key}' is truncated")
    return flats


def _foreign_unpickler(pickle_module, data, persistent_load):
    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            # as torch's wrapper around a user's unpickler: the storage classes a persistent id names are torch's
            # to resolve, before the user's find_class (a restricted one need not allow them)
            if isinstance(name, str) and 'Storage' in name:
                hit = _DEFAULT_SAFE.get((module, name))
                if hit is not None:
                    return hit
            return super().find_class(module, name)
    u = Unpickler(io.BytesIO(data))
    u.persistent_load = persistent_load
    return u.load()


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint's pickle names (``'module.name'``) that a ``weights_only`` load would refuse: not
    allowed by default nor by ``add_safe_globals``/``safe_globals``. The pickle is disassembled, not run, as in
    torch (a global built on the stack while unpickling is not seen)."""
    import pickletools
    with (open(f, 'rb') if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f)) as fh:
        try:
            zf = zipfile.ZipFile(fh)
        except zipfile.BadZipFile:
            raise ValueError("Expected input to be a checkpoint returned by torch.save") from None
        pkl = next((n for n in zf.namelist() if n.endswith('/data.pkl') or n == 'data.pkl'), None)
        if pkl is None:
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        data = zf.read(pkl)
    names, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name == 'GLOBAL':
            names.add(tuple(arg.split(' ', 1)))
        elif op.name == 'STACK_GLOBAL' and len(strings) >= 2:
            names.add((strings[-2], strings[-1]))
        if isinstance(arg, str) and 'UNICODE' in op.name:
            strings.append(arg)
    allowed = set(_DEFAULT_SAFE) | set(_user_safe)
    return [f'{m}.{n}' for m, n in sorted(names - allowed)]


def _data_offset(fh, info):
    fh.seek(info.header_offset)
    h = fh.read(30)
    if h[:4] != b'PK\x03\x04':
        raise RuntimeError("PytorchStreamReader failed reading zip archive: bad local header")
    n, m = struct.unpack('<HH', h[26:30])
    return info.header_offset + 30 + n + m


# --- plain pickling (copy.deepcopy, multiprocessing) -------------------------------------

def _reduce_tensor(t):
    if type(t) is not Tensor and not _is_ember_class(type(t)):      # a user's subclass, as above
        plain = t.as_subclass(Tensor) if t._grad_fn is None else t.detach().as_subclass(Tensor)
        return (_rebuild_from_type_v2, (_from_pickle, type(t), _reduce_tensor(plain)[1], t._user_state()))
    return (_from_pickle, (np.array(t.detach()._host()) if t.device.type != 'meta' else None, t.dtype.name,
                           str(t.device), tuple(t.shape), bool(t.requires_grad) and t.is_leaf))


def _from_pickle(arr, dtype_name, device, shape, requires_grad):
    dt = getattr(D, dtype_name if dtype_name != 'bool' else 'bool_')
    from ._core.storage import MetaArray
    if arr is None:
        t = make_tensor(MetaArray(shape, dt.np), dt, canonical('meta'))
    else:
        t = make_tensor(arr, dt, canonical('cpu'))
        if device != 'cpu':
            t = t.to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


# --- the archive reader torch exposes (torch.PyTorchFileReader) -----------------------------------------------------

class PyTorchFileReader:
    """The records of a checkpoint archive by name, without unpickling anything (``torch.PyTorchFileReader``):
    ``get_record('data.pkl')``, ``get_record('data/0')``. Names are relative to the archive's top folder, as
    torch's reader gives them. Lightning's lazy loader reads checkpoints this way.

    >>> import ember, io
    >>> buf = io.BytesIO(); ember.save(ember.ones(2), buf); _ = buf.seek(0)
    >>> r = PyTorchFileReader(buf)
    >>> r.has_record('data.pkl'), sorted(n for n in r.get_all_records() if n.startswith('data'))
    (True, ['data.pkl', 'data/0'])
    """

    def __init__(self, name_or_buffer):
        self._fh = open(name_or_buffer, 'rb') if isinstance(name_or_buffer, (str, os.PathLike)) else name_or_buffer
        try:
            self._zf = zipfile.ZipFile(self._fh)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError):
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central "
                               "directory") from None
        names = self._zf.namelist()
        pkl = next((n for n in names if n.endswith('/data.pkl') or n == 'data.pkl'), names[0] if names else '')
        self._prefix = pkl[:pkl.index('/') + 1] if '/' in pkl else ''

    def _entry(self, name):
        return self._prefix + name

    def get_all_records(self):
        n = len(self._prefix)
        return [name[n:] for name in self._zf.namelist() if name.startswith(self._prefix)]

    def has_record(self, name):
        return self._entry(name) in self._zf.NameToInfo

    def get_record(self, name):
        try:
            return self._zf.read(self._entry(name))
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found") from None

    def get_record_offset(self, name):
        """Where the record's bytes start in the file (they are stored uncompressed, 64-byte aligned)."""
        return _data_offset(self._fh, self._zf.getinfo(self._entry(name)))

    def get_storage_from_record(self, name, numel, dtype):
        """The record as a 1-D tensor of ``numel`` elements of ``dtype``."""
        flat = np.frombuffer(bytearray(self.get_record(name)), dtype=np.uint8)
        return make_tensor(flat[:numel * dtype.itemsize].view(dtype.np), dtype, canonical('cpu'))

    def serialization_id(self):
        return self.get_record('.data/serialization_id').decode() if self.has_record('.data/serialization_id') else ''
