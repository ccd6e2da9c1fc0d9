"""Randomized low-rank SVD and PCA (Halko, Martinsson and Tropp, "Finding structure with randomness", 2011,
algorithms 4.4 and 5.1), written in ember operators: ``svd_lowrank`` and ``pca_lowrank``. The random test
matrix comes from ember's generator, so results differ from torch's run to run but approximate the same
leading singular triplets."""
from ..ops import aten

__all__ = ['svd_lowrank', 'pca_lowrank']


def _E():
    import ember
    return ember


def _minus(X, M, make):
    return X if M is None else X - make(M)


def _approximate_basis(A, q, niter, M):
    """Q with orthonormal columns (m x q) whose range approximates A's (A - M's) leading column space, by
    subspace iteration with a re-orthonormalization after each product (algorithm 4.4)."""
    R = _E().randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = aten.linalg_qr.default(_minus(A.matmul(R), M, lambda M: M.matmul(R)), 'reduced')[0]
    for _ in range(niter):
        Q = aten.linalg_qr.default(_minus(A.mH.matmul(Q), M, lambda M: M.mH.matmul(Q)), 'reduced')[0]
        Q = aten.linalg_qr.default(_minus(A.matmul(Q), M, lambda M: M.matmul(Q)), 'reduced')[0]
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with A ~ U diag(S) V^H of rank ``q`` (of A - M when ``M`` is given), by randomized subspace
    iteration with ``niter`` power steps; U is m x q, S has q values, V is n x q.

    >>> import ember
    >>> U, S, V = ember.svd_lowrank(ember.randn(20, 3) @ ember.randn(3, 10), q=3)
    >>> U.shape, S.shape, V.shape
    (ember.Size([20, 3]), ember.Size([3]), ember.Size([10, 3]))
    """
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:               # work on the tall matrix: the basis is of the smaller side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = _minus(Q.mH.matmul(A), M, lambda M: Q.mH.matmul(M))
    U, S, Vh = aten.linalg_svd.default(B, False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: the randomized SVD of A with its column means removed (``center``), so V's columns are
    the ``q`` leading principal directions and S**2 / (m - 1) their variances; q defaults to min(6, m, n).

    >>> import ember
    >>> U, S, V = ember.pca_lowrank(ember.randn(50, 4), q=2)
    >>> V.shape
    ember.Size([4, 2])
    """
    if not isinstance(A, _E().Tensor):
        raise TypeError(f"Expected A to be a Tensor, got {type(A).__name__}")
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter, M=None)
