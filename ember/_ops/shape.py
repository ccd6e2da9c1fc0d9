"""Joining, reordering and shape operators: cat, stack, flip, roll, repeat, tril/triu, pad, ...

Also the ``*_scatter`` operators that are the derivatives of views
(``slice_scatter`` is what ``slice``'s backward writes into), ``_strided_index``
(storage positions of a strided layout, used by ``as_strided``'s backward)
and ``unfold_backward``.

Meta functions here hold every shape check and error message; the CPU kernels
in ``_backends/cpu/shape.py`` assume valid input. Derivatives are written in
ember operators, so every formula differentiates again.
"""
import math

from .._core import dtype as D
from .._core.dtype import scalar_name as _tname
from .._core.tensor_impl import TensorImpl
from .._core.storage import as_size, follows, cat_strides, contiguous_strides, with_layout
from .registry import declare
from .overloads import overloads
from .views import wrap_dim, view_strides, _select_meta, _slice_meta, _diagonal_meta
from .._dispatch.ops_namespace import aten






def _lst(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _zeros(sizes, like):
    return aten.zeros.default(tuple(sizes), dtype=like.dtype, device=like.device)


# --- cat / stack -------------------------------------------------------------------

def _skipped(t):
    """torch's legacy rule: 1-D empty tensors take no part in cat's shape checks."""
    return t._a.ndim == 1 and t._a.shape[0] == 0


def _cat_meta(tensors, dim=0):
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    shape = tensors[0]._a.shape
    nd = len(shape)
    if nd > 1 or nd == 1 and shape[0]:      # fast path: inputs of one rank, equal outside ``dim``
        d = dim if 0 <= dim < nd else wrap_dim(dim, nd)
        rest, dt, total = shape[:d] + shape[d + 1:], tensors[0]._dtype, 0
        for t in tensors:
            s = t._a.shape
            if len(s) != nd or s[:d] + s[d + 1:] != rest:
                break                       # the checks below say what is wrong (or skip a 1-D empty input)
            total += s[d]
            if t._dtype is not dt:
                dt = D._PROMOTE[dt, t._dtype]
        else:
            return _cat_layout(tensors, shape[:d] + (total,) + shape[d + 1:], dt)
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        dt = D._PROMOTE[dt, t._dtype]
    for i, t in enumerate(tensors):
        if t._a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((t for t in tensors if not _skipped(t)), None)
    if ref is None:
        wrap_dim(dim, 1)
        return (sum(t._a.shape[0] for t in tensors),), dt
    shape = ref._a.shape
    d = wrap_dim(dim, len(shape))
    total = 0
    for i, t in enumerate(tensors):
        if _skipped(t):
            continue
        s = t._a.shape
        if len(s) != len(shape):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shape)} and {len(s)}")
        for k in range(len(s)):
            if k != d and s[k] != shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {shape[k]} "
                                   f"but got size {s[k]} for tensor number {i} in the list.")
        total += s[d]
    return _cat_layout(tensors, shape[:d] + (total,) + shape[d + 1:], dt)


def _cat_layout(tensors, out, dt):
    # the kernel's NumPy result keeps its inputs' common order, which is torch's only for channels_last inputs
    # (NOTE [output strides]): strides are given unless every input is C-contiguous outside 4-D/5-D, where the
    # result is C-ordered and no memory format can be suggested (the common case, spared the strides' cost)
    if len(out) not in (4, 5):
        return (out, dt) if _c_contiguous_arrays(tensors) else (out, dt, contiguous_strides(out))
    return out, dt, cat_strides(out, [(t._a.shape, t.stride()) for t in tensors]) or contiguous_strides(out)


def _c_contiguous_arrays(tensors):
    for t in tensors:
        flags = getattr(t._a, 'flags', None)         # a MetaArray has none: its strides are given
        if flags is None or not flags.c_contiguous:
            return False
    return True


def _cat_backward(grad, tensors_sizes, dim):
    """Split ``grad`` back into the inputs' pieces (skipped 1-D empty inputs get empty gradients)."""
    ref = next((s for s in tensors_sizes if not (len(s) == 1 and s[0] == 0)), None)
    if ref is None:
        return [grad.narrow(0, 0, 0) for _ in tensors_sizes]
    d = wrap_dim(dim, len(ref))
    out, start = [], 0
    for s in tensors_sizes:
        if len(s) == 1 and s[0] == 0 and len(ref) != 1:
            out.append(_zeros(s, grad))
            continue
        out.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return out


