"""Indexing operators: index_select, gather, scatter, index_add/put/copy/fill, masked ops, take, nonzero,
and ``index.Tensor`` (advanced indexing, what ``x[idx]`` runs).

Meta functions check shapes and index dtypes with torch's messages; index values
(data) are checked by the kernels, which never write into their inputs, so a
failing in-place op leaves its tensor unchanged. Derivatives pair up:
gather <-> scatter_add, index_select <-> index_add, index <-> index_put(accumulate).
"""
from ember._warn import warnings

from .._core import dtype as D
from .._core.dtype import scalar_name as _tname
from .._core.storage import MetaArray
from .._core.tensor_impl import TensorImpl
from .registry import declare
from .overloads import overloads
from .views import wrap_dim
from .._dispatch.ops_namespace import aten

_INDEX_INTS = (D.int64, D.int32)
_BOOL, _U8 = D.bool_, D.uint8






def _lst(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _zeros(sizes, like):
    return aten.zeros.default(tuple(sizes), dtype=like.dtype, device=like.device)


def _shape(t):
    return tuple(t._a.shape)


def _shape1(t):
    """Shape with 0-d treated as 1-d (torch's scatter/gather convention)."""
    s = tuple(t._a.shape)
    return s if s else (1,)


# --- index_select / index_add ---------------------------------------------------------

def _index_select_meta(self, dim, index):
    if index._a.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype not in _INDEX_INTS:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = _shape(self)
    if not shape:
        wrap_dim(dim, 0)
        if index._a.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index._a.size} value(s)")
        return (), self._dtype
    d = wrap_dim(dim, len(shape))
    return shape[:d] + (int(index._a.size),) + shape[d + 1:], self._dtype


def _index_select_backward(grad, self_sizes, dim, index):
    return _zeros(self_sizes, grad).index_add(dim, index, grad)


declare('index_select(Tensor self, int dim, Tensor index) -> Tensor', forward='linear', meta=_index_select_meta, out=True,
        derivatives={'self': _index_select_backward})


def _index_add_meta(self, dim, index, source, alpha=1):
    return _index_func_meta('index_add', self, dim, index, source)


def _index_func_meta(name, self, dim, index, source):
    """torch's index_func_meta_impl, shared by index_add and index_copy."""
    shape, sshape = _shape(self), _shape(source)
    d = wrap_dim(dim, len(shape))
    if index._a.ndim > 1:
        raise IndexError(f"{name}_(): Index is supposed to be a vector")
    if index._dtype not in _INDEX_INTS:
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index but got: {_tname(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{name}_(): self ({_tname(self._dtype)}) and source ({_tname(source._dtype)}) must have "
                           f"the same scalar type")
    if not (d == 0 or d < len(sshape)):
        raise RuntimeError(f"{name}_(): Indexing dim {d} is out of bounds of the source tensor with dim {len(sshape)}")
    n, m = int(index._a.size), (sshape[d] if sshape else 1)
    if n != m:
        raise RuntimeError(f"{name}_(): Number of indices ({n}) should be equal to source.size(dim): ({m}), "
                           f"for dim: {d}")
    a, b = list(shape), list(sshape)
    if a and b:
        del a[d], b[d]
    if a != b:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_lst(shape)} source.shape = {_lst(sshape)}")
    return shape, self._dtype


def _index_add_source_grad(grad, dim, index, source_ndim, alpha):
    g = grad.index_select(dim, index) if grad.dim() else grad.reshape(-1).index_select(0, index)
    if source_ndim == 0:
        g = g.reshape(())
    return g if alpha == 1 else g * alpha


declare('index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor', forward='linear',
        meta=_index_add_meta, inplace=True, out=True,
        derivatives={'self': lambda grad: grad,
                     'source': lambda grad, dim, index, source, alpha:     # torch saves source itself
                     _index_add_source_grad(grad, dim, index, source.dim(), alpha)})


# --- gather / scatter -------------------------------------------------------------------

