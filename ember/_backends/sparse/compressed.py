"""SparseCsrCPU kernels: CompressedArrays (CSR, CSC) and ndarrays in, CompressedArrays or ndarrays out
(NOTE [sparse compressed layout]).

Like every kernel module they know arrays only. ``KERNELS`` are registered for the SparseCsrCPU key (a
call with a CSR or CSC argument); ``CPU_KERNELS`` build a compressed array from dense inputs, and
``COO_KERNELS`` from a COO one (the SparseCPU key). Most kernels work on CSR and reach CSC through the
transpose (`as_csr`). The product is one gather and one segmented sum (``np.add.reduceat`` over the
rows' ranges), no scatter.
"""
import numpy as np

from ..._core.coo import COOArray, sparse_csr, sparse_csc
from ..._core.compressed import CompressedArray, expand_compressed
from .kernels import coalesce, mul as coo_mul, add as coo_add


# --- conversions ---------------------------------------------------------------------------------------

def _compress(major, minor, values, shape, layout, index_dtype=np.int64):
    """The compressed array of entries (major[k], minor[k]) -> values[k], already sorted by (major, minor)
    and distinct; ``major`` is the row for CSR, the column for CSC."""
    n = shape[0] if layout is sparse_csr else shape[1]
    counts = np.bincount(major, minlength=n) if len(major) else np.zeros(n, np.int64)
    ci = np.zeros(n + 1, index_dtype)
    np.cumsum(counts, out=ci[1:])
    return CompressedArray(layout, ci, np.asarray(minor, index_dtype).copy(), values, shape)


def coo_parts(a):
    """(rows, cols, values) of a compressed array, in its own storage order."""
    major = expand_compressed(a.compressed_indices)
    return (major, a.plain_indices, a.values) if a.is_csr else (a.plain_indices, major, a.values)


def _from_entries(rows, cols, values, shape, layout, index_dtype=np.int64):
    """Compress distinct entries given in any order."""
    major, minor = (rows, cols) if layout is sparse_csr else (cols, rows)
    order = np.lexsort((minor, major))
    return _compress(major[order], minor[order], values[order], shape, layout, index_dtype)


def as_csr(a):
    """``a`` as a CSR array (a CSC one is re-sorted by rows)."""
    if a.is_csr:
        return a
    r, c, v = coo_parts(a)
    return _from_entries(r, c, v, a.shape, sparse_csr, a.compressed_indices.dtype)


def _to_compressed(a, layout):
    if isinstance(a, CompressedArray):
        if a.layout is layout:
            return a.copy()
        r, c, v = coo_parts(a)
        return _from_entries(r, c, v.copy(), a.shape, layout, a.compressed_indices.dtype)
    if isinstance(a, COOArray):
        _check_2d(a.shape, layout)
        a = coalesce(a)
        return _from_entries(a.indices[0], a.indices[1], a.values.copy(), a.shape, layout)
    _check_2d(a.shape, layout)
    nz = np.nonzero(a) if layout is sparse_csr else np.nonzero(a.T)[::-1]
    return _from_entries(nz[0], nz[1], a[nz], a.shape, layout)


def _check_2d(shape, layout):
    if len(shape) != 2:
        raise NotImplementedError(f"ember: {layout.name} tensors are 2-D (torch's batch and dense dimensions are "
                                  f"not supported), got a tensor of {len(shape)} dimensions")


def _to_sparse_csr(a, dense_dim=None):
    return _to_compressed(a, sparse_csr)


def _to_sparse_csc(a, dense_dim=None):
    return _to_compressed(a, sparse_csc)


def to_dense(a, dtype=None, masked_grad=None):
    out = np.zeros(a.shape, a.values.dtype if dtype is None else dtype)
    r, c, v = coo_parts(a)
    np.add.at(out, (r, c), v)       # an unchecked tensor may repeat an index: its values add up, as torch's
    return out


def _dense(a):
    if isinstance(a, CompressedArray):
        return to_dense(a)
    if isinstance(a, COOArray):
        out = np.zeros(a.shape, a.values.dtype)
        np.add.at(out, tuple(a.indices), a.values)
        return out
    return np.asarray(a)


