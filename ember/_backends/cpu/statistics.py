"""CPU kernels for counting statistics (bincount, histc) and logspace."""
import numpy as np


def _bincount(a, weights, minlength):
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    out = np.bincount(a, weights=weights.astype(np.float64), minlength=minlength)
    # torch keeps float weights' dtype and counts other weights in double
    return out.astype(weights.dtype if weights.dtype.kind == 'f' else np.float64)


def _histc(a, bins, lo, hi):
    lo, hi = float(lo), float(hi)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:        # torch widens a zero-width range by one on each side
        lo, hi = lo - 1, hi + 1
    x = a.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    # torch's bin rule: (x - min) * bins / (max - min), the maximum falls in the last bin
    pos = ((x.astype(np.float64) - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return np.bincount(pos, minlength=bins).astype(a.dtype)


def _logspace(start, end, steps, base, dtype, device):
    exps = np.linspace(float(start), float(end), steps, dtype=np.float64)
    return np.power(float(base), exps).astype(dtype)


KERNELS = {
    'bincount': _bincount,
    'histc': _histc,
    'logspace': _logspace,
}
