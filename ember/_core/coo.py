"""The array of a sparse COO tensor, and tensor layouts.

NOTE [sparse COO layout]: a sparse tensor is an ordinary TensorImpl whose
``_a`` is a `COOArray` instead of a NumPy array, the same way a meta tensor
carries a `MetaArray`. A COOArray holds two NumPy arrays and the logical shape:

``indices``  int64, shape ``(sparse_dim, nnz)``: column ``k`` is the position of entry ``k``
             in the first ``sparse_dim`` dimensions;
``values``   shape ``(nnz, *dense_dims)``: entry ``k``'s value (a block when dense_dim > 0);
``shape``    ``sparse_dims + dense_dims``; ``coalesced`` says the columns are unique and sorted
             lexicographically (torch's order: by the first index, then the second, ...).

Why arrays and not ember tensors inside: backends know arrays only (ARCHITECTURE rule 2), so the
SparseCPU kernels in ``ember/_backends/sparse`` take and return COOArrays like any CPU kernel takes
and returns ndarrays, and `Tensor.indices()`/`values()` wrap the arrays as dense tensors (sharing
their memory, as torch's do). ``shape``, ``ndim``, ``size`` (the logical element count, torch's
``numel``) and ``dtype`` answer like an ndarray's, so every shape-reading layer (meta functions,
autograd's shape checks, ``Tensor.shape``) works on a sparse tensor unchanged.
"""
import math

import numpy as np

from . import naming


class SparseArray:
    """What a sparse layout's array answers as an ndarray does: its dense shape's rank and element count, and its
    values' dtype (``shape`` and ``values`` are the subclass's)."""

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def itemsize(self):
        return self.values.dtype.itemsize


class COOArray(SparseArray):
    __slots__ = ('indices', 'values', 'shape', 'coalesced')

    def __init__(self, indices, values, shape, coalesced=False):
        self.indices = indices
        self.values = values
        self.shape = tuple(int(s) for s in shape)
        self.coalesced = bool(coalesced)

    @property
    def sparse_dim(self):
        return self.indices.shape[0]

    @property
    def dense_dim(self):
        return self.values.ndim - 1

    @property
    def nnz(self):
        return self.indices.shape[1]

    def astype(self, dt):
        return COOArray(self.indices.copy(), self.values.astype(dt), self.shape, self.coalesced)

    def copy(self):
        return COOArray(self.indices.copy(), self.values.copy(), self.shape, self.coalesced)

    def __repr__(self):
        return f'COOArray(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})'


class layout:
    """A tensor layout (``ember.strided``, ``ember.sparse_coo``), compared by identity as torch's are.

    >>> import ember
    >>> ember.ones(2).layout
    ember.strided
    """
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'{naming.shown}.{self.name}'

    def __reduce__(self):
        return (_layout_by_name, (self.name,))

    # ember spelled strided as the string 'strided' before layouts were objects: keep such comparisons true
    def __eq__(self, other):
        return self is other or (isinstance(other, str) and other == self.name)

    def __hash__(self):
        return hash(self.name)


strided = layout('strided')
sparse_coo = layout('sparse_coo')
jagged = layout('jagged')      # a nested tensor's packed layout (ember.nested): a layout that only NestedTensor reports
# torch's compressed sparse layouts: ember makes no tensor of them, but code compares layouts against them
sparse_csr, sparse_csc, sparse_bsr, sparse_bsc = (layout(n) for n in ('sparse_csr', 'sparse_csc', 'sparse_bsr',
                                                                       'sparse_bsc'))
_LAYOUTS = {lt.name: lt for lt in (strided, sparse_coo, jagged, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)}


def _layout_by_name(name):
    return _LAYOUTS[name]


def linear_index(indices, sizes):
    """One int64 key per column of ``indices`` (row-major over ``sizes``): sorting keys is torch's order."""
    if indices.shape[0] == 0:
        return np.zeros(indices.shape[1], np.int64)
    return np.ravel_multi_index(tuple(indices), tuple(sizes)) if indices.shape[1] else np.zeros(0, np.int64)