def to_sparse(a, sparse_dim=None):
    """CSR/CSC -> COO, coalesced (torch's row-major order)."""
    r, c, v = coo_parts(as_csr(a))
    return COOArray(np.stack([r, c]).astype(np.int64), v.copy(), a.shape, True)


def _compressed_tensor(compressed_indices, plain_indices, values, size, dtype=None, layout=None, device=None,
                       pin_memory=False):
    return CompressedArray(layout, compressed_indices.copy(), plain_indices.copy(), values.copy(), size)


def _convert_indices_from_csr_to_coo(crow_indices, col_indices, out_int32=False, transpose=False):
    rows = expand_compressed(crow_indices)
    out = np.stack([col_indices, rows] if transpose else [rows, col_indices])
    return out.astype(np.int32 if out_int32 else np.int64)


def _convert_indices_from_coo_to_csr(index, size, out_int32=False):
    """Row pointers of sorted row indices: entry i is the number of indices below i."""
    return np.searchsorted(index, np.arange(size + 1), side='left').astype(np.int32 if out_int32 else np.int64)


def sparse_mask(dense, mask):
    r, c, _ = coo_parts(mask)
    return CompressedArray(mask.layout, mask.compressed_indices.copy(), mask.plain_indices.copy(),
                           _dense(dense)[r, c], mask.shape)


# --- products ------------------------------------------------------------------------------------------

def _spmm(a, d):
    """Compressed ``a`` @ dense matrix ``d``: row i sums values * rows of ``d`` over its range of entries."""
    a = as_csr(a)
    dt = np.result_type(a.values.dtype, d.dtype)
    out = np.zeros((a.shape[0], d.shape[1]), dt)
    if a.nnz:
        prod = a.values.astype(dt, copy=False)[:, None] * d[a.plain_indices]
        starts = a.compressed_indices[:-1]
        rows = np.flatnonzero(np.diff(a.compressed_indices))     # rows with entries: their ranges tile [0, nnz)
        out[rows] = np.add.reduceat(prod, starts[rows], axis=0)
    return out


def mm(a, b):
    """compressed @ dense and dense @ compressed give dense (torch's layouts); compressed @ compressed gives CSR."""
    if isinstance(a, CompressedArray) and isinstance(b, CompressedArray):
        return _to_compressed(_spmm(a, to_dense(b)), sparse_csr)
    if isinstance(a, CompressedArray):
        return _spmm(a, _dense(b))
    return np.ascontiguousarray(_spmm(b.transposed(), _dense(a).T).T)


def mv(a, vec):
    return _spmm(a, vec[:, None])[:, 0]


def matmul(a, b):
    if isinstance(a, CompressedArray) and np.ndim(b) == 1:
        return mv(a, b)
    if isinstance(b, CompressedArray) and np.ndim(a) == 1:
        return mv(b.transposed(), a)
    return mm(a, b)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    p = mm(mat1, mat2)
    p = p if alpha == 1 else p * alpha
    if beta == 0:        # torch: beta=0 ignores self (its nan and inf too)
        return p
    return (p + (_dense(self) if beta == 1 else _dense(self) * beta)).astype(p.dtype, copy=False)


# --- torch.sparse.mm(csr, dense, reduce=...): torch's _sparse_mm_reduce_impl and its backward --------------
# NOTE [spmm reduce]: out[m, k] reduces val[e] * other[col[e], k] over row m's entries e (a row with none gives
# 0); 'mean' divides the sum by the row's count. 'amax'/'amin' also give, per output, the entry that won
# (torch's arg_out): the first of equal ones, the last NaN where there is one, nnz where none beat the start
# value (-inf for amax, +inf for amin); the backward sends each output's gradient to that entry only.

_INIT = {'amax': -np.inf, 'amin': np.inf}
_NAMES = {'max': 'amax', 'min': 'amin'}     # torch's other names for them


