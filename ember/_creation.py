"""Tensors from Python data and arrays: ``tensor``, ``as_tensor``, ``from_numpy``, ``from_dlpack``.

These are not operators (they read Python objects, not tensors), so they live
beside the Tensor class; everything they return is an ordinary tensor.
"""
from itertools import chain as _chain

import numpy as np

from ._core import dtype as D
from ._core.device import canonical, get_default_device, CPU
from ._core.tensor_impl import make_tensor, adopt
from ._tensor import Tensor
from ._warn import warnings


def _infer(data):
    if isinstance(data, np.ndarray):
        return data, D.from_numpy_dtype(data.dtype)
    if isinstance(data, Tensor):
        return np.asarray(data._host()), data._dtype
    seq = isinstance(data, (list, tuple))
    if seq and data and isinstance(data[0], np.ndarray):
        warnings.warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
                           "converting the list to a single numpy.ndarray with numpy.array() before converting to "
                           "a tensor.")
    if seq:
        seq_dtype, has_tensors = _sequence_dtype(data)
        if has_tensors:
            data = _tensors_as_scalars(data)
    try:
        a = np.array(data)
    except ValueError as e:
        if seq:
            _check_rectangular(data)
        raise ValueError(f"expected a rectangular sequence of numbers: {e}") from None
    if a.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(_first(data)).__name__}")
    if a.dtype.kind in 'US':
        raise TypeError(f"new(): invalid data type '{a.dtype.kind == 'U' and 'str' or 'bytes'}'")
    if a.dtype.kind not in 'fcbiu':
        return a, D.from_numpy_dtype(a.dtype)
    if seq:
        return a, seq_dtype or D.get_default_dtype()
    if a.ndim and hasattr(data, '__iter__'):
        return a, _sequence_dtype(data)[0] or D.get_default_dtype()
    return a, _scalar_dtype(data)


def _tensors_as_scalars(x):
    """Tensors inside a list are numbers to torch (``tensor([t(1.5), 2])``, ``LongTensor([t([3])])`` has shape
    (1,)): each becomes its one element (torch's error for more), keeping its dtype for the inference; lists
    without tensors are returned as they are."""
    types = set(map(type, x))
    if any(issubclass(c, Tensor) for c in types):
        return [_one_element(e) if isinstance(e, Tensor) else
                _tensors_as_scalars(e) if isinstance(e, (list, tuple)) else e for e in x]
    if list in types or tuple in types:
        new = [_tensors_as_scalars(e) if e.__class__ is list or e.__class__ is tuple else e for e in x]
        return x if all(n is o for n, o in zip(new, x)) else new
    return x


def _one_element(t):
    if t.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return np.asarray(t.item(), t._dtype.np)      # a 0-d array: its dtype still counts in the inference


def _scalar_dtype(x):
    """torch's type of one element of the data: Python numbers count as the default dtypes, NumPy scalars and
    arrays and tensors as their own."""
    c = x.__class__
    if c is float:
        return D.get_default_dtype()
    if c is int:
        return D.int64
    if c is bool:
        return D.bool_
    if c is complex:
        return D.default_complex()
    if isinstance(x, Tensor):
        return x._dtype
    return D.from_numpy_dtype(np.asarray(x).dtype)


_PYTHON_NUMBERS = {float: D.get_default_dtype, int: lambda: D.int64, bool: lambda: D.bool_,
                   complex: D.default_complex}


def _sequence_dtype(x):
    """torch's infer_scalar_type of a nested sequence: its elements' types promoted together, Python numbers
    counting as the default dtypes (None when it holds no element), and whether any element is a tensor. One
    pass of ``type`` per depth."""
    dt, level, tensors = None, x, False
    while True:     # (not ``while level``: the data may be an array or a tensor, whose truth is its value)
        deeper = False
        for c in set(map(type, level)):
            if issubclass(c, (list, tuple)):      # (a Size or a namedtuple too)
                deeper = True
                continue
            py = _PYTHON_NUMBERS.get(c)
            tensors = tensors or issubclass(c, Tensor)
            for d in [py()] if py is not None else [_scalar_dtype(e) for e in level if e.__class__ is c]:
                dt = d if dt is None else D._PROMOTE[dt, d]
        if not deeper:
            break
        level = list(_chain(*[e for e in level if isinstance(e, (list, tuple))]))
    return dt, tensors


def _check_rectangular(data):
    """torch's error for a ragged nested list: the first sequence whose length differs from the first
    sequence's at its depth."""
    shape, x = [], data
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        if not x:
            break
        x = x[0]

    def walk(x, dim):
        if dim >= len(shape):
            return
        if len(x) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})")
        for e in x:
            if isinstance(e, (list, tuple)):
                walk(e, dim + 1)
    walk(data, 0)


def _first(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested sequences, numbers, NumPy arrays).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype, ember.tensor([1.5]).dtype
    (ember.int64, ember.float32)
    """
    if isinstance(data, Tensor):
        from ._core import naming
        warn_copy_construct(f"{naming.shown}.tensor")
    return tensor_from(data, dtype, device, requires_grad)


def warn_copy_construct(rather_than):
    """torch's warning for ``tensor(t)`` / ``x.new_tensor(t)`` of a tensor ``t`` (at the user's line)."""
    warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                  "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                  f"{rather_than}(sourceTensor).", UserWarning)


def tensor_from(data, dtype=None, device=None, requires_grad=False):
    """``tensor``'s work, without its warning (``new_tensor`` warns in its own words)."""
    a, dt = _infer(data)
    dt = D.PYTHON_TYPES.get(dtype, dtype) or dt
    if isinstance(a, np.ndarray):
        a = D.through_float(a, dt.np)
    a = np.array(a, dtype=dt.np, copy=True, order='C')
    t = _place(make_tensor(a, dt, CPU), device)
    if requires_grad:
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _place(t, device):
    dev = canonical(device) if device is not None else get_default_device()
    return t if dev == CPU else t.to(dev)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with ``data`` when it is a tensor or array of the right dtype and device."""
    dtype = D.PYTHON_TYPES.get(dtype, dtype)
    if isinstance(data, Tensor):
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.np) and \
            (device is None or canonical(device) == CPU) and data.dtype != object:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(a):
    """A CPU tensor sharing memory with the NumPy array ``a`` (writes show on both sides).

    >>> import numpy as np, ember
    >>> a = np.zeros(2, np.float32); t = ember.from_numpy(a); t += 1; a
    array([1., 1.], dtype=float32)
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if any(s < 0 for s in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if type(a) is not np.ndarray:       # a subclass (np.memmap, np.matrix): the same memory as a plain array
        a = a.view(np.ndarray)
    return adopt(a, CPU)


def from_dlpack(ext):
    """A tensor sharing memory with any object that implements the DLPack protocol."""
    if isinstance(ext, Tensor):
        return ext
    dev_type, _ = ext.__dlpack_device__() if hasattr(ext, '__dlpack_device__') else (1, 0)
    if dev_type != 1:
        raise RuntimeError("from_dlpack: only CPU DLPack capsules are supported without a CUDA backend")
    if not hasattr(ext, '__dlpack__'):      # a bare capsule (torch.utils.dlpack.to_dlpack's): NumPy takes protocol objects
        ext = _Capsule(ext)
    return from_numpy(np.from_dlpack(ext))


class _Capsule:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)
