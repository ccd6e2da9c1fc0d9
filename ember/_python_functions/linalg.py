"""Public product functions with torch's flexible signatures: ``einsum`` (operands as varargs or one
list), ``tensordot`` (``dims`` as an int, a pair of lists or a tensor), ``chain_matmul``; triangular
solves written in ``linalg_solve`` (``linalg.solve_triangular``, ``cholesky_solve``, ``cholesky_inverse``);
and matrix functions written in products (``matrix_exp``, ``pinverse``)."""
import math

from .._core.dtype import scalar_name
from .._tensor import Tensor
from ..overrides import _is_torch_function_mode_enabled, has_torch_function, handle_torch_function
from ..ops import aten
from ._out import write_out

__all__ = ['solve', 'symeig', 'eig', 'einsum', 'tensordot', 'chain_matmul', 'cholesky_solve', 'cholesky_inverse', 'matrix_exp', 'pinverse',
           'matrix_rank']


def einsum(equation, *operands):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` or ``einsum('ij,jk->ik', [a, b])``.

    >>> import ember
    >>> ember.einsum('i,i->', ember.ones(3), ember.ones(3)).item()
    3.0
    """
    if isinstance(equation, str) and len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])     # the one-list form, unpacked before __torch_function__ sees the call
    relevant = operands if isinstance(equation, str) else (equation,) + operands
    if _is_torch_function_mode_enabled() or has_torch_function(relevant):      # (torch's functional.einsum), so a trace records
        return handle_torch_function(einsum, relevant, equation, *operands)     # einsum(eq, a, b)
    if not isinstance(equation, str):     # the sublist format: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation,) + operands)
    return aten.einsum.default(equation, list(operands))


einsum.__ember_public__ = True      # honours __torch_function__ itself (above)


_LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'


def _sublist_equation(args):
    """(equation, operands) of torch's sublist form: operands each followed by a list of subscripts (ints in
    [0, 52), or Ellipsis), then optionally the output's list."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append('...')
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(_LETTERS[s])
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        return ''.join(out)
    operands, subs = list(args[0::2]), [letters(s) for s in args[1::2]]
    out = None
    if len(operands) > len(subs):       # an odd count: the last item is the output's subscripts
        out = letters(operands.pop())
    equation = ','.join(subs) + ('' if out is None else '->' + out)
    return equation, operands


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` dimensions of ``a`` with ``b`` (the last ``dims`` of ``a`` with the first of ``b``,
    or the listed pairs).

    >>> import ember
    >>> ember.tensordot(ember.ones(2, 3), ember.ones(3, 4), 1).shape
    ember.Size([2, 4])
    """
    if isinstance(dims, Tensor):
        dims = dims.tolist()
        if isinstance(dims, int):
            pass
        elif len(dims) == 2 and all(isinstance(d, list) for d in dims):
            dims = (dims[0], dims[1])
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    r = aten.tensordot.default(a, b, da, db)
    return r if out is None else write_out(out, r, same_dtype="tensordot: Expected the output tensor to have dtype "
                                           "{res}, but got an output tensor with dtype {out}")


def chain_matmul(*matrices, out=None):
    """The product of the matrices, left to right (torch.linalg.multi_dot without the reordering)."""
    from ember._warn import warnings
    warnings.warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                       "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                       "multiple parameters.", UserWarning)       # torch's TORCH_WARN_ONCE
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    r = matrices[0]
    for m in matrices[1:]:
        r = r.mm(m)
    return r if out is None else write_out(out, r, same_dtype="multi_dot(): expected out tensor to have dtype "
                                           "{res_cpp} but got {out_cpp}", refuse_grad='mm')


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (``left``) or X A = B, reading only A's upper or lower triangle (its diagonal taken as ones
    with ``unitriangular``): ``linalg_solve`` on that triangle, so gradients reach A's triangle and B.

    >>> import ember
    >>> ember.linalg.solve_triangular(ember.tensor([[2., 0.], [1., 1.]]), ember.tensor([[2.], [3.]]), upper=False)
    tensor([[1.],
            [2.]])
    """
    if A.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    T = aten.triu.default(A) if upper else aten.tril.default(A)
    if unitriangular:
        eye = aten.eye.default(A.shape[-1], dtype=A.dtype)
        T = T * (1 - eye) + eye
    try:
        X = aten.linalg_solve.default(T, B) if left else aten.linalg_solve.default(T.mT, B.mT).mT
    except RuntimeError as e:       # a zero on the diagonal: torch's trsm gives infs and NaNs, not an error
        from .linalg_more import _linalg_error, _substitute
        if not isinstance(e, _linalg_error()):
            raise
        X = _substitute(T, B, upper, unitriangular) if left else \
            _substitute(T.mT, B.mT, not upper, unitriangular).mT
    return X if out is None else write_out(out, X, same_dtype="expected scalar type {res} but found {out}")


