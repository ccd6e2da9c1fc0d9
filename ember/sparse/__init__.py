"""ember.sparse: sparse COO tensors, as torch.sparse.

A sparse COO tensor stores the positions of its nonzero entries (``indices``, int64 of shape
``(sparse_dim, nnz)``) and their values (``(nnz, *dense_dims)``); operators on it run the
SparseCPU kernels (see ember/_ops/sparse.py). Built on the public operator namespace
(``ember.ops.aten``).

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> ember.sparse.mm(s, ember.ones(2, 1))
tensor([[2.],
        [3.]])
"""
import ember
from ember import ops as _ops

__all__ = ['mm', 'sum', 'addmm', 'sparse_coo_tensor', 'spmm', 'FloatTensor', 'DoubleTensor', 'LongTensor',
           'check_sparse_tensor_invariants']


def _as_tensor(x, dtype=None):
    if isinstance(x, ember.Tensor):
        return x if dtype is None else x.to(dtype)
    return ember.as_tensor(x, dtype=dtype)


def _check_and_size(indices, values, size):
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz, *dense_dims)")
    sd, nnz = indices.shape
    if nnz != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0]}")
    dense = tuple(values.shape[1:])
    if size is None:           # the smallest size that holds every index, as torch infers it
        mx = indices.amax(1).tolist() if nnz else [-1] * sd
        return tuple(m + 1 for m in mx) + dense
    size = tuple(int(s) for s in size)
    if len(size) != sd + len(dense):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sd}, dense_dim = {len(dense)}")
    if size[sd:] != dense:
        raise RuntimeError(f"values has incorrect size, expected {list((nnz,) + size[sd:])}, got "
                           f"{list(values.shape)}")
    if nnz:
        lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
        for d in range(sd):
            if lo[d] < 0:
                raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
            if hi[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {hi[d]}")
    return size


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with entries ``values`` at the columns of ``indices`` (duplicates add up).

    >>> import ember
    >>> ember.sparse_coo_tensor([[0, 2]], [1., 5.], (3,)).to_dense()
    tensor([1., 0., 5.])
    """
    if isinstance(indices, ember.Tensor) and indices.is_floating_point():
        raise RuntimeError(f"indices must be an int64 tensor")
    indices = _as_tensor(indices)
    if indices.dtype != ember.int64:
        indices = indices.to(ember.int64)
    values = _as_tensor(values, dtype)
    if device is not None and ember.device(device).type != 'cpu':
        raise NotImplementedError(f"sparse tensors on device '{device}' are not supported by ember (SparseCPU only)")
    size = _check_and_size(indices, values, size)
    t = _ops.aten._sparse_coo_tensor_with_dims_and_tensors(indices.shape[0], values.ndim - 1, list(size), indices,
                                                           values, is_coalesced=is_coalesced)
    if requires_grad:
        t.requires_grad_(True)
    return t


def mm(mat1, mat2, reduce='sum'):
    """Sparse @ dense (dense result); the sparse operand's gradient keeps its sparsity pattern.

    >>> import ember
    >>> s = ember.eye(2).to_sparse()
    >>> ember.sparse.mm(s, ember.ones(2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    if reduce != 'sum':
        raise NotImplementedError(f"torch.sparse.mm: reduce='{reduce}' is not supported by ember")
    return ember.mm(mat1, mat2)


def spmm(mat1, mat2):
    """``ember.mm`` for a sparse first operand (torch.spmm)."""
    return ember.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1., alpha=1.):
    """``beta * mat + alpha * (mat1 @ mat2)`` with sparse ``mat1``."""
    return mat * beta + ember.mm(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None):
    """Sum of a sparse tensor: dense when every sparse dimension is summed, else sparse.

    >>> import ember
    >>> ember.sparse.sum(ember.eye(3).to_sparse())
    tensor(3.)
    """
    if dim is None:
        return input.sum(dtype=dtype)
    return input.sum(dim, dtype=dtype)


def _legacy(dtype, name):
    def ctor(*args, **kwargs):
        if len(args) >= 2 and isinstance(args[0], ember.Tensor) and isinstance(args[1], ember.Tensor):
            return sparse_coo_tensor(args[0], args[1], args[2] if len(args) > 2 else kwargs.get('size'), dtype=dtype)
        if all(isinstance(a, int) for a in args):     # an empty sparse tensor of that size
            return sparse_coo_tensor(ember.zeros(len(args), 0, dtype=ember.int64), ember.zeros(0, dtype=dtype), args)
        raise TypeError(f"torch.sparse.{name}(): expected (indices, values[, size]) or sizes")
    ctor.__name__ = name
    return ctor


FloatTensor = _legacy(ember.float32, 'FloatTensor')
DoubleTensor = _legacy(ember.float64, 'DoubleTensor')
LongTensor = _legacy(ember.int64, 'LongTensor')


class check_sparse_tensor_invariants:
    """torch's switch for index checks at construction. ember always checks (bounds, nnz, sizes), so this
    context manager, decorator and its ``enable``/``disable``/``is_enabled`` only keep torch programs running.

    >>> import ember
    >>> with ember.sparse.check_sparse_tensor_invariants():
    ...     ember.sparse_coo_tensor([[0]], [1.], (2,))._nnz()
    1
    """

    def __init__(self, enable=True):
        self.enable_ = enable

    @staticmethod
    def is_enabled():
        return True

    @staticmethod
    def enable():
        pass

    @staticmethod
    def disable():
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
