"""Result layouts that torch fixes and NumPy does not."""
import numpy as np


def c_order(fn):
    """A kernel whose result torch writes into a fresh contiguous tensor whatever its inputs' layout (roll,
    cumulative ops, scatter/index updates, masked_fill): NumPy keeps a transposed input's order (strides (1, n)),
    after which ``.view`` fails where torch's succeeds."""
    def kernel(*args, **kwargs):
        r = fn(*args, **kwargs)
        if r.__class__ is tuple:
            return tuple(_c(x) for x in r)
        return _c(r)
    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    return kernel


def _c(a):
    return np.array(a, order='C') if a.__class__ is np.ndarray and not a.flags.c_contiguous else a


def like(a, r):
    """``r`` (computed in C order) laid out as torch lays out an output that follows its input ``a``: ``a``'s
    strides when it is dense, else dense strides in ``a``'s dimension order (NumPy's ``order='K'``)."""
    if a.flags.c_contiguous or r.ndim != a.ndim or r.ndim < 2:
        return r
    out = np.empty_like(a, dtype=r.dtype)
    out[...] = r
    return out
