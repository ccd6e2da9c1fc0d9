"""Public product functions with torch's flexible signatures: ``einsum`` (operands as varargs or one
list), ``tensordot`` (``dims`` as an int, a pair of lists or a tensor), ``chain_matmul``; and triangular
solves written in ``linalg_solve`` (``linalg.solve_triangular``, ``cholesky_solve``, ``cholesky_inverse``)."""
from .._tensor import Tensor
from ..ops import aten

__all__ = ['einsum', 'tensordot', 'chain_matmul', 'cholesky_solve', 'cholesky_inverse']


def einsum(equation, *operands):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` or ``einsum('ij,jk->ik', [a, b])``.

    >>> import ember
    >>> ember.einsum('i,i->', ember.ones(3), ember.ones(3)).item()
    3.0
    """
    if not isinstance(equation, str):     # torch's sublist format is not supported; say so plainly
        raise TypeError(f"einsum(): equation must be a string, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return aten.einsum.default(equation, list(operands))


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
    return r if out is None else out.copy_(r)


def chain_matmul(*matrices, out=None):
    """The product of the matrices, left to right (torch.linalg.multi_dot without the reordering)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    r = matrices[0]
    for m in matrices[1:]:
        r = r.mm(m)
    return r if out is None else out.copy_(r)


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
    X = aten.linalg_solve.default(T, B) if left else aten.linalg_solve.default(T.mT, B.mT).mT
    return X if out is None else out.resize_(X.shape).copy_(X)


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B for A = L L^H (``upper``: A = U^H U) given its Cholesky factor: ``linalg_solve`` on A
    rebuilt from the factor, so the factor's gradient is torch's (-(G X^H + X G^H) L, all of L's entries).

    >>> import ember
    >>> L = ember.tensor([[2., 0.], [1., 1.]])
    >>> ember.cholesky_solve(L @ L.mT @ ember.tensor([[1.], [2.]]), L)
    tensor([[1.],
            [2.]])
    """
    A = L.mH.matmul(L) if upper else L.matmul(L.mH)
    X = aten.linalg_solve.default(A, B)
    return X if out is None else out.resize_(X.shape).copy_(X)


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^H (``upper``: U^H U) from its Cholesky factor."""
    eye = aten.eye.default(L.shape[-1], dtype=L.dtype)
    X = cholesky_solve(eye.expand(L.shape), L, upper)
    return X if out is None else out.resize_(X.shape).copy_(X)


Tensor.cholesky_solve = lambda self, input2, upper=False: cholesky_solve(self, input2, upper)
Tensor.cholesky_inverse = lambda self, upper=False: cholesky_inverse(self, upper)