def _check_index_dtype(name, index):
    if index._dtype not in _INDEX_INTS:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _gather_meta(self, dim, index, sparse_grad=False):
    shape, ishape = _shape1(self), _shape1(index)
    d = wrap_dim(dim, self._a.ndim)
    _check_index_dtype('gather', index)
    if index._a.size == 0:
        return _shape(index), self._dtype
    if len(ishape) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(len(shape)):
        if k != d and ishape[k] > shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {_lst(_shape(index))} to be no "
                               f"larger than self {_lst(_shape(self))} apart from dimension {d}")
    return _shape(index), self._dtype


declare('gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor', forward='linear', meta=_gather_meta,
        out=True,
        derivatives={'self': lambda grad, self, dim, index:         # torch saves self, not only its sizes
                     _zeros(tuple(self.shape), grad).scatter_add(dim, index, grad)})


def _scatter_meta_common(name, self, dim, index, src=None):
    shape, ishape = _shape1(self), _shape1(index)
    d = wrap_dim(dim, self._a.ndim)
    _check_index_dtype(name, index)
    if src is not None and isinstance(src, TensorImpl) and src._dtype is not self._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index._a.size == 0:
        return _shape(self), self._dtype
    if len(ishape) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and isinstance(src, TensorImpl):
        sshape = _shape1(src)
        if len(sshape) != len(shape):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        for k in range(len(shape)):
            if (k != d and ishape[k] > shape[k]) or ishape[k] > sshape[k]:
                raise RuntimeError(f"Expected index {_lst(_shape(index))} to be no larger than self "
                                   f"{_lst(_shape(self))} apart from dimension {d} and to be no larger size than src "
                                   f"{_lst(_shape(src))}")
    else:
        for k in range(len(shape)):
            if k != d and ishape[k] > shape[k]:
                raise RuntimeError(f"Expected index {_lst(_shape(index))} to be no larger than self "
                                   f"{_lst(_shape(self))} apart from dimension {d}")
    return _shape(self), self._dtype


def _scatter_add_meta(self, dim, index, src):
    return _scatter_meta_common('scatter', self, dim, index, src)


declare('scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor', forward='linear', meta=_scatter_add_meta,
        inplace=True, out=True,
        derivatives={'self': lambda grad: grad,
                     'src': lambda grad, dim, index, src_sizes: _gather_into(grad, dim, index, src_sizes)})


def _gather_into(grad, dim, index, src_sizes):
    """``grad.gather(dim, index)`` in a zero tensor of ``src``'s shape (index may be smaller than src)."""
    g = grad.gather(dim, index)
    if g.dim() == 0 or tuple(g.shape) == tuple(src_sizes):
        return g.reshape(src_sizes)
    pads = []
    for n, m in zip(reversed(tuple(g.shape)), reversed(tuple(src_sizes))):
        pads += [0, m - n]
    return aten.constant_pad_nd.default(g, pads, 0)


# --- scatter (src / value, optional reduce) and scatter_reduce ------------------------

def _scatter_src_meta(self, dim, index, src):
    return _scatter_meta_common('scatter', self, dim, index, src)


def _scatter_value_meta(self, dim, index, value):
    return _scatter_meta_common('scatter', self, dim, index)


def _check_reduce(reduce):
    if reduce not in ('add', 'multiply'):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_reduce_src_meta(self, dim, index, src, reduce):
    _check_reduce(reduce)
    from ember._warn import warnings
    warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                  "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                  UserWarning, stacklevel=4)
    return _scatter_meta_common('scatter', self, dim, index, src)


def _scatter_reduce_value_meta(self, dim, index, value, reduce):
    _check_reduce(reduce)
    return _scatter_meta_common('scatter', self, dim, index)


declare('scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor', forward='linear', meta=_scatter_src_meta,
        inplace=True, out=True,
        derivatives={'self': lambda grad, dim, index: grad.scatter(dim, index, 0),
                     'src': lambda grad, dim, index, src_sizes: _gather_into(grad, dim, index, src_sizes)})