def _factor(L, upper):
    """Only the factor's triangle, as torch's LAPACK calls read it (the other entries may hold anything); a
    gradient still reaches every entry, as torch's formula gives it."""
    T = L.triu() if upper else L.tril()
    return T if not L.requires_grad else L + (T - L).detach()


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B for A = L L^H (``upper``: A = U^H U) given its Cholesky factor: ``linalg_solve`` on A
    rebuilt from the factor, so the factor's gradient is torch's (-(G X^H + X G^H) L, all of L's entries).

    >>> import ember
    >>> L = ember.tensor([[2., 0.], [1., 1.]])
    >>> ember.cholesky_solve(L @ L.mT @ ember.tensor([[1.], [2.]]), L)
    tensor([[1.],
            [2.]])
    """
    L = _factor(L, upper)
    A = L.mH.matmul(L) if upper else L.matmul(L.mH)
    X = aten.linalg_solve.default(A, B)
    return X if out is None else write_out(out, X, cast="cholesky_solve: Expected result to be safely castable from "
                                                        "{res} dtype, but got result with dtype {out}")


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (``upper``: U^H U) from its Cholesky factor."""
    eye = aten.eye.default(L.shape[-1], dtype=L.dtype)
    X = cholesky_solve(eye.expand(L.shape), L, upper)
    return X if out is None else write_out(out, X, cast="cholesky_inverse: Expected result to be safely castable "
                                                        "from {res} dtype, but got result with dtype {out}")


Tensor.cholesky_solve = lambda self, input2, upper=False: cholesky_solve(self, input2, upper)
Tensor.cholesky_inverse = lambda self, upper=False: cholesky_inverse(self, upper)


def _square_check(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(A.dtype)}")


def matrix_exp(A):
    """The matrix exponential e^A of each square matrix in ``A`` (torch.linalg.matrix_exp, whose node is
    LinalgMatrixExpBackward0 and whose gradient is the exact adjoint differential, as torch's).

    >>> import ember
    >>> ember.matrix_exp(ember.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _square_check(A, "linalg.matrix_exp")
    return aten.linalg_matrix_exp.default(A)


def pinverse(input, rcond=1e-15):
    """The pseudo-inverse with singular values below ``rcond`` times the largest treated as zero
    (torch.pinverse, which is ``linalg.pinv(input, rtol=rcond, atol=0)``).

    >>> import ember
    >>> ember.pinverse(ember.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    return aten.linalg_pinv.default(input, rtol=rcond, atol=0.0)


_REMOVED_IN_1_9 = "This function was deprecated since version 1.9 and is now removed. "


def _removed(name, advice):
    """A function torch removed in 1.9 and still names, raising its RuntimeError (nflows calls torch.solve in a
    branch that its users catch)."""
    def fn(*args, **kwargs):
        raise RuntimeError(_REMOVED_IN_1_9 + advice)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Removed from torch in 1.9: raises, saying what replaces it."
    return fn


solve = _removed('solve', "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has "
                 "its arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization "
                 "see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, "
                 "A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
symeig = _removed('symeig', "The default behavior has changed from using the upper triangular portion of the matrix "
                  "by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
                  "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
                  "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' "
                  "if upper else 'L')")
eig = _removed('eig', "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
               "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
               "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced "
               "with:\nL_complex, V_complex = torch.linalg.eig(A)")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from torch in 1.9 (torch.matrix_rank raises, saying so); use ember.linalg.matrix_rank."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                       "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                       "`torch.linalg.matrix_rank()` to 'hermitian'.")


Tensor.matrix_exp = matrix_exp
Tensor.pinverse = lambda self, rcond=1e-15: pinverse(self, rcond)


_LSTSQ_DRIVERS = ('gels', 'gelsy', 'gelsd', 'gelss')


def lstsq(A, B, rcond=None, *, driver=None):
    """torch.linalg.lstsq: the least-squares (minimum-norm) solution X of AX = B, with what torch's LAPACK driver
    reports beside it: ``residuals`` (squared, per column of B) where m > n, A has full rank and the driver is not
    gelsy; ``rank`` from every driver but gels; ``singular_values`` from gelsd and gelss.

    A composite: X = pinv(A) @ B, so gradients reach both A and B; small singular values (below ``rcond`` times
    the largest, default eps * max(m, n)) count as zero, where torch's default gelsy decides the rank from a pivoted
    QR instead (the same rank for all but nearly singular A).

    >>> import ember
    >>> ember.linalg.lstsq(ember.tensor([[1., 0.], [0., 1.], [1., 1.]]), ember.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.0000],
            [2.0000]])
    """
    from ..return_types import _structseq
    from .._core import dtype as D
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {scalar_name(A.dtype)} and other's dtype {scalar_name(B.dtype)}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    driver = 'gelsy' if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2], A.shape[-1]
    real = A.dtype.to_real() if A.dtype.is_complex else A.dtype
    tol = rcond if rcond is not None and rcond > 0 else (1.1920928955078125e-07 if real is D.float32 else
                                                          2.220446049250313e-16) * max(m, n)
    X = aten.linalg_pinv.default(A, rtol=tol, atol=0.0).matmul(Bm)
    batch = tuple(A.shape[:-2])
    empty = A.new_empty((0,), dtype=real)
    rank = sv = None
    if driver != 'gels':
        from ..ops import aten as _aten
        with _no_grad():
            sv = _aten.linalg_svdvals.default(A)
            big = sv.amax(-1, keepdim=True) if min(m, n) else sv
            rank = (sv > big * tol).sum(-1) if min(m, n) else A.new_zeros(batch, dtype=D.int64)
    residuals = empty
    if m > n and driver != 'gelsy' and (rank is None or bool((rank == n).all())):
        residuals = (A.matmul(X) - Bm).abs().square().sum(-2)
    SV = sv.detach() if driver in ('gelsd', 'gelss') else empty
    result = _structseq('linalg_lstsq', ['solution', 'residuals', 'rank', 'singular_values'])
    return result(X.squeeze(-1) if vector else X, residuals,
                  rank if rank is not None else A.new_empty((0,), dtype=D.int64), SV)


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()
