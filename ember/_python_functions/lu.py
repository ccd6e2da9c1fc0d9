"""LU factorization with partial pivoting as a composite: ``torch.lu`` (the deprecated API), ``lu_unpack``,
``lu_solve`` and torch.linalg's ``lu``, ``lu_factor``, ``lu_factor_ex``, ``lu_solve`` (ember.linalg names them).

NOTE [LU by elimination in operators]: the factorization is LAPACK's getf2 written in ember operators, one
column per step: pick the row with the largest |a| (|re| + |im| for complex, as LAPACK's i?amax) at or below the
diagonal, swap it up with ``gather``, divide the column below the pivot by it and subtract the rank-one update
from the trailing block. The pivot choice is an integer (no gradient), everything else is differentiable, so
gradients come from the elimination itself and equal torch's ``linalg_lu_backward`` where the pivots agree.
A zero pivot is skipped as LAPACK skips it (its column is zero below, so nothing is divided) and reported in
``info`` (1-based). The results are LAPACK's layout: ``LU`` holds U on and above the diagonal and L's
multipliers below it, ``pivots`` are 1-based int32 row swaps applied in order.
"""
from ember._warn import warnings

from .._core import dtype as D
from .._tensor import Tensor
from ..ops import aten
from .._core.dtype import SAME_DTYPE
from ._out import write_out
from .linalg import solve_triangular

__all__ = ['lu', 'lu_unpack', 'lu_solve']


def _E():
    import ember
    return ember


def _structseq(name, fields):
    from ..return_types import _structseq as make
    return make(name, fields)


def _swap_index(rows, j, p):
    """Per batch element, the row order that swaps row ``j`` with row ``p`` (``p`` a tensor of row numbers)."""
    p = p.unsqueeze(-1)
    return aten.where.self(rows == j, p, aten.where.self(rows == p, rows.new_full((), j), rows))


def _factor(A):
    """(LU, pivots, info, perm) of NOTE [LU by elimination in operators]; ``A[perm] = L U`` per batch element."""
    m, n = A.shape[-2], A.shape[-1]
    batch = tuple(A.shape[:-2])
    rows = aten.arange.default(m, device=A.device)
    perm = rows.expand(*batch, m)
    info = aten.zeros.default(batch, dtype=D.int32, device=A.device)
    pivots, M = [], A
    for j in range(min(m, n)):
        col = M[..., j:, j].detach()
        size = col.real.abs() + col.imag.abs() if col.is_complex() else col.abs()
        swap = _swap_index(rows, j, size.argmax(-1) + j)
        M = M.gather(-2, swap.unsqueeze(-1).expand(*batch, m, n))
        perm = perm.gather(-1, swap)
        pivots.append(swap[..., j] + 1)
        pivot = M[..., j, j]
        zero = pivot == 0
        info = aten.where.self(zero & (info == 0), info.new_full((), j + 1), info)
        low = M[..., j + 1:, j] / aten.where.self(zero, pivot.new_ones(()), pivot).unsqueeze(-1)
        below = M[..., j + 1:, :]
        trailing = below[..., j + 1:] - low.unsqueeze(-1) * M[..., j:j + 1, j + 1:]
        M = aten.cat.default([M[..., :j + 1, :], aten.cat.default([below[..., :j], low.unsqueeze(-1), trailing], -1)],
                             -2)
    if pivots:
        piv = aten.stack.default(pivots, -1).to(D.int32)
    else:
        piv = aten.zeros.default(batch + (0,), dtype=D.int32, device=A.device)
    return M, piv, info, perm


def _check_input(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           f"instead")
    if not (A.is_floating_point() or A.is_complex()) or A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{D.scalar_name(A.dtype)}\'')


