"""ember.Tensor: the Python handle.

Behaviour lives in operators: the methods below are generated from the
operator registry (`_ops/public.py`) or are properties reading TensorImpl
fields. What is written here by hand is what is not an operator: metadata
queries, conversions to Python and NumPy, and the Python protocols.
"""
import collections.abc
import copy

import numpy as np

from ._core import dtype as D
from ._core.device import device as _device, canonical
from ._core.tensor_impl import TensorImpl, set_tensor_class, fields as _fields, FIELDS as _FIELDS
from ._core.storage import MetaArray, _ptr, suggest_memory_format, format_strides, contiguous_strides, \
    check_in_bounds
from ._core.dispatch_key import BACKEND_MASK as _BM, AUTOGRAD_BIT as _AUTOGRAD_BIT, PYTHON_SUBCLASS_BIT as _PYTHON_SUBCLASS_BIT, \
    TORCH_FUNCTION_BIT as _TORCH_FUNCTION_BIT, DispatchKey as _DK
from ._dispatch import torch_function as _tf
from ._warn import warn_once as _warn_once
from ._core import naming as _naming
from ._dispatch.dispatcher import STATE as _dispatch_state, int_list_error as _int_list_error

# item() asks _local_scalar_dense for these: a wrapper subclass has no data of its own, a quantized tensor dequantizes
_ITEM_BY_OPERATOR = _PYTHON_SUBCLASS_BIT | (1 << _DK.QuantizedCPU)


_tuple_new = tuple.__new__


class Size(tuple):
    """torch.Size: a tuple of ints with torch's repr and ``numel()``."""

    def __new__(cls, it=()):
        # a symbolic size (SymInt, NOTE [symbolic sizes]) stays one: it is an int that knows its expression
        return tuple.__new__(cls, (i if i.__class__ is int or hasattr(i, 'expr') else int(i) for i in it))

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f'{_naming.shown}.Size([{", ".join(str(s) for s in self)}])'

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):      # (1,) + size is a Size too, as torch's
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


# a Size is a pytree node, as torch's is: its ints are leaves, and it unflattens to a plain tuple
from .utils import _pytree  # noqa: E402
_pytree._private_register_pytree_node(Size, _pytree._tuple_flatten, _pytree._tuple_unflatten,
                                      serialized_type_name='torch.Size',
                                      flatten_with_keys_fn=_pytree._tuple_flatten_with_keys)

from ._core.coo import COOArray as _COOArray, strided as _strided, sparse_coo as _sparse_coo  # noqa: E402
from ._core.compressed import CompressedArray as _CompressedArray  # noqa: E402


class _UserDict(collections.abc.MutableMapping):
    """A tensor's ``__dict__``: its user's attributes, read and written through to the instance dict, without the
    fields ember keeps there (NOTE [tensor __dict__]). A copy is a plain dict."""
    __slots__ = ('_d',)

    def __init__(self, d):
        self._d = d

    def __getitem__(self, k):
        if k in _FIELDS:
            raise KeyError(k)
        return self._d[k]

    def __setitem__(self, k, v):
        if k in _FIELDS:
            raise KeyError(f"'{k}' is a field of the tensor, not an attribute its __dict__ may set")
        self._d[k] = v

    def __delitem__(self, k):
        if k in _FIELDS:
            raise KeyError(k)
        del self._d[k]

    def __iter__(self):
        return (k for k in list(self._d) if k not in _FIELDS)

    def __len__(self):
        return sum(1 for k in self._d if k not in _FIELDS)

    def copy(self):
        return dict(self.items())

    __copy__ = copy

    def __deepcopy__(self, memo):
        return copy.deepcopy(dict(self.items()), memo)

    def __repr__(self):
        return repr(dict(self.items()))


_OBJECT_CLASS = object.__dict__['__class__']


