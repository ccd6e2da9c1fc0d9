"""CPU kernels for indexing operators (NumPy only).

Shapes and dtypes were checked by the meta functions in ember/_ops/indexing.py;
index *values* are data, so they are checked here, before anything is written
(kernels never write into their inputs: they return new arrays).
"""
import numpy as np


def _wrap(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _check_bounds(index, n, dim):
    """torch's message for an index value outside [0, n) (negative values are errors too)."""
    if index.size and (index.min() < 0 or index.max() >= n):
        bad = index[(index < 0) | (index >= n)].flat[0]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {dim} with size {n}")


def _as1(a):
    return a.reshape(1) if a.ndim == 0 else a


def _index_select(a, dim, index):
    d = _wrap(dim, a.ndim)
    a1 = _as1(a)
    index = index.reshape(-1)
    n = a1.shape[d]
    if index.size and (index.min() < 0 or index.max() >= n):
        raise IndexError("index out of range in self")
    r = np.take(a1, index, axis=d)
    return r.reshape(()) if a.ndim == 0 else r


def _index_add(a, dim, index, source, alpha):
    d = _wrap(dim, a.ndim)
    out = np.array(a, copy=True)
    o1 = _as1(out)
    index = index.reshape(-1)
    _check_bounds(index, o1.shape[d], d)
    src = source if alpha == 1 else source * np.asarray(alpha).astype(a.dtype)
    src = src.reshape(o1.shape[:d] + (index.size,) + o1.shape[d + 1:])
    np.add.at(o1, (slice(None),) * d + (index,), src)
    return out


def _grid(index, d):
    """Index arrays addressing ``index``'s positions, with ``index`` itself along ``d``."""
    nd = index.ndim
    return tuple(index if k == d else np.arange(n).reshape((n,) + (1,) * (nd - k - 1))
                 for k, n in enumerate(index.shape))


def _gather(a, dim, index, sparse_grad):
    d = _wrap(dim, a.ndim)
    if index.size == 0:
        return np.empty(index.shape, a.dtype)
    a1, i1 = _as1(a), _as1(index)
    _check_bounds(i1, a1.shape[d], d)
    return a1[_grid(i1, d)].reshape(index.shape)


def _scatter_add(a, dim, index, src):
    d = _wrap(dim, a.ndim)
    out = np.array(a, copy=True)
    if index.size == 0:
        return out
    o1, i1, s1 = _as1(out), _as1(index), _as1(src)
    _check_bounds(i1, o1.shape[d], d)
    s1 = s1[tuple(slice(0, n) for n in i1.shape)]
    np.add.at(o1, _grid(i1, d), s1)
    return out


KERNELS = {
    'index_select': _index_select,
    'index_add': _index_add,
    'gather': _gather,
    'scatter_add': _scatter_add,
}
