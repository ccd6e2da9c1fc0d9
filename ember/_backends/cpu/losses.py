"""CPU kernels for the fused losses: nll_loss_forward/backward and their spatial (2d) forms.

Arrays in, arrays out. Shapes and dtypes were checked by the meta functions in ember/_ops/losses.py;
target *values* are data, so the bounds check ("Target 12 is out of bounds.") is made here, before
anything is computed. Every kernel works on a (rows, classes) view of its input: the 1-D (unbatched)
input is one row, the spatial input (N, C, H, W) is gathered along axis 1 with the same index arrays.

Reductions (torch's enum): 0 none, 1 mean, anything else sum. ``total_weight`` is the sum of the
kept samples' class weights (their count without weights); mean divides by it, so 0/0 is NaN as in
torch. Cost on (128, 10) float32: about 5 us a call (dispatch and autograd around it: ~20 us).
"""
import numpy as np

from ._fp import quiet
from ._sums import blas_sum

_NONE, _MEAN = 0, 1


def _kept(t, n_classes, ignore_index):
    """(safe targets, keep mask or None): ignored samples point at class 0 and are masked out;
    any other target outside [0, n_classes) raises torch's IndexError (the first one, in sample order)."""
    if ignore_index < 0 or ignore_index >= n_classes:
        # the common case (ignore_index=-100): one reduction proves every target valid and none ignored;
        # viewed as unsigned, negative targets are huge, so max() catches them too
        if not t.size or _umax(t) < n_classes:
            return t, None
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    if safe.size and _umax(safe) >= n_classes:
        bad = keep & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    return safe, keep


def _umax(t):
    return t.view(np.uint64).max() if t.dtype == np.int64 else t.max()


def _picked(picked, w, safe, keep):
    """(loss terms x[t] * w[t], per-sample weights or None for all ones); ignored samples are exact zeros
    in both, whatever their (possibly infinite) log-probabilities."""
    if keep is not None:
        picked = np.where(keep, picked, 0)
    if w is None:
        return picked, None
    ws = w.reshape(-1)[safe]
    if keep is not None:
        ws = np.where(keep, ws, 0)
    return picked * ws, ws


def _reduce(loss, ws, keep, reduction, dtype):
    """(output, total_weight) of the reducing forms; ``loss`` already carries the weights. Half precision
    (float16, bfloat16) accumulates in float32 and rounds once, as torch's kernel does."""
    acc = np.float32 if dtype.itemsize == 2 and dtype.kind not in 'iub' else None
    if ws is not None:
        total = np.add.reduce(ws, axis=None, dtype=acc)
    else:
        # np.asarray, not dtype.type(...): on a device, count_nonzero answers with a device array
        total = np.asarray(loss.size if keep is None else np.count_nonzero(keep), acc or dtype)
    out = 0 - np.add.reduce(loss, axis=None, dtype=acc)      # (not -sum: a sum of zeros gives 0., as torch's)
    out = out / total if reduction == _MEAN else out
    if acc is None:
        return out, total
    return np.asarray(out).astype(dtype), np.asarray(total).astype(dtype)


def nll_loss_forward(x, t, w, reduction, ignore_index):
    c, t1 = x.shape[-1], t.reshape(-1)
    safe, keep = _kept(t1, c, ignore_index)
    # no classes: every sample was ignored (else _kept raised), nothing to gather
    picked = x.reshape(t1.size, c)[np.arange(t1.size), safe] if c else np.zeros(t1.shape, x.dtype)
    loss, ws = _picked(picked, w, safe, keep)
    if reduction == _NONE and x.ndim == 2:
        return np.negative(loss), np.zeros((), x.dtype)
    if not t1.size:      # an empty batch: mean is 0/0
        return np.full((), np.nan if reduction == _MEAN else 0, x.dtype), np.zeros((), x.dtype)
    return _reduce(loss, ws, keep, reduction, x.dtype)


def _input_grad(g, t, w, reduction, total_weight, safe, keep, per_sample):
    """The value written at each sample's target class: -w[t] * g (g / total_weight for mean);
    a scalar when it is the same for every sample, else an array shaped like ``t``."""
    if per_sample:
        coef = -g.reshape(t.shape)
    else:
        g0 = g.reshape(())
        coef = -(g0 / total_weight.reshape(()) if reduction == _MEAN else g0)
    if w is not None:
        coef = w.reshape(-1)[safe] * coef
    return coef if keep is None else np.where(keep, coef, 0)