def _check_pivot(pivot):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _raise_singular(info):
    bad = aten.nonzero.default(info.reshape(-1))
    if bad.numel():
        i = bad[0, 0].item()
        k = info.reshape(-1)[i].item()
        where = f"(Batch element {i}): " if info.dim() else ""
        raise RuntimeError(f"torch.linalg.lu_factor: {where}U[{k},{k}] is zero and using it on lu_solve would "
                           f"result in a division by zero. If you still want to perform the factorization, "
                           f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _outs(result, out):
    if out is None:
        return result
    for o, r in zip(out, result):
        o.resize_(r.shape).copy_(r)
    return type(result)(*out) if hasattr(result, '_fields') else tuple(out)


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: the compact LU factorization of each matrix in ``A`` (NOTE [LU by elimination
    in operators]); ``info`` is the 1-based index of the first zero pivot, 0 where there is none.

    >>> import ember
    >>> LU, pivots, info = ember.linalg.lu_factor_ex(ember.tensor([[1., 2.], [3., 4.]]))
    >>> pivots, info
    (tensor([2, 2], dtype=ember.int32), tensor(0, dtype=ember.int32))
    """
    _check_input(A, "torch.lu_factor")
    _check_pivot(pivot)
    LU, piv, info, _ = _factor(A)
    if check_errors:
        _raise_singular(info)
    return _outs(_structseq('linalg_lu_factor_ex', ['LU', 'pivots', 'info'])(LU, piv, info), out)


def linalg_lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)`` as torch.linalg.lu_factor; raises where a matrix is singular (a zero pivot).

    >>> import ember
    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).LU
    tensor([[3.0000, 4.0000],
            [0.3333, 0.6667]])
    """
    _check_input(A, "torch.lu_factor")
    _check_pivot(pivot)
    LU, piv, info, _ = _factor(A)
    _raise_singular(info)
    return _outs(_structseq('linalg_lu_factor', ['LU', 'pivots'])(LU, piv), out)


def _unpack(LU, dtype, perm=None, pivots=None):
    """(P, L, U) from the compact LU and either the row order ``perm`` or LAPACK's ``pivots``."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    rows = aten.arange.default(m, device=LU.device)
    if perm is None:
        perm = rows.expand(*pivots.shape[:-1], m)
        for j in range(pivots.shape[-1]):
            perm = perm.gather(-1, _swap_index(rows, j, pivots[..., j].long() - 1))
    P = (rows.unsqueeze(-1) == perm.unsqueeze(-2)).to(dtype)
    eye = aten.eye.default(m, k, dtype=LU.dtype, device=LU.device)
    L = aten.tril.default(LU[..., :, :k], -1) + eye
    U = aten.triu.default(LU[..., :k, :])
    return P, L, U


def linalg_lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with A = P L U: P a permutation, L unit lower triangular (m x k), U upper (k x n).

    >>> import ember
    >>> P, L, U = ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]]))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    _check_input(A, "linalg.lu")
    _check_pivot(pivot)
    LU, _, _, perm = _factor(A)
    return _outs(_structseq('linalg_lu', ['P', 'L', 'U'])(*_unpack(LU, A.dtype, perm=perm)), out)


def lu(A, pivot=True, get_infos=False, out=None):
    """The deprecated torch.lu: ``(LU, pivots)``, with ``info`` too where ``get_infos``; never raises for a
    singular matrix (linalg.lu_factor does).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     ember.lu(ember.tensor([[1., 2.], [3., 4.]]))[1]
    tensor([2, 2], dtype=ember.int32)
    """
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                  "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                  "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                  "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                  "torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning)
    _check_input(A, "torch.lu_factor")
    _check_pivot(pivot)
    LU, piv, info, _ = _factor(A)
    if get_infos:
        return _outs(_structseq('_lu_with_info', ['LU', 'pivots', 'info'])(LU, piv, info), out)
    return _outs((LU, piv), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from linalg.lu_factor's ``LU`` and ``pivots``; empty tensors for the parts not unpacked.

    >>> import ember
    >>> A = ember.tensor([[1., 2.], [3., 4.]])
    >>> P, L, U = ember.lu_unpack(*ember.linalg.lu_factor(A))
    >>> (P @ L @ U).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    if LU_pivots.dtype != D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (min(LU_data.shape[-2:]),):
        raise RuntimeError("torch.lu_unpack: Expected LU_pivots.size(-1) == min(LU_data.size(-1), "
                           "LU_data.size(-2)) and matching batch dimensions, but got LU_pivots of size "
                           f"{list(LU_pivots.shape)} for LU_data of size {list(LU_data.shape)}")
    P, L, U = _unpack(LU_data, LU_data.dtype, pivots=LU_pivots)
    empty = aten.empty.default([0], dtype=LU_data.dtype, device=LU_data.device)
    result = (P if unpack_pivots else empty, L if unpack_data else empty, U if unpack_data else empty)
    return _outs(_structseq('lu_unpack', ['P', 'L', 'U'])(*result), out)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (``left``) or X A = B, A given as linalg.lu_factor's ``(LU, pivots)``; ``adjoint`` solves
    with A^H. Two triangular solves and a permutation, so gradients reach ``LU`` and ``B``.

    >>> import ember
    >>> A = ember.tensor([[2., 1.], [1., 3.]])
    >>> ember.linalg.lu_solve(*ember.linalg.lu_factor(A), A @ ember.tensor([[1.], [2.]]))
    tensor([[1.],
            [2.]])
    """
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor LU must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    P, L, U = lu_unpack(LU, pivots)
    if not left:        # X A = B  <=>  A^H X^H = B^H
        return _written(linalg_lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH, out)
    if adjoint:         # A^H = U^H L^H P^T
        Y = solve_triangular(U.mH, B, upper=False)
        X = P.matmul(solve_triangular(L.mH, Y, upper=True, unitriangular=True))
    else:
        Y = solve_triangular(L, P.mT.matmul(B), upper=False, unitriangular=True)
        X = solve_triangular(U, Y, upper=True)
    return _written(X, out)


def _written(X, out):
    return X if out is None else write_out(out, X, same_dtype=SAME_DTYPE)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """The deprecated torch.lu_solve: ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                  "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
                  UserWarning)
    return linalg_lu_solve(LU_data, LU_pivots, b, out=out)


Tensor.lu = lambda self, pivot=True, get_infos=False: _E().lu(self, pivot, get_infos)
Tensor.lu_solve = lambda self, LU_data, LU_pivots: _E().lu_solve(self, LU_data, LU_pivots)
