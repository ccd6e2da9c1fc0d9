"""TensorImpl: the fields of a tensor.

A tensor is a strided view of a Storage: ``_a`` is the backend array for that
view (a NumPy array on CPU, CuPy on CUDA, a `MetaArray` on meta), from which
sizes, strides and offset are read. Other fields:

``_dtype``, ``_device``   ember's dtype and device
``_keys``                 its DispatchKeySet (backend bit, plus Autograd when it requires grad)
``_vc``                   the version counter, a one-element list shared by all views of one base
``_base``                 the tensor this one is a view of, or None
``_grad_fn`` etc.         autograd metadata (see ember/autograd)

`ember.Tensor` subclasses TensorImpl, so a field read is one attribute lookup:
the handle and the impl are one Python object (torch needs two because its
impl lives in C++).

Construction lives here too: ``make_tensor`` wraps a backend array, ``adopt`` does so reading the dtype off
the array, ``make_view`` makes a view sharing a tensor's storage and version counter. Every tensor ember
creates comes from one of the three (kernels return arrays; adapters, creation functions, autograd and the
loader wrap them). They build instances of the Python class registered with ``set_tensor_class`` (ember.Tensor,
by ember/_tensor.py), as torch's C++ core learns the Python ``torch.Tensor`` class when torch initialises.

NOTE [version counter]: every in-place kernel and every ``out=`` write bumps
``_vc[0]``; views share the list object, so a write through any view is seen by
all of them and by autograd's saved-tensor checks.
"""
import enum
from weakref import ref as _weakref

import numpy as np

from .storage import Storage, MetaArray
from .dispatch_key import AUTOGRAD_BIT
from .dtype import from_numpy_dtype
from .quantized import QArray


class CreationMeta(enum.IntEnum):
    """How a view was made (torch's c10 CreationMeta): anything but DEFAULT forbids writing into it in place
    with grad mode on, and using it once its base was written (NOTE [view creation meta])."""
    DEFAULT = 0
    IN_CUSTOM_FUNCTION = 1
    MULTI_OUTPUT_NODE = 2
    NO_GRAD_MODE = 3
    INFERENCE_MODE = 4


class TensorImpl:
    # defaults live on the class so that creating a tensor sets only what differs
    _base = None
    _views = None       # weak references to the views made while it had no history (NOTE [view history])
    _storage = None
    _requires_grad = False
    _grad_fn = None
    _grad = None
    _output_nr = 0
    _retains_grad = False
    _hooks = None
    _post_acc_hooks = None
    _is_inference = False
    _is_param = False
    _view_fn = None
    _offset = None      # storage offset in elements, once known (views know it at birth)
    _strides = None     # element strides, cached
    _grad_owner = None  # NOTE [gradient ownership] in autograd/engine.py: True while the engine alone holds it
    # autograd's bookkeeping (autograd/views.py, autograd/node.py)
    _hist = 0           # NOTE [view history]: bumped by each in-place write recorded on this tensor (or its base)
    _acc_ref = None     # weak reference to a leaf's AccumulateGrad node
    _creation_meta = CreationMeta.DEFAULT   # NOTE [view creation meta] in autograd/views.py
    _view_version = 0   # the version counter's value when a view that is not DEFAULT was made
    _fw = None          # NOTE [forward AD] in autograd/forward.py: {dual level: tangent} of a dual tensor
    _bt = None          # NOTE [vmap] in _functorch/batching.py: (physical tensor, level) of a BatchedTensor

    def __sizeof__(self):
        # torch's figure (its C struct, 48 bytes in 2.13), so that sys.getsizeof(t) is torch's: both classes keep a
        # managed __dict__, whose header getsizeof adds alike; a tensor's memory is its storage's __sizeof__
        return 48

    def _storage_or_make(self):
        s = self._storage
        if s is None:
            a = self._a
            if isinstance(a, MetaArray):
                s = Storage(None, self._device, None, nbytes=_meta_nbytes(a))
            elif a.__class__ is QArray:      # NOTE [quantized tensors]: the storage is the integers'
                s, self._offset = Storage.of_array(a.int_repr, self._device)
            else:
                try:
                    s, self._offset = Storage.of_array(a, self._device)
                except RuntimeError:
                    # an array whose memory owner is not one dense block (rare NumPy results): no view of
                    # this tensor exists yet (storage is made at the first one), so it can move to a
                    # contiguous copy of its own
                    self._set_array(a.copy())
                    s, self._offset = Storage.of_array(self._a, self._device)
            self._storage = s
        return s

    def _alias(self, src):
        """Make this tensor a second handle on ``src``'s memory: the same array, storage, version counter and
        geometry (nn.Parameter wrapping a tensor; torch's Tensor._make_subclass)."""
        off = src.storage_offset()
        self._a, self._dtype, self._device, self._vc, self._storage = src._a, src._dtype, src._device, src._vc, src._storage
        self._offset, self._strides = off, src._strides
        self._keys = src._device._iface.keyset | _subclass_keys(type(self))
        return self

    def _user_state(self):
        """The attributes set on this tensor by its user (a subclass's metadata), without ember's own fields."""
        return {k: v for k, v in fields(self).items() if k not in FIELDS}

    def _set_array(self, a):
        """Replace the data (resize, ``.data =``): cached geometry and storage go with the old array."""
        self._a = a
        self._storage = self._offset = self._strides = None

    def _set_requires_grad_flag(self, flag):
        self._requires_grad = flag
        self._update_keys()

    def _update_keys(self):
        if self._requires_grad or self._grad_fn is not None or self._requires_grad_through_base():
            self._keys |= AUTOGRAD_BIT
        else:
            self._keys &= ~AUTOGRAD_BIT

    def _requires_grad_through_base(self):
        """A view made outside grad mode (or inside a custom Function) of a tensor that requires grad requires
        grad itself, with no history (NOTE [view creation meta])."""
        return bool(self._creation_meta) and self._base is not None and self._base._keys & AUTOGRAD_BIT != 0


