"""NOTE [row sums as GEMV] -- NumPy reduces over a short last axis at ~1 ns per element (a loop per row:
16x4x64x64 floats, 110 us), while a matrix-vector product with a vector of ones runs in BLAS at ~0.1 ns
(20 us). Softmax, layer norm, attention and linear's bias gradient sum their rows (and down their
columns) this way; ``v`` weights the sum, e.g. sum(g * w) over a row is ``g @ w``.
"""
import numpy as np


def _blas(dt):
    return dt == np.float32 or dt == np.float64


def rowsum(a, v=None):
    """sum(a * v, -1) over the last axis of ``a`` (``v``: a vector, default ones); the axis is dropped. Half
    precision sums in float32 and rounds once, as torch accumulates."""
    if a.dtype.itemsize == 2 and a.dtype.kind not in 'iub':
        return rowsum(a.astype(np.float32), None if v is None else v.astype(np.float32)).astype(a.dtype)
    if v is None:
        v = np.ones(a.shape[-1], a.dtype)
    if _blas(a.dtype) and a.ndim:
        return np.matmul(a, v)
    return np.add.reduce(a * v, axis=-1)


def row_dots(a, b):
    """sum(a * b, -1) over the last axis of two same-shaped arrays, without the product's temporary (einsum);
    the CUDA backend's twins form the product and reduce it, two launches where CuPy's einsum plans in Python
    (NOTE [device choices])."""
    sub = 'abcdefgh'[:a.ndim]
    return np.einsum(f'{sub},{sub}->{sub[:-1]}', a, b)


def colsum(a, v=None):
    """sum(v[:, None] * a, 0) for a 2-D ``a`` (``v``: a vector, default ones); half precision as rowsum."""
    if a.dtype.itemsize == 2 and a.dtype.kind not in 'iub':
        return colsum(a.astype(np.float32), None if v is None else v.astype(np.float32)).astype(a.dtype)
    if v is None:
        v = np.ones(a.shape[0], a.dtype)
    if _blas(a.dtype):
        return np.matmul(v, a)
    return np.add.reduce(a * v[:, None], axis=0)


# NOTE [sums as GEMV]: the same lever for the ``sum``/``mean`` kernels. A large C-contiguous float array reduced
# over its trailing axes is a (M, R) matrix times ones (rowsum), over its leading axes ones times a (R, M) matrix
# (colsum); any other reduced axes are then summed by NumPy on the R-times smaller result. On this machine
# (float32): a conv bias gradient, (64, 16, 28, 28) over (0, 2, 3), 119 -> 22 us; (1024, 1024) over its last
# axis 146 -> 25 us, over its first 60 -> 33 us. Below ~16K elements NumPy's own loop is as fast (the GEMV's
# call costs ~1.5 us), so small reductions keep it. The summation order changes (BLAS's vector lanes instead of
# NumPy's pairwise blocks), within float rounding of torch's cascade sums either way.
_BLAS_SUM_MIN = 16384
# A BLAS dot product accumulates each of its few vector lanes over the whole row: a float32 row of 4M elements
# lost ~5e-6 relative (torch's cascade sum and NumPy's pairwise sum: ~1e-7). So no row is longer than _BLOCK: a
# longer one is cut into rows of _BLOCK whose sums NumPy then adds pairwise (4M float32 elements: ~1e-7, as
# torch's), and a reduction whose rows cannot be cut evenly is left to NumPy.
_BLOCK = 4096


def blas_sum(a, axis, keepdims):
    """``np.add.reduce(a, axis, keepdims=keepdims)`` through GEMVs (NOTE [sums as GEMV]), or None where the
    array is small, not C-contiguous, not float32/float64, or reduced over neither its first nor its last axis."""
    if a.__class__ is not np.ndarray or a.size < _BLAS_SUM_MIN or not _blas(a.dtype) or not a.flags.c_contiguous:
        return None
    nd = a.ndim
    if axis is None:
        red = [True] * nd
    else:
        red = [False] * nd
        for x in ((axis,) if isinstance(axis, int) else axis):
            red[x % nd] = True
    shape = a.shape
    if all(red):                # everything: rows of _BLOCK, the ragged tail summed apart
        flat = a.reshape(-1)
        m = flat.size // _BLOCK * _BLOCK
        parts = rowsum(flat[:m].reshape(-1, _BLOCK))
        r = np.add.reduce(parts) + np.add.reduce(flat[m:]) if m < flat.size else np.add.reduce(parts)
        r = np.asarray(r, a.dtype)
        rest = ()
    elif red[-1]:               # trailing reduced axes: rows of the (M, R) matrix
        k = nd
        while red[k - 1]:
            k -= 1
        lead, n = shape[:k], _size(shape[k:])
        if n <= _BLOCK:
            r = rowsum(a.reshape(-1, n)).reshape(lead)
        elif n % _BLOCK == 0:
            r = np.add.reduce(rowsum(a.reshape(-1, _BLOCK)).reshape(lead + (n // _BLOCK,)), axis=-1)
        else:
            return None
        rest = tuple(i for i in range(k) if red[i])
    elif red[0]:                # leading reduced axes: columns of the (R, M) matrix
        j = 0
        while red[j]:
            j += 1
        n = _size(shape[:j])
        if n <= _BLOCK:
            r = colsum(a.reshape(n, -1)).reshape(shape[j:])
        elif n % _BLOCK == 0:       # ones times each (_BLOCK, M) slab, then the slabs' sums pairwise
            slabs = a.reshape(n // _BLOCK, _BLOCK, -1)
            r = np.add.reduce(np.matmul(np.ones(_BLOCK, a.dtype), slabs), axis=0).reshape(shape[j:])
        else:
            return None
        rest = tuple(i - j for i in range(j, nd) if red[i])
    else:
        return None
    if rest:
        r = np.add.reduce(r, axis=rest)
    if keepdims:
        r = r.reshape(tuple(1 if red[i] else n for i, n in enumerate(shape)))
    return r


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# NOTE [softmax over short rows] -- softmax's sums over the last axis are GEMVs (NOTE [row sums as GEMV]
# above), and the row maximum (subtracted only so that exp cannot overflow) is skipped when the whole
# input lies within +-_NO_SHIFT: there exp is a normal float far from overflow and softmax's result is the same
# to a few ulps. Attention's scores take the same shortcut. Not log_softmax: its ``x - log(sum(exp(x)))`` of a
# confident row is a difference of nearly equal numbers, ~1 ulp of x absolute (logits [20, 10]: -4.5776e-5 where
# torch's ``(x - m) - log(sum(exp(x - m)))`` gives -4.5418e-5), so it always subtracts the maximum.
_NO_SHIFT = 60.0


def exp_safe(a):
    """Whether exp cannot overflow anywhere in ``a``, so the row maximum need not be subtracted (NOTE
    [softmax over short rows]). It reads the data; the CUDA backend's twins answer False without reading
    (NOTE [device choices] in ember/_backends/cuda/_choices.py)."""
    return bool(a.size and -_NO_SHIFT < a.min() and a.max() < _NO_SHIFT)
