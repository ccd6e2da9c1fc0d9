"""View operators: new sizes, strides and offset over the same storage.

A view's meta function returns ``(sizes, strides, storage_offset)`` in
elements; `make_view` (_core/tensor_impl.py) makes the result share the input's storage and
version counter on every backend, so no backend has view kernels. Composite
views (reshape, flatten, split, ...) are written in these primitives.
"""

import numpy as np

from .registry import declare
from .._core.storage import contiguous_strides, MetaArray, as_size, check_in_bounds
from .._core.tensor_impl import make_view
from .adapters import dispatch_free_views, finish_view
from .._dispatch.ops_namespace import aten


def wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _geom(t):
    st, off = t._strides, t._offset      # cached on views at birth (make_view)
    if st is None or off is None:
        return tuple(t._a.shape), t.stride(), t.storage_offset()
    return t._a.shape, st, off


def infer_size(shape, numel):
    # each size compared with 0 on its own, not min(): min compares symbolic sizes with each other, and each of
    # those comparisons would become a guard tying them (NOTE [symbolic sizes])
    if shape.__class__ is tuple and numel.__class__ is int:       # fast path: plain ints, at most one -1
        known, neg = 1, -1
        for i, s in enumerate(shape):
            if s.__class__ is not int or s < 0 and (s != -1 or neg >= 0):
                break
            if s == -1:
                neg = i
            else:
                known *= s
        else:
            if neg < 0 and known == numel:
                return shape
            if neg >= 0 and known and not numel % known:
                return shape[:neg] + (numel // known,) + shape[neg + 1:]
    shape = tuple(as_size(s) for s in ((shape,) if isinstance(shape, int) else shape))
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape, old_strides, new_shape):
    """Strides for viewing (old_shape, old_strides) as new_shape, or None (torch's computeStride)."""
    if old_strides == contiguous_strides(old_shape):       # the common case: any contiguous view is fine
        return contiguous_strides(new_shape)
    if not old_shape:
        return tuple(1 for _ in new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel, view_numel = 1, 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _view_meta(self, size):
    a = self._a
    new = infer_size(size, as_size(a.size))
    if a.__class__ is not MetaArray and a.flags.c_contiguous:     # any shape views a contiguous tensor
        return new, contiguous_strides(new), self.storage_offset()
    shape, strides, off = _geom(self)
    st = view_strides(shape, strides, new)
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return new, st, off


def _transpose_meta(self, dim0, dim1):
    shape, strides, off = _geom(self)
    n = len(shape)
    if n == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return shape, strides, off
    d0 = dim0 + n if -n <= dim0 < 0 else (dim0 if 0 <= dim0 < n else wrap_dim(dim0, n))
    d1 = dim1 + n if -n <= dim1 < 0 else (dim1 if 0 <= dim1 < n else wrap_dim(dim1, n))
    sh, st = list(shape), list(strides)
    sh[d0], sh[d1] = sh[d1], sh[d0]
    st[d0], st[d1] = st[d1], st[d0]
    return tuple(sh), tuple(st), off


def _permute_meta(self, dims):
    shape, strides, off = _geom(self)
    n = len(shape)
    dims = [wrap_dim(d, n) for d in dims]
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims), off


def _expand_meta(self, size, implicit=False):
    shape, strides, off = _geom(self)
    size = tuple(size)
    if len(size) < len(shape):
        raise RuntimeError(f"expand(ember.FloatTensor{{{list(shape)}}}, size={list(size)}): the number of sizes "
                           f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    lead = len(size) - len(shape)
    out_sh, out_st = [], []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            out_sh.append(s)
            out_st.append(0)
            continue
        cur, cst = shape[i - lead], strides[i - lead]
        if s == -1:
            s = cur
        if cur == s:
            out_sh.append(s)
            out_st.append(cst)
        elif cur == 1:
            out_sh.append(s)
            out_st.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                               f"{list(shape)}")
    return tuple(out_sh), tuple(out_st), off


def _squeeze_meta(self, dim=None):
    shape, strides, off = _geom(self)
    n = len(shape)
    if dim is None:
        keep = [i for i in range(n) if shape[i] != 1]
    else:
        dims = {wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)}
        keep = [i for i in range(n) if not (i in dims and shape[i] == 1)]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), off


def _unsqueeze_meta(self, dim):
    shape, strides, off = _geom(self)
    d = wrap_dim(dim, len(shape) + 1)
    st = strides[d] * shape[d] if d < len(shape) else 1
    return shape[:d] + (1,) + shape[d:], strides[:d] + (st,) + strides[d:], off


