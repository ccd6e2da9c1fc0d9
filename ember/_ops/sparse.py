"""Sparse COO operators: their declarations, and the adapter that runs SparseCPU kernels.

A sparse tensor is a TensorImpl over a `COOArray` (NOTE [sparse COO layout] in _core/coo.py)
whose key set holds ``SparseCPU`` instead of ``CPU``. SparseCPU sits above CPU and below
Autograd (as in torch), so a call with any sparse argument reaches the operator's SparseCPU
kernel after autograd has recorded it, and an operator with no SparseCPU kernel raises torch's
"Could not run 'aten::xxx' with arguments from the 'SparseCPU' backend". Kernels live in
``ember/_backends/sparse`` and are registered through ember.library like every backend's;
`sparse_kernel` is their adapter: the operator's meta function runs first when it has one
(torch's shape and dtype errors), then tensors are unwrapped to arrays and COOArray results are
wrapped as sparse tensors.

The operators declared here are the ones torch has and ember lacked: the COO constructor,
``to_sparse``/``to_dense``, ``coalesce``, ``sparse_mask``, ``_indices``/``_values``, and
``_sparse_values_at`` (the constructor's backward: a gradient read at the entries' positions).
"""
import numpy as np

from .._core.coo import COOArray
from .._core.compressed import CompressedArray
from .._core.dtype import from_numpy_dtype, dtype as _dtype
from .._core.dispatch_key import DispatchKey
from .._core import device as _devmod
from .._core.tensor_impl import TensorImpl, make_tensor, adopt
from .._dispatch.ops_namespace import aten
from .registry import declare
from .._warn import warn_once
from .views import wrap_dim
from .pointwise import _BOOL_MSG
from .._core.dtype import _PROMOTE

SPARSE_BIT = 1 << DispatchKey.SparseCPU
SPARSE_CSR_BIT = 1 << DispatchKey.SparseCsrCPU


def make_sparse(a, dev=None):
    """A sparse tensor over COOArray ``a``, or a CSR/CSC tensor over CompressedArray ``a``."""
    t = make_tensor(a, from_numpy_dtype(a.values.dtype), dev or _devmod.canonical('cpu'))
    t._keys = SPARSE_CSR_BIT if a.__class__ is CompressedArray else SPARSE_BIT
    return t


def _unwrap(x):
    if isinstance(x, TensorImpl):
        return x._a
    if isinstance(x, _dtype):
        return x.np
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], TensorImpl):
        return [e._a for e in x]
    return x


_COMPRESSED_BETA = ("Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor "
                    "support, please submit a feature request to https://github.com/pytorch/pytorch/issues.")


def _wrap(r, dev):
    if isinstance(r, tuple):
        return tuple(_wrap(x, dev) for x in r)
    if r is None:           # an output its output_mask left out (a backward kernel's)
        return None
    if isinstance(r, (COOArray, CompressedArray)):
        if r.__class__ is CompressedArray:       # torch's SparseCsrTensorImpl warns at its first construction
            warn_once(_COMPRESSED_BETA, UserWarning)
        return make_sparse(r, dev)
    if isinstance(r, np.generic):
        r = np.asarray(r)
    return adopt(r, dev)


# --- sparse cat and stack: torch's cat_sparse_impl checks its inputs by rules of its own ------------------

def _piece(t):
    """What cat_sparse_impl reads of an input: (is COO, sizes, sparse_dim, dense_dim, values' rank)."""
    a = t._a
    if a.__class__ is COOArray:
        return True, tuple(a.shape), a.sparse_dim, a.dense_dim, a.values.ndim
    return False, tuple(a.shape), 0, a.ndim, None


def _unsqueezed(p, d):
    coo, shape, sd, dd, vn = p
    shape = shape[:d] + (1,) + shape[d:]
    if coo and d <= sd:
        return coo, shape, sd + 1, dd, vn
    return coo, shape, sd, dd + 1, (vn + 1 if coo else None)


def _check_sparse_cat(pieces, d):
    """torch's checks, in its order: along a dense dimension every input's values are read first (a dense input
    has none: NotImplementedError); then each input must be sparse, of the first's shape except at ``d``, and of
    its sparse_dim and dense_dim."""
    _, sizes, sd, dd, _ = pieces[0]
    if d >= sd:
        for coo, _, _, _, vn in pieces:
            if not coo:
                raise NotImplementedError("Could not run 'aten::_values' with arguments from the 'CPU' backend. "
                                          "cat of sparse tensors takes sparse COO tensors only: convert the dense "
                                          "ones with .to_sparse()")
            wrap_dim(d - sd + 1, vn)
    for i, (coo, shape, psd, pdd, _) in enumerate(pieces):
        if not coo:
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at position {i}.")
        if len(shape) != len(sizes) or any(k != d and shape[k] != sizes[k] for k in range(len(sizes))):
            raise RuntimeError(f"All tensors must have the same shape: {list(sizes)} (except in the concatenating "
                               f"dimension), but found shape: {list(shape)} at position {i}.")
        if (psd, pdd) != (sd, dd):
            raise RuntimeError(f"All tensors must have the same sparse_dim and dense_dim: {sd}, {dd}, but tensor at "
                               f"position {i} has {psd}, {pdd}.")


