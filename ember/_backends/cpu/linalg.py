"""CPU kernels for matrix products and linear algebra: NumPy's matmul (BLAS) and numpy.linalg.

Kernels take arrays in any layout (BLAS takes transposed operands as they are, so no
``ascontiguousarray``) and return new arrays.
"""
import numpy as np

from ._gemm import GEMM_GRAIN as _GEMM_GRAIN, gemm as _gemm
from ._parallel import get_num_threads, parallel_for
from ._sums import colsum


def _matmul(a, b):
    """np.matmul, with a batched left operand times a matrix done as one matrix product: NumPy loops
    over the batch in small GEMMs otherwise (16x64x128 @ 128x384: 0.77 ms, folded 0.52 ms)."""
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        return _gemm(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim == 2:
        return _gemm(a, b)
    return np.matmul(a, b)


def _linear(x, w, b):
    if w.ndim == 2 and x.ndim >= 2 and (b is None or b.ndim == 1 and b.shape[0] == w.shape[0]) \
            and (x.ndim == 2 or x.flags.c_contiguous):
        x2 = x.reshape(-1, x.shape[-1])     # (B, T, C) inputs fold into one matrix product
        return _gemm(x2, w.T, b).reshape(x.shape[:-1] + (w.shape[0],))
    out = _matmul(x, w.T)
    if b is not None:
        if out.ndim == 0:
            return out + b
        out += b            # in place on the fresh product: no second output array
    return out


def _linear_backward(x, g, w, output_mask):
    """(g @ w, g2.T @ x2, sum of g2's rows) with g2, x2 the 2-D views: the two GEMMs run side by side on
    two intra-op threads (each single-threaded BLAS) when both are wanted; the bias sum is a GEMV."""
    g2 = g.reshape(-1, g.shape[-1])
    res = [None, None, None]

    def grad_input():       # _gemm splits its rows when it runs alone (inside parallel_for it runs whole)
        res[0] = _gemm(g2, w).reshape(x.shape)

    def grad_weight():      # x is read only here and w only above: the autograd formula may pass a stand-in for
        if output_mask[1]:  # the one whose gradient partner is not wanted (it saved only what torch's addmm saves)
            res[1] = _gemm(g2.T, x.reshape(-1, x.shape[-1]))
        if output_mask[2]:
            res[2] = colsum(g2)
    tasks = ([grad_weight] if output_mask[1] or output_mask[2] else []) + ([grad_input] if output_mask[0] else [])
    if len(tasks) == 2 and get_num_threads() > 1 and g2.size * w.shape[1] >= _GEMM_GRAIN:
        parallel_for(2, lambda lo, hi: tasks[lo](), 1)
    else:
        for t in tasks:
            t()
    return tuple(res)


def _scale_add(prod, inp, beta, alpha):
    """beta * inp + alpha * prod, computed in place on the fresh product; beta == 0 ignores inp (NaNs too)."""
    if prod.dtype.kind in 'iub':        # torch truncates the scalars to the integer type
        alpha, beta = int(alpha), int(beta)
    if alpha != 1:
        prod *= alpha
    if beta != 0:
        prod += inp if beta == 1 else inp * beta
    return prod


def _sum_ellipsis(eq, ops):
    """The equation with each input's ellipsis spelled out in unused letters (right-aligned, as broadcasting
    aligns them): NumPy's einsum keeps ellipsis dimensions, while an output without one sums them (torch)."""
    lhs, _, rhs = eq.partition('->')
    subs = lhs.split(',')
    free = [c for c in 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ' if c not in eq]
    n = [o.ndim - len(sub.replace('...', '')) if '...' in sub else 0 for sub, o in zip(subs, ops)]
    ell = free[:max(n, default=0)]
    subs = [sub.replace('...', ''.join(ell[len(ell) - k:])) for sub, k in zip(subs, n)]
    return ','.join(subs) + '->' + rhs


def _addbmm(inp, b1, b2, beta, alpha):
    B, n, k = b1.shape
    # sum_b b1[b] @ b2[b] as one matrix product over the (batch, k) pairs
    prod = np.matmul(b1.transpose(1, 0, 2).reshape(n, B * k), b2.reshape(B * k, b2.shape[2]))
    return _scale_add(prod, inp, beta, alpha)


def _einsum(eq, ops, path):
    eq = eq.replace(' ', '')
    if '...' in eq and '->' in eq and '...' not in eq.partition('->')[2]:
        eq = _sum_ellipsis(eq, ops)
    dt = ops[0].dtype if ops else None
    if dt is not None and dt.kind not in 'biufc':      # bfloat16 (ml_dtypes): NumPy's einsum rejects it
        ops = [o.astype(np.float32) for o in ops]
    big = len(ops) > 2 or sum(o.size for o in ops) > 4096
    r = np.einsum(eq, *ops, optimize='greedy' if big else False)
    return r if dt is None or r.dtype == dt else np.asarray(r).astype(dt)


def _linalg_pinv(a, rtol, hermitian, atol):
    """torch's linalg_pinv: singular values (|eigenvalues| of a Hermitian matrix) up to max(atol, rtol * the
    largest) count as zero; rtol defaults to eps * max(m, n), or to 0 when a positive atol is given."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(a.dtype).eps * max(m, n)
    atol = 0.0 if atol is None else atol
    mH = lambda x: np.conj(np.swapaxes(x, -1, -2))
    if hermitian:
        s, u = np.linalg.eigh(a)
        big = np.abs(s)
        keep = big > np.maximum(atol, rtol * big.max(-1, keepdims=True))
        return ((u * np.where(keep, 1 / np.where(keep, s, 1), 0)[..., None, :]) @ mH(u)).astype(a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    keep = s > np.maximum(atol, rtol * s[..., :1])
    return ((mH(vh) * np.where(keep, 1 / np.where(keep, s, 1), 0)[..., None, :]) @ mH(u)).astype(a.dtype)


def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
    """(i1, i2, i3 with size-1 dims inserted at expand1..3) multiplied and summed over sumdim: one einsum, a
    letter per dimension, each operand named by the dimensions it has."""
    letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'[:i1.ndim + len(expand1)]
    sub = lambda skip: ''.join(c for d, c in enumerate(letters) if d not in skip)
    return _einsum(f'{sub(expand1)},{sub(expand2)},{sub(expand3)}->{sub(sumdim)}', [i1, i2, i3], None)


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


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: singular or indefinite input (found only from the data, so raised here)."""


def _batch_prefix(A, idx):
    return f"(Batch element {idx}): " if A.ndim > 2 else ""


def _first_bad(A, bad):
    """Index (flat over the batch) of the first matrix for which ``bad(matrix)`` is true."""
    flat = A.reshape((-1,) + A.shape[-2:])
    for i, M in enumerate(flat):
        if bad(M):
            return i, M
    return 0, flat[0]


def _zero_pivot(M):
    """1-based index of the first zero pivot of M's LU factorisation with partial pivoting (LAPACK getrf's info)."""
    U = np.array(M, dtype=np.float64)
    n = U.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(U[j:, j])))
        if U[p, j] == 0:
            return j + 1
        U[[j, p]] = U[[p, j]]
        U[j + 1:, j:] -= np.outer(U[j + 1:, j] / U[j, j], U[j, j:])
    return n


