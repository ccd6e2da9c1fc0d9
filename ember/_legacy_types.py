"""torch's legacy tensor types: ``FloatTensor``, ``LongTensor``, ... and the ``Tensor(...)`` constructor forms.

Each legacy type is a class of the metaclass `tensortype` (torch's name), not a
subclass of Tensor: calling it makes a CPU tensor of its dtype
(``FloatTensor(2, 3)`` uninitialised, ``FloatTensor([1, 2])`` or
``FloatTensor(ndarray)`` converted), ``isinstance(x, FloatTensor)`` is true of
any CPU float32 tensor (Parameters included), and ``x.type(FloatTensor)`` or
``x.type('torch.FloatTensor')`` converts to its dtype. This module also holds
the string names ``x.type()`` answers, so both directions use one table.

>>> import ember
>>> ember.FloatTensor([1, 2]).dtype, isinstance(ember.ones(2), ember.FloatTensor)
(ember.float32, True)
"""
import numpy as np

from ._core import dtype as D, naming

# (legacy name, dtype): the order is torch's
NAMES = (('FloatTensor', D.float32), ('DoubleTensor', D.float64), ('HalfTensor', D.float16),
         ('BFloat16Tensor', D.bfloat16), ('LongTensor', D.int64), ('IntTensor', D.int32),
         ('ShortTensor', D.int16), ('CharTensor', D.int8), ('ByteTensor', D.uint8), ('BoolTensor', D.bool_),
         ('ComplexFloatTensor', D.complex64), ('ComplexDoubleTensor', D.complex128))
_BY_DTYPE = {dt: name for name, dt in NAMES}
_BY_NAME = {name: dt for name, dt in NAMES}


def type_name(dtype):
    """'ember.FloatTensor' for float32: what ``x.type()`` answers (ember names itself as its dtypes do)."""
    return f'{naming.shown}.{_BY_DTYPE.get(dtype, dtype.name)}'


def parse_type(spec):
    """The dtype a ``x.type(spec)`` argument names: a dtype, a legacy type, or its string."""
    if isinstance(spec, D.dtype):
        return spec
    if isinstance(spec, tensortype):
        return spec.dtype
    from ._tensor import Tensor
    if spec is Tensor:          # the base class names the default type, as torch.Tensor does
        return D.get_default_dtype()
    if isinstance(spec, str):
        mod, _, name = spec.rpartition('.')
        if mod in ('torch', 'ember') and name in _BY_NAME:
            return _BY_NAME[name]
        if mod in ('torch.cuda', 'ember.cuda') and name in _BY_NAME:
            raise AssertionError("Torch not compiled with CUDA enabled")
        raise ValueError(f"invalid type: '{spec}'")
    raise TypeError("dtype must be a type, str, or dtype object")


def construct(dtype, args, kwargs, keep_tensor_dtype=False):
    """``Tensor(*args)`` / ``FloatTensor(*args)``: sizes -> uninitialised, a sequence or array -> a copy, a tensor -> alias."""
    from . import _creation, _functions
    from ._tensor import Tensor, Size
    device = kwargs.pop('device', None)
    if device is not None and str(device) != 'cpu':
        from ._core.device import device as _dev
        _dev(device)._iface.keyset      # raises torch's error for an absent device
    if 'size' in kwargs:
        args = (Size(kwargs.pop('size')),)
    if kwargs:
        raise TypeError(f"new() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if not args:
        return _functions.empty(0, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t.dtype is not dtype and not keep_tensor_dtype:
            raise TypeError(f"expected {_BY_DTYPE.get(dtype)} dtype {dtype} (got {t.dtype})")
        return t.detach()
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return _functions.empty(*[int(a) for a in args], dtype=dtype)
    if len(args) == 1 and isinstance(args[0], Size):
        return _functions.empty(tuple(args[0]), dtype=dtype)
    if len(args) == 1 and (isinstance(args[0], (list, tuple, range, np.ndarray))):     # any sequence, as torch's
        return _creation.tensor(args[0], dtype=dtype)
    raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")


class tensortype(type):
    """The metaclass of the legacy types: calls construct, ``isinstance`` compares dtype and device."""

    def __call__(cls, *args, **kwargs):
        return construct(cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == 'cpu'

    def __repr__(cls):
        return f"<class 'ember.{cls.__name__}'>"


LEGACY = {name: tensortype(name, (), {'dtype': dt, 'is_cuda': False, 'is_sparse': False, '__module__': 'ember'})
          for name, dt in NAMES}


class cudatensortype(tensortype):
    """``torch.cuda.FloatTensor`` and its kin: a tensor of the dtype on a CUDA device is an instance; calling one
    makes the tensor on the current CUDA device (torch's error without one)."""

    def __call__(cls, *args, **kwargs):
        from ._core.device import device as _dev
        from ._core import naming
        try:
            _dev('cuda')._iface.keyset      # no CUDA device: torch's legacy types raise a TypeError of their own
        except AssertionError:
            raise TypeError(f"type {naming.shown}.cuda.{cls.__name__} not available. Torch not compiled with CUDA "
                            "enabled.") from None
        return construct(cls.dtype, args, kwargs).to('cuda')

    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == 'cuda'

    def __repr__(cls):
        return f"<class 'ember.cuda.{cls.__name__}'>"


CUDA_LEGACY = {name: cudatensortype(name, (), {'dtype': dt, 'is_cuda': True, 'is_sparse': False,
                                                '__module__': 'ember.cuda'}) for name, dt in NAMES}