def _opmath(a):
    """Half and bfloat16 products and reductions run in float32, as torch's opmath type."""
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def _row_ranges(a):
    """Each entry's row, each row's count, and the rows with entries and their first entries."""
    counts = np.diff(a.compressed_indices)
    rows = np.flatnonzero(counts)
    return expand_compressed(a.compressed_indices), counts, rows, a.compressed_indices[:-1][rows]


def _sparse_mm_reduce_impl(a, other, reduce):
    """(out, arg_out) of CSR ``a`` @ dense ``other`` reduced by ``reduce`` (NOTE [spmm reduce]); arg_out is empty
    for 'sum'/'mean'. torch computes arg_out only when grad mode is on and an input requires grad; here always."""
    col, nnz, reduce = a.plain_indices, a.nnz, _NAMES.get(reduce, reduce)
    out = np.zeros((a.shape[0], other.shape[1]), other.dtype)
    arg = np.empty((0,), col.dtype)
    if not nnz:
        return out, arg
    _, counts, rows, starts = _row_ranges(a)
    prod = _opmath(a.values)[:, None] * _opmath(other)[col]
    if reduce in ('sum', 'mean'):
        seg = np.add.reduceat(prod, starts, axis=0)
        out[rows] = seg / counts[rows][:, None] if reduce == 'mean' else seg
        return out, arg
    seg = (np.maximum if reduce == 'amax' else np.minimum).reduceat(prod, starts, axis=0)
    out[rows] = seg
    return out, _arg_out(prod, seg, rows, starts, counts, reduce, (out.shape[0], out.shape[1]), col.dtype)


def _arg_out(prod, seg, rows, starts, counts, reduce, shape, index_dtype):
    nnz = prod.shape[0]
    e = np.arange(nnz)[:, None]
    first = np.minimum.reduceat(np.where(prod == np.repeat(seg, counts[rows], axis=0), e, nnz), starts, axis=0)
    first[seg == _INIT[reduce]] = nnz            # no entry beat the start value: the output keeps it, as torch's
    last_nan = np.maximum.reduceat(np.where(np.isnan(prod), e, -1), starts, axis=0)
    arg = np.full(shape, nnz, index_dtype)
    arg[rows] = np.where(last_nan >= 0, last_nan, first)
    return arg


def _sparse_mm_reduce_impl_backward(a, grad, other, reduce, arg_out, output_mask):
    """Gradients of _sparse_mm_reduce_impl for ``a``'s values (a CSR tensor of its pattern) and ``other``."""
    col, val, reduce = a.plain_indices, _opmath(a.values), _NAMES.get(reduce, reduce)
    g, o = _opmath(np.asarray(grad)), _opmath(other)
    if not a.nnz:
        gv, go = val, np.zeros_like(o)
    elif reduce in ('amax', 'amin'):
        gv, go = _arg_backward(col, val, g, o, arg_out, a.nnz)
    else:
        row, counts, _, _ = _row_ranges(a)
        scale = 1 / counts[row] if reduce == 'mean' else None
        gv = np.einsum('ek,ek->e', g[row], o[col]) if output_mask[0] else None
        w = val if scale is None else val * scale
        go = _spmm(a.with_values(w).transposed(), g) if output_mask[1] else None
        gv = gv if scale is None or gv is None else gv * scale
    gs = (CompressedArray(a.layout, a.compressed_indices.copy(), col.copy(), gv.astype(a.values.dtype), a.shape)
          if output_mask[0] else None)
    return gs, (go.astype(other.dtype, copy=False) if output_mask[1] else None)


def _arg_backward(col, val, g, o, arg_out, nnz):
    """Each output's gradient to the entry that won it (none where arg_out is nnz)."""
    m, k = np.nonzero(arg_out != nnz)
    e = arg_out[m, k]
    c = col[e]
    gv = np.bincount(e, weights=g[m, k] * o[c, k], minlength=nnz)
    go = np.bincount(c * o.shape[1] + k, weights=val[e] * g[m, k], minlength=o.size).reshape(o.shape)
    return gv, go