def _singular(M):
    try:
        np.linalg.inv(M)
        return False
    except np.linalg.LinAlgError:
        return True


def _inv(A):
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        i, M = _first_bad(A, _singular)
        raise LinAlgError(f"linalg.inv: {_batch_prefix(A, i)}The diagonal element {_zero_pivot(M)} is zero, the "
                          f"inversion could not be completed because the input matrix is singular.") from None


def _solve(A, B):
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    b = B[..., None] if vec else B
    try:
        x = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
    return x[..., 0] if vec else x


def _not_pd_order(M):
    for k in range(1, M.shape[0] + 1):
        try:
            np.linalg.cholesky(M[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return M.shape[0]


def _cholesky(A, upper):
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        def bad(M):
            try:
                np.linalg.cholesky(M)
                return False
            except np.linalg.LinAlgError:
                return True
        i, M = _first_bad(A, bad)
        raise LinAlgError(f"linalg.cholesky: {_batch_prefix(A, i)}The factorization could not be completed because "
                          f"the input is not positive-definite (the leading minor of order {_not_pd_order(M)} is "
                          f"not positive-definite).") from None
    return np.ascontiguousarray(np.swapaxes(L, -1, -2)) if upper else L


def _qr(A, mode):
    if mode == 'r':
        return np.empty((0,), A.dtype), np.linalg.qr(A, mode='r')
    Q, R = np.linalg.qr(A, mode=mode)
    return Q, R


def _slogdet(A):
    sign, logabs = np.linalg.slogdet(A)
    return sign, logabs


def _svd(A, full):
    if A.size == 0:
        m, n = A.shape[-2:]
        k = min(m, n)
        b = A.shape[:-2]
        eye = lambda r, c: np.broadcast_to(np.eye(r, c, dtype=A.dtype), b + (r, c)).copy()
        return (eye(m, m if full else k), np.zeros(b + (k,), A.dtype), eye(n if full else k, n))
    return np.linalg.svd(A, full_matrices=full)


def _svdvals(A):
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (min(A.shape[-2:]),), A.dtype)
    return np.linalg.svd(A, compute_uv=False)


KERNELS = {
    'matmul': _matmul,
    'mm': _matmul,
    'bmm': np.matmul,
    'mv': np.matmul,
    'dot': np.dot,
    'vdot': np.vdot,
    'linear': _linear,
    'linear_backward': _linear_backward,
    'addmm': lambda inp, m1, m2, beta, alpha: _scale_add(np.matmul(m1, m2), inp, beta, alpha),
    'addmv': lambda inp, m, v, beta, alpha: _scale_add(np.matmul(m, v), inp, beta, alpha),
    'baddbmm': lambda inp, b1, b2, beta, alpha: _scale_add(np.matmul(b1, b2), inp, beta, alpha),
    'addbmm': _addbmm,
    'einsum': _einsum,
    '_trilinear': _trilinear,
    'linalg_pinv': _linalg_pinv,
    'diag_embed': _diag_embed,
    'linalg_cross': lambda a, b, dim: np.cross(a, b, axis=dim),
    'linalg_inv': _inv,
    'linalg_det': np.linalg.det,
    'linalg_slogdet': _slogdet,
    '_linalg_solve': _solve,
    'linalg_cholesky': _cholesky,
    'linalg_qr': _qr,
    'linalg_svd': _svd,
    'linalg_svdvals': _svdvals,
    'linalg_eigh': lambda A, uplo: np.linalg.eigh(A, UPLO=uplo),
    'linalg_eigvalsh': lambda A, uplo: np.linalg.eigvalsh(A, UPLO=uplo),
}