declare('cat(Tensor[] tensors, int dim=0) -> Tensor', forward='linear', meta=_cat_meta, out=True, method=False,
        derivatives={'tensors': lambda grad, tensors_sizes, dim: _cat_backward(grad, tensors_sizes, dim)})


def _concat(tensors, dim=0):
    return aten.cat.default(tensors, dim)


declare('concat(Tensor[] tensors, int dim=0) -> Tensor', composite=_concat, method=False)
declare('concatenate(Tensor[] tensors, int dim=0) -> Tensor', composite=_concat, method=False)


def _stack_meta(tensors, dim=0):
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._a.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._a.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_lst(s0)} at entry 0 and "
                               f"{_lst(t._a.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        dt = D._PROMOTE[dt, t._dtype]
    shape = s0[:d] + (len(tensors),) + s0[d:]
    if len(shape) not in (4, 5) and (d == len(s0) or len(s0) not in (4, 5)):
        return shape, dt        # no channels_last input or output: the kernel's C order is torch's layout
    if d == len(s0):    # torch cats the inputs unsqueezed at the end (the new dimension's stride is 1)
        st = cat_strides(shape, [(s0 + (1,), t.stride() + (1,)) for t in tensors])
        return (shape, dt) if st is None else (shape, dt, st)
    # along an existing dimension torch stacks by cat and a view that splits it: cat's layout, viewed
    joined = s0[:d] + (len(tensors) * s0[d],) + s0[d + 1:]
    st = cat_strides(joined, [(t._a.shape, t.stride()) for t in tensors])
    return (shape, dt) if st is None else (shape, dt, view_strides(joined, st, shape))


declare('stack(Tensor[] tensors, int dim=0) -> Tensor', forward='linear', meta=_stack_meta, out=True, method=False,
        derivatives={'tensors': lambda grad, dim: list(grad.unbind(dim))})


# --- scatters that are the derivatives of views ------------------------------------

def _check_src(src_shape, view_shape):
    if tuple(src_shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {_lst(src_shape)}, "
                           f"slice size = {_lst(view_shape)}")


def _slice_scatter_meta(self, src, dim=0, start=None, end=None, step=1):
    shape, _, _ = _slice_meta(self, dim, start, end, step)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


def _select_scatter_meta(self, src, dim, index):
    if self._a.ndim:
        d = wrap_dim(dim, self._a.ndim)
        n = self._a.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {_lst(self._a.shape)} at "
                             f"dimension {d}")
    shape, _, _ = _select_meta(self, dim, index)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


def _diagonal_scatter_meta(self, src, offset=0, dim1=0, dim2=1):
    shape, _, _ = _diagonal_meta(self, offset, dim1, dim2)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


declare('slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) '
        '-> Tensor', forward='linear', meta=_slice_scatter_meta, out=True,
        derivatives={'self': lambda grad, src_sizes, dim, start, end, step:
                     grad.slice_scatter(_zeros(src_sizes, grad), dim, start, end, step),
                     'src': lambda grad, dim, start, end, step: grad.slice(dim, start, end, step)})
declare('select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor', forward='linear', meta=_select_scatter_meta,
        out=True,
        derivatives={'self': lambda grad, src_sizes, dim, index: grad.select_scatter(_zeros(src_sizes, grad), dim, index),
                     'src': lambda grad, dim, index: grad.select(dim, index)})
declare('diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor', forward='linear',
        meta=_diagonal_scatter_meta, out=True,
        derivatives={'self': lambda grad, src_sizes, offset, dim1, dim2:
                     grad.diagonal_scatter(_zeros(src_sizes, grad), offset, dim1, dim2),
                     'src': lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2)})


def _strided_index_meta(size, stride, offset, device=None):
    n = 1
    for s in size:
        n *= int(s)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    return (n,), D.int64


declare('_strided_index(SymInt[] size, SymInt[] stride, SymInt offset, *, Device? device=None) -> Tensor',
        kind='factory', meta=_strided_index_meta, method=False, differentiable=False)


def _unfold_backward_meta(grad_in, input_sizes, dim, size, step):
    sizes = tuple(as_size(s) for s in input_sizes)
    d = wrap_dim(dim, len(sizes)) if sizes else 0
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return sizes, grad_in._dtype


declare('unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor', forward='linear',
        meta=_unfold_backward_meta, method=False,
        derivatives={'grad_in': lambda grad, dim, size, step: grad.unfold(dim, size, step)})


# --- reordering: flip, roll, rot90 ------------------------------------------------------