def _promoted(tensors):
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        dt = _PROMOTE[dt, t._dtype]
    return dt


def _sparse_cat_meta(tensors, dim=0):
    """cat with a sparse input: torch's legacy dim wrap (1-D empty inputs do not count), then its sparse checks."""
    ref = next((t for t in tensors if not (t._a.ndim == 1 and t._a.shape[0] == 0)), None)
    d = wrap_dim(dim, ref._a.ndim if ref is not None else 1)
    pieces = [_piece(t) for t in tensors]
    _check_sparse_cat(pieces, d)
    sizes = pieces[0][1]
    return sizes[:d] + (sum(p[1][d] for p in pieces),) + sizes[d + 1:], _promoted(tensors)


def _sparse_stack_meta(tensors, dim=0):
    """stack with a sparse input: equal sizes (stack's own message), then cat's checks on the unsqueezed inputs."""
    s0 = tuple(tensors[0]._a.shape)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t._a.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at entry 0 and "
                               f"{list(t._a.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    _check_sparse_cat([_unsqueezed(_piece(t), d) for t in tensors], d)
    return s0[:d] + (len(tensors),) + s0[d:], _promoted(tensors)


def _sparse_sub_checks(self, other, alpha=1):
    if self._dtype.name == 'bool' and getattr(other, '_dtype', None) is self._dtype:    # sub's own check comes first
        raise RuntimeError(_BOOL_MSG['sub'])
    _sparse_add_checks(self, other, alpha)


def _sparse_add_checks(self, other, alpha=1):
    """torch's add_sparse checks, before any broadcasting rule: equal sizes, and no sparse + dense (sub too)."""
    a, b = self._a, getattr(other, '_a', None)
    if a.__class__ is COOArray and b.__class__ is not COOArray:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if tuple(a.shape) == tuple(b.shape):
        if a.__class__ is COOArray and b.__class__ is COOArray and _promoted([self, other]).name == 'bool':
            raise NotImplementedError("\"cadd_sparse\" not implemented for 'Bool'")
        return
    if a.__class__ is COOArray:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
                           f"{list(b.shape)}")
    raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while "
                       f"other has size {list(b.shape)} (FYI: dense-sparse addition does not currently support "
                       f"broadcasting)")


# operators whose SparseCPU kernel checks other things than the dense meta function does (torch's sparse kernel
# has rules and messages of its own): `sparse_kernel` runs these instead of the declaration's meta
SPARSE_META = {'cat': _sparse_cat_meta, 'stack': _sparse_stack_meta}
# and checks it runs before the declaration's meta (whose broadcasting message would come first)
SPARSE_CHECKS = {'add.Tensor': _sparse_add_checks, 'sub.Tensor': _sparse_sub_checks}


def _checked(check, meta):
    def checked_meta(*args):
        check(*args)
        return meta(*args)
    return checked_meta


def sparse_kernel(op, fn, key=DispatchKey.SparseCPU):
    """The dispatcher kernel for array kernel ``fn`` on SparseCPU or SparseCsrCPU (or a dense-to-sparse kernel on
    CPU)."""
    decl = op.decl
    # a view's meta function gives strides, which a COO tensor has not (sparse views are new tensors)
    meta = decl.meta if decl is not None and decl.kind in ('generic', 'pointwise') and decl.explicit is None else None
    own = SPARSE_META.get(op.schema.full_name) if key == DispatchKey.SparseCPU else None
    meta = own or meta
    check = SPARSE_CHECKS.get(op.schema.full_name) if key == DispatchKey.SparseCPU else None
    meta = meta if check is None or meta is None else _checked(check, meta)
    cast = own is not None or (decl is not None and decl.kind == 'pointwise')      # to the meta's promoted dtype
    cpu = _devmod.canonical('cpu')

    def kernel(ks, *args):
        od = None
        if meta is not None:
            m = meta(*args)         # shape and dtype checks, with torch's messages
            od = m[1] if cast else None
        r = fn(*[_unwrap(a) for a in args])
        if od is not None and r.dtype != od.np:    # pointwise: the promoted result dtype
            r = r.astype(od.np)
        return _wrap(r, cpu)
    prefix = 'sparsecsrcpu' if key == DispatchKey.SparseCsrCPU else 'sparsecpu'
    kernel.__qualname__ = f'{prefix}::{op.schema.full_name}'
    return kernel