class Tensor(TensorImpl):
    """A multi-dimensional, strided view of a Storage (see _core/tensor_impl.py).

    >>> import ember
    >>> x = ember.tensor([[1., 2.], [3., 4.]])
    >>> (x + 1).sum().item()
    14.0
    """
    __array_priority__ = 1000   # NumPy defers `ndarray + Tensor` to Tensor.__radd__

    def _set_class(self, cls):
        """``t.__class__ = Sub`` (NOTE [tensor subclasses]): Python checks the layouts; the key that hands calls to
        ``__torch_function__`` then follows the new class, as torch reads the handler from the type at each call.
        PythonSubclass stays as the tensor was made with it: torch's Python dispatch key is set at creation."""
        _OBJECT_CLASS.__set__(self, cls)
        self._keys = (self._keys & ~_TORCH_FUNCTION_BIT) | (_subclasses.subclass_keys(cls) & _TORCH_FUNCTION_BIT)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _subclasses.init_subclass(cls)      # torch's _TensorMeta (NOTE [tensor subclasses])

    # the getter is the builtin ``type`` (no Python frame: a failed isinstance check reads ``__class__``)
    __class__ = property(type, _set_class)

    # NOTE [tensor __dict__] (_core/tensor_impl.py): what the user set on the tensor, as torch's __dict__ holds
    @property
    def __dict__(self):
        return _UserDict(_fields(self))

    @__dict__.setter
    def __dict__(self, d):
        own = _fields(self)
        for k in [k for k in own if k not in _FIELDS]:
            del own[k]
        own.update({k: v for k, v in dict(d).items() if k not in _FIELDS})

    def __new__(cls, *args, **kwargs):
        """torch's legacy constructor: ``Tensor(2, 3)`` (uninitialised float32), ``Tensor([1, 2])``,
        ``Tensor(ndarray)``, ``Tensor(size=(2,))``, ``Tensor()`` (empty), ``Tensor(t)`` (an alias of t); a subclass
        gets an instance of itself (``super().__new__(cls, data)`` in its own ``__new__``). Prefer ``ember.tensor`` /
        ``ember.empty``. Internal code makes tensors with ``object.__new__``, which never runs this.

        >>> ember.Tensor([1, 2]).dtype
        ember.float32
        """
        from ._legacy_types import construct
        src = construct(D.get_default_dtype(), args, dict(kwargs), keep_tensor_dtype=True)
        t = object.__new__(cls)
        _fields(t).update(_fields(src))
        if cls is not Tensor:
            t._keys |= _subclasses.subclass_keys(cls)
        return t

    def __init__(self, *args, **kwargs):
        """Nothing: ``__new__`` made the tensor (a subclass's ``__init__`` may take its own arguments)."""

    # --- metadata -------------------------------------------------------------
    @property
    def shape(self):
        # every array class's shape holds ints (or SymInts) already: no per-element check as in Size()
        return _tuple_new(Size, self._a.shape)

    def size(self, dim=None):
        if dim is None:
            return _tuple_new(Size, self._a.shape)
        return self._a.shape[_wrap_dim(dim, self._a.ndim)]

    def stride(self, dim=None):
        st = self._strides
        if st is None:
            a = self._a
            if a.__class__ is _CompressedArray:
                raise RuntimeError("Sparse CSR tensors do not have strides")
            isz = a.itemsize
            st = tuple(s // isz for s in a.strides)
            if a.size == 0 and st and not any(st):   # NumPy zeroes the strides of new empty arrays
                from ._core.storage import contiguous_strides
                st = contiguous_strides(a.shape)
            self._strides = st
        return st if dim is None else st[_wrap_dim(dim, len(st))]

    def storage_offset(self):
        o = self._offset
        if o is None:
            a = self._a
            if isinstance(a, MetaArray):
                return a.offset
            self._storage_or_make()
            o = self._offset
        return o

    def untyped_storage(self):
        return self._storage_or_make()

    def storage(self):
        """The deprecated typed view of the storage (torch.TypedStorage; ember/storage.py)."""
        from .storage import TypedStorage, _warn_typed_storage_removal
        _warn_typed_storage_removal()
        return TypedStorage(self._storage_or_make(), self._dtype)

    def data_ptr(self):
        return _ptr(self._a) if not isinstance(self._a, MetaArray) else 0

    def is_set_to(self, tensor):
        """Whether both tensors are the same view of one storage: its offset, sizes and strides."""
        return (isinstance(tensor, Tensor) and self._storage_or_make() is tensor._storage_or_make()
                and self.storage_offset() == tensor.storage_offset() and tuple(self._a.shape) == tuple(tensor._a.shape)
                and self.stride() == tensor.stride())

    def is_contiguous(self, memory_format=None):
        a = self._a
        if memory_format in ('channels_last', 'channels_last_3d'):
            if a.ndim != (4 if memory_format == 'channels_last' else 5):
                return False        # torch's answer for another rank (only ``.to``/``contiguous`` raise)
            from ._core.storage import format_strides
            want = format_strides(tuple(a.shape), memory_format)
            return all(st == w or n <= 1 for n, st, w in zip(a.shape, self.stride(), want))
        if isinstance(a, MetaArray):
            from ._core.storage import contiguous_strides
            return all(st == c or n <= 1 for n, st, c in zip(a.shape, a.strides, contiguous_strides(a.shape, a.itemsize)))
        return a.flags.c_contiguous

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def ndim(self):
        return self._a.ndim

    def dim(self):
        return self._a.ndim

    ndimension = dim

    def numel(self):
        n = self._a.size
        return n if n.__class__ is int or hasattr(n, 'expr') else int(n)    # a symbolic numel stays symbolic

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._a.size * self._dtype.itemsize

    @property
    def is_cuda(self):
        return self._device.type == 'cuda'

    @property
    def is_cpu(self):
        return self._device.type == 'cpu'

    @property
    def is_meta(self):
        return self._device.type == 'meta'

    @property
    def is_nested(self):
        """Whether this is a nested tensor (ember.nested): False for every tensor but a NestedTensor, which answers
        for itself (NOTE [nested tensors] in ember/nested/_internal/nested_tensor.py)."""
        return False

    @property
    def layout(self):
        cls = self._a.__class__
        return _sparse_coo if cls is _COOArray else self._a.layout if cls is _CompressedArray else _strided

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    @property
    def _version(self):
        if self._is_inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    def is_inference(self):
        """Was this tensor made under ``ember.inference_mode()``?"""
        return self._is_inference

    def get_device(self):
        return -1 if self._device.type == 'cpu' else (self._device.index or 0)

    # --- conversion -------------------------------------------------------------
    def numpy(self, *, force=False):
        """The data as a NumPy array that shares memory with this tensor (CPU only)."""
        if self._device.type != 'cpu':
            if force and self._device.type != 'meta':
                return self._device._iface.to_host(self._a)
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if self.requires_grad and not force and _dispatch_state.keep & _AUTOGRAD_BIT:    # grad mode on, as torch
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if (self._dtype is D.bfloat16 or self._dtype in D.QUANTIZED) and not force:
            raise TypeError(f"Got unsupported ScalarType {D.scalar_name(self._dtype)}")
        return self._a

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()        # torch's: the checks of numpy() (requires grad, bfloat16, a device's memory)
        return a if dtype is None else a.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """What a NumPy ufunc given a Tensor returns (``np.exp(t)``, and ``t + ndarray``, which NumPy computes):
        a Tensor over the result, as torch's (a bool result as uint8, torch's old workaround it keeps)."""
        array = np.asarray(array)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        from ._creation import from_numpy
        return from_numpy(array)

    def _host(self):
        if self._bt is not None:        # NOTE [vmap]: a BatchedTensor has no data of its own
            raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                               "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                               "operations.")
        if self._device.type == 'meta':
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._device._iface.to_host(self._a)

    def item(self):
        if self._a.size != 1:
            raise RuntimeError(f"a Tensor with {self._a.size} elements cannot be converted to Scalar")
        if self._keys & _ITEM_BY_OPERATOR:
            from ._dispatch.ops_namespace import aten
            return aten._local_scalar_dense.default(self)
        return self._host().reshape(()).item()

    def tolist(self):
        return self._host().tolist()

    def __float__(self):
        if self.requires_grad and _grad_enabled():     # torch warns only while grad mode is on
            _warn_scalar_with_grad()
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._dtype.category > 1 or self._a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._a.size != 1:
            what = 'no values' if self._a.size == 0 else 'more than one value'
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self.item())

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        """``0 in t``: whether any element equals ``element`` (torch's, not Python's iteration over rows)."""
        if isinstance(element, (TensorImpl, int, float, complex)):
            return bool((element == self).any().item())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    __hash__ = object.__hash__

    def __dlpack__(self, stream=None, **kw):
        return self._a.__dlpack__(**({'stream': stream} if stream is not None else {}))

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        if self._a.ndim == 0 and self._device.type != 'meta':
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        from .serialization import _reduce_tensor
        return _reduce_tensor(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        with _no_grad():
            new = self.clone()
        if type(self) is not Tensor:
            new = object.__new__(type(self))._adopt_from(new) if hasattr(type(self), '_adopt_from') else new
        new._set_requires_grad_flag(self.requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        new.__dict__.update(copy.deepcopy(self._user_state(), memo))
        memo[id(self)] = new
        return new

    # --- dtype / device moves ---------------------------------------------------
    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``, with ``copy=`` and ``non_blocking=``."""
        fmt = kwargs.pop('memory_format', None)
        dev, dt, copy = _parse_to(args, kwargs)
        given_dev, given_dt = (canonical(dev) if dev is not None else None), dt     # what _to_copy is told, as torch
        dev = given_dev or self._device
        dt = dt or self._dtype
        r = self if dev == self._device and dt is self._dtype and not copy else _to_copy(self, given_dt, given_dev)
        if fmt in ('channels_last', 'channels_last_3d', 'contiguous_format'):
            # torch returns the tensor itself when its strides suggest the format (a transposed matrix suggests
            # contiguous_format), else a copy laid out exactly in it (size-1 dimensions' strides included)
            shape = tuple(self.shape)
            if r is self and suggest_memory_format(shape, self.stride()) == fmt:
                return r
            if r is self or r.stride() != (format_strides(shape, fmt) or contiguous_strides(shape)):
                r = r.clone(memory_format=fmt)
        return r

    def cpu(self):
        return self.to('cpu')

    def cuda(self, device=None, non_blocking=False):
        from . import cuda as _cuda
        if isinstance(device, int) and not _cuda.is_available():
            # an explicit index asks the accelerator layer first, and a CPU-only torch says so in these words
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if device is not None and not isinstance(device, int) and _device(device).type != 'cuda':
            raise RuntimeError("Invalid device, must be cuda device")
        return self.to('cuda' if device is None else _device('cuda', device) if isinstance(device, int) else device)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """``x.type()`` names the legacy type ('ember.FloatTensor'); ``x.type(ember.DoubleTensor)``,
        ``x.type('torch.DoubleTensor')`` or ``x.type(ember.float64)`` converts."""
        from ._legacy_types import type_name, parse_type
        if dtype is None:
            return type_name(self._dtype)
        return self.to(parse_type(dtype))

    def share_memory_(self):
        """Move the data into shared memory in place, so other processes see and make writes to it
        (NOTE [shared tensors] in ember/_shared.py). A no-op when already shared.

        >>> ember.zeros(3).share_memory_().is_shared()
        True
        """
        if self._device.type == 'cpu' and not self.is_shared():
            from ._shared import shared_copy
            self._set_array(shared_copy(self._a))
        return self

    def is_shared(self):
        if self._device.type != 'cpu':
            return False
        from ._shared import segment_of
        return segment_of(self._a) is not None

    def resize_(self, *sizes, memory_format=None):
        """Give the tensor shape ``sizes`` in place, keeping its leading elements (new ones are uninitialised).

        >>> ember.arange(6.).resize_(2, 2).tolist()
        [[0.0, 1.0], [2.0, 3.0]]
        """
        _check_sizes('resize_', sizes)
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        sizes = tuple(int(s) for s in sizes)
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if isinstance(self._a, MetaArray):
            self._set_array(MetaArray(sizes, self._a.dtype))
            return self
        n = int(np.prod(sizes, dtype=np.int64))
        a = self._a
        if n <= a.size and a.flags.c_contiguous:        # fits: the same memory, seen with the new shape
            new = a.reshape(-1)[:n].reshape(sizes)
        else:
            new = np.empty(n, a.dtype)
            k = min(n, a.size)
            new[:k] = a.reshape(-1)[:k]
            new = new.reshape(sizes)
        self._set_array(new)
        return self

    def resize_as_(self, other, memory_format=None):
        return self.resize_(tuple(other.shape))

    def set_(self, source=None, storage_offset=None, size=None, stride=None):
        """Make this tensor a view of other memory in place: ``set_(t)`` takes ``t``'s storage and geometry,
        ``set_(storage, offset, size, stride)`` a storage's elements (all of them, contiguous, without offset and
        size), ``set_()`` an empty storage. Views of the old memory keep it.

        >>> a = ember.arange(6.)
        >>> ember.zeros(1).set_(a.untyped_storage(), 1, (2, 2), (2, 1)).tolist()
        [[1.0, 2.0], [3.0, 4.0]]
        """
        from .storage import TypedStorage, UntypedStorage
        if self._grad_fn is None and self._requires_grad and _grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if source is None:
            self._set_array(self._a[:0].reshape(0).copy() if not isinstance(self._a, MetaArray)
                            else MetaArray((0,), self._a.dtype))
            return self
        if isinstance(source, Tensor):
            if source._dtype is not self._dtype:
                raise RuntimeError(f"Could not set tensor of type {D.cpp_name(source._dtype)} to a tensor of type "
                                   f"{D.cpp_name(self._dtype)}")
            if storage_offset is None:
                self._a, self._storage, self._offset, self._strides = (source._a, source._storage_or_make(),
                                                                        source.storage_offset(), None)
                return self
            storage = source._storage_or_make()
        elif isinstance(source, (TypedStorage, UntypedStorage)):
            if isinstance(source, TypedStorage):
                if source.dtype is not self._dtype:
                    raise RuntimeError(f"Expected a Storage of type {D.cpp_name(self._dtype)} or an UntypedStorage, "
                                       f"but got type {D.scalar_name(source.dtype)} for argument 1 'storage'")
                source = source.untyped()
            storage = source
        else:
            raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
        if storage.device != self._device:
            raise RuntimeError(f"Attempted to set the storage of a tensor on device \"{self._device}\" to a storage on "
                               f"different device \"{storage.device}\".  This is no longer allowed; the devices must "
                               "match.")
        if (storage_offset is None) != (size is None):
            raise TypeError("set_() takes a storage_offset and a size together (and optionally a stride)")
        itemsize = self._a.dtype.itemsize
        if size is None:
            storage_offset, size = 0, (storage.nbytes() // itemsize,)
        size = tuple(int(s) for s in size)
        stride = tuple(int(s) for s in (stride if stride is not None else contiguous_strides(size)))
        if storage_offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
        if any(s < 0 for s in stride):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides="
                               f"{list(stride)}")
        check_in_bounds(size, stride, storage_offset, itemsize, storage.nbytes())
        if storage.data is None:
            a = MetaArray(size, self._a.dtype, tuple(s * itemsize for s in stride), storage_offset)
        else:
            flat = storage.data[:storage.nbytes() // itemsize * itemsize].view(self._a.dtype)
            xp = self._device._iface.xp
            a = xp.lib.stride_tricks.as_strided(flat[storage_offset:], size, [s * itemsize for s in stride])
        self._set_array(a)
        self._storage, self._offset = storage, storage_offset
        return self

    def type_as(self, other):
        return self.to(other.dtype)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from ._creation import tensor_from, warn_copy_construct
        if isinstance(data, Tensor):
            warn_copy_construct('tensor.new_tensor')
        return tensor_from(data, dtype or self._dtype, device or self._device, requires_grad)

    # new_zeros & co.: a plain Tensor with this tensor's dtype and device unless told (never a Parameter). The size
    # is torch's ``int[] size`` argument: varargs ints, one tuple/list/Size, or the ``size=`` keyword.
    def new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        return self._new('empty', 'new_empty', args, size, dtype, device, requires_grad, layout, pin_memory)

    def new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        """``x.new_zeros(2, 3)``: zeros with x's dtype and device. ``ember.ones(1).new_zeros(2).dtype`` is float32."""
        return self._new('zeros', 'new_zeros', args, size, dtype, device, requires_grad, layout, pin_memory)

    def new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        return self._new('ones', 'new_ones', args, size, dtype, device, requires_grad, layout, pin_memory)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False):
        from . import _functions as F
        if not isinstance(size, (tuple, list)):
            raise TypeError("new_full(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size).__name__}")
        t = F.full(tuple(size), fill_value, dtype=dtype or self._dtype, device=device or self._device,
                   layout=layout, pin_memory=pin_memory)
        return t.requires_grad_() if requires_grad else t

    def _new(self, factory, name, args, size, dtype, device, requires_grad, layout, pin_memory):
        from . import _functions as F
        if args and size is not None:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if size is not None and not isinstance(size, (tuple, list)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
        if size is None:
            if not args:
                raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
            if isinstance(args[0], (tuple, list)) and len(args) > 1:
                raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
            size = args[0] if isinstance(args[0], (tuple, list)) else args
        _check_sizes(name, args if size is args else (size,))
        try:
            t = getattr(F, factory)(tuple(size), dtype=dtype or self._dtype, device=device or self._device,
                                    layout=layout, pin_memory=pin_memory)
        except TypeError as e:      # the factory's parser error, under this method's name as torch's
            if str(e).startswith(factory + '()'):
                raise TypeError(name + str(e)[len(factory):]) from None
            raise
        return t.requires_grad_() if requires_grad else t


def _check_sizes(name, args):
    """torch's parser on a method's ``int[] size`` given as ints or as one sequence (``args``): its TypeError for a
    value that is no int, naming the method."""
    is_int = lambda e: hasattr(e, '__index__')      # noqa: E731
    seq = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if not all(is_int(e) for e in seq):
        raise _int_list_error(name, "argument 'size' (position 1)", args[0] if seq is args and len(args) == 1 else
                              seq, is_int)


def _inplace_view(name):
    """``x.unsqueeze_(0)`` & co.: x takes the geometry of ``x.<name>(...)`` in place and its version counter
    moves, as in torch. On a tensor with history (grad mode on) x also takes that view's place in the graph, as
    torch's in-place view operators do: its grad_fn becomes the view's node under torch's in-place class name
    (SqueezeBackward4 for squeeze_(0), NOTE [in-place view nodes] in autograd/views.py), and a view stays a view of
    its base, now through the new geometry. A leaf that requires grad gets torch's error."""
    overloads = 3 if name == 'squeeze' else 1       # torch's out-of-place overloads, numbered before the in-place
    def method(self, *args, **kwargs):
        from .autograd.grad_mode import is_grad_enabled
        if self.requires_grad and is_grad_enabled():
            if self._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            from .autograd.views import inplace_view_node
            v = getattr(self, name)(*args, **kwargs)
            self._set_array(v._a)
            self._grad_fn = inplace_view_node(v._grad_fn, overloads) if v._grad_fn is not None else None
            self._output_nr = v._output_nr
            if self._base is not None:      # v is a view of the same base: its way there replaces ours
                self._view_fn, self._hist = v._view_fn, v._hist
            self._vc[0] += 1
            return self
        with _no_grad():
            v = getattr(self, name)(*args, **kwargs)
        self._set_array(v._a)
        self._vc[0] += 1
        return self
    method.__name__ = name + '_'
    return method


for _name in ('t', 'transpose', 'swapdims', 'swapaxes', 'unsqueeze', 'squeeze'):
    setattr(Tensor, _name + '_', _inplace_view(_name))


def _cast_method(name, dt):
    def cast(self, memory_format=None):
        return self.to(dt) if memory_format is None else self.to(dt, memory_format=memory_format)
    cast.__name__, cast.__qualname__ = name, f"Tensor.{name}"
    return cast


for _name, _dt in (('float', D.float32), ('double', D.float64), ('half', D.float16), ('bfloat16', D.bfloat16),
                   ('long', D.int64), ('int', D.int32), ('short', D.int16), ('char', D.int8), ('byte', D.uint8),
                   ('bool', D.bool_), ('cfloat', D.complex64), ('cdouble', D.complex128)):
    setattr(Tensor, _name, _cast_method(_name, _dt))


_scalar_warned = []


def _grad_enabled():
    from .autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def _warn_scalar_with_grad():
    """torch warns once per process (TORCH_WARN_ONCE) when float() reads a tensor that requires grad."""
    if not _scalar_warned:
        _scalar_warned.append(True)
        from ember._warn import warnings
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.", UserWarning, stacklevel=3)


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _parse_to(args, kwargs):
    dev = kwargs.pop('device', None)
    dt = kwargs.pop('dtype', None)
    dt = D.PYTHON_TYPES.get(dt, dt)
    copy = kwargs.pop('copy', False)
    kwargs.pop('non_blocking', None)
    kwargs.pop('memory_format', None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dt = a
        elif a in D.PYTHON_TYPES:       # x.to(int): int64, as torch's parser reads a Python type
            dt = D.PYTHON_TYPES[a]
        elif isinstance(a, (str, _device, int)) and not isinstance(a, bool):
            dev = a
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, bool):
            copy = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
    return dev, dt, copy


def _to_copy(t, dt, dev):
    from . import _functions as F
    return F._to_copy(t, dtype=dt, device=dev)


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


set_tensor_class(Tensor)

# NOTE [tensor subclasses] (ember/_dispatch/subclasses.py): what a Tensor subclass may override, and how it is made
from ._dispatch import subclasses as _subclasses  # noqa: E402
from ._core.tensor_impl import set_subclass_keys as _set_subclass_keys  # noqa: E402
_set_subclass_keys(_subclasses.subclass_keys)
Tensor.__torch_function__ = classmethod(_subclasses.default_torch_function)
Tensor.__torch_dispatch__ = _subclasses.disabled_torch_dispatch_impl
Tensor.as_subclass = _subclasses.as_subclass
Tensor._make_subclass = staticmethod(_subclasses.make_subclass)
Tensor._make_wrapper_subclass = staticmethod(_subclasses.make_wrapper_subclass)


# --- autograd surface (torch.Tensor's autograd attributes) ---------------------

def _requires_grad(self):
    return self._requires_grad or self._grad_fn is not None or \
        (self._requires_grad_through_base() if self._creation_meta else False)    # NOTE [view creation meta]


def _set_requires_grad(self, flag):
    if self._grad_fn is not None:
        if not flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        return
    if flag and not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if flag and self._is_inference and not _inference_mode_on():
        raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    self._set_requires_grad_flag(bool(flag))


def _inference_mode_on():
    from .autograd.grad_mode import is_inference_mode_enabled
    return is_inference_mode_enabled()


def requires_grad_(self, requires_grad=True):
    if requires_grad.__class__ is not bool:
        raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                        f"{type(requires_grad).__name__}")
    _set_requires_grad(self, requires_grad)
    return self


