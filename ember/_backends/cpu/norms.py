"""CPU kernels for layer and group normalisation, forward and backward (batch norm is in nn_ops.py).

Every row and column sum is a GEMV (NOTE [row sums as GEMV] in _sums.py).
"""
import numpy as np

from ._sums import colsum as _colsum, rowsum as _rowsum, row_dots as _row_dots


def _prod(t):
    r = 1
    for x in t:
        r *= x
    return r


def _in_float32(args):
    """Half-precision (float16, bfloat16) arrays among ``args`` as float32: torch's kernels accumulate in float32,
    and NumPy's einsum has no bfloat16 loop at all; the adapter rounds the results to the meta dtypes."""
    return [a.astype(np.float32) if getattr(a, 'dtype', None) is not None and a.dtype.itemsize == 2
            and a.dtype.kind not in 'iub' else a for a in args]


def native_layer_norm(x, normalized_shape, w, b, eps):
    if x.dtype.itemsize == 2 and x.dtype.kind not in 'iub':
        return native_layer_norm(*_in_float32((x, normalized_shape, w, b, eps)))
    k = 1 if isinstance(normalized_shape, (int, np.integer)) else len(normalized_shape)
    lead = x.shape[:x.ndim - k]
    stat_shape = lead + (1,) * k
    n = _prod(x.shape[x.ndim - k:])
    if x.size == 0:
        return x.copy(), np.full(stat_shape, np.nan, x.dtype), np.full(stat_shape, np.nan, x.dtype)
    x2 = x.reshape(-1, n)
    mean = _rowsum(x2)
    mean *= x.dtype.type(1.0 / n)
    xc = x2 - mean[:, None]
    var = _row_dots(xc, xc) / n
    rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
    out = xc
    out *= rstd[:, None]
    out = out.reshape(x.shape)
    if w is not None:
        out *= w
    if b is not None:
        out += b
    return out, mean.astype(x.dtype, copy=False).reshape(stat_shape), rstd.reshape(stat_shape)


def native_layer_norm_backward(g, x, normalized_shape, mean, rstd, w, b, output_mask):
    """torch's layer-norm backward, in torch's own arrangement (LayerNormBackwardKernelImpl): per row, with
    gw = g * w, ds = sum(gw * x), db = sum(gw), B = (db * mean - ds) * rstd^3 / N, C = -B * mean - db * rstd / N,
    dx = gw * rstd + x * B + C; dw = sum over rows of g * (x - mean) * rstd, db = sum over rows of g.
    Six passes over the data; every sum is a GEMV (NOTE [row sums as GEMV])."""
    if x.dtype.itemsize == 2 and x.dtype.kind not in 'iub':
        return native_layer_norm_backward(*_in_float32((g, x, normalized_shape, mean, rstd, w, b, output_mask)))
    k = len(normalized_shape)
    n = 1
    for s in x.shape[x.ndim - k:]:
        n *= s
    rows = x.size // n if n else 0
    x2, g2 = x.reshape(rows, n), g.reshape(rows, n)
    mu, r = mean.reshape(rows), rstd.reshape(rows)
    wv = None if w is None else w.reshape(n)
    gx = g2 * x2
    dx = dw = db = None
    if output_mask[0]:
        ds = _rowsum(gx, wv)
        dsum = _rowsum(g2, wv)
        inv_n = 1.0 / n if n else 0.0
        B = (dsum * mu - ds) * (r * r * r) * x.dtype.type(inv_n)
        C = -B * mu - dsum * r * x.dtype.type(inv_n)
        dx = g2 * wv if wv is not None else g2.copy()
        dx *= r[:, None]
        dx += x2 * B[:, None]
        dx += C[:, None]
        dx = dx.reshape(x.shape)
    if output_mask[1] and w is not None:
        dw = (_colsum(gx, r) - _colsum(g2, mu * r)).reshape(w.shape)
    if output_mask[2] and b is not None:
        db = _colsum(g2).reshape(b.shape)
    return dx, dw, db


def native_group_norm(x, w, b, N, C, HxW, group, eps):
    """Layer norm over each group's C // group * HxW values, then the per-channel affine map."""
    if x.dtype.itemsize == 2 and x.dtype.kind not in 'iub':
        return native_group_norm(*_in_float32((x, w, b, N, C, HxW, group, eps)))
    n = C // group * HxW
    out, mean, rstd = native_layer_norm(x.reshape(N * group, n), (n,), None, None, eps)
    out = out.reshape(N, C, HxW)
    if w is not None:
        out *= w[:, None]
    if b is not None:
        out += b[:, None]
    return out.reshape(x.shape), mean.reshape(N, group), rstd.reshape(N, group)


def native_group_norm_backward(g, x, mean, rstd, w, N, C, HxW, group, output_mask):
    """torch's arrangement (GroupNormBackwardKernelImpl): dx is layer norm's input gradient of g * w over each
    group; with ds, db the per-(sample, channel) sums of g * x and g, dw = sum over samples of (ds - db * mean) *
    rstd and db sums db over samples."""
    if x.dtype.itemsize == 2 and x.dtype.kind not in 'iub':
        return native_group_norm_backward(*_in_float32((g, x, mean, rstd, w, N, C, HxW, group, output_mask)))
    n = C // group * HxW
    g3 = g.reshape(N, C, HxW)
    dx = dw = db = None
    if output_mask[0] and x.size == 0:
        dx = np.zeros(x.shape, x.dtype)
    elif output_mask[0]:
        gw = g3 * w[:, None] if w is not None else g3
        dx = native_layer_norm_backward(gw.reshape(N * group, n), x.reshape(N * group, n), (n,), mean.reshape(-1),
                                        rstd.reshape(-1), None, None, (True, False, False))[0].reshape(x.shape)
    if output_mask[1]:
        ds = (g3 * x.reshape(N, C, HxW)).sum(2)
        per_channel = lambda s: np.repeat(s.reshape(N, group), C // group, axis=1)
        dw = ((ds - g3.sum(2) * per_channel(mean)) * per_channel(rstd)).sum(0)
    if output_mask[2]:
        db = g3.sum((0, 2))
    return dx, dw, db


KERNELS = {
    'native_group_norm': native_group_norm,
    'native_group_norm_backward': native_group_norm_backward,
    'native_layer_norm': native_layer_norm,
    'native_layer_norm_backward': native_layer_norm_backward,
}
