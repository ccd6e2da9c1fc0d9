"""``ember.linalg``'s operators: inverses, determinants, solvers, decompositions (cholesky, qr, svd, eigh, ...),
matrix and vector norms, and small composites over them. The matrix products they use are in products.py.

Meta functions reproduce torch's checks and wording; derivatives are torch's formulas for real matrices, in
ember operators (the decompositions' complex derivatives raise: NOTE [complex gradients]).
"""
import math

from .._core import dtype as D
from .._core.dtype import scalar_name as _tname, SAME_DTYPE
from .registry import declare
from .pointwise import broadcast_shapes
from .products import _outer
from .._dispatch.ops_namespace import aten
from ..autograd import grad_mode as _grad_mode


# --- ember.linalg: inverses, determinants, solvers, decompositions ----------------------------------
# Kernels raise the LinAlgError of _backends/cpu/linalg.py (a RuntimeError, as torch's) for singular or
# indefinite input: that depends on the data, so it cannot be checked by the meta functions.

def _square(name, A, floating=True, kernel=None):
    shape = A._a.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {shape[-2]} by {shape[-1]} "
                           f"matrices")
    if floating:
        _float_input(name, A, kernel)
    return tuple(shape)


def _float_input(name, A, kernel=None):
    """Floating input, and not half precision: ``kernel`` names the LAPACK kernel torch reports as missing
    for Half/BFloat16 (NotImplementedError); without it, torch's "Low precision dtypes" RuntimeError."""
    if A._dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_tname(A._dtype)}")
    if A._dtype in (D.float16, D.bfloat16):
        if kernel is None:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_tname(A._dtype)}")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(A._dtype)}\'')


def _inv_meta(A):
    return _square('linalg.inv', A), A._dtype


def _det_meta(A):
    return _square('linalg.det', A, kernel='lu_cpu')[:-2], A._dtype


def _slogdet_meta(A):
    s = _square('linalg.slogdet', A)[:-2]
    return [(s, A._dtype), (s, A._dtype)]


def _inv_grad(grad, result):
    return -result.mT.matmul(grad).matmul(result.mT)


def _det_grad(grad, A, result):
    # d det(A) = det(A) tr(A^-1 dA), so gA = grad det(A) A^-T. torch gives exactly singular matrices (a zero
    # determinant) a zero gradient; the pseudo-inverse keeps that batch element finite (and zero)
    if A.numel() and bool((result == 0).any()):
        return (grad * result).unsqueeze(-1).unsqueeze(-1) * _pinv(A).mT
    return (grad * result).unsqueeze(-1).unsqueeze(-1) * aten.linalg_inv.default(A).mT


def _slogdet_grad(grads, A, result0):     # torch saves the sign too (its complex formula reads it)
    _real_only('linalg.slogdet', A)
    return grads[1].unsqueeze(-1).unsqueeze(-1) * aten.linalg_inv.default(A).mT


declare('linalg_inv(Tensor A) -> Tensor', forward='transpose', meta=_inv_meta, method=False, function=False, out=True,
        derivatives={'A': _inv_grad}, grad_name='LinalgInvExBackward0',      # torch's node: linalg_inv_ex's
        primitive_because="torch's composite wraps linalg_inv_ex's info checks; this kernel raises those errors itself")
declare('inverse(Tensor self) -> Tensor', composite=lambda self: aten.linalg_inv.default(self), out=True,
        out_dtype=SAME_DTYPE)
declare('linalg_det(Tensor A) -> Tensor', forward='transpose', meta=_det_meta, method=False, function=False, out=True,
        derivatives={'A': _det_grad},
        primitive_because="torch's composite calls _linalg_det (LU); one NumPy kernel with the same derivative")
declare('det(Tensor self) -> Tensor', composite=lambda self: aten.linalg_det.default(self))

_EXP_TERMS = 18     # Taylor terms after scaling to norm <= 1: the remainder is below 1/19! ~ 8e-18


