"""CPU kernels for reductions, scans, sorting and softmax (NumPy only).

``dim`` arrives as the user gave it (int, sequence, None); ``dtype`` arrives as
the NumPy dtype of the result, already resolved by the operator's meta function.
"""
import numpy as np


def _axes(dim, ndim):
    """NumPy ``axis`` for a torch ``dim``: None/() -> all; 0-d tensors have no axes."""
    if ndim == 0:
        return ()
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(dim) if len(dim) else None
    return dim


def _sum(a, dim, keepdim, dtype):
    if a.ndim == 0:
        return a.astype(dtype, copy=True)
    # dtype= only when it changes something: NumPy's default loop is fastest
    r = np.add.reduce(a, axis=_axes(dim, a.ndim), dtype=None if a.dtype == dtype else dtype, keepdims=keepdim)
    return r


KERNELS = {
    'sum.dim_IntList': _sum,
}
