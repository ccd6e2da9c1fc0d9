"""torch's legacy names for products with a sparse operand: ``dsmm`` (sparse @ dense, a dense result: torch's
``_sparse_mm``, as ``torch.sparse.mm``) and ``hsmm`` (the product as a hybrid sparse COO tensor, one sparse
dimension over the rows the sparse operand has entries in: torch's ``hspmm``). Both are written in the public
sparse API's operators (ember/_ops/sparse.py)."""
from ..ops import aten

__all__ = ['dsmm', 'hsmm']


def dsmm(sparse, dense):
    """``sparse @ dense``, dense.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
    >>> ember.dsmm(s, ember.ones(2, 1))
    tensor([[2.],
            [3.]])
    """
    return aten.mm.default(sparse, dense)


def hsmm(mat1, mat2):
    """``mat1 @ mat2`` (``mat1`` sparse COO) as a hybrid COO tensor: the rows where ``mat1`` has entries, each
    a dense row of the product."""
    s = mat1.coalesce()
    rows = aten.unique_consecutive.default(s.indices()[0])[0] if s._nnz() else s.indices()[0]
    values = aten.index_select.default(aten.mm.default(s, mat2), 0, rows)
    return aten._sparse_coo_tensor_with_dims_and_tensors(1, 1, [mat1.shape[0], mat2.shape[1]], rows.unsqueeze(0),
                                                         values, is_coalesced=False)     # as torch leaves it
