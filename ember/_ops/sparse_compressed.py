"""Sparse compressed (CSR, CSC) operators: their declarations and the Tensor methods of the layouts.

A CSR or CSC tensor is a TensorImpl over a `CompressedArray` (NOTE [sparse compressed layout] in
_core/compressed.py) whose key set holds ``SparseCsrCPU``. Its kernels live in
``ember/_backends/sparse/compressed.py`` and run through the same adapter as the COO ones
(`sparse_kernel` in sparse.py); operators with no SparseCsrCPU kernel raise torch's "Could not run
'aten::xxx' with arguments from the 'SparseCsrCPU' backend".

Declared here: the constructor (``sparse_compressed_tensor``, whose backward reads the gradient at the
entries' positions through ``_convert_indices_from_csr_to_coo`` and ``_sparse_values_at``), the
conversions ``_to_sparse_csr``/``_to_sparse_csc``, and the accessors ``values``, ``crow_indices``,
``col_indices``, ``ccol_indices``, ``row_indices``. ``to_dense``, ``to_sparse``, ``sparse_mask``, ``mm``,
``addmm`` and the pointwise operators are declared elsewhere and given SparseCsrCPU kernels.
"""
from .._core.coo import sparse_csr, sparse_csc, sparse_bsr, sparse_bsc
from .._core.compressed import CompressedArray
from .._core import dtype as D
from .._dispatch.ops_namespace import aten
from .registry import declare
from .sparse import _densify, _layout_name as layout_name


def _values_at(grad, compressed_indices, plain_indices, layout):
    """The constructor's backward: ``grad`` (dense, COO or compressed) read at the entries' positions."""
    coo = aten._convert_indices_from_csr_to_coo.default(compressed_indices, plain_indices,
                                                         transpose=layout is sparse_csc)
    if grad._a.__class__ is CompressedArray:
        grad = aten.to_sparse.default(grad)
    return aten._sparse_values_at.default(grad, coo)


def _values_backward(grad, self):
    """``values()``'s backward: a tensor of ``self``'s layout and pattern holding ``grad``."""
    a = self._a
    if a.__class__ is not CompressedArray:      # COO: torch's values_backward, coalesced as self is
        return aten._sparse_coo_tensor_with_dims_and_tensors.default(
            a.sparse_dim, a.dense_dim, list(a.shape), aten._indices.default(self), grad, is_coalesced=True)
    return aten.sparse_compressed_tensor.comp_plain_value_size(
        _compressed(self), _plain(self), grad, list(a.shape), layout=a.layout)


def _index_dtype(out_int32):
    return D.int32 if out_int32 else D.int64


def _convert_meta(crow_indices, col_indices, out_int32=False, transpose=False):
    return (2, col_indices._a.shape[0]), _index_dtype(out_int32)


declare('sparse_compressed_tensor.comp_plain_value_size(Tensor compressed_indices, Tensor plain_indices, '
        'Tensor values, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
        'bool? pin_memory=False) -> Tensor', forward='transpose', method=False, function=False, tags=('sparse',),
        derivatives={'values': lambda grad, compressed_indices, plain_indices, layout:
                     _values_at(grad, compressed_indices, plain_indices, layout)})
declare('_convert_indices_from_csr_to_coo(Tensor crow_indices, Tensor col_indices, *, bool out_int32=False, '
        'bool transpose=False) -> Tensor', meta=_convert_meta, method=False, differentiable=False)
# the compressed indices of sorted row indices (PyG's index2ptr builds a CSR adjacency's rowptr with it)
declare('_convert_indices_from_coo_to_csr(Tensor self, int size, *, bool out_int32=False) -> Tensor',
        meta=lambda self, size, out_int32=False: ((size + 1,), _index_dtype(out_int32)), method=False,
        differentiable=False)
declare('_to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor', forward='linear', method=False, function=False,
        tags=('sparse',), derivatives={'self': lambda grad: _densify(grad)})
declare('_to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor', forward='linear', method=False, function=False,
        tags=('sparse',), derivatives={'self': lambda grad: _densify(grad)})
declare('values(Tensor self) -> Tensor', forward='linear', method=False, function=False,
        derivatives={'self': _values_backward})
for _name in ('crow_indices', 'col_indices', 'ccol_indices', 'row_indices'):
    declare(f'{_name}(Tensor self) -> Tensor', method=False, function=False, differentiable=False)


# --- Tensor methods (read the CompressedArray's metadata; data goes through operators) -----------------

def _accessor(name, layout, kind):
    op = getattr(aten, name).default

    def method(self):
        a = self._a
        if a.__class__ is not CompressedArray or a.layout is not layout:
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {layout_name(self)}")
        return op(self)
    method.__name__ = name
    return method


def _compressed(t):
    return (aten.crow_indices if t._a.is_csr else aten.ccol_indices).default(t)


def _plain(t):
    return (aten.col_indices if t._a.is_csr else aten.row_indices).default(t)


def _to_compressed(layout, op_name):
    def method(self, dense_dim=None):
        if self.layout is layout:
            return self
        return getattr(aten, op_name).default(self, dense_dim)
    method.__name__ = f'to_{layout.name}'
    return method


def to_layout(self, layout, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse(layout=...)`` for the compressed layouts."""
    if layout is sparse_csr:
        return self.to_sparse_csr(dense_dim)
    if layout is sparse_csc:
        return self.to_sparse_csc(dense_dim)
    if layout in (sparse_bsr, sparse_bsc):
        raise NotImplementedError(f"to_sparse: ember has no {layout.name} tensors (strided, sparse_coo, "
                                  f"sparse_csr and sparse_csc only)")
    raise RuntimeError(f"to_sparse: unexpected layout {layout}")


METHODS = {
    'is_sparse_csr': property(lambda self: self._a.__class__ is CompressedArray and self._a.is_csr),
    'crow_indices': _accessor('crow_indices', sparse_csr, 'row'),
    'col_indices': _accessor('col_indices', sparse_csr, 'row'),
    'ccol_indices': _accessor('ccol_indices', sparse_csc, 'column'),
    'row_indices': _accessor('row_indices', sparse_csc, 'column'),
    'to_sparse_csr': _to_compressed(sparse_csr, '_to_sparse_csr'),
    'to_sparse_csc': _to_compressed(sparse_csc, '_to_sparse_csc'),
}


def install_methods(T):
    for k, v in METHODS.items():
        setattr(T, k, v)

