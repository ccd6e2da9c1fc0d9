"""SparseCPU kernels: COOArrays and ndarrays in, COOArrays or ndarrays out (NOTE [sparse COO layout]).

Like the CPU kernels they know arrays only: no Tensors, no autograd. Each entry of ``KERNELS``
is registered for the SparseCPU dispatch key by ``ember/_backends/sparse/__init__.py`` through
ember.library, so the dispatcher reaches them for any call with a sparse argument. Operators
that build a sparse tensor from dense ones (``to_sparse``, the COO constructor) are in
``CPU_KERNELS``: their inputs are dense, so they run under the CPU key and return a COOArray.
"""
import numpy as np

from ..._core.coo import COOArray, linear_index


def _dense(a):
    if not isinstance(a, COOArray):
        return np.asarray(a)
    out = np.zeros(a.shape, a.values.dtype)
    if a.sparse_dim == 0:                               # no coordinates: every entry is the whole (dense) tensor
        out[...] = a.values.sum(0)
    elif a.nnz:
        np.add.at(out, tuple(a.indices), a.values)     # duplicates add up, as torch's to_dense does
    return out


def coalesce(a):
    """Sum duplicate columns and sort them in torch's (row-major) order."""
    if a.coalesced:
        return a
    sd = a.sparse_dim
    keys = linear_index(a.indices, a.shape[:sd])
    uniq, inv = np.unique(keys, return_inverse=True)
    vals = np.zeros((len(uniq),) + a.values.shape[1:], a.values.dtype)
    np.add.at(vals, inv.reshape(-1), a.values)
    idx = np.array(np.unravel_index(uniq, a.shape[:sd]), np.int64).reshape(sd, len(uniq))
    return COOArray(idx, vals, a.shape, True)


def _sparse_coo_tensor(sparse_dim, dense_dim, size, indices, values, is_coalesced=None):
    return COOArray(np.ascontiguousarray(indices, np.int64).copy(), values.copy(), size, bool(is_coalesced))


def to_sparse(a, sparse_dim=None):
    if isinstance(a, COOArray):
        return a.copy()
    sd = a.ndim if sparse_dim is None else sparse_dim
    if a.ndim == 0:                                    # a 0-d tensor: one entry with no coordinates, if nonzero
        keep = int(a != 0)
        return COOArray(np.zeros((0, keep), np.int64), a.reshape(1)[:keep].copy(), (), True)
    lead = a.reshape(a.shape[:sd] + (-1,)) if sd < a.ndim else a[..., None]
    nz = np.nonzero(np.any(lead != 0, axis=-1))        # a block is kept when any of its entries is nonzero
    idx = np.array(nz, np.int64).reshape(sd, -1)
    return COOArray(idx, a[nz].copy(), a.shape, True)


def to_dense(a, dtype=None, masked_grad=None):
    out = _dense(a)
    return out if dtype is None else out.astype(dtype)


def sparse_mask(dense, mask):
    m = coalesce(mask)
    return COOArray(m.indices.copy(), np.asarray(dense)[tuple(m.indices)].copy(), m.shape, True)


def _sparse_values_at(src, indices):
    """The entries of ``src`` (dense or sparse) at the columns of ``indices`` (the COO constructor's backward)."""
    if not isinstance(src, COOArray):
        return np.asarray(src)[tuple(indices)].copy()
    c = coalesce(src)
    sizes = c.shape[:c.sparse_dim]
    keys, want = linear_index(c.indices, sizes), linear_index(indices, sizes)
    pos = np.searchsorted(keys, want)
    pos = np.minimum(pos, max(len(keys) - 1, 0))
    hit = (keys[pos] == want) if len(keys) else np.zeros(len(want), bool)
    out = np.zeros((len(want),) + c.values.shape[1:], c.values.dtype)
    out[hit] = c.values[pos[hit]]
    return out


def values(a):
    # the tensor's own values, as torch's values() is a view of them (PyG fills a clone's values() in place)
    return a.values


def indices(a):
    return a.indices.copy()


def mm(a, b):
    """sparse @ dense and dense @ sparse give dense (torch's layouts); sparse @ sparse gives sparse."""
    if isinstance(a, COOArray) and isinstance(b, COOArray):
        return to_sparse(_spmm(a, _dense(b)))
    if isinstance(a, COOArray):
        return _spmm(a, b)
    return _spmm(_transpose(b, 0, 1), np.asarray(a).T).T.copy()


