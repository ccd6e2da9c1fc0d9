"""CPU kernels for joining and shape operators (NumPy only). Shapes were checked by the meta functions
in ember/_ops/shape.py; kernels return new arrays, never views of their inputs."""
import numpy as np

from ._fp import result_type as _result_type
from ._layout import c_order


def _wrap(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _cat(arrays, dim):
    # NumPy keeps the inputs' common dimension order; the meta function's strides fix the layout where torch's differs
    keep = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)]
    if len({a.dtype for a in arrays}) > 1:
        dt = _result_type(arrays)
        arrays, keep = [a.astype(dt, copy=False) for a in arrays], [a.astype(dt, copy=False) for a in keep]
    if not keep:
        return np.concatenate(arrays)
    return np.concatenate(keep, axis=_wrap(dim, keep[0].ndim))


def _stack(arrays, dim):
    # C order, as torch's CPU stack (np.stack alone keeps a common permuted layout); channels_last inputs stacked
    # along an existing dimension are laid out again by the meta function's strides, torch's cat layout
    # one assignment per input into the result (np.stack's expand_dims and concatenate cost 1.5-3x this loop)
    a0 = arrays[0]
    d = _wrap(dim, a0.ndim + 1)
    out = np.empty(a0.shape[:d] + (len(arrays),) + a0.shape[d:], _result_type(arrays))
    rows = out if d == 0 else np.moveaxis(out, d, 0)
    for i, a in enumerate(arrays):
        rows[i] = a
    return out


def _slice_scatter(a, src, dim, start, end, step):
    out = a.copy()
    d = _wrap(dim, a.ndim)
    out[(slice(None),) * d + (slice(start, end, step),)] = src
    return out


def _select_scatter(a, src, dim, index):
    out = a.copy()
    out[(slice(None),) * _wrap(dim, a.ndim) + (index,)] = src
    return out


def _diagonal_scatter(a, src, offset, dim1, dim2):
    out = a.copy()
    v = np.moveaxis(out, (_wrap(dim1, a.ndim), _wrap(dim2, a.ndim)), (-2, -1))
    i = np.arange(src.shape[-1])
    v[..., i + max(-offset, 0), i + max(offset, 0)] = src
    return out


def _strided_index(size, stride, offset, device):
    idx = np.asarray(offset, np.int64)
    for n, s in zip(size, stride):
        idx = idx[..., None] + np.arange(n, dtype=np.int64) * s
    return idx.reshape(-1)


def _unfold_backward(g, input_sizes, dim, size, step):
    input_sizes = tuple(input_sizes)
    if not input_sizes:
        return g.reshape(())
    d = _wrap(dim, len(input_sizes))
    out = np.zeros(input_sizes, g.dtype)
    gm = np.moveaxis(g, d, -2)            # (..., windows, size)
    om = np.moveaxis(out, d, -1)          # a view of out: (..., length)
    n = gm.shape[-2]
    for j in range(size):                 # a loop over the window, each step vectorised over all windows
        om[..., j:j + step * (n - 1) + 1:step] += gm[..., j]
    return out


def _ints(v):
    return (int(v),) if not isinstance(v, (list, tuple)) else tuple(int(x) for x in v)


def _flip(a, dims):
    # the result keeps the input's dimension order, as torch's TensorIterator output does
    return np.flip(a, tuple(_wrap(d, a.ndim) for d in dims)).copy(order='K') if dims else a.copy(order='K')


def _roll(a, shifts, dims):
    shifts, dims = _ints(shifts), _ints(dims)
    if not dims:
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return np.roll(a, shifts, tuple(_wrap(d, a.ndim) for d in dims))


def _repeat(a, repeats):
    repeats = _ints(repeats)
    a = a.reshape((1,) * (len(repeats) - a.ndim) + a.shape)
    return np.tile(a, repeats) if repeats else a.copy()