declare('scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor', forward='self_adjoint', meta=_scatter_value_meta,
        inplace=True, out=True, derivatives={'self': lambda grad, dim, index: grad.scatter(dim, index, 0)},
        grad_name='ScatterBackward1')
# torch has no derivative for the reduce= overloads (its "derivative for aten::scatter is not implemented")
declare('scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor',
        meta=_scatter_reduce_src_meta, inplace=True, out=True)
declare('scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor',
        meta=_scatter_reduce_value_meta, inplace=True, out=True)
overloads('scatter', 'scatter.src', 'scatter.value', 'scatter.reduce', 'scatter.value_reduce')

_REDUCTIONS = ('sum', 'prod', 'mean', 'amax', 'amin', 'max', 'min')     # max/min: torch's legacy spellings


def _scatter_reduce_meta(self, dim, index, src, reduce, include_self=True):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter_meta_common('scatter', self, dim, index, src)


def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """torch's scatter_reduce_backward (FunctionsManual.cpp), in ember ops."""
    gs, gsrc = _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result)
    if not include_self:
        gs = gs.scatter(dim, index, 0)
    return gs, gsrc


def _scatter_reduce_grads(grad, self, dim, index, src, reduce, include_self, result):
    reduce = {'max': 'amax', 'min': 'amin'}.get(reduce, reduce)
    if reduce == 'sum':
        return grad, _gather_into(grad, dim, index, tuple(src.shape))
    if reduce == 'mean':
        n = _ones_like(self).scatter_add(dim, index, _ones_like(src)) if include_self else \
            _zeros_like(self).scatter_add(dim, index, _ones_like(src))
        n = n.masked_fill(n == 0, 1)
        g = grad / n
        return g, _gather_into(g, dim, index, tuple(src.shape))
    if reduce in ('amax', 'amin'):
        value = result.gather(dim, index)
        self_is = self == result
        src_is = _sliced(src, index) == value
        n = self_is.to(grad.dtype).scatter_add(dim, index, src_is.to(grad.dtype))
        g = grad / n
        return g * self_is, _pad_to(g.gather(dim, index) * src_is, tuple(src.shape))
    # prod: exclusive products, with care for zeros
    masked_self = self.masked_fill(self == 0, 1)
    masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce, include_self=include_self)
    grad_self = grad * masked_self_result / masked_self
    s = _sliced(src, index)
    src_zero = s == 0
    src_num_zeros = _zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index)
    src_single_zero = src_zero.logical_and(src_num_zeros == 1)
    masked_src = s.masked_fill(src_single_zero, 1)
    masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce, include_self=include_self)
    grad_src = aten.where.self(src_single_zero, (grad * masked_src_result).gather(dim, index),
                     (grad * result).gather(dim, index) / s.masked_fill(src_zero, 1))
    return grad_self, _pad_to(grad_src, tuple(src.shape))


def _ones_like(t):
    return aten.ones.default(tuple(t.shape), dtype=t.dtype, device=t.device)


def _zeros_like(t):
    return _zeros(tuple(t.shape), t)


def _sliced(src, index):
    """``src`` cut to ``index``'s shape (scatter reads only that corner of src)."""
    if src.dim() == 0 or tuple(src.shape) == tuple(index.shape):
        return src.reshape(tuple(index.shape)) if src.dim() == 0 else src
    for k, n in enumerate(index.shape):
        if src.shape[k] != n:
            src = src.narrow(k, 0, n)
    return src


def _pad_to(g, sizes):
    if g.dim() == 0 or tuple(g.shape) == tuple(sizes):
        return g.reshape(sizes)
    pads = []
    for n, m in zip(reversed(tuple(g.shape)), reversed(tuple(sizes))):
        pads += [0, m - n]
    return aten.constant_pad_nd.default(g, pads, 0)


