"""Indexing operators: index_select, gather, scatter, index_add/put/copy/fill, masked ops, take, nonzero,
and ``index.Tensor`` (advanced indexing, what ``x[idx]`` runs).

Meta functions check shapes and index dtypes with torch's messages; index values
(data) are checked by the kernels, which never write into their inputs, so a
failing in-place op leaves its tensor unchanged. Derivatives pair up:
gather <-> scatter_add, index_select <-> index_add, index <-> index_put(accumulate).
"""
from .._core import dtype as D
from .._core.tensor_impl import TensorImpl
from .registry import declare, DECLS
from .views import wrap_dim

_INDEX_INTS = (D.int64, D.int32)


def _call(name, *args, **kw):
    return DECLS[name].op.call(*args, **kw)


def _tname(d):
    from .adapters import _tname as t
    return t(d)


def _lst(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _zeros(sizes, like):
    return _call('zeros', tuple(sizes), dtype=like.dtype, device=like.device)


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


declare('index_select(Tensor self, int dim, Tensor index) -> Tensor', meta=_index_select_meta, out=True,
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


declare('index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor',
        meta=_index_add_meta, inplace=True, out=True,
        derivatives={'self': lambda grad: grad,
                     'source': lambda grad, dim, index, source_ndim, alpha:
                     _index_add_source_grad(grad, dim, index, source_ndim, alpha)})


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


declare('gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor', meta=_gather_meta,
        out=True,
        derivatives={'self': lambda grad, self_sizes, dim, index: _zeros(self_sizes, grad).scatter_add(dim, index, grad)})


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


declare('scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor', meta=_scatter_add_meta,
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
    return _call('constant_pad_nd', g, pads, 0)