def _flip_meta(self, dims):
    n = self._a.ndim
    seen = set()
    for d in dims:
        w = wrap_dim(d, n)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return follows(self, tuple(self._a.shape), self._dtype)


declare('flip(Tensor self, int[] dims) -> Tensor', forward='linear', meta=_flip_meta, out=True,
        derivatives={'self': lambda grad, dims: grad.flip(dims)})


def _fliplr(self):
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip([1])


def _flipud(self):
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip([0])


declare('fliplr(Tensor self) -> Tensor', composite=_fliplr)
declare('flipud(Tensor self) -> Tensor', composite=_flipud)


def _ints(v):
    return (as_size(v),) if not isinstance(v, (list, tuple)) else tuple(as_size(x) for x in v)


def _roll_meta(self, shifts, dims=()):
    shifts, dims = _ints(shifts), _ints(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if (dims or len(shifts) != 1) and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    for d in dims:
        wrap_dim(d, self._a.ndim)
    return tuple(self._a.shape), self._dtype


declare('roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor', forward='linear', meta=_roll_meta, out=True,
        derivatives={'self': lambda grad, shifts, dims: grad.roll(tuple(-s for s in _ints(shifts)), dims)})


def _rot90(self, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = self.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n), wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.clone()


declare('rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor', composite=_rot90)


# --- repeat, tile, repeat_interleave ------------------------------------------------------

def _repeat_meta(self, repeats):
    repeats = _ints(repeats)
    shape = tuple(self._a.shape)
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = (1,) * (len(repeats) - len(shape)) + shape
    out = tuple(r * s for r, s in zip(repeats, padded))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {_lst(out)}")
    return out, self._dtype


def _repeat_backward(grad, self_sizes, repeats):
    """Sum the gradient over the tiled copies: view it as (r0, s0, r1, s1, ...) and sum the r axes."""
    repeats = _ints(repeats)
    sizes = (1,) * (len(repeats) - len(self_sizes)) + tuple(self_sizes)
    split = []
    for r, s in zip(repeats, sizes):
        split += [r, s]
    if not split:
        return grad
    g = grad.reshape(tuple(split)).sum(list(range(0, len(split), 2)))
    return g.reshape(tuple(self_sizes))


declare('repeat(Tensor self, SymInt[] repeats) -> Tensor', forward='linear', meta=_repeat_meta, function=False,
        derivatives={'self': _repeat_backward})


def _tile(self, dims):
    dims = _ints(dims)
    if len(dims) < self.dim():
        dims = (1,) * (self.dim() - len(dims)) + dims
    return self.repeat(dims)


declare('tile(Tensor self, SymInt[] dims) -> Tensor', composite=_tile)


def _repeats_meta(repeats, output_size=None):
    if repeats._a.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if output_size is not None:
        return (int(output_size),), repeats._dtype
    from .indexing import _no_meta
    _no_meta('repeat_interleave.Tensor', repeats)
    return None


declare('repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor', meta=_repeats_meta,
        method=False, differentiable=False)


def _repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    if dim is None:
        self, dim = self.reshape(-1), 0
    d = wrap_dim(dim, self.dim())
    n = self.shape[d] if self.dim() else 1
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
        repeats = repeats.reshape(1).expand((n,))
    elif repeats.dim() == 1 and repeats.shape[0] != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
    idx = aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return self.index_select(d, idx)


def _repeat_interleave_int(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    if dim is None:
        self, dim = self.reshape(-1), 0
    # a copy, never a view: with repeats 1 (or a dim of size 1) the expanded reshape is still a view of self,
    # which contiguous() would hand back, and torch's result never aliases its input
    if self.dim() == 0:
        return self.reshape(1).expand((repeats,)).clone(memory_format='contiguous_format')
    d = wrap_dim(dim, self.dim())
    shape = tuple(self.shape)
    x = self.unsqueeze(d + 1).expand(shape[:d + 1] + (repeats,) + shape[d + 1:])
    return x.reshape(shape[:d] + (shape[d] * repeats,) + shape[d + 1:]).clone(memory_format='contiguous_format')


declare('repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) '
        '-> Tensor', composite=_repeat_interleave_tensor)
declare('repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) '
        '-> Tensor', composite=_repeat_interleave_int)
overloads('repeat_interleave', 'repeat_interleave.self_Tensor', 'repeat_interleave.self_int',
          'repeat_interleave.Tensor')


# --- triangles ----------------------------------------------------------------------------

def _tri_meta(name):
    def meta(self, diagonal=0):
        if self._a.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return tuple(self._a.shape), self._dtype
    return meta


declare('tril(Tensor self, int diagonal=0) -> Tensor', forward='linear', meta=_tri_meta('tril'), inplace=True, out=True,
        derivatives={'self': lambda grad, diagonal: grad.tril(diagonal)})
declare('triu(Tensor self, int diagonal=0) -> Tensor', forward='linear', meta=_tri_meta('triu'), inplace=True, out=True,
        derivatives={'self': lambda grad, diagonal: grad.triu(diagonal)})


def _tri_count(row, col, offset, lower):
    """Number of entries in the lower (or upper) triangle of a row x col matrix (torch's get_tril_size)."""
    import numpy as np
    i = np.arange(row)
    if lower:
        return int(np.clip(i + offset + 1, 0, col).sum()) if row and col else 0
    return int(np.clip(col - (i + offset), 0, col).sum()) if row and col else 0


def _tri_indices_meta(lower):
    def meta(row, col, offset=0, dtype=None, device=None):
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dt = D.int64 if dtype in (None, 'long') else dtype
        if dt not in (D.int64, D.int32):
            raise RuntimeError(f"\"tril_indices\" not implemented for '{_tname(dt)}'")
        return (2, _tri_count(row, col, offset, lower)), dt
    return meta


declare('tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Device? device=None) -> Tensor',
        kind='factory', meta=_tri_indices_meta(True), method=False, differentiable=False)
declare('triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Device? device=None) -> Tensor',
        kind='factory', meta=_tri_indices_meta(False), method=False, differentiable=False)


# --- broadcasting and stacking composites ------------------------------------------------

def _broadcast_tensors(tensors):
    from .pointwise import broadcast_shapes
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors]) if tensors else ()
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