declare('scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) '
        '-> Tensor', forward='transpose', meta=_scatter_reduce_meta, inplace=True, out=True,
        derivatives={'self': lambda grad, self, dim, index, src, reduce, include_self, result:
                     _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)[0],
                     'src': lambda grad, self, dim, index, src, reduce, include_self, result:
                     _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)[1]})


# --- advanced indexing: index.Tensor / index_put ---------------------------------------

def _no_meta(name, *ts):
    """Operators whose output shape depends on data cannot run on the Meta backend (torch says the same)."""
    from .._core.storage import MetaArray
    if any(isinstance(t, TensorImpl) and isinstance(t._a, MetaArray) for t in ts):
        raise NotImplementedError(f"aten::{name}: attempted to run this operator with Meta tensors, but there was no "
                                  f"fake impl or Meta kernel registered. The output shape depends on the data.")


def _broadcast(shapes, err):
    out = ()
    for s in shapes:
        n = max(len(out), len(s))
        a, b = (1,) * (n - len(out)) + tuple(out), (1,) * (n - len(s)) + tuple(s)
        r = []
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise err()
            r.append(y if x == 1 else x)
        out = tuple(r)
    return out


def index_result_shape(self, indices):
    """The shape of ``self[indices]`` by torch's (and NumPy's) advanced-indexing rules, with all checks.
    Returns None when a boolean mask makes it data-dependent and the data is not at hand (Meta)."""
    shape = self._a.shape
    if len(indices) == 0:
        raise IndexError("at least one index must be provided")
    dims, adv, pos = [], [], 0          # dims: kept sizes, None where the advanced result goes
    for t in indices:
        if t is None:
            if pos >= len(shape):
                _too_many(shape, indices)
            dims.append(shape[pos])
            pos += 1
            continue
        dt = t._dtype
        if dt is _BOOL or dt is _U8:
            if dt is _U8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=5)
            ms = t._a.shape
            if pos + len(ms) > len(shape):
                _too_many(shape, indices)
            for j, n in enumerate(ms):
                if n != shape[pos + j]:
                    raise IndexError(f"The shape of the mask {_lst(ms)} at index {j} does not match the shape of the "
                                     f"indexed tensor {_lst(shape)} at index {pos + j}")
            if isinstance(t._a, MetaArray):
                return None
            adv.append((int(t._device._iface.xp.count_nonzero(t._a)),))
            pos += len(ms)
        else:
            if dt.category != 1:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if pos >= len(shape):
                _too_many(shape, indices)
            adv.append(t._a.shape)
            pos += 1
        dims.append(None)
    if not adv:
        return tuple(shape)
    if len(adv) == 1:
        bshape = tuple(adv[0])
    else:
        bshape = _broadcast(adv, lambda: IndexError("shape mismatch: indexing tensors could not be broadcast "
                                                    "together with shapes " + ", ".join(_lst(s) for s in adv)))
    dims += shape[pos:]
    where = [i for i, d in enumerate(dims) if d is None]
    first, last = where[0], where[-1]
    if last - first + 1 == len(where):      # adjacent advanced indices: the result goes in their place
        return tuple(dims[:first]) + bshape + tuple(dims[last + 1:])
    return bshape + tuple(d for d in dims if d is not None)


def _too_many(shape, indices):
    used = sum((t._a.ndim if t._dtype in (_BOOL, _U8) else 1) if t is not None else 1 for t in indices)
    raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {used})")


def _index_meta(self, indices):
    shape = index_result_shape(self, indices)
    if shape is None:
        _no_meta('index.Tensor', *indices)
    return shape, self._dtype


declare('index.Tensor(Tensor self, Tensor?[] indices) -> Tensor', forward='linear', meta=_index_meta, out=True, method=False,
        derivatives={'self': lambda grad, self_sizes, indices:
                     _zeros(self_sizes, grad).index_put(indices, grad, accumulate=True)})


