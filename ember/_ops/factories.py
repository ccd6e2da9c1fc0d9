"""Factory operators: no tensor inputs, so the ``device`` argument picks the backend.

Their meta functions resolve the dtype torch would choose (``full(2, 3)`` is
int64, ``arange(0.5)`` is the default float) and the shape; kernels receive the
resolved NumPy dtype in place of the ``dtype`` argument.
"""
import math

import numpy as _np

from .._core import dtype as D
from .._core.storage import as_size, contiguous_strides, format_strides, preserve_strides
from .._dispatch.ops_namespace import aten
from .registry import declare

_F = '*, ScalarType? dtype=None, Device? device=None'


def _size(size):
    if isinstance(size, int) or hasattr(size, '__index__') and not isinstance(size, (tuple, list)):
        size = (size,)
    size = tuple(as_size(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return size


def _float_or(dtype):
    return dtype if dtype is not None else D.get_default_dtype()


def _shape_meta(size, dtype=None, *rest):
    return _size(size), _float_or(dtype)


def _rand_meta(size, generator=None, dtype=None, device=None):
    return _size(size), _float_or(dtype)


def _full_meta(size, fill_value, dtype=None, device=None):
    return _size(size), dtype if dtype is not None else D.scalar_dtype(fill_value)


def arange_length(start, end, step):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return max(0, math.ceil((end - start) / step))


def _arange_meta(start, end=None, step=1, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) or getattr(v, 'dtype', None) in (D.float32, D.float64)
                                             for v in (start, end, step)) else D.int64
    if all(v.__class__ is not bool and isinstance(v, int) for v in (start, end, step)) and step > 0:
        n = (end - start + step - 1) // step      # integers (symbolic sizes too, NOTE [symbolic sizes])
        return (n if n > 0 else 0,), dtype
    return (arange_length(float(start), float(end), float(step)),), dtype


def _linspace_meta(start, end, steps, dtype=None, device=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return (int(steps),), _float_or(dtype)


def _eye_meta(n, m=None, dtype=None, device=None):
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    return (n, n if m is None else m), _float_or(dtype)


def _randint_meta(low, high, size, generator=None, dtype=None, device=None):
    from .random_ops import random_bounds       # torch's randint is random_(low, high) on a new tensor
    random_bounds(dtype or D.int64, low, high)
    return _size(size), dtype or D.int64


def _randperm_meta(n, generator=None, dtype=None, device=None):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return (int(n),), dtype or D.int64


def _empty_strided_meta(size, stride, dtype=None, device=None):
    size, stride = _size(size), tuple(as_size(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    return size, _float_or(dtype), stride


def _factory(schema, meta, **kw):
    return declare(schema, kind='factory', meta=meta, method=False, differentiable=False, **kw)


_factory(f'empty(SymInt[] size, {_F}) -> Tensor', _shape_meta)
_factory(f'zeros(SymInt[] size, {_F}) -> Tensor', _shape_meta)
_factory(f'ones(SymInt[] size, {_F}) -> Tensor', _shape_meta)
_factory(f'full(SymInt[] size, Scalar fill_value, {_F}) -> Tensor', _full_meta)
_factory(f'arange(Scalar start, Scalar? end=None, Scalar step=1, {_F}) -> Tensor', _arange_meta)
_factory(f'linspace(Scalar start, Scalar end, int steps, {_F}) -> Tensor', _linspace_meta)
_factory(f'eye(int n, int? m=None, {_F}) -> Tensor', _eye_meta)
_factory(f'empty_strided(SymInt[] size, SymInt[] stride, {_F}) -> Tensor', _empty_strided_meta)
_factory(f'rand(SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor',
         _rand_meta)
_factory(f'randn(SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor',
         _rand_meta)
_factory(f'randint.low(int low, int high, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, '
         f'Device? device=None) -> Tensor', _randint_meta, name='_randint')
_factory(f'randperm(int n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor',
         _randperm_meta)


def _like(factory):
    def fn(self, *args):
        *args, dtype, device, memory_format = args     # the dispatcher passes every schema argument positionally
        shape = tuple(self.shape)
        strides = _like_strides(self, shape, memory_format)
        make = getattr(aten, factory).default
        kw = dict(dtype=dtype or self.dtype, device=device if device is not None else self.device)
        if strides is None:
            return make(shape, *args, **kw)
        if factory == 'randn':
            # torch's randn_like is empty_like(...).normal_(): on a non-contiguous result normal_ draws element by
            # element (not its vectorised 16-at-a-time fill), which ember's normal_ repeats for such a tensor
            return aten.empty_strided.default(shape, strides, **kw).normal_()
        # the layout torch's *_like gives (NOTE [output strides]): made contiguous in memory order, then viewed
        # with those strides, so a random factory's k-th draw lands in the k-th memory element, as torch's fills it
        perm = sorted(range(len(shape)), key=lambda d: -strides[d])
        return make(tuple(shape[d] for d in perm), *args, **kw).as_strided(shape, strides)
    fn.__qualname__ = f'{factory}_like'
    return fn


def _like_strides(self, shape, memory_format):
    """The strides of a *_like result (NOTE [output strides]), or None for a contiguous one."""
    if memory_format is None or memory_format == 'preserve_format':
        a = self._a
        if a.__class__ is _np.ndarray and a.flags.c_contiguous:     # the usual call: one flag read
            return None
        strides = preserve_strides(shape, self.stride()) if hasattr(a, 'strides') else None
    else:
        strides = format_strides(shape, memory_format)
    return None if strides is None or strides == contiguous_strides(shape) else strides


_L = '*, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None'
# CompositeExplicitAutograd, as torch's: a subclass's __torch_dispatch__ sees ones_like itself (the seed of backward);
# the random ones stay decompositions into their factories, which vmap's randomness rules batch
for _n in ('empty', 'zeros', 'ones'):
    declare(f'{_n}_like(Tensor self, {_L}) -> Tensor', explicit=_like(_n), method=False, differentiable=False)
for _n in ('rand', 'randn'):
    declare(f'{_n}_like(Tensor self, {_L}) -> Tensor', composite=_like(_n), method=False, differentiable=False)
declare(f'full_like(Tensor self, Scalar fill_value, {_L}) -> Tensor', explicit=_like('full'), method=False,
        differentiable=False)
