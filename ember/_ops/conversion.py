"""Copies and conversions: ``_to_copy`` (dtype and device moves), ``copy_``, ``clone``, ``contiguous``.

Moving between devices is the one place arrays cross backends, so ``_to_copy``
and ``copy_`` are written once here over each device's ``to_host``/``from_host``
(DeviceInterface) instead of a kernel per pair of devices.
"""
import numpy as np

from .._core.storage import MetaArray, preserve_strides
from .._core.device import canonical
from .._core.dtype import through_float
from . import adapters
from .._core.tensor_impl import make_tensor
from .._warn import warn_once
from .pointwise import broadcast_shapes
from .registry import declare
from ..autograd.kernels import cast_grad
from .overloads import overloads


def _move(arr, src_dev, dst_dev):
    if src_dev is dst_dev or src_dev == dst_dev:
        return arr
    if isinstance(arr, MetaArray):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if dst_dev.type == 'meta':     # no data to move; the layout is _to_copy's
        return MetaArray(arr.shape, arr.dtype)
    return dst_dev._iface.from_host(src_dev._iface.to_host(arr), dst_dev.index)


def _to_copy(self, dtype=None, device=None, non_blocking=False):
    dev = canonical(device) if device is not None else self._device
    dt = dtype or self._dtype
    src = self._a
    a = _move(src, self._device, dev)
    strides = _preserved(self)
    if isinstance(a, MetaArray):
        a = MetaArray(a.shape, dt.np, None if strides is None else tuple(st * dt.itemsize for st in strides))
    elif a is src or a.dtype != dt.np:
        a = _cast(a, dt.np)       # always a new array: _to_copy never aliases its input
    if strides is not None and not isinstance(a, MetaArray) and a.size:
        a = adapters.laid_out(a, strides, dev)
    return make_tensor(a, dt, dev)


def _preserved(t):
    """The strides of a preserve_format copy of ``t`` (NOTE [output strides]), or None for contiguous: a
    C-contiguous array's copy is contiguous already (torch would keep the strides of its size-1 dimensions)."""
    a = t._a
    if not hasattr(a, 'strides') or getattr(a, 'flags', None) is not None and a.flags.c_contiguous:
        return None
    return preserve_strides(tuple(a.shape), t.stride())


def _cast(a, dt, copy=True):
    if a.dtype.kind == 'c' and dt.kind not in 'cb':     # torch warns once per process, at the user's line
        warn_once("Casting complex values to real discards the imaginary part", UserWarning)
        a = a.real
    if dt.itemsize == 2:        # float16/bfloat16 from a double: through float32, as torch's
        a = through_float(a, dt)
    if a.dtype.kind in 'fc' and dt.kind in 'iu':
        with np.errstate(invalid='ignore'):     # inf and NaN become integers as C casts them, silently as in torch
            return a.astype(dt, copy=copy)
    return a.astype(dt, copy=copy)


def _copy_(self, src, non_blocking=False):
    shape = self._a.shape
    if src._a.shape != shape and src._a.ndim:      # (a 0-d source broadcasts to anything)
        b = broadcast_shapes(shape, src._a.shape)
        if b != tuple(shape):
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(b)}")
    adapters.check_no_internal_overlap(self)
    if src._vc is self._vc:         # shared memory (NOTE [memory overlap])
        adapters.check_no_partial_overlap(self, (src,))
    a = _move(src._a, src._device, self._device)
    if not isinstance(self._a, MetaArray):
        self._a[...] = _cast(a, self._a.dtype, copy=False)     # the array's assignment broadcasts (checked above)
    self._vc[0] += 1
    return self


from .._core.storage import format_strides  # noqa: E402


def _clone_meta(self, memory_format=None):
    """preserve_format keeps a dense (non-overlapping, gap-free) layout and lays out any other densely in its
    order, as torch does (NOTE [output strides]); channels_last(_3d) lays the channels innermost; else
    contiguous."""
    shape = tuple(self._a.shape)
    fmt = format_strides(shape, memory_format)
    if fmt is not None:
        return shape, self._dtype, fmt
    if memory_format == 'contiguous_format' or not hasattr(self._a, 'strides'):
        return shape, self._dtype
    return shape, self._dtype, preserve_strides(shape, self.stride())


declare('_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False) -> Tensor', forward='linear',
        explicit=_to_copy, method=False,
        derivatives={'self': lambda grad, self_dtype, self_device: cast_grad(grad, self_dtype, self_device)})
# 'cross_device': src may live on any device (the kernel moves it), as torch's copy_ allows
declare('copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)', explicit=_copy_, tags=('cross_device',),
        derivatives={'src': lambda grad, src: cast_grad(grad, src.dtype, src.device)}, function=False, name='copy_')
declare('clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor', forward='linear', meta=_clone_meta,
        derivatives={'self': lambda grad: grad})
declare('contiguous(Tensor self, *, MemoryFormat memory_format=contiguous_format) -> Tensor', function=False,
        composite=lambda self, memory_format='contiguous_format':
            self if self.is_contiguous(memory_format=memory_format) else self.clone(memory_format=memory_format))


def _fill_meta(self, value):
    if hasattr(value, 'dim') and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                           "dimensions.")
    return tuple(self._a.shape), self._dtype


# every element gets the same value, so torch lets fill_ write into an expanded tensor (tag 'overlap_ok')
declare('fill.Scalar(Tensor self, Scalar value) -> Tensor', forward='self_adjoint', meta=_fill_meta, inplace=True, function=False,
        tags=('overlap_ok',), derivatives={'self': lambda grad: grad * 0}, grad_name='FillBackward2')
# torch's fill_.Tensor: the value is a 0-d tensor (``x.fill_(t.max())``, ``input.fill_(word_idx)``); the gradient
# flows to it as the sum of the output's gradient
declare('fill.Tensor(Tensor self, Tensor value) -> Tensor', forward='linear', meta=_fill_meta, inplace=True, function=False,
        tags=('overlap_ok',), derivatives={'self': lambda grad: grad * 0, 'value': lambda grad: grad.sum()},
        grad_name='FillBackward3')
overloads('fill', 'fill.Tensor', 'fill.Scalar', method=False)      # torch.fill and Tensor.fill_; no Tensor.fill


def _resize_output_(self, size, device):
    if tuple(self.shape) != tuple(size):
        adapters.resize_out(self, tuple(size))
    return self


# torch's out= helper: resize an output that has the wrong shape (warning when it held elements), for the
# hand-written functions that write their results into out= tensors
declare('_resize_output_(Tensor(a!) self, SymInt[] size, Device device) -> Tensor(a!)', explicit=_resize_output_,
        method=False, function=False, differentiable=False)


declare('zero_(Tensor(a!) self) -> Tensor(a!)', composite=lambda self: self.fill_(0), function=False)


def _local_scalar_dense(self):
    return self._host().reshape(()).item()


# Tensor.item() of a tensor without data of its own (a wrapper subclass, NOTE [tensor subclasses]) asks this operator,
# so its __torch_dispatch__ answers; an ordinary tensor's item() reads its array without it
declare('_local_scalar_dense(Tensor self) -> Scalar', explicit=_local_scalar_dense, method=False, function=False,
        differentiable=False)