def _index_put_meta(self, indices, values, accumulate=False):
    if values._dtype is not self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {_tname(self._dtype)} "
                           f"for the destination and {_tname(values._dtype)} for the source.")
    shape = index_result_shape(self, indices)
    vs = _shape(values)
    if shape is not None:
        ok = len(vs) <= len(shape) and all(v == 1 or v == s for v, s in zip(reversed(vs), reversed(shape)))
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {_lst(vs)} cannot be broadcast to indexing "
                               f"result of shape {_lst(shape)}")
    return _shape(self), self._dtype


def _index_put_self_grad(grad, indices, values_sizes, accumulate):
    if accumulate:
        return grad
    return grad.index_put(indices, _zeros((), grad).expand(tuple(values_sizes)), False)


declare('index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor', forward='linear',
        meta=_index_put_meta, inplace=True, out=True,
        derivatives={'self': lambda grad, indices, values_sizes, accumulate:
                     _index_put_self_grad(grad, indices, values_sizes, accumulate),
                     'values': lambda grad, indices: aten.index.Tensor(grad, indices)})


# --- index_copy / index_fill ---------------------------------------------------------------

def _index_copy_meta(self, dim, index, source):
    shape, sshape = _shape(self), _shape(source)
    d = wrap_dim(dim, len(shape))
    if index._a.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index._a.ndim})")
    n = int(index._a.size)
    if not sshape and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {n})")
    if len(sshape) != len(shape) and sshape and shape:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({len(sshape)}), destination dimensionality ({len(shape)})")
    if index._dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_tname(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_tname(self._dtype)} and (source) {_tname(source._dtype)}")
    a, b = list(shape), list(sshape)
    if a:
        del a[d]
    if b:
        del b[d]
    if a != b:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {_lst(a)} at dimension {d} and source slice shape: {_lst(b)} at dimension 0.")
    if sshape and n != sshape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) ({sshape[d]})")
    return shape, self._dtype


declare('index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor', forward='linear', meta=_index_copy_meta,
        inplace=True, out=True,
        derivatives={'self': lambda grad, dim, index: grad.index_fill(dim, index, 0),
                     'source': lambda grad, dim, index, source: _index_add_source_grad(grad, dim, index,
                                                                                       source.dim(), 1)})


def _index_fill_meta(self, dim, index, value):
    shape = _shape(self)
    d = wrap_dim(dim, len(shape))
    if index._dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index._a.ndim > 1:
        raise IndexError("index_fill_(): Index is supposed to be a vector")
    if isinstance(value, TensorImpl) and value._a.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._a.ndim} dimension(s).")
    return shape, self._dtype


declare('index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor', forward='self_adjoint', meta=_index_fill_meta,
        inplace=True, out=True, derivatives={'self': lambda grad, dim, index: grad.index_fill(dim, index, 0)})
declare('index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor', forward='linear', meta=_index_fill_meta,
        inplace=True, out=True, grad_name='IndexFillBackward1',
        derivatives={'self': lambda grad, dim, index: grad.index_fill(dim, index, 0),
                     'value': lambda grad, dim, index: (grad.index_select(dim, index) if grad.dim()
                                                        else grad.reshape(1).index_select(0, index)).sum()})
overloads('index_fill', 'index_fill.int_Tensor', 'index_fill.int_Scalar')


# --- masked ops ------------------------------------------------------------------------------

def _bcast2(a, b):
    from .pointwise import broadcast_shapes
    return broadcast_shapes(_shape(a), _shape(b))


def _masked_fill_meta(self, mask, value):
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_cname(mask._dtype)}")
    if isinstance(value, TensorImpl) and value._a.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._a.ndim} dimension(s).")
    return _bcast2(self, mask), self._dtype


def _cname(d):
    """dtype names as torch's C++ messages print them (``unsigned char``)."""
    return {'uint8': 'unsigned char', 'int8': 'signed char', 'int16': 'short', 'int32': 'int', 'int64': 'long int',
            'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16'}.get(d.name,
                                                                                                         d.name)


declare('masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor', forward='self_adjoint', meta=_masked_fill_meta,
        inplace=True, out=True, derivatives={'self': lambda grad, mask: grad.masked_fill(mask, 0)})
