"""ember.sparse: sparse COO and compressed (CSR, CSC) tensors, as torch.sparse.

A sparse COO tensor stores the positions of its nonzero entries (``indices``, int64 of shape
``(sparse_dim, nnz)``) and their values (``(nnz, *dense_dims)``); operators on it run the
SparseCPU kernels (see ember/_ops/sparse.py). A CSR tensor stores each row's range of entries
(``crow_indices``), their columns (``col_indices``) and values; CSC the same by columns; their
operators run the SparseCsrCPU kernels (ember/_ops/sparse_compressed.py). Built on the public
operator namespace (``ember.ops.aten``).

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))
>>> ember.sparse.mm(s, ember.ones(2, 1))
tensor([[2.],
        [3.]])
"""
import ember
from ember import ops as _ops
from .semi_structured import (SparseSemiStructuredTensor, SparseSemiStructuredTensorCUTLASS,  # noqa: F401,E402
                              SparseSemiStructuredTensorCUSPARSELT, to_sparse_semi_structured)

__all__ = ['mm', 'sum', 'addmm', 'sparse_coo_tensor', 'sparse_csr_tensor', 'sparse_csc_tensor',
           'sparse_compressed_tensor', 'spmm', 'FloatTensor', 'DoubleTensor', 'LongTensor',
           'check_sparse_tensor_invariants', 'SparseSemiStructuredTensor', 'SparseSemiStructuredTensorCUTLASS',
           'SparseSemiStructuredTensorCUSPARSELT', 'to_sparse_semi_structured']


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


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with entries ``values`` at the columns of ``indices`` (duplicates add up); with a
    size only (``sparse_coo_tensor((5, 3))`` or ``size=(5, 3)``), an empty one, as torch's other overload.

    >>> import ember
    >>> ember.sparse_coo_tensor([[0, 2]], [1., 5.], (3,)).to_dense()
    tensor([1., 0., 5.])
    >>> ember.sparse_coo_tensor(size=(5, 3))._nnz()
    0
    """
    if values is None:
        if size is None and indices is not None:
            indices, size = None, indices
        if indices is not None or size is None:
            raise TypeError("sparse_coo_tensor() missing required argument 'values'" if indices is not None else
                            "sparse_coo_tensor() missing required argument 'size'")
        size = tuple(size)
        indices = ember.zeros(len(size), 0, dtype=ember.int64)
        values = ember.zeros(0, dtype=dtype or ember.get_default_dtype())
    if isinstance(indices, ember.Tensor) and indices.is_floating_point():
        raise RuntimeError(f"indices must be an int64 tensor")
    indices = _as_tensor(indices)
    if indices.dtype != ember.int64:
        indices = indices.to(ember.int64)
    values = _as_tensor(values, dtype)
    if device is not None and ember.device(device).type != 'cpu':
        raise NotImplementedError(f"sparse tensors on device '{device}' are not supported by ember (SparseCPU only)")
    size = _check_and_size(indices, values, size)      # (checked always: the switch adds no COO check here)
    _invariants(check_invariants)
    t = _ops.aten._sparse_coo_tensor_with_dims_and_tensors(indices.shape[0], values.ndim - 1, list(size), indices,
                                                           values, is_coalesced=is_coalesced)
    if requires_grad:
        t.requires_grad_(True)
    return t


def mm(mat1, mat2, reduce=None):
    """Sparse (COO, CSR or CSC) @ dense gives dense; unlike ``ember.mm``'s, the sparse operand's gradient keeps
    its layout and sparsity pattern (torch's ``_sparse_addmm``, SparseAddmmBackward0).

    With ``reduce`` ('sum', 'mean', 'amax' or 'amin'; torch's ``_sparse_mm.reduce``), ``mat1`` must be CSR and
    ``mat2`` dense: ``out[i, j]`` reduces ``mat1[i, k] * mat2[k, j]`` over row i's stored entries only (a row with
    none gives 0), as torch's ``_sparse_mm_reduce_impl``; even 'sum' then refuses a COO ``mat1``, as torch's.

    >>> import ember
    >>> s = ember.eye(2).to_sparse_csr()
    >>> ember.sparse.mm(s, ember.ones(2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    >>> a = ember.tensor([[1., 2.], [0., 4.]]).to_sparse_csr()
    >>> ember.sparse.mm(a, ember.ones(2, 1), reduce='mean')
    tensor([[1.5000],
            [4.0000]])
    """
    if reduce is not None:
        return _ops.aten._sparse_mm_reduce_impl(mat1, mat2, reduce)[0]
    if mat1.layout is not ember.strided and mat2.layout is ember.strided and mat1.dim() == 2 and mat2.dim() == 2:
        out = ember.zeros(mat1.shape[0], mat2.shape[1], dtype=mat2.dtype)
        return _ops.aten._sparse_addmm(out, mat1, mat2, beta=0)
    return ember.mm(mat1, mat2)


_COMPRESSED_NAMES = {ember.sparse_csr: ('crow_indices', 'col_indices', 'rows', 'ncols'),
                     ember.sparse_csc: ('ccol_indices', 'row_indices', 'columns', 'nrows')}


def _index_tensor(x):
    return x if isinstance(x, ember.Tensor) else ember.as_tensor(x, dtype=ember.int64)


def _compressed_size(ci, pi, values, size, layout, check_order):
    """Check the arguments as torch's _validate_sparse_compressed_tensor_args does (its messages, in its order)
    and return the size (inferred, when not given, as the smallest that holds every index)."""
    cname, pname, what, plain_dim = _COMPRESSED_NAMES[layout]
    if values.ndim < 1:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities (=0 + 0) but "
                           f"got {values.ndim}")
    if ci.ndim != pi.ndim:
        raise RuntimeError(f"{cname} and {pname} dimensionalities must be equal but got {ci.ndim} and {pi.ndim}, "
                           f"respectively")
    if ci.ndim != 1 or values.ndim != 1:
        raise NotImplementedError(f"ember: {layout.name} tensors are 2-D with scalar values (torch's batch and dense "
                                  f"dimensions are not supported)")
    nnz = values.shape[0]
    if size is None:
        n, m = ci.shape[0] - 1, int(pi.max()) + 1 if pi.numel() else 0
        size = (n, m) if layout is ember.sparse_csr else (m, n)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                           f"(=0 + 2 + 0) but got {len(size)}")
    if ci.dtype != pi.dtype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got {_scalar_name(ci.dtype)} and "
                           f"{_scalar_name(pi.dtype)}, respectively")
    if ci.dtype not in (ember.int32, ember.int64):
        raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got {_scalar_name(ci.dtype)}")
    n, m = size if layout is ember.sparse_csr else size[::-1]
    if ci.shape[0] != n + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 (={n + 1}), but got "
                           f"{ci.shape[0]}")
    if pi.shape[0] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], but got "
                           f"{pi.shape[0]}")
    _check_compressed_indices(ci, pi, nnz, m, cname, pname, plain_dim, 'nrows' if plain_dim == 'ncols' else 'ncols',
                              check_order)
    return size


def _check_compressed_indices(ci, pi, nnz, m, cname, pname, plain_dim, compressed_dim, check_order):
    """torch's invariants in its order: the first and last compressed index, the plain indices' bounds, then row by
    row (column by column for CSC) a count in [0, m] and sorted, distinct plain indices; the first row that
    breaks one names the message."""
    def fail(cond):
        raise RuntimeError(f"`{cond}` is not satisfied.")
    if int(ci[0]) != 0:
        fail(f"{cname}[..., 0] == 0")
    if int(ci[-1]) != nnz:
        fail(f"{cname}[..., -1] == nnz")
    if bool(((pi < 0) | (pi >= m)).any()):
        fail(f"0 <= {pname} < {plain_dim}")
    counts = (ci[1:] - ci[:-1]).to(ember.int64)
    bad = ((counts < 0) | (counts > m)).nonzero()
    first_bad = int(bad[0, 0]) if bad.shape[0] else counts.shape[0]
    end = min(int(ci[first_bad]), nnz)          # the rows before the first bad count cover entries [0, end)
    major = ember.repeat_interleave(ember.arange(first_bad), counts[:first_bad])[:end]
    p = pi[:end]
    if check_order and bool(((major[1:] == major[:-1]) & (p[1:] <= p[:-1])).any()):
        fail(f"{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., {compressed_dim} are sorted "
             f"and distinct along the last dimension values")
    if first_bad < counts.shape[0]:
        fail(f"0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {plain_dim}")


def _scalar_name(dt):
    return {ember.float32: 'Float', ember.float64: 'Double', ember.int64: 'Long', ember.int32: 'Int',
            ember.int16: 'Short', ember.int8: 'Char', ember.uint8: 'Byte', ember.bool: 'Bool',
            ember.float16: 'Half', ember.bfloat16: 'BFloat16'}.get(dt, str(dt))


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """A CSR (``layout=ember.sparse_csr``) or CSC (``ember.sparse_csc``) tensor from its compressed indices,
    plain indices and values; the indices' order is checked when ``check_invariants`` (or
    ``check_sparse_tensor_invariants``) asks, as torch's, their bounds always.

    >>> import ember
    >>> ember.sparse_compressed_tensor([0, 1, 2], [1, 0], [5., 6.], (2, 2), layout=ember.sparse_csr).to_dense()
    tensor([[0., 5.],
            [6., 0.]])
    """
    if layout not in _COMPRESSED_NAMES:
        name = {None: 'none', ember.strided: 'Strided', ember.sparse_coo: 'Sparse'}.get(layout, str(layout))
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {name}")
    if device is not None and ember.device(device).type != 'cpu':
        raise NotImplementedError(f"sparse tensors on device '{device}' are not supported by ember (SparseCsrCPU "
                                  f"only)")
    ci, pi, values = _index_tensor(compressed_indices), _index_tensor(plain_indices), _as_tensor(values, dtype)
    check = _invariants(check_invariants)
    size = _compressed_size(ci, pi, values, size, layout, check)
    t = _ops.aten.sparse_compressed_tensor.comp_plain_value_size(ci, pi, values, list(size), layout=layout)
    if requires_grad:
        t.requires_grad_(True)
    return t


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A CSR tensor: row i holds the entries ``crow_indices[i]:crow_indices[i + 1]``, at columns ``col_indices``.

    >>> import ember
    >>> ember.sparse_csr_tensor([0, 2, 2, 3], [0, 2, 1], [1., 2., 3.], (3, 3)) @ ember.ones(3)
    tensor([3., 0., 3.])
    """
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype, layout=ember.sparse_csr,
                                    device=device, requires_grad=requires_grad, check_invariants=check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A CSC tensor: column j holds the entries ``ccol_indices[j]:ccol_indices[j + 1]``, at rows ``row_indices``.

    >>> import ember
    >>> ember.sparse_csc_tensor([0, 1, 2], [1, 0], [5., 6.], (2, 2)).to_dense()
    tensor([[0., 6.],
            [5., 0.]])
    """
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype, layout=ember.sparse_csc,
                                    device=device, requires_grad=requires_grad, check_invariants=check_invariants)


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


_INVARIANTS = {'enabled': False, 'chosen': False}     # chosen: the program switched it on or off itself
_IMPLICIT = ("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when operating "
             "on a sparse tensor which violates the invariants, but checks incur performance overhead. To silence this "
             "warning, explicitly opt in or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for "
             "guidance. ")


def _invariants(check_invariants):
    """Whether a constructor checks the invariants; torch warns once when nobody said (its message names
    SEGFAULTs, which ember's NumPy kernels cannot have: it warns as torch does all the same)."""
    if check_invariants is not None:
        return check_invariants
    if not _INVARIANTS['chosen']:
        from .._warn import warn_once
        warn_once(_IMPLICIT, UserWarning)
    return _INVARIANTS['enabled']


class check_sparse_tensor_invariants:
    """torch's switch for the index checks a sparse constructor makes when its ``check_invariants`` is not given: a
    context manager, a decorator, and ``enable``/``disable``/``is_enabled``. Off by default, as torch's. ember's
    constructors always check indices' bounds and counts (an index outside the tensor would make a NumPy kernel
    fail, not corrupt memory, but the check costs little); what the switch adds, as in torch, is the order check of
    compressed tensors (sorted, distinct indices in each row; unchecked, duplicates add up).

    >>> import ember
    >>> with ember.sparse.check_sparse_tensor_invariants():
    ...     ember.sparse.check_sparse_tensor_invariants.is_enabled()
    True
    """

    def __init__(self, enable=True):
        self.state = enable
        self.saved = None

    @staticmethod
    def is_enabled():
        return _INVARIANTS['enabled']

    @staticmethod
    def enable():
        _INVARIANTS['enabled'] = _INVARIANTS['chosen'] = True

    @staticmethod
    def disable():
        _INVARIANTS['enabled'], _INVARIANTS['chosen'] = False, True

    def __enter__(self):
        if self.saved is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context manager "
                               "instance for context nesting.")
        self.saved = _INVARIANTS['enabled']
        _INVARIANTS['enabled'], _INVARIANTS['chosen'] = self.state, True
        return self

    def __exit__(self, *exc):
        _INVARIANTS['enabled'] = self.saved
        self.saved = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)
        return run