def _repeats_index(repeats, output_size):
    repeats = repeats.reshape(-1)
    if repeats.size and repeats.min() < 0:
        raise RuntimeError("repeats can not be negative")
    idx = np.repeat(np.arange(repeats.size, dtype=repeats.dtype), repeats)
    if output_size is not None and idx.size != output_size:
        raise RuntimeError(f"allocated size does not match required size")
    return idx


def _tri_indices(lower):
    def k(row, col, offset, dtype, device):
        r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
        return np.stack([r, c]).astype(dtype)
    return k


def _constant_pad_nd(a, pad, value):
    pad = _ints(pad)
    nd = a.ndim
    widths = [(0, 0)] * nd
    crops = [slice(None)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        widths[d] = (max(lo, 0), max(hi, 0))
        crops[d] = slice(max(-lo, 0), a.shape[d] - max(-hi, 0))
    a = a[tuple(crops)]
    if a.size == 0 or any(w != (0, 0) for w in widths):
        out = np.full(tuple(n + l + r for n, (l, r) in zip(a.shape, widths)), value, a.dtype) \
            if not isinstance(value, bool) or a.dtype == np.bool_ else \
            np.full(tuple(n + l + r for n, (l, r) in zip(a.shape, widths)), value).astype(a.dtype)
        out[tuple(slice(l, l + n) for n, (l, r) in zip(a.shape, widths))] = a
        return out
    return a.copy()


def _unique2(a, sorted, return_inverse, return_counts):
    out, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    inv = inv.reshape(a.shape).astype(np.int64) if return_inverse else np.empty(0, np.int64)
    cnt = cnt.astype(np.int64) if return_counts else np.empty(0, np.int64)
    return out, inv, cnt


def _unique_dim(a, dim, sorted, return_inverse, return_counts):
    d = _wrap(dim, a.ndim)
    if a.shape[d] == 0:
        return a.copy(), np.empty(0, np.int64), np.empty(0, np.int64)
    out, inv, cnt = np.unique(a, axis=d, return_inverse=True, return_counts=True)
    return out, inv.reshape(-1).astype(np.int64), cnt.astype(np.int64)     # torch returns all three here


def _unique_consecutive(a, return_inverse, return_counts, dim):
    if dim is None:
        flat = a.reshape(-1)
        change = flat[1:] != flat[:-1]
        moved = flat
    else:
        d = _wrap(dim, a.ndim)
        moved = np.moveaxis(a, d, 0)
        rows = moved.reshape(moved.shape[0], -1)
        change = (rows[1:] != rows[:-1]).any(axis=1) if rows.shape[1] else np.zeros(max(rows.shape[0] - 1, 0), bool)
    n = moved.shape[0]
    zero = np.zeros(1, np.int64)      # arrays, not lists, in concatenate: the device twin's CuPy takes no lists
    starts = np.concatenate((zero, np.nonzero(change)[0] + 1)).astype(np.int64) if n else np.zeros(0, np.int64)
    out = moved[starts]
    if dim is not None:
        out = np.moveaxis(out, 0, _wrap(dim, a.ndim))
    inv = np.cumsum(np.concatenate((zero, change.astype(np.int64)))) if n else np.zeros(0, np.int64)
    inv = inv.reshape(a.shape) if dim is None else inv
    cnt = np.diff(np.concatenate((starts, np.full(1, n, np.int64))))
    full = dim is not None        # torch fills inverse and counts whenever dim is given
    return (np.ascontiguousarray(out), inv.astype(np.int64) if return_inverse or full else np.empty(0, np.int64),
            cnt.astype(np.int64) if return_counts or full else np.empty(0, np.int64))


def _isclose(a, b, rtol, atol, equal_nan):
    if a.dtype == np.bool_:
        return np.equal(a, b)
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _searchsorted(seq, vals, out_int32, right, side, sorter):
    side = side or ('right' if right else 'left')
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    vals = np.asarray(vals)
    if seq.ndim == 1:
        return np.searchsorted(seq, vals, side=side)
    s2, v2 = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
    out = np.empty(v2.shape, np.int64)
    for i in range(s2.shape[0]):       # one vectorised search per boundary row
        out[i] = np.searchsorted(s2[i], v2[i], side=side)
    return out.reshape(vals.shape)


def _one_hot(a, num_classes):
    if a.size and a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(a.max()) + 1
    elif a.size and a.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (a[..., None] == np.arange(num_classes)).astype(np.int64)


def _pad_gather(mode):
    """reflection_pad{1,2,3}d / replication_pad{1,2,3}d: along each padded dimension, the input position each
    output position copies (mirrored without repeating the edge, or clamped to it); negative padding crops."""
    def kernel(a, padding):
        for i in range(len(padding) // 2):
            d, n = a.ndim - 1 - i, a.shape[a.ndim - 1 - i]
            j = np.arange(-padding[2 * i], n + padding[2 * i + 1])
            if mode == 'reflect':
                j = np.abs(j)
                j = np.where(j >= n, 2 * (n - 1) - j, j)
            a = np.take(a, j if mode == 'reflect' else np.clip(j, 0, n - 1), axis=d)
        return a
    return kernel


def _cdist(x1, x2, p, compute_mode):
    return _pnorm(np.abs(x1[..., :, None, :] - x2[..., None, :, :]), p)


def _euclidean_dist(x1, x2):
    """torch's matrix-product form: [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, clamped at 1e-30, square-rooted."""
    n1 = np.square(x1).sum(-1, keepdims=True)
    n2 = np.square(x2).sum(-1, keepdims=True)
    a = np.concatenate([x1 * x1.dtype.type(-2), n1, np.ones_like(n1)], -1)
    b = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(np.matmul(a, np.swapaxes(b, -1, -2)), a.dtype.type(1e-30)))


def _pdist(a, p):
    """Distances of the rows i < j, in row-major order of (i, j)."""
    i, j = np.triu_indices(a.shape[0], 1)
    return _pnorm(np.abs(a[i] - a[j]), p)


def _pnorm(d, p):
    """The p-norm over the last dimension of absolute differences ``d`` (p = 0 counts the nonzero ones)."""
    if p == 0:
        return (d != 0).sum(-1).astype(d.dtype)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return np.sqrt((d * d).sum(-1))
    if np.isinf(p):
        return d.max(-1) if d.shape[-1] else d.sum(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


KERNELS = {
    'cat': _cat,
    'stack': _stack,
    'slice_scatter': _slice_scatter,
    'select_scatter': _select_scatter,
    'diagonal_scatter': _diagonal_scatter,
    '_strided_index': _strided_index,
    'unfold_backward': _unfold_backward,
    'flip': _flip,
    'roll': c_order(_roll),
    'repeat': _repeat,
    'repeat_interleave.Tensor': _repeats_index,
    'tril': lambda a, k: np.tril(a, k),
    'triu': lambda a, k: np.triu(a, k),
    'tril_indices': _tri_indices(True),
    'triu_indices': _tri_indices(False),
    'constant_pad_nd': _constant_pad_nd,
    '_unique2': _unique2,
    'unique_dim': _unique_dim,
    'unique_consecutive': _unique_consecutive,
    'isclose': _isclose,
    'searchsorted.Tensor': _searchsorted,
    'searchsorted.Scalar': _searchsorted,
    'bucketize.Tensor': lambda a, b, out_int32, right: np.searchsorted(b, a, side='right' if right else 'left'),
    'one_hot': _one_hot,
    '_cdist_forward': _cdist,
    '_euclidean_dist': _euclidean_dist,
    '_pdist_forward': _pdist,
    **{f'{name}_pad{k}d': _pad_gather(mode) for mode, name in (('reflect', 'reflection'), ('replicate', 'replication'))
       for k in (1, 2, 3)},
}
