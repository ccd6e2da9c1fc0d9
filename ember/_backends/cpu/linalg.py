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


def _scale_add(prod, inp, beta, alpha):
    """beta * inp + alpha * prod, computed in place on the fresh product; beta == 0 ignores inp (NaNs too)."""
    if prod.dtype.kind in 'iub':        # torch truncates the scalars to the integer type
        alpha, beta = int(alpha), int(beta)
    if alpha != 1:
        prod *= alpha
    if beta != 0:
        prod += inp if beta == 1 else inp * beta
    return prod


def _addbmm(inp, b1, b2, beta, alpha):
    B, n, k = b1.shape
    # sum_b b1[b] @ b2[b] as one matrix product over the (batch, k) pairs
    prod = np.matmul(b1.transpose(1, 0, 2).reshape(n, B * k), b2.reshape(B * k, b2.shape[2]))
    return _scale_add(prod, inp, beta, alpha)


def _einsum(eq, ops, path):
    big = len(ops) > 2 or sum(o.size for o in ops) > 4096
    return np.einsum(eq, *ops, optimize='greedy' if big else False)


def _diag_embed(a, offset, dim1, dim2):
    n = a.ndim + 1
    d1, d2 = dim1 % n, dim2 % n
    m = (a.shape[-1] if a.ndim else 1) + abs(offset)
    lead = a.shape[:-1] if a.ndim else ()
    out = np.zeros(lead + (m, m), a.dtype)
    k = a.shape[-1] if a.ndim else 1
    i = np.arange(k)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = a if a.ndim else a.reshape(1)
    # the two diagonal dims are last; move them to dim1 < dim2 (or the swapped order)
    rest = list(range(n - 2))
    order = [None] * n
    lo, hi = sorted((d1, d2))
    first, second = (n - 2, n - 1) if d1 < d2 else (n - 1, n - 2)
    order[lo], order[hi] = first, second
    it = iter(rest)
    order = [next(it) if o is None else o for o in order]
    return np.ascontiguousarray(out.transpose(order))


KERNELS = {
    'matmul': np.matmul,
    'mm': np.matmul,
    'bmm': np.matmul,
    'mv': np.matmul,
    'dot': np.dot,
    'vdot': np.vdot,
    'linear': _linear,
    'addmm': lambda inp, m1, m2, beta, alpha: _scale_add(np.matmul(m1, m2), inp, beta, alpha),
    'addmv': lambda inp, m, v, beta, alpha: _scale_add(np.matmul(m, v), inp, beta, alpha),
    'baddbmm': lambda inp, b1, b2, beta, alpha: _scale_add(np.matmul(b1, b2), inp, beta, alpha),
    'addbmm': _addbmm,
    'einsum': _einsum,
    'diag_embed': _diag_embed,
    'linalg_cross': lambda a, b, dim: np.cross(a, b, axis=dim),
}