def _densify(g):
    return g.to_dense() if g._a.__class__ in (COOArray, CompressedArray) else g


declare('_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] size, Tensor indices, '
        'Tensor values, *, bool? is_coalesced=None) -> Tensor', forward='transpose', method=False, function=False, tags=('sparse',),
        derivatives={'values': lambda grad, indices: _sparse_values_at(grad, indices)})
_sparse_values_at = declare('_sparse_values_at(Tensor self, Tensor indices) -> Tensor', method=False,
                            function=False, derivatives={})
declare('to_sparse(Tensor self, int? sparse_dim=None) -> Tensor', forward='linear', method=False, function=False, tags=('sparse',),
        derivatives={'self': lambda grad: _densify(grad)},
        primitive_because="one NumPy nonzero pass (torch's composite only calls _to_sparse)")
declare('to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor', forward='linear', method=False,
        function=False, derivatives={'self': lambda grad, self: grad.sparse_mask(self)},
        primitive_because="one scatter into a dense array (torch's composite only calls _to_dense)")
declare('coalesce(Tensor self) -> Tensor', forward='linear', method=False, function=False, derivatives={'self': lambda grad: grad},
        primitive_because="one sort-and-sum kernel over the COO arrays (torch's composite only calls _coalesce)")
declare('sparse_mask(Tensor self, Tensor mask) -> Tensor', forward='linear', function=False,
        derivatives={'self': lambda grad: _densify(grad)})
declare('_values(Tensor self) -> Tensor', method=False, function=False, differentiable=False)
declare('_indices(Tensor self) -> Tensor', method=False, function=False, differentiable=False)


# --- Tensor methods of the sparse layouts (read the arrays' metadata; data goes through operators) -------

def _layout_name(t):
    """torch's name for ``t``'s layout in error messages."""
    a = t._a
    if a.__class__ is CompressedArray:
        return 'SparseCsr' if a.is_csr else 'SparseCsc'
    return 'Sparse' if a.__class__ is COOArray else 'Strided'


def _coo(t, what):
    a = t._a
    if not isinstance(a, COOArray):
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got {_layout_name(t)}")
    return a


def _values_m(self):
    if self._a.__class__ is CompressedArray:
        return _op('values')(self)
    if not isinstance(self._a, COOArray):
        raise RuntimeError(f"values expected sparse tensor layout but got {_layout_name(self)}")
    if not self._a.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return _op('values')(self)      # differentiable (ValuesBackward0), where _values() is not


def _indices_m(self):
    if not _coo(self, 'indices').coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return self._indices()


def _nnz_m(self):
    if self._a.__class__ is CompressedArray:
        return self._a.nnz
    return _coo(self, '_nnz').nnz


def _to_dense_m(self, dtype=None, *, masked_grad=None):
    if not isinstance(self._a, (COOArray, CompressedArray)):
        return self if dtype is None else self.to(dtype)
    return _op('to_dense')(self, dtype, masked_grad=masked_grad)


def _to_sparse_m(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout != 'sparse_coo':
        from .sparse_compressed import to_layout
        return to_layout(self, layout, blocksize, dense_dim)
    if isinstance(self._a, COOArray):
        return self
    if sparse_dim is None and dense_dim is not None:
        sparse_dim = self.ndim - dense_dim
    return _op('to_sparse')(self, sparse_dim)


def _coalesce_m(self):
    if _coo(self, 'coalesce').coalesced:
        return self
    return _op('coalesce')(self)


def _op(name):
    return getattr(aten, name).default


def _sparse_dim_m(self):
    a = self._a
    return a.sparse_dim if a.__class__ is COOArray else 2 if a.__class__ is CompressedArray else 0


def _dense_dim_m(self):
    a = self._a
    return a.dense_dim if a.__class__ is COOArray else 0 if a.__class__ is CompressedArray else self.ndim


METHODS = {
    'is_sparse': property(lambda self: isinstance(self._a, COOArray)),
    '_nnz': _nnz_m, 'sparse_dim': _sparse_dim_m, 'dense_dim': _dense_dim_m,
    'is_coalesced': lambda self: _coo(self, 'is_coalesced').coalesced,
    '_coalesced_': lambda self, flag: (setattr(_coo(self, '_coalesced_'), 'coalesced', bool(flag)), self)[1],
    'values': _values_m, 'indices': _indices_m,
    '_values': lambda self: _op('_values')(self), '_indices': lambda self: _op('_indices')(self),
    'to_dense': _to_dense_m, 'to_sparse': _to_sparse_m, 'to_sparse_coo': lambda self: _to_sparse_m(self),
    'coalesce': _coalesce_m,
}


def install_methods(T):
    for k, v in METHODS.items():
        setattr(T, k, v)
