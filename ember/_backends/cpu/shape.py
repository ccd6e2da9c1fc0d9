"""CPU kernels for joining and shape operators (NumPy only). Shapes were checked by the meta functions
in ember/_ops/shape.py; kernels return new arrays, never views of their inputs."""
import numpy as np


def _wrap(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _cat(arrays, dim):
    keep = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)]
    if not keep:
        return np.concatenate(arrays)
    return np.concatenate(keep, axis=_wrap(dim, keep[0].ndim))


def _stack(arrays, dim):
    return np.stack(arrays, axis=_wrap(dim, arrays[0].ndim + 1))


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


KERNELS = {
    'cat': _cat,
    'stack': _stack,
    'slice_scatter': _slice_scatter,
    'select_scatter': _select_scatter,
    'diagonal_scatter': _diagonal_scatter,
    '_strided_index': _strided_index,
    'unfold_backward': _unfold_backward,
}