declare('broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)', composite=lambda self, size: self.expand(size))
declare('broadcast_tensors(Tensor[] tensors) -> Tensor[]', composite=_broadcast_tensors, method=False)


def atleast_nd(t, n):
    if t.dim() >= n:
        return t
    if n == 1 or t.dim() == 0:
        return t.reshape((1,) * n) if t.dim() == 0 else t
    if n == 2:
        return t.unsqueeze(0)
    return t.unsqueeze(0).unsqueeze(-1) if t.dim() == 1 else t.unsqueeze(-1)


for _n in (1, 2, 3):      # torch's aten::atleast_Nd; ember.atleast_Nd (_python_functions/shape.py) adds the varargs form
    declare(f'atleast_{_n}d(Tensor self) -> Tensor', composite=lambda self, _n=_n: atleast_nd(self, _n),
            method=False, function=False)


def _hstack(tensors):
    ts = [atleast_nd(t, 1) for t in tensors]
    return aten.cat.default(ts, 0 if ts and ts[0].dim() == 1 else 1)


def _column_stack(tensors):
    ts = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return aten.cat.default(ts, 1)


declare('hstack(Tensor[] tensors) -> Tensor', composite=_hstack, out=True, method=False)
declare('vstack(Tensor[] tensors) -> Tensor', composite=lambda tensors: aten.cat.default([atleast_nd(t, 2) for t in tensors], 0),
        out=True, method=False)
declare('row_stack(Tensor[] tensors) -> Tensor', composite=lambda tensors: aten.vstack.default(tensors), method=False)
declare('dstack(Tensor[] tensors) -> Tensor', composite=lambda tensors: aten.cat.default([atleast_nd(t, 3) for t in tensors], 2),
        out=True, method=False)
declare('column_stack(Tensor[] tensors) -> Tensor', composite=_column_stack, out=True, method=False)


def _cartesian_prod(tensors):
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_lst(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    for t in tensors[1:]:       # torch's goes through meshgrid, which refuses mixed dtypes and devices
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    n = len(tensors)
    shape = tuple(t.shape[0] for t in tensors)
    grids = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(shape) for i, t in enumerate(tensors)]
    return aten.stack.default([g.reshape(-1) for g in grids], 1)


declare('cartesian_prod(Tensor[] tensors) -> Tensor', composite=_cartesian_prod, method=False)


def _block_diag(tensors):
    ts = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        ts.append(t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1) if t.dim() == 0 else t)
    if not ts:
        return aten.zeros.default((1, 0))
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = D._PROMOTE[dt, t.dtype]
    cols = sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        c = t.shape[1]
        rows.append(aten.constant_pad_nd.default(t.to(dt), [left, cols - left - c], 0))
        left += c
    return aten.cat.default(rows, 0)