# --- pointwise and structure ----------------------------------------------------------------------------

def _same_layout(r, layout):
    """A COO result back in ``layout``."""
    return _to_compressed(r, layout)


def mul(a, b):
    if isinstance(a, CompressedArray) and isinstance(b, CompressedArray):
        return _same_layout(coo_mul(to_sparse(a), to_sparse(b)), a.layout)
    if not isinstance(a, CompressedArray):
        a, b = b, a
    if np.ndim(b) != 0:
        raise RuntimeError(f"mul({a.layout.name}, dense): ember multiplies a compressed sparse tensor by a number, "
                           f"a 0-d tensor or a tensor of its layout, got a dense operand of shape "
                           f"{list(np.shape(b))}")
    return CompressedArray(a.layout, a.compressed_indices.copy(), a.plain_indices.copy(), a.values * b, a.shape)


def add(a, b, alpha=1):
    if isinstance(a, CompressedArray) and isinstance(b, CompressedArray):
        return _same_layout(coalesce(coo_add(to_sparse(a), to_sparse(b), alpha)), a.layout)
    bd = _dense(b)
    return _dense(a) + (bd * alpha if alpha != 1 else bd)


def neg(a):
    return CompressedArray(a.layout, a.compressed_indices.copy(), a.plain_indices.copy(), -a.values, a.shape)


def t(a):
    return a.transposed().copy()


def transpose(a, dim0, dim1):
    if dim0 % 2 == dim1 % 2:
        return a.copy()
    return t(a)


def _to_copy(a, dtype=None, device=None, non_blocking=False):
    return a.astype(dtype) if dtype is not None else a.copy()


def clone(a, memory_format=None):
    return a.copy()


def detach(a):
    return CompressedArray(a.layout, a.compressed_indices, a.plain_indices, a.values, a.shape)    # shares, as a view


def sum_dim(a, dim=None, keepdim=False, dtype=None):
    if dim is None or (isinstance(dim, (list, tuple)) and sorted(d % 2 for d in dim) == [0, 1]):
        out = np.asarray(a.values.sum(dtype=dtype))
        return out.reshape(1, 1) if keepdim else out
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    raise NotImplementedError(f"ember: sum of a {a.layout.name} tensor over dimension {dim} is not supported "
                              f"(only over every dimension)")


def values(a):
    # the tensor's own values, as torch's values() is a view of them (PyG fills a clone's values() in place)
    return a.values


def compressed_indices(a):
    return a.compressed_indices.copy()


def plain_indices(a):
    return a.plain_indices.copy()


KERNELS = {
    'to_dense': to_dense, 'to_sparse': to_sparse, '_to_sparse_csr': _to_sparse_csr, '_to_sparse_csc': _to_sparse_csc,
    'sparse_mask': sparse_mask, 'mm': mm, 'mv': mv, 'matmul': matmul, 'addmm': addmm, '_sparse_addmm': addmm,
    'mul.Tensor': mul, 'add.Tensor': add, 'neg': neg, 't': t, 'transpose.int': transpose, '_to_copy': _to_copy,
    'clone': clone, 'detach': detach, 'sum.dim_IntList': sum_dim, 'values': values,
    'crow_indices': compressed_indices, 'ccol_indices': compressed_indices, 'col_indices': plain_indices,
    'row_indices': plain_indices, '_sparse_mm_reduce_impl': _sparse_mm_reduce_impl,
    '_sparse_mm_reduce_impl_backward': _sparse_mm_reduce_impl_backward,
}
CPU_KERNELS = {'sparse_compressed_tensor.comp_plain_value_size': _compressed_tensor, '_to_sparse_csr': _to_sparse_csr,
               '_to_sparse_csc': _to_sparse_csc, '_convert_indices_from_csr_to_coo': _convert_indices_from_csr_to_coo,
               '_convert_indices_from_coo_to_csr': _convert_indices_from_coo_to_csr}
COO_KERNELS = {'_to_sparse_csr': _to_sparse_csr, '_to_sparse_csc': _to_sparse_csc}