# NOTE [tensor __dict__]: a tensor's fields live in its instance dict (one attribute lookup each, defaults on the
# class), but torch's ``t.__dict__`` holds only what its user set (fastai and MONAI copy and replace it to carry a
# subclass's metadata). So ember.Tensor's ``__dict__`` is a view that hides these fields (``_tensor.py``), and ember's
# own code reaches the whole dict with ``fields(t)``, the instance dict's own descriptor.
fields = TensorImpl.__dict__['__dict__'].__get__

FIELDS = frozenset(['_a', '_dtype', '_device', '_keys', '_vc'] +
                   [k for k in vars(TensorImpl) if k.startswith('_') and not k.startswith('__') and
                    not callable(vars(TensorImpl)[k])])


def _meta_nbytes(a):
    if a.size == 0:
        return 0
    extent = sum((s - 1) * st for s, st in zip(a.shape, a.strides))
    return a.offset * a.itemsize + extent + a.itemsize


# --- construction ---------------------------------------------------------------

_tensor_class = None    # ember.Tensor, registered by ember/_tensor.py
# the keys a Tensor subclass's instances carry (NOTE [tensor subclasses]), registered by ember/_dispatch/subclasses.py
_subclass_keys = lambda cls: 0  # noqa: E731


def set_subclass_keys(fn):
    global _subclass_keys
    _subclass_keys = fn


def set_tensor_class(cls):
    """Register the Python class whose instances ``make_tensor``/``make_view`` create (a TensorImpl subclass)."""
    global _tensor_class
    assert issubclass(cls, TensorImpl)
    _tensor_class = cls


def make_tensor(a, dt, dev):
    """A tensor over the backend array ``a`` (a NumPy array on CPU, a MetaArray on meta) with ember dtype ``dt``
    on device ``dev``. The array is not copied; a Storage is made when a view first needs one."""
    T = _tensor_class
    t = object.__new__(T)
    t._a = a
    t._dtype = dt
    t._device = dev
    t._keys = dev._iface.keyset
    t._vc = [0]
    return t


def adopt(a, dev):
    """A tensor over a backend array (NumPy on CPU) whose dtype ember knows."""
    return make_tensor(a, from_numpy_dtype(a.dtype), dev)


_ndarray = np.ndarray


def make_view(self, shape, strides, offset, meta_backend=None):
    """A view of ``self`` with the given sizes, element strides and storage offset: it shares the storage and
    the version counter, and its ``_base`` is the tensor that owns the memory."""
    a = self._a
    if meta_backend or isinstance(a, MetaArray):
        isz = a.itemsize
        va = MetaArray(shape, a.dtype, tuple(s * isz for s in strides), offset)
    else:
        st = self._storage
        if st is None:
            st = self._storage_or_make()
        data = st.data
        isz = a.itemsize
        if offset * isz > data.nbytes and 0 in shape:
            offset = 0      # an empty view past the end of its storage (x[:, 5:] of an empty x): NumPy refuses the offset
        if data.__class__ is _ndarray:
            # (a list comprehension is a function call in Python 3.11: one- and two-dimensional views skip it)
            n = len(strides)
            bst = () if n == 0 else (strides[0] * isz,) if n == 1 else \
                (strides[0] * isz, strides[1] * isz) if n == 2 else [s * isz for s in strides]
            va = _ndarray(shape, a.dtype, data, offset * isz, bst)
        else:
            va = _xp_view(data, a.dtype, shape, strides, offset)
    t = object.__new__(_tensor_class)
    dev = self._device
    t._a = va
    t._dtype = self._dtype
    t._device = dev
    t._keys = dev._iface.keyset
    t._vc = self._vc
    t._storage = self._storage
    t._offset = offset
    t._strides = strides
    base = self._base
    if base is None:
        t._base = base = self
    else:
        t._base = base
    if not base._keys & AUTOGRAD_BIT:   # the base may gain history later: its views will too (NOTE [view history])
        note_view(base, t)
    return t


def note_view(base, view):
    """Remember ``view`` of ``base``, a base without history (NOTE [view history] in autograd/views.py)."""
    views = base._views
    if views is None:
        base._views = _ViewRefs(view)
    else:
        views.append(_weakref(view))
        if len(views) >= views.cap:
            views.prune()


class _ViewRefs(list):
    """Weak references to the views of a base made while it had no history (NOTE [view history] in
    autograd/views.py). Dead references are dropped when the list doubles past what was alive at the last pruning,
    so a base viewed again and again (a dataset's batches) keeps a short list."""
    __slots__ = ('cap',)

    def __init__(self, view):
        super().__init__((_weakref(view),))
        self.cap = 64

    def prune(self):
        self[:] = [r for r in self if r() is not None]
        self.cap = max(64, 2 * len(self))


def _xp_view(flat, dtype, shape, strides, offset):
    """A strided view of a buffer that is not a plain NumPy array: a NumPy subclass takes (buffer, offset,
    strides); CuPy's constructor takes a memory pointer, which carries the offset (``ndarray(shape, dtype,
    memptr, strides)``)."""
    isz = np.dtype(dtype).itemsize
    strides = tuple(s * isz for s in strides)
    if isinstance(flat, np.ndarray):
        return type(flat)(shape, dtype, flat.data, offset * isz, strides)
    return type(flat)(shape, dtype, flat.data + offset * isz, strides)