def _select_meta(self, dim, index):
    shape, strides, off = _geom(self)
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dim if 0 <= dim < len(shape) else wrap_dim(dim, len(shape))
    n = shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at dimension {d}")
    index = index + n if index < 0 else index
    return shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:], off + index * strides[d]


def _slice_meta(self, dim=0, start=None, end=None, step=1):
    shape, strides, off = _geom(self)
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = shape[d]
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start, end = min(max(start, 0), n), min(max(end, 0), n)
    length = max(0, (end - start + step - 1) // step)
    sh, st = list(shape), list(strides)
    sh[d], st[d] = length, strides[d] * step
    return tuple(sh), tuple(st), off + start * strides[d]


def _as_strided_meta(self, size, stride, storage_offset=None):
    off = self.storage_offset() if storage_offset is None else storage_offset
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    check_in_bounds(size, stride, off, self._dtype.itemsize, self.untyped_storage().nbytes())
    return size, stride, off


def _alias_meta(self):
    return _geom(self)


def _diagonal_meta(self, offset=0, dim1=0, dim2=1):
    shape, strides, off = _geom(self)
    n = len(shape)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length = max(0, min(shape[d1], shape[d2] - offset))
        start = off + (offset * strides[d2] if length else 0)
    else:
        length = max(0, min(shape[d1] + offset, shape[d2]))
        start = off + (-offset * strides[d1] if length else 0)
    rest = [i for i in range(n) if i not in (d1, d2)]
    return (tuple(shape[i] for i in rest) + (length,), tuple(strides[i] for i in rest) + (strides[d1] + strides[d2],),
            start)


def _unfold_meta(self, dimension, size, step):
    shape, strides, off = _geom(self)
    if not shape:
        return (1,), (1,), off
    d = wrap_dim(dimension, len(shape))
    if size > shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {shape[d]} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    n = (shape[d] - size) // step + 1
    sh, st = list(shape), list(strides)
    sh[d], st[d] = n, strides[d] * step
    return tuple(sh) + (size,), tuple(st) + (strides[d],), off


def _t_meta(self):
    shape, strides, off = _geom(self)
    if len(shape) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(shape)}D")
    return shape[::-1], strides[::-1], off


def _v(schema, meta, derivatives=None, **kw):
    return declare(schema, kind='view', meta=meta, derivatives=derivatives, **kw)


_v('view(Tensor(a) self, SymInt[] size) -> Tensor(a)', _view_meta,
   {'self': lambda grad, self_sizes: grad.reshape(self_sizes)}, function=False)
_v('transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)', _transpose_meta,
   {'self': lambda grad, dim0, dim1: grad.transpose(dim0, dim1)})
_v('permute(Tensor(a) self, int[] dims) -> Tensor(a)', _permute_meta,
   {'self': lambda grad, dims: grad.permute(_inverse_perm(dims))})
_v('expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)', _expand_meta,
   # torch's at::sum_to(grad, self.sym_sizes()): the node saves self's sizes, as torch's (_saved_self_sym_sizes),
   # and the engine sums the gradient back to them (its own kernel: a dispatched sum_to_size cost ~15 us more)
   {'self': lambda grad, self_sizes: grad}, function=False)
_v('squeeze.dims(Tensor(a) self, int[]? dim=None) -> Tensor(a)', _squeeze_meta,
   {'self': lambda grad, self_sizes: grad.reshape(self_sizes)},
   # torch's overloads: squeeze() SqueezeBackward0, squeeze(int) SqueezeBackward1, squeeze(dims) SqueezeBackward2
   grad_name=lambda self, dim: 'SqueezeBackward0' if dim is None else 'SqueezeBackward1' if isinstance(dim, int)
   else 'SqueezeBackward2')
_v('t(Tensor(a) self) -> Tensor(a)', _t_meta, {'self': lambda grad: grad.t()})      # its own node, TBackward0
_v('unsqueeze(Tensor(a) self, int dim) -> Tensor(a)', _unsqueeze_meta,
   {'self': lambda grad, dim: grad.squeeze(dim)})
_v('select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)', _select_meta,
   {'self': lambda grad, self_sizes, self_dtype, self_device, dim, index:
       _embed(grad.unsqueeze(dim), self_sizes, self_dtype, self_device, dim, index, index + 1 if index != -1 else None, 1)})
_v('slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)',
   _slice_meta, {'self': lambda grad, self_sizes, self_dtype, self_device, dim, start, end, step:
                 _embed(grad, self_sizes, self_dtype, self_device, dim, start, end, step)}, name='slice')
_v('as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)',
   _as_strided_meta, {'self': lambda grad, self_sizes, self_strides, self_offset, size, stride, storage_offset:
                      _as_strided_backward(grad, self_sizes, self_strides, self_offset, size, stride, storage_offset)})
