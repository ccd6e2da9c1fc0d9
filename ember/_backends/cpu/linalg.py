"""CPU kernels for matrix products and linear algebra: NumPy's matmul (BLAS) and numpy.linalg.

Kernels take arrays in any layout (BLAS takes transposed operands as they are, so no
``ascontiguousarray``) and return new arrays.
"""
import numpy as np


def _linear(x, w, b):
    out = np.matmul(x, w.T)
    if b is not None:
        if out.ndim == 0:
            return out + b
        out += b            # in place on the fresh product: no second output array
    return out


KERNELS = {
    'matmul': np.matmul,
    'mm': np.matmul,
    'bmm': np.matmul,
    'mv': np.matmul,
    'dot': np.dot,
    'vdot': np.vdot,
    'linear': _linear,
}