def linear(a, weight, bias=None):
    """A 2-D COO input times a dense weight's transpose, plus the bias: dense, as torch's (PyG's sparse node
    features); the gradients come from linear's formulas, through mm's sparse kernel."""
    if a.sparse_dim != 2 or a.dense_dim or isinstance(weight, COOArray) or np.ndim(weight) != 2:
        raise RuntimeError("linear: ember's SparseCPU kernel takes a 2-D sparse input and a dense matrix weight")
    out = _spmm(a, np.asarray(weight).T)
    return out if bias is None else (out + np.asarray(bias)).astype(out.dtype, copy=False)


def _sparse_addmm(self, mat1, mat2, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2), ``self`` dense (torch.sparse.mm's operator, with beta=0)."""
    p = mm(mat1, mat2)
    p = p if alpha == 1 else p * alpha
    if beta == 0:
        return p
    return (p + (np.asarray(self) if beta == 1 else np.asarray(self) * beta)).astype(p.dtype, copy=False)


def _spmm(s, d):
    """Row i of the product gathers value * row j of ``d`` for each entry (i, j): one scatter-add."""
    dt = np.result_type(s.values.dtype, d.dtype)
    out = np.zeros((s.shape[0], d.shape[1]), dt)
    if s.nnz:
        np.add.at(out, s.indices[0], s.values[:, None].astype(dt) * d[s.indices[1]])
    return out


def _transpose(a, d0, d1):
    sd = a.sparse_dim
    d0, d1 = sorted((d0 % a.ndim, d1 % a.ndim))
    shape = list(a.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    if d1 < sd:          # both sparse: swap index rows
        idx = a.indices.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        return COOArray(idx, a.values.copy(), shape, False)
    if d0 >= sd:         # both dense: swap value axes
        return COOArray(a.indices.copy(), np.swapaxes(a.values, d0 - sd + 1, d1 - sd + 1).copy(), shape, a.coalesced)
    raise RuntimeError(f"transpose(): sparse tensor cannot transpose a sparse dimension ({d0}) with a dense "
                       f"dimension ({d1})")


def index_select(a, dim, index):
    """Slices of a sparse tensor in the order ``index`` names them: along a sparse dimension, every entry whose
    coordinate there is index[j] appears once per such j, with that coordinate renumbered j; along a dense
    dimension, the values' axis is indexed."""
    dim = dim % len(a.shape)
    index = np.asarray(index, np.int64).reshape(-1)
    n = a.shape[dim]
    if index.size and (index.min() < -n or index.max() >= n):
        bad = int(index[(index < -n) | (index >= n)][0])
        raise IndexError(f"index_select(): index contains {bad} that is out of range for tensor of size "
                         f"{list(a.shape)} at dimension {dim}")
    index = np.where(index < 0, index + n, index)
    shape = a.shape[:dim] + (index.size,) + a.shape[dim + 1:]
    sd = a.sparse_dim
    if dim >= sd:
        return COOArray(a.indices.copy(), np.take(a.values, index, axis=dim - sd + 1), shape, a.coalesced)
    entry, j = np.nonzero(a.indices[dim][:, None] == index[None, :])
    idx = a.indices[:, entry].copy()
    idx[dim] = j
    return COOArray(idx, a.values[entry].copy(), shape, False)


def transpose(a, dim0, dim1):
    return _transpose(a, dim0, dim1)


def t(a):
    if a.ndim > 2 or a.dense_dim > 0 and a.ndim == 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is "
                           f"{a.sparse_dim} sparse and {a.dense_dim} dense dimensions")
    return _transpose(a, 0, 1) if a.ndim == 2 else a.copy()


def _broadcast_at(a, other):
    """``other`` (number or dense array) broadcast to ``a``'s shape, read at ``a``'s entries."""
    o = np.asarray(other)
    if o.ndim == 0:
        return o
    return np.broadcast_to(o, a.shape)[tuple(a.indices)]


def mul(a, b):
    if isinstance(a, COOArray) and isinstance(b, COOArray):     # the intersection of the patterns
        a, b = coalesce(a), coalesce(b)
        sizes = a.shape[:a.sparse_dim]
        ka, kb = linear_index(a.indices, sizes), linear_index(b.indices, sizes)
        common, ia, ib = np.intersect1d(ka, kb, return_indices=True)
        return COOArray(a.indices[:, ia].copy(), a.values[ia] * b.values[ib], a.shape, True)
    if not isinstance(a, COOArray):
        a, b = b, a
    if np.ndim(b) > a.ndim or np.broadcast_shapes(np.shape(b), a.shape) != a.shape:
        raise RuntimeError(f"mul(sparse, dense): the dense operand of shape {list(np.shape(b))} must broadcast "
                           f"to the sparse operand's shape {list(a.shape)}")
    return COOArray(a.indices.copy(), a.values * _broadcast_at(a, b), a.shape, a.coalesced)


def div(a, b):
    if isinstance(b, COOArray):
        raise RuntimeError("div(): a sparse divisor is not supported; divide by a dense tensor or a number")
    return COOArray(a.indices.copy(), a.values / _broadcast_at(a, b), a.shape, a.coalesced)


def add(a, b, alpha=1):
    # sizes and layouts were checked by torch's add_sparse rules (_ops/sparse.py: SPARSE_CHECKS)
    if isinstance(a, COOArray) and isinstance(b, COOArray):
        bv = b.values * alpha if alpha != 1 else b.values
        if not a.nnz or not b.nnz:
            return COOArray(np.concatenate([a.indices, b.indices], 1), np.concatenate([a.values, bv]), a.shape,
                            a.coalesced and b.coalesced)
        if a.coalesced and b.coalesced:     # the merge of two sorted, distinct lists: a coalesce of both
            return coalesce(COOArray(np.concatenate([a.indices, b.indices], 1), np.concatenate([a.values, bv]),
                                     a.shape, False))
        return _merge(a, b, bv)
    bd = _dense(b)
    return np.asarray(a) + (bd * alpha if alpha != 1 else bd)


def _merge(a, b, bv):
    """torch's add of COO tensors that are not both coalesced: one pass with a cursor in each, taking the entry
    with the smaller index, or both added when they are equal (MADGRAD adds a coalesced tensor to a masked one and
    reads the result's values against its inputs')."""
    sizes = a.shape[:a.sparse_dim]
    ka, kb = linear_index(a.indices, sizes).tolist(), linear_index(b.indices, sizes).tolist()
    take_a, take_b, ra, rb = [], [], [], []      # the entries taken, and their positions in the result
    i = j = n = 0
    while i < len(ka) or j < len(kb):
        first_a = j == len(kb) or (i < len(ka) and ka[i] <= kb[j])
        first_b = i == len(ka) or (j < len(kb) and kb[j] <= ka[i])
        if first_a:
            take_a.append(i); ra.append(n); i += 1
        if first_b:
            take_b.append(j); rb.append(n); j += 1
        n += 1
    idx = np.empty((a.indices.shape[0], n), np.int64)
    idx[:, ra] = a.indices[:, take_a]
    idx[:, rb] = b.indices[:, take_b]
    vals = np.zeros((n,) + a.values.shape[1:], np.result_type(a.values, bv))
    vals[ra] = a.values[take_a]
    vals[rb] += bv[take_b]
    return COOArray(idx, vals, a.shape, False)


def sub(a, b, alpha=1):
    """torch's sub of sparse operands: add with -alpha (a sparse minus a dense operand is refused as add's)."""
    return add(a, b, -alpha)


def neg(a):
    return COOArray(a.indices.copy(), -a.values, a.shape, a.coalesced)


def sum_dim(a, dim=None, keepdim=False, dtype=None):
    """torch.sparse.sum: over every sparse dimension the result is dense; over some of them, sparse."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        out = np.asarray(a.values.sum(dtype=dtype))
        return out.reshape((1,) * a.ndim) if keepdim else out
    dims = sorted({d % a.ndim for d in (dim if isinstance(dim, (list, tuple)) else [dim])})
    sd = a.sparse_dim
    sparse_red = [d for d in dims if d < sd]
    vals = a.values.sum(axis=tuple(d - sd + 1 for d in dims if d >= sd), dtype=dtype)
    if len(sparse_red) == sd:                      # every sparse dimension summed: a dense result
        out = vals.sum(0, dtype=dtype)
        return out.reshape([1 if d in dims else n for d, n in enumerate(a.shape)]) if keepdim else out
    if keepdim:
        raise RuntimeError("sum(): keepdim=True is not supported for a partial sum of a sparse tensor")
    keep = [d for d in range(sd) if d not in sparse_red]
    shape = [n for d, n in enumerate(a.shape) if d not in dims]
    return coalesce(COOArray(a.indices[keep], vals, shape, False))


def _to_copy(a, dtype=None, device=None, non_blocking=False):
    return a.astype(dtype) if dtype is not None else a.copy()


def clone(a, memory_format=None):
    return a.copy()


def detach(a):
    return COOArray(a.indices, a.values, a.shape, a.coalesced)      # shares the arrays, as a detached view does


def cat(tensors, dim=0):
    """torch's cat_sparse_impl (the meta function has checked the inputs): along a sparse dimension the index
    columns are joined, each piece's coordinate there shifted by the sizes before it; along a dense dimension the
    index columns are joined and each piece's values are padded with zeros to the joined extent. Entries are not
    merged, so the result is coalesced only when it has fewer than two (torch's rule for a new COO tensor)."""
    ref = next((a for a in tensors if not (a.ndim == 1 and a.shape[0] == 0)), tensors[0])
    d = dim % max(ref.ndim, 1)
    sd, sizes = tensors[0].sparse_dim, [a.shape[d] for a in tensors]
    shape = tensors[0].shape[:d] + (sum(sizes),) + tensors[0].shape[d + 1:]
    idx = np.concatenate([a.indices for a in tensors], 1)
    if d < sd:
        idx[d] += np.repeat(np.cumsum([0] + sizes[:-1]), [a.nnz for a in tensors])
        vals = np.concatenate([a.values for a in tensors])
    else:
        vals = np.concatenate(_padded_values(tensors, d - sd + 1, sizes))
    return COOArray(idx, vals, shape, idx.shape[1] < 2)


def _padded_values(tensors, axis, sizes):
    """Each piece's values placed at its offset along ``axis`` of zeros as long as the joined extent."""
    dt = np.result_type(*[a.values.dtype for a in tensors])
    out, start = [], 0
    for a, n in zip(tensors, sizes):
        v = np.zeros(a.values.shape[:axis] + (sum(sizes),) + a.values.shape[axis + 1:], dt)
        v[(slice(None),) * axis + (slice(start, start + n),)] = a.values
        out.append(v)
        start += n
    return out


def _unsqueeze(a, d):
    """A new dimension of size 1 at ``d``: sparse (an index row of zeros) when d <= sparse_dim, as torch's, else a
    values axis. The arrays are shared with ``a``."""
    shape = a.shape[:d] + (1,) + a.shape[d:]
    if d <= a.sparse_dim:
        return COOArray(np.insert(a.indices, d, 0, axis=0), a.values, shape, a.coalesced)
    return COOArray(a.indices, np.expand_dims(a.values, d - a.sparse_dim + 1), shape, a.coalesced)


def stack(tensors, dim=0):
    """torch's stack: cat of the inputs unsqueezed at ``dim``."""
    d = dim % (tensors[0].ndim + 1)
    return cat([_unsqueeze(a, d) for a in tensors], d)


def select(a, dim, index):
    """torch's select_sparse: at a sparse dimension, the entries with that coordinate, the dimension removed (a dense
    result, their values summed, when no sparse dimension is left); at a dense dimension, the values indexed."""
    d = dim % a.ndim if -a.ndim <= dim < a.ndim else dim
    if not 0 <= d < a.ndim or not -a.shape[d] <= index < a.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(a.shape)} at dimension {dim}")
    index %= a.shape[d]
    shape, sd = a.shape[:d] + a.shape[d + 1:], a.sparse_dim
    if d >= sd:
        return COOArray(a.indices.copy(), np.take(a.values, index, axis=d - sd + 1), shape, a.nnz < 2)
    keep = a.indices[d] == index
    if sd == 1:
        return a.values[keep].sum(0)
    idx = np.delete(a.indices[:, keep], d, axis=0)
    return COOArray(idx, a.values[keep].copy(), shape, idx.shape[1] < 2)


def unsqueeze(a, dim):
    n = a.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    r = _unsqueeze(a, dim % n)
    return COOArray(r.indices.copy(), r.values.copy(), r.shape, r.nnz < 2)


def zeros_like(a, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """No entries, the same sparse and dense dimensions, coalesced (torch's zeros_like of a COO tensor)."""
    sd = a.sparse_dim
    return COOArray(np.zeros((sd, 0), np.int64), np.zeros((0,) + a.shape[sd:], dtype or a.values.dtype), a.shape,
                    True)


KERNELS = {
    'zeros_like': zeros_like, 'linear': linear, 'addmm': _sparse_addmm, 'mm': mm, 'matmul': mm, 'to_dense': to_dense, 'coalesce': coalesce, 'sparse_mask': sparse_mask,
    '_sparse_values_at': _sparse_values_at, '_values': values, 'values': values, '_indices': indices, 'transpose.int': transpose,
    't': t, 'mul.Tensor': mul, 'div.Tensor': div, 'add.Tensor': add, 'sub.Tensor': sub, 'neg': neg,
    'sum.dim_IntList': sum_dim, '_to_copy': _to_copy, 'clone': clone, 'detach': detach, 'to_sparse': to_sparse,
    '_sparse_addmm': _sparse_addmm, 'index_select': index_select, 'cat': cat, 'stack': stack,
    'unsqueeze': unsqueeze, 'select.int': select,
}
CPU_KERNELS = {'_sparse_coo_tensor_with_dims_and_tensors': _sparse_coo_tensor, 'to_sparse': to_sparse,
               '_sparse_values_at': _sparse_values_at}