def _matrix_exp(A):
    """e^A of each square matrix by scaling and squaring: (T(A / 2^s))^(2^s), T the Taylor polynomial of degree
    18 and s such that ||A / 2^s||_inf <= 1. A kernel written in operators (CompositeExplicitAutograd): it runs
    below Autograd, where grad mode is off, so only the operator's own node is recorded."""
    if A.numel() == 0:
        return A.clone()
    prev = _grad_mode.is_grad_enabled()
    _grad_mode._set_enabled(False)
    try:
        n = A.shape[-1]
        norm = A.abs().sum(-1).amax().item()        # the largest row sum over the whole batch
        s = max(0, math.ceil(math.log2(norm))) if norm > 0 and math.isfinite(norm) else 0
        X = A / (2 ** s) if s else A
        eye = aten.eye.default(n, dtype=A.dtype, device=A.device)
        P = eye + X / _EXP_TERMS
        for k in range(_EXP_TERMS - 1, 0, -1):       # Horner: I + X/1 (I + X/2 (I + ... (I + X/18)))
            P = eye + X.matmul(P) / k
        for _ in range(s):
            P = P.matmul(P)
        return P
    finally:
        _grad_mode._set_enabled(prev)


def _matrix_exp_backward(grad, self):
    """torch's adjoint differential of an analytic matrix function: the upper-right block of
    exp([[A^T, G], [0, A^T]]) (conjugated with A for complex input: NOTE [complex gradients])."""
    n = self.shape[-1]
    At = self.mT
    top = aten.cat.default([At, grad.to(At.dtype)], -1)
    big = aten.cat.default([top, aten.cat.default([aten.zeros_like.default(At), At], -1)], -2)
    return aten.linalg_matrix_exp.default(big)[..., :n, n:]


declare('linalg_matrix_exp(Tensor self) -> Tensor', explicit=_matrix_exp, meta=lambda self: (tuple(self.shape), self._dtype),
        method=False, function=False, forward='transpose', derivatives={'self': _matrix_exp_backward})
declare('linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)', forward='transpose', meta=_slogdet_meta, method=False,
        function=False, derivatives={'A': _slogdet_grad},
        primitive_because="torch's composite calls _linalg_slogdet; one NumPy kernel with the same derivative")
declare('slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)',
        composite=lambda self: aten.linalg_slogdet.default(self))


def _logdet(self):
    sign, logabs = aten.linalg_slogdet.default(self)
    # torch: nan for a negative determinant, -inf for a zero one
    return aten.where.self(sign < 0, float('nan'), logabs)


declare('logdet(Tensor self) -> Tensor', composite=_logdet)


def solve_is_vector(a_shape, b_shape):
    """torch's rule: B is a (batch of) vector(s) if 1-D, or if its shape is A's without the last dim."""
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and tuple(b_shape) == tuple(a_shape[:-1]))


