"""CPU kernels for matrix products and linear algebra: NumPy's matmul (BLAS) and numpy.linalg.

Kernels take arrays in any layout (BLAS takes transposed operands as they are, so no
``ascontiguousarray``) and return new arrays.
"""
import math

import numpy as np

from ._fp import quiet, is_half as _is_half_dtype
from ._gemm import GEMM_GRAIN as _GEMM_GRAIN, gemm as _gemm
from ._parallel import get_num_threads, parallel_for
from ._sums import colsum


def _matmul(a, b):
    """np.matmul, with a batched left operand times a matrix done as one matrix product: NumPy loops
    over the batch in small GEMMs otherwise (16x64x128 @ 128x384: 0.77 ms, folded 0.52 ms)."""
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        return _gemm(_rows(a), b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim == 2:
        return _gemm(a, b)
    return np.matmul(a, b)


def _rows(a):
    """``a`` as a matrix of its last dimension's rows (``reshape(-1, C)``, which NumPy refuses for C = 0: a
    Linear of no input features, as AdaptiveLogSoftmaxWithLoss's narrow tail projections can be)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def _is_half(a):
    dt = getattr(a, 'dtype', None)
    return dt is not None and _is_half_dtype(dt)


def _half_in_float32(fn):
    """``fn`` with float16/bfloat16 arrays computed in float32 and the result rounded once, as torch's half GEMMs
    add the bias (``beta * inp``) in their float32 accumulator: rounding the product first, then the sum, differs
    by an ulp in about a third of the elements (labml's fp16 Adam)."""
    def kernel(*args):
        half = next((a.dtype for a in args if _is_half(a)), None)
        if half is None:
            return fn(*args)
        return fn(*[a.astype(np.float32) if _is_half(a) else a for a in args]).astype(half)
    return kernel


def _linear(x, w, b):
    if w.ndim == 2 and x.ndim >= 2 and (b is None or b.ndim == 1 and b.shape[0] == w.shape[0]) \
            and (x.ndim == 2 or x.flags.c_contiguous):
        # torch's addmm: (B, T, C) inputs fold into one matrix product, a half one rounded once with its bias;
        # other inputs below are torch's matmul and add, rounded twice
        return _fused_linear(x, w, b)
    out = _matmul(x, w.T)
    if out.dtype != x.dtype and _is_half(x):        # ml_dtypes' bfloat16 product is float32: torch's is rounded
        out = out.astype(x.dtype)
    if b is not None:
        if out.ndim == 0:
            return out + b
        out += b            # in place on the fresh product: no second output array
    return out


@_half_in_float32
def _fused_linear(x, w, b):
    return _gemm(_rows(x), w.T, b).reshape(x.shape[:-1] + (w.shape[0],))


def _linear_backward(x, g, w, output_mask):
    """(g @ w, g2.T @ x2, sum of g2's rows) with g2, x2 the 2-D views: the two GEMMs run side by side on
    two intra-op threads (each single-threaded BLAS) when both are wanted; the bias sum is a GEMV."""
    g2 = _rows(g)
    res = [None, None, None]

    def grad_input():       # _gemm splits its rows when it runs alone (inside parallel_for it runs whole)
        res[0] = _gemm(g2, w).reshape(x.shape)

    def grad_weight():      # x is read only here and w only above: the autograd formula may pass a stand-in for
        if output_mask[1]:  # the one whose gradient partner is not wanted (it saved only what torch's addmm saves)
            res[1] = _gemm(g2.T, _rows(x))
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


# NumPy's contraction-order search, which plays the part of torch's opt_einsum: ember.backends.opt_einsum's
# ``enabled`` and ``strategy`` write here ('optimal' searches every order, 'auto' and 'greedy' the greedy one)
EINSUM_PATH = {'enabled': True, 'strategy': 'auto'}


def _einsum(eq, ops, path):
    eq = eq.replace(' ', '')
    if '...' in eq and '->' in eq and '...' not in eq.partition('->')[2]:
        eq = _sum_ellipsis(eq, ops)
    dt = ops[0].dtype if ops else None
    if any(o.dtype != dt for o in ops):     # mixed dtypes (NOTE [einsum dtypes]): NumPy promotes, the adapter casts
        dt = None
    if any(o.dtype.kind not in 'biufc' for o in ops):      # bfloat16 (ml_dtypes): NumPy's einsum rejects it
        ops = [o.astype(np.float32) if o.dtype.kind not in 'biufc' else o for o in ops]
    big = len(ops) > 2 or sum(o.size for o in ops) > 4096
    optimize = False
    if big and EINSUM_PATH['enabled']:          # torch.backends.opt_einsum's switches
        optimize = _einsum_path(eq, ops, 'optimal' if EINSUM_PATH['strategy'] == 'optimal' else 'greedy')
    r = np.einsum(eq, *ops, optimize=optimize)
    return r if dt is None or r.dtype == dt else np.asarray(r).astype(dt)


# NumPy's greedy contraction path depends only on the equation and the operands' shapes, and finding it costs more
# than a small contraction itself (einsum_path's search: ~40 us of a 3-operand einsum's ~70 us); so it is kept per
# (equation, shapes), the oldest dropped past _PATHS_MAX entries. A given path still goes through einsum_path's
# parsing (einsum(..., optimize=path)), which is cheap next to the search.
_PATHS = {}
_PATHS_MAX = 256


def _einsum_path(eq, ops, strategy='greedy'):
    key = (eq, strategy, tuple(o.shape for o in ops))
    path = _PATHS.get(key)
    if path is None:
        path = np.einsum_path(eq, *ops, optimize=strategy)[0]
        while len(_PATHS) >= _PATHS_MAX:
            try:
                del _PATHS[next(iter(_PATHS))]      # the oldest (dicts keep insertion order)
            except (KeyError, StopIteration, RuntimeError):     # another thread evicted it first
                break
        _PATHS[key] = path
    return path


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


_NOT_CONVERGED = {'svd': "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                         "many repeated singular values",
                  'eigh': "The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                          "many repeated eigenvalues"}


def _converged(name):
    """A kernel whose LAPACK call may not converge: NumPy's LinAlgError (not a RuntimeError) becomes torch's, which
    names the first matrix of the batch at fault and, for non-finite input, says so."""
    def wrap(fn):
        def kernel(A, *args, **kw):
            try:
                return fn(A, *args, **kw)
            except np.linalg.LinAlgError:
                idx, M = _first_bad(A, lambda M: not np.isfinite(M).all())
                why = "The algorithm failed to converge because the input matrix contained non-finite values." \
                    if not np.isfinite(M).all() and name == 'svd' else _NOT_CONVERGED[name] + '.'
                raise LinAlgError(f"linalg.{name}: {_batch_prefix(A, idx)}{why}") from None
        kernel.__name__ = fn.__name__
        return kernel
    return wrap


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


@_converged('svd')
def _svd(A, full):
    if A.size == 0:
        m, n = A.shape[-2:]
        k = min(m, n)
        b = A.shape[:-2]
        eye = lambda r, c: np.broadcast_to(np.eye(r, c, dtype=A.dtype), b + (r, c)).copy()
        return (eye(m, m if full else k), np.zeros(b + (k,), A.dtype), eye(n if full else k, n))
    return np.linalg.svd(A, full_matrices=full)


@_converged('svd')
def _svdvals(A):
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (min(A.shape[-2:]),), A.dtype)
    return np.linalg.svd(A, compute_uv=False)


def _eig(A):
    """LAPACK geev through numpy.linalg.eig, always complex: eigenvectors of unit norm, as torch's."""
    c = np.complex128 if A.dtype in (np.float64, np.complex128) else np.complex64
    if A.size == 0:
        return np.zeros(A.shape[:-1], c), np.zeros(A.shape, c)
    if not np.isfinite(A).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    w, v = np.linalg.eig(A)
    return w.astype(c), v.astype(c)


def _geqrf(A):
    """LAPACK geqrf (numpy.linalg.qr's 'raw' mode, which returns R and the reflectors transposed, as Fortran
    stores them): R on and above the diagonal, the Householder vectors below it, and their scalars tau."""
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.size == 0:
        return A.copy(), np.zeros(A.shape[:-2] + (k,), A.dtype)
    h, tau = np.linalg.qr(A, mode='raw')
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(A.dtype), tau.astype(A.dtype)


# --- LDL^T (Bunch-Kaufman) -----------------------------------------------------------------------------------
# NOTE [Bunch-Kaufman in NumPy]: LAPACK's unblocked ?sytf2/?hetf2 and ?sytrs/?hetrs (lower), step for step:
# the same pivot choices (alpha = (1 + sqrt(17)) / 8), the same 1-based pivots (negative for a 2x2 block) and the
# same compact LD, so the results are torch's (its ?sytrf; checked against it up to n = 70, where a blocked
# ?sytrf could round differently but picks the same pivots). One Python step per column: O(n) NumPy calls.
_ALPHA = (1 + np.sqrt(17.0)) / 8


def _cabs1(x):
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _sytf2(a, herm):
    """LAPACK's ?sytf2 / ?hetf2, lower: Bunch-Kaufman diagonal pivoting on one matrix, in place."""
    n = a.shape[0]
    cj = np.conj if herm else (lambda x: x)
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else _cabs1(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_cabs1(a[k + 1:, k])))
            colmax = _cabs1(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + int(np.argmax(_cabs1(a[imax, k:imax])))
                rowmax = _cabs1(a[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + int(np.argmax(_cabs1(a[imax + 1:, imax])))
                    rowmax = max(rowmax, _cabs1(a[jmax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif (abs(a[imax, imax].real) if herm else _cabs1(a[imax, imax])) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                t = cj(a[kk + 1:kp, kk]).copy()
                a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = t
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    r1 = 1 / (a[k, k].real if herm else a[k, k])
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.tril(r1 * np.outer(x, cj(x)))
                    if herm:
                        idx = np.arange(k + 1, n)
                        a[idx, idx] = a[idx, idx].real
                    a[k + 1:, k] = r1 * x
            elif k < n - 2:
                if herm:
                    d = abs(a[k + 1, k])
                    d11 = a[k + 1, k + 1].real / d
                    d22 = a[k, k].real / d
                    tt = 1 / (d11 * d22 - 1)
                    d21 = a[k + 1, k] / d
                    d = tt / d
                    wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
                    wkp1 = d * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
                    a[k + 2:, k + 2:] -= np.tril(np.outer(a[k + 2:, k], np.conj(wk)) +
                                                 np.outer(a[k + 2:, k + 1], np.conj(wkp1)))
                    idx = np.arange(k + 2, n)
                    a[idx, idx] = a[idx, idx].real
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    t = 1 / (d11 * d22 - 1)
                    d21 = t / d21
                    wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                    a[k + 2:, k + 2:] -= np.tril(np.outer(a[k + 2:, k], wk) + np.outer(a[k + 2:, k + 1], wkp1))
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return piv, info


def _ldl_factor(A, hermitian, check_errors):
    herm = hermitian and np.iscomplexobj(A)
    batch = A.shape[:-2]
    n = A.shape[-1]
    if A.size == 0:
        return A.copy(), np.zeros(batch + (n,), np.int32), np.zeros(batch, np.int32)
    LD = np.array(np.tril(A), copy=True)
    flat = LD.reshape((-1, n, n))
    piv = np.zeros((flat.shape[0], n), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for i in range(flat.shape[0]):
        piv[i], info[i] = _sytf2(flat[i], herm)
    if check_errors and info.any():
        raise RuntimeError(_ldl_error('torch.linalg.ldl_factor_ex', int(info[info > 0][0])))
    return flat.reshape(A.shape), piv.reshape(batch + (n,)), info.reshape(batch)


def _ldl_error(name, code):
    """torch reports a singular D through a failed internal assert (its message, as it stands in torch 2.13)."""
    return (f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":'
            f'1642, please report a bug to PyTorch. {name}: Unknown error code: {code}.')


def _sytrs(a, piv, b, herm):
    """LAPACK's ?sytrs / ?hetrs, lower: X with A X = B from ?sytf2's L, D and pivots (b: n x r, in place)."""
    n = a.shape[0]
    cj = np.conj if herm else (lambda x: x)
    k = 0
    while k < n:        # L D Y = B, forwards
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k].real if herm else a[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / cj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = b[k] / cj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:       # L^T X = Y (L^H for Hermitian), backwards
        if piv[k] > 0:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= cj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _ldl_solve(LD, piv, B, hermitian):
    herm = hermitian and np.iscomplexobj(LD)
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    n, r = LD.shape[-1], B.shape[-1]
    if LD.size == 0 or B.size == 0:
        return np.zeros(batch + (n, r), np.result_type(LD, B))
    a = np.broadcast_to(LD, batch + (n, n)).reshape((-1, n, n))
    p = np.broadcast_to(piv, batch + (n,)).reshape((-1, n)).astype(np.int64)
    X = np.array(np.broadcast_to(B, batch + (n, r)), dtype=np.result_type(LD, B), copy=True)
    flat = X.reshape((-1, n, r))
    for i in range(flat.shape[0]):
        _sytrs(a[i], p[i], flat[i], herm)
    return X


def _int_mm(a, b):
    """int8 (or uint8) times int8 in int32: exact while a row's sum fits, as torch's (it wraps, as int32 does)."""
    return np.matmul(a.astype(np.int32), b.astype(np.int32))


_pinv_svd, _pinv_eigh = _converged('svd')(_linalg_pinv), _converged('eigh')(_linalg_pinv)


def _pinv(a, rtol, hermitian, atol):
    """linalg_pinv: a failed eigh (``hermitian``) or SVD raises torch's message for the one it ran."""
    return (_pinv_eigh if hermitian else _pinv_svd)(a, rtol, hermitian, atol)


KERNELS = {
    '_int_mm': _int_mm,
    'matmul': _matmul,
    'mm': _matmul,
    'bmm': np.matmul,
    'mv': np.matmul,
    'dot': np.dot,
    'vdot': np.vdot,
    'linear': _linear,
    'linear_backward': _linear_backward,
    'addmm': _half_in_float32(lambda inp, m1, m2, beta, alpha: _scale_add(np.matmul(m1, m2), inp, beta, alpha)),
    'addmv': _half_in_float32(lambda inp, m, v, beta, alpha: _scale_add(np.matmul(m, v), inp, beta, alpha)),
    'baddbmm': _half_in_float32(lambda inp, b1, b2, beta, alpha: _scale_add(np.matmul(b1, b2), inp, beta, alpha)),
    'addbmm': _addbmm,
    'einsum': _einsum,
    '_trilinear': _trilinear,
    'linalg_pinv': _pinv,
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
    'linalg_eigh': _converged('eigh')(lambda A, uplo: np.linalg.eigh(A, UPLO=uplo)),
    'linalg_eigvalsh': _converged('eigh')(lambda A, uplo: np.linalg.eigvalsh(A, UPLO=uplo)),
    'linalg_eig': _eig,
    'geqrf': _geqrf,
    'linalg_ldl_factor_ex': _ldl_factor,
    'linalg_ldl_solve': _ldl_solve,
}
# the products run quietly: torch multiplies inf and NaN without a word, NumPy warns ("invalid value encountered
# in matmul"); about 0.7 us a call (NOTE [silent floating-point errors] in pointwise.py)
KERNELS.update({name: quiet(KERNELS[name]) for name in ('matmul', 'mm', 'bmm', 'mv', 'dot', 'vdot', 'linear',
                                                          'linear_backward', 'addmm', 'addmv', 'baddbmm', 'addbmm',
                                                          'einsum', '_trilinear')})