def _set_requires_grad_attr(self, flag):
    if flag.__class__ is not bool:         # the attribute takes a bool only, as torch's
        raise RuntimeError("requires_grad must be a bool")
    _set_requires_grad(self, flag)


def _get_grad(self):
    if self._grad is None and self._grad_fn is not None and not self._retains_grad:     # torch: only when undefined
        from ember._warn import warnings
        warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                      "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                      "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If "
                      "you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
                      "github.com/pytorch/pytorch/pull/30531 for more information.",
                      UserWarning, stacklevel=2)
    return self._grad


def _set_grad(self, g):
    if g is not None:
        if not isinstance(g, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}")
        if tuple(g.shape) != tuple(self.shape):
            raise RuntimeError("assigned grad has data of a different size")
        if g.dtype is not self.dtype:
            raise RuntimeError("assigned grad has data of a different type")
    self._grad = g


def is_leaf(self):
    return (self._grad_fn if self._base is None else _grad_fn(self)) is None


def _get_data(self):
    """``x.data``: the same memory without history and with a version counter of its own, as torch's, so that
    writes through it (``x.data[i] = v``, an optimizer's in-place step) do not fail autograd's saved-value checks."""
    d = self.detach()
    d._vc = [0]
    return d


def _set_data(self, new):
    if not isinstance(new, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(new).__name__}")
    self._set_array(new._a)
    self._dtype, self._device = new._dtype, new._device
    if new._offset is not None:     # share the Storage object only with its offset (else it is found again)
        self._storage, self._offset = new._storage, new._offset
    self._keys = new._device._iface.keyset | (self._keys & ~_BM)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' ``.grad`` (see ember.autograd.backward)."""
    from . import autograd
    if _tf._MODES.stack:        # a torch function mode sees Tensor.backward, as torch's does
        return _tf.handle_torch_function(Tensor.backward, (self,), self, gradient, retain_graph, create_graph,
                                         inputs=inputs)
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed and may return a replacement."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    from .utils.hooks import RemovableHandle
    if self._grad_fn is not None:
        return self._grad_fn._register_tensor_hook(self._output_nr, hook)
    if self._hooks is None:
        self._hooks = {}
    h = RemovableHandle(self._hooks)
    self._hooks[h.id] = hook
    return h