declare('detach(Tensor(a) self) -> Tensor(a)', meta=_alias_meta, explicit=lambda self: _detach(self),
        differentiable=False)
_v('alias(Tensor(a) self) -> Tensor(a)', _alias_meta, {'self': lambda grad: grad})
declare('_unsafe_view(Tensor self, SymInt[] size) -> Tensor', forward='linear', explicit=lambda self, size: _unsafe_view(self, size),
        method=False, function=False, derivatives={'self': lambda grad, self_sizes: grad.reshape(self_sizes)})
_v('diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)', _diagonal_meta,
   {'self': lambda grad, self_sizes, offset, dim1, dim2: _diagonal_backward(grad, self_sizes, offset, dim1, dim2)})
_v('unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)', _unfold_meta,
   {'self': lambda grad, self_sizes, self_strides, self_offset, dimension, size, step:
       _unfold_backward(grad, self_sizes, dimension, size, step)}, function=False)


def _detach(self):
    """Same storage and version counter, outside autograd. Not a view for autograd (``_base`` is None, as in
    torch), so an in-place op on a detached tensor never rebases the history of the tensor it came from."""
    t = make_view(self, *_geom(self))
    t._base = None
    return t


def _unsafe_view(self, size):
    """torch's _unsafe_view: the same data seen with ``size``, but not a view for autograd: no base, and a version
    counter of its own. torch's composites use it to reshape tensors that are theirs (a fresh mm result in
    matmul), and kron's operands: a tensor saved through it is not checked against writes to the original."""
    t = make_view(self, *_view_meta(self, size))
    t._base = None
    t._vc = [0]
    return t