def nll_loss_backward(g, x, t, w, reduction, ignore_index, total_weight):
    c, t1 = x.shape[-1], t.reshape(-1)
    safe, keep = _kept(t1, c, ignore_index)
    gi = np.zeros(x.shape, x.dtype)
    if t1.size and c:
        coef = _input_grad(g, t1, w, reduction, total_weight, safe, keep, reduction == _NONE and x.ndim == 2)
        gi.reshape(t1.size, c)[np.arange(t1.size), safe] = coef
    return gi


def _spatial_index(t, safe):
    """The index that picks x[n, t[n, h, w], h, w] at every target position of an (N, C, H, W) input."""
    n, h, w = t.shape
    return np.arange(n).reshape(n, 1, 1), safe, np.arange(h).reshape(1, h, 1), np.arange(w).reshape(1, 1, w)


def nll_loss2d_forward(x, t, w, reduction, ignore_index):
    safe, keep = _kept(t, x.shape[1], ignore_index)
    picked = x[_spatial_index(t, safe)] if x.shape[1] else np.zeros(t.shape, x.dtype)
    loss, ws = _picked(picked, w, safe, keep)
    if reduction == _NONE:
        return np.negative(loss), np.zeros((), x.dtype)
    if not t.size:
        return np.full((), np.nan if reduction == _MEAN else 0, x.dtype), np.zeros((), x.dtype)
    return _reduce(loss, ws, keep, reduction, x.dtype)


def nll_loss2d_backward(g, x, t, w, reduction, ignore_index, total_weight):
    safe, keep = _kept(t, x.shape[1], ignore_index)
    gi = np.zeros(x.shape, x.dtype)
    if t.size and x.shape[1]:
        gi[_spatial_index(t, safe)] = _input_grad(g, t, w, reduction, total_weight, safe, keep,
                                                  reduction == _NONE)
    return gi


KERNELS = {
    'nll_loss_forward': quiet(nll_loss_forward),
    'nll_loss_backward': quiet(nll_loss_backward),
    'nll_loss2d_forward': quiet(nll_loss2d_forward),
    'nll_loss2d_backward': quiet(nll_loss2d_backward),
}


def binary_cross_entropy(x, t, w, reduction):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch's kernel does."""
    with np.errstate(divide='ignore'):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    if w is not None:
        loss = loss * w
    if reduction == 0:
        return loss
    s = np.add.reduce(loss, axis=None)
    return np.asarray(s / loss.size if reduction == 1 else s, dtype=x.dtype)


KERNELS['binary_cross_entropy'] = quiet(binary_cross_entropy)


def mse_loss(x, t, reduction):
    """(x - t)^2, reduced as the mean and sum kernels reduce (the values of ``(x - t).pow(2).mean()``): one BLAS
    pass where NOTE [sums as GEMV] applies, half precision accumulated in float32."""
    d = np.asarray(x - t)
    loss = np.multiply(d, d, out=d)
    if reduction == _NONE:
        return loss
    if loss.ndim == 0:
        return loss.copy()
    loss = np.ascontiguousarray(loss)
    half = loss.dtype.itemsize == 2 and loss.dtype.kind not in 'iub'
    r = None if half else blas_sum(loss, None, False)
    if r is None:
        r = np.add.reduce(loss, axis=None, dtype=np.float32 if half else None)
    if reduction == _MEAN:
        with np.errstate(invalid='ignore', divide='ignore'):
            r = np.true_divide(r, loss.size)
    return np.asarray(r).astype(loss.dtype, copy=False)


def mse_loss_backward(g, x, t, reduction):
    """torch's: (x - t) * norm * grad, norm = 2/numel for the mean, else 2."""
    norm = 2.0 / max(x.size, 1) if reduction == _MEAN else 2.0
    d = np.asarray(np.subtract(x, t))
    d *= d.dtype.type(norm)
    d *= g
    return d


KERNELS['mse_loss'] = quiet(mse_loss)
KERNELS['mse_loss_backward'] = quiet(mse_loss_backward)