def register_post_accumulate_grad_hook(self, hook):
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    from .utils.hooks import RemovableHandle
    if self._post_acc_hooks is None:
        self._post_acc_hooks = {}
    h = RemovableHandle(self._post_acc_hooks)
    self._post_acc_hooks[h.id] = hook
    return h


def retain_grad(self):
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None or self._retains_grad:
        return
    import weakref
    ref = weakref.ref(self)

    def store(g):
        t = ref()
        if t is None:
            return
        t._grad = g.detach().clone() if t._grad is None else t._grad + g.detach()
    self._grad_fn._set_retain_grad_hook(self._output_nr, store)
    self._retains_grad = True


def detach_(self):
    if self._base is not None and (self._grad_fn is not None or self._creation_meta):
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    self._grad_fn = None
    self._requires_grad = False
    self._update_keys()
    return self


Tensor.requires_grad = property(_requires_grad, _set_requires_grad_attr)
Tensor.requires_grad_ = requires_grad_
Tensor.grad = property(_get_grad, _set_grad, lambda self: _set_grad(self, None))    # del t.grad: None, as torch's
Tensor.is_leaf = property(is_leaf)
def _grad_fn(self):
    fn = self._grad_fn
    if self._base is not None:
        if fn is not None:      # a view written through another view: regenerated (NOTE [view history])
            from .autograd.node import gradient_edge
            fn = gradient_edge(self)[0]
        elif self._creation_meta:       # written since a no_grad view was made: torch's error
            from .autograd.views import check_view_version      # (NOTE [view creation meta])
            check_view_version(self)
    return fn


