"""torch.linalg's composites over the solvers and factorizations: ``cond``, ``solve_ex``, ``tensorinv``,
``tensorsolve``, ``householder_product`` (``orgqr``, ``ormqr``), and the deprecated ``triangular_solve``. Each is
written in operators, so gradients come from the pieces (torch's formulas for these are the derivatives of the
same compositions)."""
import math

from ember._warn import warnings

from .._core import dtype as D
from .._core.dtype import scalar_name
from ..ops import aten

__all__ = ['triangular_solve', 'orgqr', 'ormqr']

_INF = float('inf')


def _structseq(name, fields):
    from ..return_types import _structseq as make
    return make(name, fields)


def _linalg_error():
    """The kernels' LinAlgError, as ember.linalg re-exports it (this layer does not import the backends)."""
    from .. import linalg
    return linalg.LinAlgError


def _lu():
    import importlib       # the package's ``lu`` attribute is the public function, not the module
    return importlib.import_module('ember._python_functions.lu')


def _written(result, out):
    if out is None:
        return result
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rs = result if isinstance(result, tuple) else (result,)
    for o, r in zip(outs, rs):
        o.resize_(r.shape).copy_(r)
    if isinstance(result, tuple):
        return type(result)(*outs) if hasattr(result, '_fields') else tuple(outs)
    return out


def _singular_mask(A):
    """Per matrix, whether its LU factorization meets a zero pivot (what LAPACK getrf's info reports)."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        return _lu().linalg_lu_factor_ex(A.detach()).info > 0


def _inv_or_inf(A):
    """torch's linalg_inv_ex with the inverses of singular matrices filled with inf (linalg.cond's helper)."""
    try:
        return aten.linalg_inv.default(A)
    except RuntimeError as e:
        if not isinstance(e, _linalg_error()):
            raise
        bad = _singular_mask(A).unsqueeze(-1).unsqueeze(-1)
        eye = aten.eye.default(A.shape[-1], dtype=A.dtype, device=A.device)
        inv = aten.linalg_inv.default(aten.where.self(bad, eye, A))
        return inv.masked_fill(bad, _INF)


def _ord_text(p):
    if isinstance(p, bool) or isinstance(p, int):
        return str(int(p))
    if math.isinf(p):
        return 'inf' if p > 0 else '-inf'
    return f'{p:.6f}'


def cond(A, p=None, *, out=None):
    """The condition number of each matrix in ``A`` for the norm ``p`` (torch.linalg.cond): the ratio of the
    extreme singular values for None and +-2 (any shape), ``sum(S) * sum(1/S)`` for 'nuc', and
    ``norm(A) * norm(A^-1)`` for 'fro', +-1 and +-inf (square only; inf where A is singular). 0 for empty input.

    >>> import ember
    >>> ember.linalg.cond(ember.tensor([[1., 0.], [0., 4.]])).item()
    4.0
    """
    if isinstance(p, str):
        if A.dim() >= 2:
            _square(A, f"linalg.cond(ord={p})")
        if p not in ('fro', 'nuc'):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    elif p is not None and p not in (2, -2, 1, -1, _INF, -_INF):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if A.numel() == 0:        # NumPy leaves it undefined; torch returns 0
        real = A.dtype.to_real() if (A.is_floating_point() or A.is_complex()) else A.dtype
        return _written(aten.zeros.default(tuple(A.shape[:-2]), dtype=real, device=A.device), out)
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        S = aten.linalg_svdvals.default(A)
        big, small = S[..., 0], S[..., -1]
        r = small / big if p == -2 else big / small
    elif p == 'nuc':          # through the singular values: the nuclear norm of an inf-filled inverse fails
        _square(A, "linalg.cond(ord=nuc)")
        S = aten.linalg_svdvals.default(A)
        r = S.sum(-1) * (1 / S).sum(-1)
    else:
        _square(A, f"linalg.cond(ord={p if isinstance(p, str) else _ord_text(p)})")
        inv = _inv_or_inf(A)
        r = aten.linalg_matrix_norm.default(A, p) if not isinstance(p, str) else \
            aten.linalg_matrix_norm.str_ord(A, p)
        ri = aten.linalg_matrix_norm.default(inv, p) if not isinstance(p, str) else \
            aten.linalg_matrix_norm.str_ord(inv, p)
        r = (r * ri).nan_to_num(_INF, _INF, -_INF)     # 0 * inf: NumPy's inf
    return _written(r, out)


def _square(A, name):
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _batch_prefix(mask):
    if mask.dim() == 0:
        return ""
    return f"(Batch element {int(aten.nonzero.default(mask.reshape(-1))[0, 0].item())}): "


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)`` of linalg.solve: ``info`` is the 1-based index of the first zero pivot of A's LU
    factorization (0 where A is invertible). A singular A gives LAPACK's infs and NaNs in ``result`` rather than
    an error, unless ``check_errors``.

    >>> import ember
    >>> ember.linalg.solve_ex(ember.eye(2), ember.ones(2)).info
    tensor(0, dtype=ember.int32)
    """
    batch = tuple(A.shape[:-2])
    try:
        X = aten.linalg_solve.default(A, B, left=left)
        info = aten.zeros.default(batch, dtype=D.int32, device=A.device)
    except RuntimeError as e:
        if not isinstance(e, _linalg_error()):
            raise
        LU, piv, info = _lu().linalg_lu_factor_ex(A)
        if check_errors:
            raise _linalg_error()(f"torch.linalg.solve_ex: {_batch_prefix(info > 0)}The solver failed because the input "
                              f"matrix is singular.") from None
        X = _lu_substitution(LU, piv, B) if left else _solve_ex_right(A, B)
    return _written(_structseq('linalg_solve_ex', ['result', 'info'])(X, info), out)