declare('masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor', forward='linear', meta=_masked_fill_meta,
        inplace=True, out=True, grad_name='MaskedFillBackward1',
        derivatives={'self': lambda grad, mask: grad.masked_fill(mask, 0),
                     'value': lambda grad, mask: grad.masked_fill(mask.logical_not(), 0)})
overloads('masked_fill', 'masked_fill.Tensor', 'masked_fill.Scalar')


def _masked_scatter_meta(self, mask, source):
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_tname(mask._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_tname(self._dtype)} and {_tname(source._dtype)}")
    return _bcast2(self, mask), self._dtype


def _masked_scatter_source_grad(grad, mask, source_sizes):
    n = 1
    for s in source_sizes:
        n *= s
    g = grad.masked_select(mask)
    if g.numel() < n:
        g = aten.cat.default([g, _zeros((n - g.numel(),), grad)])
    return g.reshape(source_sizes)


declare('masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor', forward='linear', meta=_masked_scatter_meta,
        inplace=True, out=True,
        derivatives={'self': lambda grad, mask: grad.masked_fill(mask, 0),
                     'source': lambda grad, mask, source_sizes: _masked_scatter_source_grad(grad, mask, source_sizes)})


def _masked_select_meta(self, mask):
    if mask._dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _bcast2(self, mask)
    _no_meta('masked_select', self, mask)
    return None


def _masked_select_backward(grad, self, mask):      # torch saves self, not only its sizes
    from .pointwise import broadcast_shapes
    shape = broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    return _zeros(shape, grad).masked_scatter(mask, grad)


declare('masked_select(Tensor self, Tensor mask) -> Tensor', forward='linear', meta=_masked_select_meta, out=True,
        derivatives={'self': _masked_select_backward})


# --- take / put / take_along_dim ----------------------------------------------------------

def _take_meta(self, index):
    if index._dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_tname(index._dtype)}")
    return _shape(index), self._dtype


declare('take(Tensor self, Tensor index) -> Tensor', forward='linear', meta=_take_meta, out=True,
        derivatives={'self': lambda grad, self, index: _zeros(tuple(self.shape), grad).put(index, grad, True)})


def _put_meta(self, index, source, accumulate=False):
    if index._dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_tname(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_tname(self._dtype)} and source.dtype = {_tname(source._dtype)}")
    if index._a.size != source._a.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source._a.size}, index.numel() = {index._a.size}")
    return _shape(self), self._dtype


def _put_self_grad(grad, index, accumulate):
    return grad if accumulate else grad.put(index, _zeros(tuple(index.shape), grad), False)


declare('put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor', forward='linear', meta=_put_meta,
        inplace=True,
        derivatives={'self': lambda grad, index, accumulate: _put_self_grad(grad, index, accumulate),
                     'source': lambda grad, index, source: grad.take(index).reshape(source.shape)})


def _take_along_dim(self, indices, dim=None):
    if dim is None:
        return self.reshape(-1).gather(0, indices.reshape(-1))
    from .pointwise import broadcast_shapes
    n = self.dim()
    if indices.dim() != n:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {n} dimensions for input, and {indices.dim()} dimensions for indices")
    d = wrap_dim(dim, n)
    ss, si = list(self.shape), list(indices.shape)
    ss[d] = si[d] = 1
    b = broadcast_shapes(tuple(ss), tuple(si))
    bs, bi = list(b), list(b)
    bs[d], bi[d] = self.shape[d], indices.shape[d]
    return self.expand(tuple(bs)).gather(d, indices.expand(tuple(bi)))


declare('take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor', composite=_take_along_dim)


# --- nonzero / argwhere ---------------------------------------------------------------------

def _nonzero_meta(self):
    _no_meta('nonzero', self)
    return None


declare('nonzero(Tensor self) -> Tensor', meta=_nonzero_meta, out=True, differentiable=False)
declare('argwhere(Tensor self) -> Tensor', composite=lambda self: self.nonzero())