Tensor.grad_fn = property(_grad_fn)
Tensor.retains_grad = property(lambda self: self._retains_grad)
Tensor.output_nr = property(lambda self: self._output_nr)
Tensor.data = property(_get_data, _set_data)
Tensor.backward = backward
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.retain_grad = retain_grad
Tensor.detach_ = detach_
Tensor._base_ = property(lambda self: self._base)
Tensor._is_view = lambda self: self._base is not None


def _T(self):
    """``x.T``: the dimensions reversed (a permute view, also of a 0-d or 1-d tensor); other than on matrices
    deprecated, with torch's warnings, once per process."""
    n = self.ndim
    if n == 0:
        _warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                   UserWarning)
    elif n != 2:
        _warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                   "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                   "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                   UserWarning)
    return self.permute(tuple(range(n - 1, -1, -1)))


Tensor.T = property(_T)


def _mT(self, name='mT'):
    """``x.mT``: the last two dimensions swapped (a 0-d tensor is itself); a 1-d tensor is refused, as in torch."""
    n = self.ndim
    if n == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.")
    if n == 0:
        _warn_once(f"Tensor.{name} is deprecated on 0-D tensors. " + ("This function is the identity in these cases."
                   if name == 'mT' else "Consider using x.conj()."), UserWarning)
        return self
    return self.transpose(-2, -1)


def _H(self):
    """``x.H``: the conjugate transpose of a matrix (a 0-d tensor is itself, conjugated)."""
    n = self.ndim
    if n not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if n > 2 else ""))
    if n == 0:
        _warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning)
    t = self if n == 0 else self.transpose(0, 1)
    return t.conj() if self.is_complex() else t


Tensor.mT = property(_mT)
Tensor.H = property(_H)
Tensor.mH = property(lambda self: (lambda t: t.conj() if self.is_complex() else t)(_mT(self, 'mH')))