def _inverse_perm(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


def _embed(grad, sizes, dtype, device, dim, start, end, step):
    """Gradient of a slice: zeros of the input's shape with ``grad`` in the sliced region."""
    z = aten.zeros.default(tuple(sizes), dtype=grad.dtype, device=grad.device)
    return aten.slice_scatter.default(z, grad, dim, start, end, step)


def _as_strided_backward(grad, sizes, strides, offset, size, stride, storage_offset):
    """Scatter-add ``grad`` into a flat buffer laid out like the input's storage, read back as the input."""
    zeros, idx = aten.zeros.default, aten._strided_index.default
    storage_offset = offset if storage_offset is None else storage_offset
    extent = offset + sum((n - 1) * s for n, s in zip(sizes, strides)) + 1 if all(sizes) else offset
    ext2 = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else storage_offset
    flat = zeros((max(extent, ext2),), dtype=grad.dtype, device=grad.device)
    flat = flat.index_add(0, idx(tuple(size), tuple(stride), storage_offset, device=grad.device), grad.reshape(-1))
    return flat.index_select(0, idx(tuple(sizes), tuple(strides), offset, device=grad.device)).reshape(sizes)


def _diagonal_backward(grad, sizes, offset, dim1, dim2):
    z = aten.zeros.default(tuple(sizes), dtype=grad.dtype, device=grad.device)
    return aten.diagonal_scatter.default(z, grad, offset, dim1, dim2)


def _unfold_backward(grad, sizes, dimension, size, step):
    return aten.unfold_backward.default(grad, tuple(sizes), dimension, size, step)


# --- composite views -----------------------------------------------------------

_view = aten.view.default
_ndarray = np.ndarray


def _reshape(self, shape):
    a = self._a
    shape = infer_size(shape, self.numel())
    if a.__class__ is _ndarray and a.flags.c_contiguous or view_strides(a.shape, self.stride(), shape) is not None:
        return _view(self, shape)
    # torch's copy: a fresh contiguous clone seen through _unsafe_view, so the result is no view of anything
    # (``_base`` None) and its graph is UnsafeViewBackward0 over CloneBackward0
    return aten._unsafe_view.default(self.clone(memory_format='contiguous_format'), shape)


def _flatten(self, start_dim=0, end_dim=-1):
    n = self.dim()
    if n == 0:
        return self.reshape(1)
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(self.shape)
    mid = 1
    for x in shape[s:e + 1]:
        mid *= x
    return self.reshape(shape[:s] + (mid,) + shape[e + 1:])


def _unflatten(self, dim, sizes):
    shape = tuple(self.shape)
    d = wrap_dim(dim, len(shape))
    sizes = infer_size(sizes, shape[d])
    return self.view(shape[:d] + tuple(sizes) + shape[d + 1:])


def _movedim(self, source, destination):
    n = self.dim()
    src = [wrap_dim(s, n) for s in ((source,) if isinstance(source, int) else source)]
    dst = [wrap_dim(d, n) for d in ((destination,) if isinstance(destination, int) else destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return self.permute([o if o is not None else next(rest) for o in order])


def _split(self, split_size, dim=0):
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if isinstance(split_size, (list, tuple)):
        return _split_with_sizes(self, split_size, dim)
    split_size = as_size(split_size)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if not n:
        return (self.narrow(d, 0, 0),)
    # the starts as multiples of split_size, so symbolic sizes stay symbolic (NOTE [symbolic sizes]); the number
    # of pieces is the example's, and the comparison records that as a guard
    count = -(-n // split_size)
    pieces = int(count)
    if count != pieces:
        raise AssertionError('unreachable: a size equals its own value')
    last = (pieces - 1) * split_size       # every piece but the last is split_size long: no comparison needed
    return tuple(self.narrow(d, i * split_size, split_size) for i in range(pieces - 1)) + \
        (self.narrow(d, last, n - last),)


def _split_with_sizes(self, split_sizes, dim=0):
    d = wrap_dim(dim, self.dim())
    if sum(split_sizes) != self.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's "
                           f"size at dimension {d}), but got split_sizes={list(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(self.narrow(d, start, s))
        start += s
    return tuple(out)


def _narrow(self, dim, start, length):
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return self.slice(d, start, start + length)


def _c(schema, fn, **kw):
    return declare(schema, composite=fn, **kw)


_c('reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)', _reshape)
_c('flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)', _flatten)
_c('unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)', _unflatten)
_c('movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)', _movedim)
_c('moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)', _movedim)
_c('swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)', lambda self, a, b: self.transpose(a, b))
_c('swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)', lambda self, a, b: self.transpose(a, b))
def _one_node(name, fn, join='cat', arg_name=None):
    """The composite ``fn`` with its pieces given one ``name`` node (NOTE in autograd/views.py), which saves
    what torch's does: ``dim`` as given, the input's sizes and the argument ``arg_name`` where there is one."""
    def composite(self, arg, dim=0):
        from ..autograd.views import multi_view
        saved = {'dim': dim}
        if arg_name is not None:
            saved['self_sym_sizes'] = tuple(self.shape)
            saved[arg_name] = tuple(arg) if isinstance(arg, (list, tuple)) else arg
        return multi_view(self, lambda: fn(self, arg, dim), wrap_dim(dim, self.dim()), name, join, saved)
    return composite


def _unbind(self, _, dim=0):
    d = wrap_dim(dim, self.dim())
    if not dispatch_free_views(self):
        return tuple(self.select(d, i) for i in range(self.shape[d]))
    # every piece is select's view; made here without a dispatch per piece (``for row in x`` iterates unbind)
    shape, strides, off = _geom(self)
    shape, step, strides = shape[:d] + shape[d + 1:], strides[d], strides[:d] + strides[d + 1:]
    return tuple(finish_view(make_view(self, shape, strides, off + i * step), self) for i in range(self.shape[d]))


_split_one = _one_node('SplitBackward0', _split, arg_name='split_size')
_split_sizes_one = _one_node('SplitWithSizesBackward0', _split_with_sizes, arg_name='split_sizes')
_unbind_one = _one_node('UnbindBackward0', _unbind, 'stack')


def _chunk_one(self, chunks, dim=0):
    """chunk as torch records it: a split into pieces of ``ceil(n / chunks)``, or into ``chunks`` empty pieces."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = self.shape[wrap_dim(dim, self.dim())]
    if n == 0:      # torch keeps the number of chunks: that many empty pieces
        return _split_sizes_one(self, [0] * chunks, dim)
    return _split_one(self, max(1, -(-n // chunks)), dim)
_c('split.Tensor(Tensor(a) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]',
   lambda self, split_size, dim=0:      # a list of sizes is torch's split_with_sizes
   (_split_sizes_one if isinstance(split_size, (list, tuple)) else _split_one)(self, split_size, dim))
_c('split_with_sizes(Tensor(a) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]', _split_sizes_one)
_c('chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]', _chunk_one)
_c('unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]', lambda self, dim=0: _unbind_one(self, None, dim))
_c('narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)', _narrow)
_c('view_as(Tensor(a) self, Tensor other) -> Tensor(a)', lambda self, other: self.view(tuple(other.shape)),
   function=False)
_c('expand_as(Tensor(a) self, Tensor other) -> Tensor(a)', lambda self, other: self.expand(tuple(other.shape)),
   function=False)
_c('reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)', lambda self, other: self.reshape(tuple(other.shape)),
   function=False)
_c('adjoint(Tensor(a) self) -> Tensor(a)', lambda self: self.transpose(-2, -1).conj())