declare('block_diag(Tensor[] tensors) -> Tensor', composite=_block_diag, method=False)


# --- padding -------------------------------------------------------------------------------

def _constant_pad_meta(self, pad, value=0):
    pad = _ints(pad)
    shape = tuple(self._a.shape)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) > 2 * len(shape):
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)} while the input has {len(shape)} dimensions.")
    out = list(shape)
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        n = shape[d] + pad[2 * i] + pad[2 * i + 1]
        if n < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {pad[2 * i]} and {pad[2 * i + 1]} "
                               f"resulted in a negative output size, which is invalid. Check dimension {d} of your "
                               f"input.")
        out[d] = n
    return with_layout((tuple(out), self._dtype), self)      # NOTE [channels_last outputs]


declare('constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor',
        forward=lambda self_t, pad: aten.constant_pad_nd.default(self_t, pad, 0), meta=_constant_pad_meta, method=False,
        derivatives={'self': lambda grad, pad: aten.constant_pad_nd.default(grad, [-p for p in _ints(pad)], 0)})

_PAD_HELP = ("Supported combinations for non-constant padding:\n"
             "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
             "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
             "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_index(n, left, right, mode):
    """Positions of ``input`` that make up each padded position along one dimension."""
    import numpy as np
    j = np.arange(-left, n + right)
    if mode == 'reflect':
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == 'replicate':
        j = np.clip(j, 0, n - 1)
    else:       # circular: crop first, then wrap around what is left (torch's _pad_circular)
        s, m = max(-left, 0), n + min(left, 0) + min(right, 0)
        j = s + (np.arange(-max(left, 0), m + max(right, 0)) % m)
    return j


def _pad_checks(shape, pad, mode):
    """torch's checks of a reflect, replicate or circular padding of the last len(pad) // 2 dimensions."""
    k, nd = len(pad) // 2, len(shape)
    if mode != 'circular' and (not k + 1 <= nd <= k + 2 or 0 in (shape[1:] if nd == k + 2 else shape)):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_lst(shape)}")
    for i in range(k):
        d = nd - 1 - i
        n, l, r = shape[d], pad[2 * i], pad[2 * i + 1]
        if mode == 'reflect' and (l >= n or r >= n):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({l}, {r}) at dimension {d} of input {_lst(shape)}")
        if mode == 'circular':
            if l > n or r > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if n + l + r <= 0 or n + l <= 0 or n + r <= 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if n + l + r < 0:
            raw = list(shape)
            raw[d] = n + l + r
            raise RuntimeError(f"Trying to create tensor with negative dimension {n + l + r}: {_lst(raw)}")