def _substitute(T, B, upper, unit=False):
    """T^-1 B for triangular T by substitution, one row at a time, as LAPACK's trsm: a zero on the diagonal gives
    infs and NaNs (0 * inf), not an error."""
    n = T.shape[-1]
    xs = [None] * n
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        r = B[..., i:i + 1, :]
        if upper and i < n - 1:
            r = r - T[..., i:i + 1, i + 1:].matmul(aten.cat.default(xs[i + 1:], -2))
        elif not upper and i > 0:
            r = r - T[..., i:i + 1, :i].matmul(aten.cat.default(xs[:i], -2))
        xs[i] = r if unit else r / T[..., i:i + 1, i:i + 1]
    return aten.cat.default(xs, -2) if n else B


def _lu_substitution(LU, piv, B):
    """A^-1 B from A's compact LU (L unit lower, U upper, P the row swaps of ``piv``), B a matrix or vector(s)."""
    vec = B.dim() == 1 or (B.dim() == LU.dim() - 1 and tuple(B.shape) == tuple(LU.shape[:-1]))
    Bm = B.unsqueeze(-1) if vec else B
    P, L, U = _lu().lu_unpack(LU, piv)
    X = _substitute(U, _substitute(L, P.mT.matmul(Bm), False, True), True)
    return X.squeeze(-1) if vec else X


def _solve_ex_right(A, B):
    """X A = B for singular A: A^T X^T = B^T through A^T's LU."""
    LU, piv, _ = _lu().linalg_lu_factor_ex(A.mT)
    vec = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    return _lu_substitution(LU, piv, B) if vec else _lu_substitution(LU, piv, B.mT).mT


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def tensorinv(A, ind=2, *, out=None):
    """The tensor X with ``tensordot(X, A, ind)`` the identity (torch.linalg.tensorinv): ``A`` as a
    prod(shape[:ind]) x prod(shape[ind:]) matrix, inverted, and shaped ``shape[ind:] + shape[:ind]``.

    >>> import ember
    >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
    ember.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    try:
        inv = aten.linalg_inv.default(A.reshape(rows, cols))
    except RuntimeError as e:    # torch reports its linalg_inv_ex check under the name 'inv'
        if not isinstance(e, _linalg_error()):
            raise
        raise _linalg_error()(str(e).replace("linalg.inv:", "inv:", 1)) from None
    return _written(inv.reshape(shape[ind:] + shape[:ind]), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) == B`` (torch.linalg.tensorsolve): the dimensions ``dims`` of A moved to
    the end, then one linalg.solve of A as a B.numel() x prod(A.shape[B.ndim:]) matrix.

    >>> import ember
    >>> ember.linalg.tensorsolve(ember.eye(6).reshape(2, 3, 6), ember.ones(2, 3)).shape
    ember.Size([6])
    """
    if dims is not None:
        nd = A.dim()
        moved = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in moved] + moved)
    rest = tuple(A.shape[B.dim():])
    n = _prod(rest)
    if n != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {B.numel()}")
    X = aten.linalg_solve.default(A.reshape(B.numel(), n), B.reshape(-1))
    return _written(X.reshape(rest), out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The deprecated torch.triangular_solve: ``(solution, cloned_coefficient)``, X with op(A) X = b for the upper
    (or lower) triangle of A (op: transposed where ``transpose``), batch dimensions broadcast; the second result is
    A, broadcast and copied.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     ember.triangular_solve(ember.tensor([[2.], [2.]]), ember.tensor([[2., 0.], [0., 1.]])).solution
    tensor([[1.],
            [2.]])
    """
    warnings.warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed "
                  "in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not "
                  "return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced "
                  "with\nX = torch.linalg.solve_triangular(A, B).", UserWarning)
    for t, name in ((b, 'b'), (A, 'A')):
        if t.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{t.dim()} dimensions instead")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {scalar_name(b.dtype)} and "
                           f"A of type {scalar_name(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           f"matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-2]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"triangular_solve_cpu" not implemented for \'{scalar_name(A.dtype)}\'')
    batch = _broadcast(tuple(A.shape[:-2]), tuple(b.shape[:-2]))
    Ab = A.expand(*batch, *A.shape[-2:])
    bb = b.expand(*batch, *b.shape[-2:])
    T = aten.triu.default(Ab) if upper else aten.tril.default(Ab)
    if unitriangular:
        eye = aten.eye.default(A.shape[-1], dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    op = T.mT if transpose else T
    try:
        X = aten.linalg_solve.default(op, bb)
    except RuntimeError as e:       # a zero on the diagonal: LAPACK's trsm gives infs and NaNs
        if not isinstance(e, _linalg_error()):
            raise
        X = _substitute(op, bb, upper != transpose, unitriangular)
    return _written(_structseq('triangular_solve', ['solution', 'cloned_coefficient'])(X, Ab.clone()), out)


def _broadcast(a, b):
    import ember
    return tuple(ember.broadcast_shapes(a, b))


def _householder_vectors(A, tau, name):
    """The checks of torch's householder_product (``name``: the kernel torch reports for an unsupported dtype),
    then V: A's columns below the diagonal with a unit diagonal, one column per reflector."""
    pre = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{pre}: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{pre}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"{pre}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{pre}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{pre}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{pre}: tau dtype {scalar_name(tau.dtype)} does not match input dtype "
                           f"{scalar_name(A.dtype)}")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"{name}" not implemented for \'{scalar_name(A.dtype)}\'')
    k = tau.shape[-1]
    return aten.tril.default(A[..., :k], -1) + aten.eye.default(m, k, dtype=A.dtype, device=A.device)


