"""The array of a sparse compressed (CSR or CSC) tensor.

NOTE [sparse compressed layout]: a CSR or CSC tensor is an ordinary TensorImpl whose ``_a`` is a
`CompressedArray`, as a COO tensor's is a COOArray (NOTE [sparse COO layout] in coo.py), and whose key
set holds ``SparseCsrCPU`` (torch's key for both compressed layouts, just above SparseCPU). A
CompressedArray holds three NumPy arrays, the logical 2-D shape and its layout:

``compressed_indices``  shape ``(n + 1,)`` where n is the number of rows (CSR: ``crow_indices``) or of
                        columns (CSC: ``ccol_indices``): entries ``[c[i], c[i + 1])`` lie in row (column) i;
``plain_indices``       shape ``(nnz,)``: each entry's column (CSR: ``col_indices``) or row (CSC:
                        ``row_indices``), sorted and distinct within a row (column);
``values``              shape ``(nnz,)``.

The index arrays keep the dtype they were given (int64 or int32, as torch's). A CSC matrix is the CSR
matrix of its transpose with the same three arrays, which is how ``t()`` turns one into the other for
free and how most kernels handle CSC (``as_csr`` of the transpose). Only 2-D tensors with scalar values
are supported: torch's batch and dense (hybrid) dimensions are not. ``shape``, ``ndim``, ``size`` and
``dtype`` answer like an ndarray's, so meta functions and autograd's shape checks read a compressed
tensor unchanged.
"""

import numpy as np

from .coo import SparseArray, sparse_csr, sparse_csc


class CompressedArray(SparseArray):
    __slots__ = ('layout', 'compressed_indices', 'plain_indices', 'values', 'shape')

    def __init__(self, layout, compressed_indices, plain_indices, values, shape):
        self.layout = layout
        self.compressed_indices = compressed_indices
        self.plain_indices = plain_indices
        self.values = values
        self.shape = tuple(int(s) for s in shape)

    @property
    def nnz(self):
        return self.plain_indices.shape[0]

    @property
    def is_csr(self):
        return self.layout is sparse_csr

    def compressed_shape(self):
        """(compressed dimension, plain dimension): (rows, cols) for CSR, (cols, rows) for CSC."""
        return self.shape if self.is_csr else self.shape[::-1]

    def with_values(self, values):
        """The same pattern (its index arrays shared) with other values."""
        return CompressedArray(self.layout, self.compressed_indices, self.plain_indices, values, self.shape)

    def transposed(self):
        """The transpose in the other layout, sharing every array (CSR of A is CSC of A.T)."""
        return CompressedArray(sparse_csc if self.is_csr else sparse_csr, self.compressed_indices, self.plain_indices,
                               self.values, self.shape[::-1])

    def astype(self, dt):
        return CompressedArray(self.layout, self.compressed_indices.copy(), self.plain_indices.copy(),
                               self.values.astype(dt), self.shape)

    def copy(self):
        return self.astype(self.values.dtype)

    def __repr__(self):
        return f'CompressedArray({self.layout.name}, shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})'


def expand_compressed(compressed_indices):
    """Each entry's compressed coordinate (its row for CSR): ``[0, 0, 2, 2]`` from ``[0, 2, 2, 4]``."""
    counts = np.diff(compressed_indices)
    return np.repeat(np.arange(len(counts), dtype=compressed_indices.dtype), counts)