def _pad(self, pad, mode='constant', value=None):
    """torch.nn.functional.pad: constant_pad_nd; reflect and replicate are torch's reflection_pad{1,2,3}d and
    replication_pad{1,2,3}d operators (which save their input); circular is gathers along the padded dimensions
    (``index_select`` of the wrapped positions, as torch's _pad_circular is a composite)."""
    pad = tuple(pad)
    for p in pad:
        if not isinstance(p, int) and not hasattr(p, '__index__'):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos 0")
    pad = _ints(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > self.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {self.dim()}")
    if mode == 'constant':
        return aten.constant_pad_nd.default(self, list(pad), 0 if value is None else value)
    if mode not in ('reflect', 'replicate', 'circular'):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k, nd = len(pad) // 2, self.dim()
    if not (1 <= k <= 3 and k + 1 <= nd <= k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n{_PAD_HELP}")
    if mode != 'circular':
        return getattr(aten, f'{_PAD_OPS[mode]}_pad{k}d').default(self, list(pad))
    shape = tuple(self.shape)
    _pad_checks(shape, pad, mode)
    out = self
    import numpy as np
    for i in range(k):
        d = nd - 1 - i
        idx = _pad_index(shape[d], pad[2 * i], pad[2 * i + 1], mode)
        out = out.index_select(d, _from_np(idx.astype(np.int64), self.device))
    return out


_PAD_OPS = {'reflect': 'reflection', 'replicate': 'replication'}


def _pad_meta(mode):
    def meta(self, padding):
        shape, padding = tuple(self._a.shape), _ints(padding)
        _pad_checks(shape, padding, mode)
        out = list(shape)
        for i in range(len(padding) // 2):
            out[-1 - i] += padding[2 * i] + padding[2 * i + 1]
        return with_layout((tuple(out), self._dtype), self)      # NOTE [channels_last outputs]
    return meta


def _pad_backward(grad, self, padding, mode):
    """The gradient of a reflect or replicate padding: each padded position's gradient added to the input position
    it copies (index_add along each padded dimension). It reads ``self`` (its shape), which is saved, as torch's
    reflection_pad*_backward(grad, self, padding) does."""
    import numpy as np
    shape, padding = tuple(self.shape), _ints(padding)
    g = grad
    for i in range(len(padding) // 2):
        d = len(shape) - 1 - i
        idx = _from_np(_pad_index(shape[d], padding[2 * i], padding[2 * i + 1], mode).astype(np.int64), grad.device)
        g = _zeros(tuple(g.shape[:d]) + (shape[d],) + tuple(g.shape[d + 1:]), g).index_add(d, idx, g)
    return g


def _pad_grad(mode):
    return lambda grad, self, padding: _pad_backward(grad, self, padding, mode)


for _mode, _name in _PAD_OPS.items():
    for _k in (1, 2, 3):
        declare(f'{_name}_pad{_k}d(Tensor self, SymInt[{2 * _k}] padding) -> Tensor', meta=_pad_meta(_mode), forward='linear',
                method=False, function=False, grad_name=f'{_name.capitalize()}Pad{_k}DBackward0',
                derivatives={'self': _pad_grad(_mode)})


def _from_np(a, device):
    from .. import _creation
    return _creation.tensor(a, device=device)


declare('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', composite=_pad,
        nn=True, function=False, method=False)


# --- unique ----------------------------------------------------------------------------------

def _unique_meta(self, *args):
    from .indexing import _no_meta
    _no_meta('_unique2', self)
    return None


def _unique_dim_meta(self, dim, *args):
    wrap_dim(dim, self._a.ndim)
    from .indexing import _no_meta
    _no_meta('unique_dim', self)
    return None


def _unique_consecutive_meta(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        wrap_dim(dim, self._a.ndim)
    from .indexing import _no_meta
    _no_meta('unique_consecutive', self)
    return None


declare('_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) '
        '-> (Tensor, Tensor, Tensor)', meta=_unique_meta, method=False)
declare('unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) '
        '-> (Tensor, Tensor, Tensor)', meta=_unique_dim_meta, method=False)
declare('unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) '
        '-> (Tensor, Tensor, Tensor)', meta=_unique_consecutive_meta, method=False, function=False)


# --- comparisons of whole tensors ---------------------------------------------------------------

def _isclose_meta(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{_tname(self._dtype)} did not match {_tname(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    from .pointwise import broadcast_shapes
    return broadcast_shapes(tuple(self._a.shape), tuple(other._a.shape)), D.bool_


declare('isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor',
        meta=_isclose_meta, differentiable=False,
        primitive_because="one NumPy comparison pass instead of torch's chain of about eight elementwise operators")


def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    c = aten.isclose.default(self, other, rtol, atol, equal_nan)
    return c.numel() == 0 or bool(c.logical_not().nonzero().shape[0] == 0)


def _equal(self, other):
    if tuple(self.shape) != tuple(other.shape):
        return False
    if self.dtype is not other.dtype:
        other = other.to(D._PROMOTE[self.dtype, other.dtype])
        self = self.to(other.dtype)
    return self.numel() == 0 or bool(self.eq(other).logical_not().nonzero().shape[0] == 0)


declare('allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool',
        composite=_allclose)
declare('equal(Tensor self, Tensor other) -> bool', composite=_equal)


# --- searchsorted / bucketize ------------------------------------------------------------------------

def _searchsorted_meta(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    seq = tuple(sorted_sequence._a.shape)
    val = tuple(self._a.shape) if isinstance(self, TensorImpl) else ()
    if side is not None and side not in ('left', 'right'):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side == 'left' and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    if sorter is not None and tuple(sorter._a.shape) != seq:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {_lst(seq)}and got sorter tensor {_lst(sorter._a.shape)}")
    if len(seq) > 1 and (not isinstance(self, TensorImpl) or seq[:-1] != val[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {_lst(seq)} and input value tensor {_lst(val)}")
    if not seq:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    return val, D.int32 if out_int32 else D.int64


declare('searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, '
        'str? side=None, Tensor? sorter=None) -> Tensor', meta=_searchsorted_meta, method=False,
        differentiable=False)
declare('searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, '
        'str? side=None, Tensor? sorter=None) -> Tensor', meta=_searchsorted_meta, method=False,
        differentiable=False)
overloads('searchsorted', 'searchsorted.Tensor', 'searchsorted.Scalar', method=False)


def _bucketize_meta(self, boundaries, out_int32=False, right=False):
    if boundaries._a.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._a.ndim})")
    return tuple(self._a.shape), D.int32 if out_int32 else D.int64


declare('bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor',
        meta=_bucketize_meta, differentiable=False)


# --- one_hot ------------------------------------------------------------------------------------

def _one_hot_meta(self, num_classes=-1):
    if self._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if self._a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        from .indexing import _no_meta
        _no_meta('one_hot', self)
        return None
    if num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    return tuple(self._a.shape) + (int(num_classes),), D.int64


declare('one_hot(Tensor self, int num_classes=-1) -> Tensor', meta=_one_hot_meta, nn=True, function=False,
        method=False, differentiable=False,
        primitive_because="one NumPy scatter instead of torch's zeros + scatter_ composite")


# --- combinations / cdist ---------------------------------------------------------------------

def _combinations(self, r=2, with_replacement=False):
    """torch's combinations: the r-fold meshgrid of the input (views), each grid masked_select-ed by the
    mask of ordered index tuples (i < j < ..., or <= with replacement), stacked as columns; masked_select saves
    the grid, a view of the input."""
    import numpy as np
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_lst(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return aten.empty.default((0,), dtype=self.dtype, device=self.device)
    n = self.shape[0]
    idx = np.indices((n,) * r)
    mask = np.ones((n,) * r, bool)
    for k in range(r - 1):
        mask &= idx[k] <= idx[k + 1] if with_replacement else idx[k] < idx[k + 1]
    mask = _from_np(mask, self.device)
    grids = [self.view(tuple(-1 if d == k else 1 for d in range(r))).expand((n,) * r) for k in range(r)]
    return aten.stack.default([g.masked_select(mask) for g in grids], 1)


declare('combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor', composite=_combinations)


def _cdist_meta(x1, x2, p=2.0, compute_mode=None):
    a, b = tuple(x1._a.shape), tuple(x2._a.shape)
    if len(a) < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {len(a)}D")
    if len(b) < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {len(b)}D")
    if a[-1] != b[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a[-1]} X2: {b[-1]}")
    if x1._dtype.category != 2 or x2._dtype.category != 2:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_tname(x1._dtype)}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values")
    from .pointwise import broadcast_shapes
    batch = broadcast_shapes(a[:-2], b[:-2])
    return batch + (a[-2], b[-2]), D._PROMOTE[x1._dtype, x2._dtype]


def _cdist_grads(grad, x1, x2, p, result):
    """d dist_ij / d x1_i = |d|^(p-1) sign(d) / dist^(p-1), and 0 where the distance is 0 (torch's _cdist_backward)."""
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)                    # (..., P, R, M)
    zero = result == 0
    safe = result.masked_fill(zero, 1)
    if p == 0:
        g = d * 0
    elif p == 1:
        g = grad.unsqueeze(-1) * d.sign()
    elif p == 2:
        g = (grad / safe).masked_fill(zero, 0).unsqueeze(-1) * d
    elif p == float('inf'):
        hit = (d.abs() == result.unsqueeze(-1))
        n = hit.sum(-1, keepdim=True)
        g = grad.unsqueeze(-1) * d.sign() * hit / n.masked_fill(n == 0, 1)
    else:
        w = (grad / safe.pow(p - 1)).masked_fill(zero, 0)
        g = w.unsqueeze(-1) * d.abs().pow(p - 1) * d.sign()
    return g.sum(-2), -g.sum(-3)


declare('_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor', forward='transpose', meta=_cdist_meta, method=False,
        grad_name='CdistBackward0',
        derivatives={'x1': lambda grad, x1, x2, p, result: _cdist_grads(grad, x1, x2, p, result)[0],
                     'x2': lambda grad, x1, x2, p, result: _cdist_grads(grad, x1, x2, p, result)[1]})


def _euclidean_dist_meta(x1, x2):
    return tuple(x1._a.shape[:-1]) + (x2._a.shape[-2],), D._PROMOTE[x1._dtype, x2._dtype]


def _euclidean_dist_grads(grad, x1, x2, result):
    """torch's _euclidean_dist_backward: with r = grad / dist (0 where the distance is 0),
    d/dx1 = x1 * sum_j r - r @ x2 and d/dx2 = x2 * sum_i r - r^T @ x1."""
    ratio = (grad / result).masked_fill(result == 0, 0)
    return (x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
            x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1))


# torch's Euclidean distances through one matrix product, [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T (clamped at 1e-30,
# then the square root): what cdist computes for p=2 once either side has more than 25 rows, in O(P R) memory where
# the differences take O(P R M)
declare('_euclidean_dist(Tensor x1, Tensor x2) -> Tensor', meta=_euclidean_dist_meta, method=False, forward='transpose',
        derivatives={'x1': lambda grad, x1, x2, result: _euclidean_dist_grads(grad, x1, x2, result)[0],
                     'x2': lambda grad, x1, x2, result: _euclidean_dist_grads(grad, x1, x2, result)[1]})

_CDIST_MODES = {None: 0, 'use_mm_for_euclid_dist_if_necessary': 0, 'use_mm_for_euclid_dist': 1,
                'donot_use_mm_for_euclid_dist': 2}


def _cdist(x1, x2, p=2.0, compute_mode=None):
    """torch's cdist: for p=2 with more than 25 rows on either side (or compute_mode='use_mm_for_euclid_dist'),
    the matrix-product form over the broadcast batch; else the differences (_cdist_forward)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _CDIST_MODES[compute_mode]
    _cdist_meta(x1, x2, p)
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p != 2 or mode == 2 or (mode == 0 and r1 <= 25 and r2 <= 25) or not x1.numel() or not x2.numel():
        return aten._cdist_forward.default(x1, x2, float(p), None)
    from .pointwise import broadcast_shapes
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    n = math.prod(batch)
    if n != 1:      # as torch's cdist_impl: each side expanded to the batch (a copy where that broadcasts) and
        # flattened to (batch, rows, columns)
        x1, x2 = (x if tuple(x.shape[:-2]) == batch else x.expand(batch + tuple(x.shape[-2:])).clone()
                  for x in (x1, x2))
        x1, x2 = x1.reshape((n,) + tuple(x1.shape[-2:])), x2.reshape((n,) + tuple(x2.shape[-2:]))
    return aten._euclidean_dist.default(x1, x2).view(batch + (r1, r2))    # torch's view to the output's shape


declare('cdist(Tensor x1, Tensor x2, float p=2, str? compute_mode=None) -> Tensor', composite=_cdist, method=False)


# --- pdist: torch's pdist is _pdist_forward of the contiguous input, an operator saving its input and result ---------

def _pdist_meta(self, p=2.0):
    shape = self._a.shape
    if len(shape) != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {len(shape)}D")
    if self._dtype.category != 2:
        raise NotImplementedError(f'"_pdist_forward" not implemented for \'{_tname(self._dtype)}\'')
    if not self.is_contiguous():
        raise RuntimeError("_pdist_forward requires contiguous input")
    return (shape[0] * (shape[0] - 1) // 2,), self._dtype


def _pdist_grad(grad, self, p, result):
    """torch's _pdist_backward: row i of a pair (i < j) moves by g(diff = x_i - x_j), row j by -g, where g is the
    p-norm's derivative (0 where the distance is 0, and for p < 1 where a coordinate's difference is 0)."""
    n = self.shape[0]
    if p == 0 or n < 2 or self.numel() == 0:
        return _zeros(self.shape, self)
    ij = aten.triu_indices.default(n, n, 1, device=self.device)
    i, j = ij[0], ij[1]
    d = self.index_select(0, i) - self.index_select(0, j)
    g, dist = grad.unsqueeze(-1), result.unsqueeze(-1)
    zero = dist == 0
    safe = dist.masked_fill(zero, 1)
    if p == 1:
        t = g * d.sign()
    elif p == float('inf'):
        t = g * d.sign() * (d.abs() == dist)
    elif p < 2:
        small = (d == 0) | zero if p < 1 else zero
        t = (d.sign() * d.abs().masked_fill(small, 1).pow(p - 1) * (g / safe.pow(p - 1))).masked_fill(small, 0)
    elif p == 2:
        t = (g * d / safe).masked_fill(zero, 0)
    else:
        t = (d * d.abs().pow(p - 2) * (g / safe.pow(p - 1))).masked_fill(zero, 0)
    return _zeros(self.shape, self).index_add(0, i, t).index_add(0, j, -t)


declare('_pdist_forward(Tensor self, float p=2) -> Tensor', forward='transpose', meta=_pdist_meta, method=False, grad_name='PdistBackward0',
        derivatives={'self': _pdist_grad})


def _pdist(self, p=2.0):
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return aten._pdist_forward.default(self.contiguous(), float(p))


declare('pdist(Tensor self, float p=2) -> Tensor', composite=_pdist, method=False, nn=True)