def _apply_reflectors(V, tau, C, adjoint):
    """H_0 H_1 ... H_{k-1} C (or its adjoint), H_i = I - tau_i v_i v_i^H, one rank-one update per reflector."""
    k = tau.shape[-1]
    order = range(k) if adjoint else range(k - 1, -1, -1)
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        C = C - (t.conj() if adjoint else t) * v.matmul(v.mH.matmul(C))
    return C


def householder_product(A, tau, *, out=None):
    """The first n columns of H_0 ... H_{k-1} (torch.linalg.householder_product, LAPACK's orgqr): the Q of a QR
    from geqrf's reflectors.

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[3., 1.], [4., 2.]]))
    >>> ember.linalg.householder_product(a, tau).abs()
    tensor([[0.6000, 0.8000],
            [0.8000, 0.6000]])
    """
    V = _householder_vectors(A, tau, 'orgqr_cpu')
    m, n = A.shape[-2], A.shape[-1]
    eye = aten.eye.default(m, n, dtype=A.dtype, device=A.device).expand(*A.shape)
    return _written(_apply_reflectors(V, tau, eye, False), out)


def orgqr(input, tau, *, out=None):
    """torch.orgqr: an alias of linalg.householder_product."""
    return householder_product(input, tau, out=out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q C, C Q, Q^H C or C Q^H for the m x m Q of geqrf's reflectors in ``input`` (torch.ormqr, LAPACK's
    ormqr), without forming Q."""
    pre = "torch.ormqr"
    if input.dim() < 2:
        raise RuntimeError(f"{pre}: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError(f"{pre}: other must have at least 2 dimensions.")
    m = input.shape[-2]
    side = -2 if left else -1
    if other.shape[side] != m:
        raise RuntimeError(f"{pre}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] > m:
        raise RuntimeError(f"{pre}: tau.shape[-1] must be less than or equal to input.shape[-2]")
    if tau.dtype != input.dtype or other.dtype != input.dtype:
        bad = tau if tau.dtype != input.dtype else other
        raise RuntimeError(f"{pre}: Expected input and {'tau' if bad is tau else 'other'} to have the same dtype, "
                           f"but input has dtype {scalar_name(input.dtype)} and "
                           f"{'tau' if bad is tau else 'other'} has dtype {scalar_name(bad.dtype)}")
    if not (input.is_floating_point() or input.is_complex()) or input.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"ormqr_cpu" not implemented for \'{scalar_name(input.dtype)}\'')
    k = tau.shape[-1]
    V = aten.tril.default(input[..., :, :k], -1) + aten.eye.default(m, k, dtype=input.dtype, device=input.device)
    if left:
        r = _apply_reflectors(V, tau, other, transpose)
    else:       # C op(Q) = (op(Q)^H C^H)^H
        r = _apply_reflectors(V, tau, other.mH, not transpose).mH
    return _written(r, out)


def _tensor_methods():
    from .._tensor import Tensor
    Tensor.triangular_solve = lambda self, A, upper=True, transpose=False, unitriangular=False: \
        triangular_solve(self, A, upper, transpose, unitriangular)
    Tensor.orgqr = lambda self, input2: orgqr(self, input2)
    Tensor.ormqr = lambda self, input2, input3, left=True, transpose=False: ormqr(self, input2, input3, left,
                                                                                  transpose)


_tensor_methods()
