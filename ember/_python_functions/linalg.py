"""Public product functions with torch's flexible signatures: ``einsum`` (operands as varargs or one
list), ``tensordot`` (``dims`` as an int, a pair of lists or a tensor), ``chain_matmul``."""
from .._tensor import Tensor
from ..ops import aten

__all__ = ['einsum', 'tensordot', 'chain_matmul']


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