def _solve_meta(A, B):
    a = _square('linalg.solve', A, kernel='lu_cpu')
    b = tuple(B._a.shape)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_tname(A._dtype)} and B of type {_tname(B._dtype)} instead")
    vec = solve_is_vector(a, b)
    bm = b + (1,) if vec else b
    if len(bm) < 2 or bm[-2] != a[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({a[-2]}x{a[-1]} "
                           f"and {bm[-2] if len(bm) > 1 else 1}x{bm[-1]})")
    batch = broadcast_shapes(a[:-2], bm[:-2])
    return batch + ((a[-1],) if vec else (a[-1], bm[-1])), A._dtype


def _solve_grad_B(grad, A):
    return aten._linalg_solve.default(A.mT, grad)


def _solve_grad_A(grad, A, B_sizes, result):
    gB = aten._linalg_solve.default(A.mT, grad)
    if solve_is_vector(tuple(A.shape), B_sizes):
        return -(gB.unsqueeze(-1) * result.unsqueeze(-2))
    return -gB.matmul(result.mT)


declare('_linalg_solve(Tensor A, Tensor B) -> Tensor', forward='transpose', meta=_solve_meta, method=False, function=False,
        grad_name='LinalgSolveExBackward0', derivatives={'A': _solve_grad_A, 'B': _solve_grad_B})


def _linalg_solve(A, B, left=True):
    if left:
        return aten._linalg_solve.default(A, B)
    # X A = B  <=>  A^T X^T = B^T
    vec = solve_is_vector(tuple(A.shape), tuple(B.shape))
    if not vec and A.dim() >= 2 and B.dim() >= 2 and B.shape[-1] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    if vec:
        return aten._linalg_solve.default(A.mT, B)
    return aten._linalg_solve.default(A.mT, B.mT).mT


declare('linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor', composite=_linalg_solve, method=False,
        function=False)


def _cholesky_meta(self, upper=False):
    return _square('linalg.cholesky', self, kernel='cholesky_cpu'), self._dtype


def _phi(X):
    """The lower triangle of X with its diagonal halved."""
    n = X.shape[-1]
    half = aten.eye.default(n, dtype=X.dtype, device=X.device) * -0.5 + 1
    return X.tril() * half


def _real_only(name, A):
    """The decompositions' formulas are torch's for real matrices; their complex forms (Hermitian and unitary
    gauge terms) are not written yet, and a wrong gradient is worse than none (NOTE [complex gradients])."""
    if A.is_complex():
        raise NotImplementedError(f"ember: the derivative of {name} for complex inputs is not implemented")


def _cholesky_grad(grad, result, upper):
    # A = L L^T: gA = L^-T phi(L^T gL) L^-1, symmetrised (torch's cholesky_backward)
    _real_only('linalg.cholesky', result)
    L, gL = (result.mT, grad.mT) if upper else (result, grad)
    Linv = aten.linalg_inv.default(L)
    gA = Linv.mT.matmul(_phi(L.mT.matmul(gL))).matmul(Linv)
    return (gA + gA.mT) * 0.5


declare('linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor', forward='transpose', meta=_cholesky_meta, method=False,
        function=False, out=True, derivatives={'self': _cholesky_grad}, grad_name='LinalgCholeskyExBackward0',
        primitive_because="torch's composite wraps linalg_cholesky_ex's info checks; this kernel raises those errors itself")
declare('cholesky(Tensor self, bool upper=False) -> Tensor',
        composite=lambda self, upper=False: aten.linalg_cholesky.default(self, upper=upper))


def _qr_meta(A, mode='reduced'):
    shape = tuple(A._a.shape)
    if len(shape) < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if mode not in ('reduced', 'complete', 'r'):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    _float_input('linalg.qr', A, 'geqrf_cpu')
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    q = (0,) if mode == 'r' else batch + ((m, m) if mode == 'complete' else (m, k))
    r = batch + ((m, n) if mode == 'complete' else (k, n))
    return [(q, A._dtype), (r, A._dtype)]


def _qr_grad(grads, results, mode):
    # torch's linalg_qr_backward, case m >= n (A = QR with R square): gA = (gQ + Q sym(triu(gR R^T - Q^T gQ))) R^-T
    gQ, gR = grads
    Q, R = results
    _real_only('linalg.qr', Q)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == 'r':
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if m < n:
        raise NotImplementedError("ember: the derivative of linalg.qr is implemented for m >= n only")
    if mode == 'complete' and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    S = (gR.matmul(R.mT) - Q.mT.matmul(gQ)).triu()
    sym = S + S.mT.tril(-1)
    return (Q.matmul(sym) + gQ).matmul(aten.linalg_inv.default(R).mT)


declare("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", forward='transpose', meta=_qr_meta, method=False,
        function=False, derivatives={'A': _qr_grad})


def _qr(self, some=True):
    return aten.linalg_qr.default(self, 'reduced' if some else 'complete')


declare('qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)', composite=_qr)


def _svd_meta(A, full_matrices=True):
    shape = tuple(A._a.shape)
    if len(shape) < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _float_input('linalg.svd', A, 'linalg_svd_cpu')
    m, n = shape[-2:]
    k = min(m, n)
    b = shape[:-2]
    u = b + ((m, m) if full_matrices else (m, k))
    vh = b + ((n, n) if full_matrices else (k, n))
    return [(u, A._dtype), (b + (k,), A._dtype.to_real()), (vh, A._dtype)]


def svd_backward(gU, gS, gVh, U, S, Vh):
    """torch's svd_backward for real input with distinct singular values (U: m x k, Vh: k x n)."""
    m, n = U.shape[-2], Vh.shape[-1]
    skew = lambda X: X - X.mT
    UhgU = skew(U.mT.matmul(gU))
    VhgV = skew(Vh.matmul(gVh.mT))
    S2 = S * S
    eye = aten.eye.default(S.shape[-1], dtype=S.dtype, device=S.device)
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye       # 1 on the diagonal: that entry of the quotient is 0 anyway
    gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E + gS.diag_embed()
    if m > n:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = (gA + gUSinv - U.matmul(U.mT.matmul(gUSinv))).matmul(Vh)
    elif m < n:
        gA = gA.matmul(Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = U.matmul(gA + SinvgVh - SinvgVh.matmul(Vh.mT).matmul(Vh))
    else:
        gA = U.matmul(gA).matmul(Vh)
    return gA


def _svd_grad(grads, results, full_matrices):
    gU, gS, gVh = grads
    U, S, Vh = results
    _real_only('linalg.svd', U)
    if full_matrices:
        k = S.shape[-1]
        gU, U = gU.narrow(-1, 0, k), U.narrow(-1, 0, k)
        gVh, Vh = gVh.narrow(-2, 0, k), Vh.narrow(-2, 0, k)
    return svd_backward(gU, gS, gVh, U, S, Vh)


declare('linalg_svd(Tensor A, bool full_matrices=True) -> (Tensor U, Tensor S, Tensor Vh)', forward='transpose', meta=_svd_meta,
        method=False, function=False, derivatives={'A': _svd_grad},
        primitive_because="torch's composite calls _linalg_svd; one NumPy kernel with the same derivative")


def _svdvals_meta(A):
    return _svd_meta(A, False)[1]


def _svdvals_grad(grad, A):
    U, _, Vh = aten.linalg_svd.default(A, False)
    return (U * grad.unsqueeze(-2).to(U.dtype)) @ Vh


# As torch: with a gradient to compute, the singular values come from the full decomposition, whose backward
# saves U, S and Vh (not A): the autograd_composite; without one, from the cheaper values-only kernel.
def _svdvals_jvp(A, A_t):
    """dS = Re diag(U^H dA V), for real and complex A alike (torch's svd_jvp, singular values only)."""
    U, _, Vh = aten.linalg_svd.default(A, False)
    d = (U.mH @ A_t @ Vh.mH).diagonal(0, -2, -1)
    return d.real if d.is_complex() else d


declare('linalg_svdvals(Tensor A) -> Tensor', forward=_svdvals_jvp, meta=_svdvals_meta, method=False, function=False,
        derivatives={'A': _svdvals_grad}, autograd_composite=lambda A: aten.linalg_svd.default(A, False)[1],
        primitive_because="torch's composite asks the grad mode to pick _linalg_svd with or without U and Vh; "
                          "here the autograd_composite makes that choice")


def _svd(self, some=True, compute_uv=True):
    """torch.svd: returns V (not V^H); ``some=False`` gives the full square factors."""
    U, S, Vh = aten.linalg_svd.default(self, not some)
    return U, S, Vh.mT


declare('svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)', composite=_svd)


def _eigh_meta(A, UPLO='L'):
    shape = _square('linalg.eigh', A, kernel='linalg_eigh_cpu')
    if UPLO not in ('L', 'U'):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return [(shape[:-1], A._dtype.to_real()), (shape, A._dtype)]


def _eigh_grad(grads, results):
    # torch's linalg_eig_backward, Hermitian case: gA = V (skew(V^T gV) / E + diag(gL)) V^T, E_ij = L_j - L_i
    gL, gV = grads
    L, V = results
    _real_only('linalg.eigh', V)
    VhgV = V.mT.matmul(gV)
    VhgV = (VhgV - VhgV.mT) * 0.5
    eye = aten.eye.default(L.shape[-1], dtype=L.dtype, device=L.device)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    return V.matmul((VhgV / E + gL.diag_embed()).matmul(V.mT))


declare("linalg_eigh(Tensor A, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)", forward='transpose', meta=_eigh_meta,
        method=False, function=False, derivatives={'A': _eigh_grad},
        primitive_because="torch's composite calls _linalg_eigh; one NumPy kernel with the same derivative")


def _eigvalsh_meta(A, UPLO='L'):
    return _eigh_meta(A, UPLO)[0]


def _eigvalsh_grad(grad, A, UPLO):
    V = aten.linalg_eigh.default(A, UPLO)[1]
    return (V * grad.unsqueeze(-2).to(V.dtype)) @ V.mH


# As torch: with a gradient to compute, eigh's eigenvalues (its backward saves eigenvalues and vectors, not A):
# the autograd_composite; without one, the values-only kernel.
def _eigvalsh_jvp(A, A_t, UPLO):
    """dL = Re diag(V^H dA V), real and complex alike (torch's linalg_eig_jvp, Hermitian, eigenvalues only)."""
    V = aten.linalg_eigh.default(A, UPLO)[1]
    d = (V.mH @ A_t @ V).diagonal(0, -2, -1)
    return d.real if d.is_complex() else d


declare("linalg_eigvalsh(Tensor A, str UPLO='L') -> Tensor", forward=_eigvalsh_jvp, meta=_eigvalsh_meta, method=False, function=False,
        derivatives={'A': _eigvalsh_grad},
        autograd_composite=lambda A, UPLO='L': aten.linalg_eigh.default(A, UPLO)[0],
        primitive_because="torch's composite asks the grad mode to pick _linalg_eigh with or without eigenvectors; "
                          "here the autograd_composite makes that choice")


# --- norms ------------------------------------------------------------------------------------

def _matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, dtype=None):
    from .views import wrap_dim
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim if isinstance(dim, int) else ' '.join(map(str, dim))}")
    if not A.dtype.is_floating_point and not A.dtype.is_complex:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_tname(A.dtype)}")
    if A.dtype in (D.float16, D.bfloat16) and (ord == 'nuc' or ord in (2, -2)):     # the SVD-based ones
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got {_tname(A.dtype)}")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == 'fro':
        return aten.linalg_vector_norm.default(A, 2, [d0, d1], keepdim)
    if ord == 'nuc' or ord in (2, -2):
        sv = aten.linalg_svdvals.default(A.movedim((d0, d1), (-2, -1)))
        r = sv.sum(-1) if ord == 'nuc' else (sv.amax(-1) if ord == 2 else sv.amin(-1))
        if keepdim:
            lo, hi = sorted((d0, d1))
            r = r.unsqueeze(lo).unsqueeze(hi)
        return r
    if ord in (1, -1, float('inf'), float('-inf')):
        s_dim, m_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        col = A.abs().sum(s_dim, keepdim=True)
        r = col.amax(m_dim, keepdim=True) if ord > 0 else col.amin(m_dim, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.dim() == 2):
        if ord is None:
            ord = 'fro'
        return _matrix_norm(A, ord, tuple(dim) if dim is not None else (-2, -1), keepdim, dtype)
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected ord to be a number, but got {ord}")
    return aten.linalg_vector_norm.default(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# torch has a Scalar and a str overload of each (ord=2 or ord='fro'); ember.linalg.norm picks one
declare("linalg_matrix_norm(Tensor A, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor", composite=_matrix_norm, method=False, function=False)
declare("linalg_matrix_norm.str_ord(Tensor A, str ord='fro', int[] dim=[-2, -1], bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor", composite=_matrix_norm, method=False, function=False,
        name='_linalg_matrix_norm_str')
declare('linalg_norm(Tensor A, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) '
        '-> Tensor', composite=_norm, method=False, function=False)
declare('linalg_norm.ord_str(Tensor A, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) '
        '-> Tensor', composite=_norm, method=False, function=False, name='_linalg_norm_str')


# --- small composites --------------------------------------------------------------------------------

def _matrix_power(A, n):
    _square('linalg.matrix_power', A, floating=False)
    if n == 0:
        eye = aten.eye.default(A.shape[-1], dtype=A.dtype, device=A.device)
        return A * 0 + eye      # keeps A in the graph (a zero gradient), as torch's result does
    if n < 0:
        A, n = aten.linalg_inv.default(A), -n
    result, base = None, A
    while n:                  # square-and-multiply
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


def _multi_dot(tensors):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    ts = list(tensors)
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    if first.dim() == 1:
        ts[0] = first.unsqueeze(0)
    if last.dim() == 1:
        ts[-1] = last.unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    r = ts[0]
    for t in ts[1:]:
        r = r.mm(t)
    if last.dim() == 1:
        r = r.squeeze(-1)
    if first.dim() == 1:
        r = r.squeeze(0)
    return r


def _pinv(A):
    """A pseudo-inverse built from linalg_svd, for det's gradient at singular matrices: differentiated again, it
    goes through the SVD's derivative as torch's det backward does (nan at repeated singular values, as torch)."""
    U, S, Vh = aten.linalg_svd.default(A, False)
    keep = S > S.amax(-1, keepdim=True) * (max(A.shape[-2], A.shape[-1]) * _EPS[A.dtype.to_real().name])
    Sinv = aten.where.self(keep, 1 / aten.where.self(keep, S, 1.0), 0.0)
    return (Vh.mH * Sinv.unsqueeze(-2)).matmul(U.mH)


def _pinv_meta(self, rtol=None, hermitian=False, atol=None):
    shape = self._a.shape
    if len(shape) < 2 or self._dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(f"linalg.pinv({_tname(self._dtype)}{{{list(shape)}}}): expected a tensor with 2 or more "
                           f"dimensions of float, double, cfloat or cdouble types")
    if hermitian:
        _square('linalg.eigh', self)
    return shape[:-2] + (shape[-1], shape[-2]), self._dtype


def _pinv_grad(grad, result, self):
    """torch's pinv_backward: the derivative of A^+ written with A^+ itself, through the smaller of A's sides."""
    m, n = self.shape[-2], self.shape[-1]
    ph, gh = result.mH, grad.mH
    if m <= n:
        K = gh.matmul(result)
        KpH = K.matmul(ph)
        return (-result.matmul(K).mH + KpH - self.matmul(result).matmul(KpH)
                + ph.matmul(result).matmul(gh - K.matmul(self)))
    K = result.matmul(gh)
    pHK = ph.matmul(K)
    return (-K.matmul(result).mH + (gh - self.matmul(K)).matmul(result).matmul(ph) + pHK
            - pHK.matmul(result).matmul(self))


_EPS = {'float32': 1.1920928955078125e-07, 'float64': 2.220446049250313e-16, 'float16': 0.0009765625,
        'bfloat16': 0.0078125}


def _addr(self, vec1, vec2, beta=1, alpha=1):
    outer = _outer(vec1, vec2)
    outer = outer if alpha == 1 else outer * alpha
    if beta == 0:
        return outer + self * 0 if self.dtype.is_floating_point else outer.expand(tuple(broadcast_shapes(
            tuple(self.shape), tuple(outer.shape)))).clone()
    return outer + (self if beta == 1 else self * beta)


def _matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Singular values (|eigenvalues| of the lower triangle for ``hermitian``, as torch's) above max(atol, rtol *
    the largest); rtol defaults to eps * max(m, n), or to 0 when a positive atol is given."""
    S = aten.linalg_eigvalsh.default(A, 'L').abs() if hermitian else aten.linalg_svdvals.default(A)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else max(A.shape[-2], A.shape[-1]) * _EPS[A.dtype.to_real().name]
    tol = S.amax(-1, keepdim=True) * rtol if S.numel() else S.sum(-1, keepdim=True)
    if atol is not None:
        tol = aten.where.self(tol > atol, tol, atol)
    return (S > tol).sum(-1)


declare('addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor', composite=_addr, out=True)
declare('linalg_matrix_rank(Tensor input, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor',
        composite=lambda A, atol=None, rtol=None, hermitian=False: _matrix_rank(A, atol=atol, rtol=rtol,
                                                                               hermitian=hermitian),
        method=False, function=False, differentiable=False)
declare('linalg_matrix_power(Tensor self, int n) -> Tensor', composite=_matrix_power, method=False, function=False)
declare('matrix_power(Tensor self, int n) -> Tensor', composite=_matrix_power)
declare('linalg_multi_dot(Tensor[] tensors) -> Tensor', composite=_multi_dot, method=False, function=False)
# an operator, as torch's linalg_pinv (its SVD, or eigh for a Hermitian matrix, in one kernel): its derivative
# reads the input and the result, so both are saved
declare('linalg_pinv(Tensor self, *, float? rtol=None, bool hermitian=False, float? atol=None) -> Tensor', forward='transpose',
        meta=_pinv_meta, method=False, function=False, derivatives={'self': _pinv_grad},
        complex_formulas=True,
        primitive_because="one SVD (or eigh) kernel whose formula, torch's pinv_backward, saves what torch's composite saves")      # torch's pinv_backward, written with ^H: right for complex as it stands
declare('linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor', method=False, function=False,
        composite=lambda x, y, dim=-1: (x.conj() * y).sum(dim))     # torch's: x conjugated


# --- eig, geqrf --------------------------------------------------------------------------------------

def _eig_meta(A):
    if A._dtype.category < 2:       # torch asks for the complex type first, so its message names that
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A._dtype)}")
    shape = _square('linalg.eig', A, kernel='linalg_eig_out_cpu')
    c = A._dtype.to_complex()
    return [(shape[:-1], c), (shape, c)]


def _eig_grad(grads, results):
    """torch's linalg_eig_backward, general (non-Hermitian) case, written for complex tensors: with VhgV = V^H gV,
    gA = V^-H ((VhgV - V^H V Re(diag(VhgV))) / conj(E) off the diagonal, gL on it) V^H, E_ij = L_j - L_i. V is
    fixed only up to a phase per column, so a loss that reads the phase (Im diag(VhgV) != 0) is refused."""
    gL, gV = grads
    L, V = results
    n = L.shape[-1]
    eye = aten.eye.default(n, dtype=L.dtype, device=L.device)
    Vh = V.mH
    VhgV = Vh.matmul(gV)
    d = VhgV.diagonal(0, -2, -1)
    if d.numel() and not bool((d.imag.abs() <= 1e-2).all()):     # torch's allclose(.., 0, 1e-2, 1e-2)
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye
    off = (VhgV - Vh.matmul(V * d.real.unsqueeze(-2))) / E
    gA = off * (1 - eye) + gL.diag_embed()
    return aten._linalg_solve.default(Vh, gA.matmul(Vh))


declare('linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)', forward='transpose', meta=_eig_meta,
        method=False, function=False, derivatives={'self': _eig_grad}, complex_formulas=True)
def _eigvals(A):
    if A.dtype.is_floating_point or A.is_complex():    # torch's checks name eigvals (eig's for integer input)
        _square('linalg.eigvals', A, floating=False)
    return aten.linalg_eig.default(A)[0]


declare('linalg_eigvals(Tensor self) -> Tensor', method=False, function=False, composite=_eigvals)


def _geqrf_meta(self):
    shape = tuple(self._a.shape)
    if len(shape) < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if self._dtype.category < 2 or self._dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{_tname(self._dtype)}\'')
    return [(shape, self._dtype), (shape[:-2] + (min(shape[-2:]),), self._dtype)]


def _no_derivative(message, cls=RuntimeError):
    """A formula that raises torch's error for an operator torch does not differentiate (its backward node
    raises when reached, not the forward)."""
    def formula(grads):
        raise cls(message)
    return formula


declare('geqrf(Tensor self) -> (Tensor a, Tensor tau)', meta=_geqrf_meta, forward='not_implemented',
        derivatives={'self': _no_derivative("the derivative for 'geqrf' is not implemented.", NotImplementedError)})


def _ldl_meta(self, hermitian=False, check_errors=False):
    shape = tuple(self._a.shape)
    name = 'torch.linalg.ldl_factor_ex'
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {shape[-2]} by {shape[-1]} "
                           f"matrices")
    if self._dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_tname(self._dtype)}")
    if self._dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"ldl_factor_kernel_cpu" not implemented for \'{_tname(self._dtype)}\'')
    return [(shape, self._dtype), (shape[:-1], D.int32), (shape[:-2], D.int32)]


def _ldl_factor(self, hermitian=False):
    LD, pivots, info = aten.linalg_ldl_factor_ex.default(self, hermitian=hermitian)
    if info.is_meta or not info.numel():     # the check reads the data
        return LD, pivots
    bad = info.reshape(-1)[info.reshape(-1).argmax()]
    if bool(bad > 0):
        raise RuntimeError(f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                           f'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. torch.linalg.ldl_factor: '
                           f'Unknown error code: {int(info.reshape(-1)[(info.reshape(-1) > 0).int().argmax()].item())}.')
    return LD, pivots


def _ldl_solve_meta(LD, pivots, B, hermitian=False):
    name = 'torch.linalg.ldl_solve'
    ld, piv, b = tuple(LD._a.shape), tuple(pivots._a.shape), tuple(B._a.shape)
    if len(ld) < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if ld[-1] != ld[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {ld[-2]} by {ld[-1]} "
                           f"matrices")
    if len(b) < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(len(b), 1)}, "
                         f"{max(len(b), 1) - 1}], but got -2)")
    if ld[:-1] != piv:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(piv)} instead")
    if b[-2] != ld[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {ld[-2]} by {ld[-1]} but each "
                           f"b matrix is {b[-2]} by {b[-1]}")
    if B._dtype is not LD._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_tname(B._dtype)} and A of "
                           f"type {_tname(LD._dtype)} instead.")
    _float_input(name, LD, 'ldl_solve_cpu')
    return broadcast_shapes(ld[:-2], b[:-2]) + b[-2:], LD._dtype


# torch differentiates neither (a backward reaching them raises, as torch's)
declare('linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> '
        '(Tensor LD, Tensor pivots, Tensor info)', meta=_ldl_meta, method=False, function=False,
        forward='not_implemented',
        derivatives={'self': _no_derivative("derivative for aten::linalg_ldl_factor_ex is not implemented")})
declare('linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)',
        composite=_ldl_factor, method=False, function=False)
declare('linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor',
        meta=_ldl_solve_meta, method=False, function=False, forward='not_implemented',
        derivatives={('LD', 'B'): _no_derivative("derivative for aten::linalg_ldl_solve is not implemented")})
