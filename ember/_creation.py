"""Tensors from Python data and arrays: ``tensor``, ``as_tensor``, ``from_numpy``, ``from_dlpack``.

These are not operators (they read Python objects, not tensors), so they live
beside the Tensor class; everything they return is an ordinary tensor.
"""
import numpy as np

from ._core import dtype as D
from ._core.device import canonical, get_default_device, CPU
from ._core.tensor_impl import make_tensor, adopt
from ._tensor import Tensor


def _infer(data):
    if isinstance(data, np.ndarray):
        return data, D.from_numpy_dtype(data.dtype)
    if isinstance(data, Tensor):
        return np.asarray(data._host()), data._dtype
    try:
        a = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected a rectangular sequence of numbers: {e}") from None
    if a.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(_first(data)).__name__}")
    if a.dtype.kind == 'f':
        return a, (D.from_numpy_dtype(a.dtype) if _has_tensor_or_np(data) else D.get_default_dtype())
    if a.dtype.kind == 'c':
        return a, (D.from_numpy_dtype(a.dtype) if _has_tensor_or_np(data) else D.default_complex())
    if a.dtype.kind in 'iu' and not _has_tensor_or_np(data):
        return a, D.int64
    if a.dtype.kind == 'U' or a.dtype.kind == 'S':
        raise TypeError(f"new(): invalid data type '{a.dtype.kind == 'U' and 'str' or 'bytes'}'")
    return a, D.from_numpy_dtype(a.dtype)


def _first(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x


def _has_tensor_or_np(x):
    f = _first(x)
    return isinstance(f, (Tensor, np.generic, np.ndarray))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested sequences, numbers, NumPy arrays).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]]).dtype, ember.tensor([1.5]).dtype
    (ember.int64, ember.float32)
    """
    if isinstance(data, Tensor):
        from ember._warn import warnings
        from ._core import naming
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                      "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                      f"{naming.shown}.tensor(sourceTensor).", UserWarning, stacklevel=2)
    a, dt = _infer(data)
    dt = D.PYTHON_TYPES.get(dtype, dtype) or dt
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
