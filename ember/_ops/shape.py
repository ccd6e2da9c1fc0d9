"""Joining, reordering and shape operators: cat, stack, flip, roll, repeat, tril/triu, pad, ...

Also the ``*_scatter`` operators that are the derivatives of views
(``slice_scatter`` is what ``slice``'s backward writes into), ``_strided_index``
(storage positions of a strided layout, used by ``as_strided``'s backward)
and ``unfold_backward``.

Meta functions here hold every shape check and error message; the CPU kernels
in ``_backends/cpu/shape.py`` assume valid input. Derivatives are written in
ember operators, so every formula differentiates again.
"""
from .._core import dtype as D
from .._core.tensor_impl import TensorImpl
from .registry import declare, DECLS
from .views import wrap_dim, _select_meta, _slice_meta, _diagonal_meta


def _call(name, *args, **kw):
    return DECLS[name].op.call(*args, **kw)


def _tname(d):
    from .adapters import _tname as t
    return t(d)


def _lst(s):
    return '[' + ', '.join(str(int(x)) for x in s) + ']'


def _zeros(sizes, like):
    return _call('zeros', tuple(sizes), dtype=like.dtype, device=like.device)


# --- cat / stack -------------------------------------------------------------------

def _skipped(t):
    """torch's legacy rule: 1-D empty tensors take no part in cat's shape checks."""
    return t._a.ndim == 1 and t._a.shape[0] == 0


def _cat_meta(tensors, dim=0):
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        dt = D._PROMOTE[dt, t._dtype]
    for i, t in enumerate(tensors):
        if t._a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((t for t in tensors if not _skipped(t)), None)
    if ref is None:
        wrap_dim(dim, 1)
        return (sum(t._a.shape[0] for t in tensors),), dt
    shape = ref._a.shape
    d = wrap_dim(dim, len(shape))
    total = 0
    for i, t in enumerate(tensors):
        if _skipped(t):
            continue
        s = t._a.shape
        if len(s) != len(shape):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shape)} and {len(s)}")
        for k in range(len(s)):
            if k != d and s[k] != shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {shape[k]} "
                                   f"but got size {s[k]} for tensor number {i} in the list.")
        total += s[d]
    return shape[:d] + (total,) + shape[d + 1:], dt


def _cat_backward(grad, tensors_sizes, dim):
    """Split ``grad`` back into the inputs' pieces (skipped 1-D empty inputs get empty gradients)."""
    ref = next((s for s in tensors_sizes if not (len(s) == 1 and s[0] == 0)), None)
    if ref is None:
        return [grad.narrow(0, 0, 0) for _ in tensors_sizes]
    d = wrap_dim(dim, len(ref))
    out, start = [], 0
    for s in tensors_sizes:
        if len(s) == 1 and s[0] == 0 and len(ref) != 1:
            out.append(_zeros(s, grad))
            continue
        out.append(grad.narrow(d, start, s[d]))
        start += s[d]
    return out


declare('cat(Tensor[] tensors, int dim=0) -> Tensor', meta=_cat_meta, out=True, method=False,
        derivatives={'tensors': lambda grad, tensors_sizes, dim: _cat_backward(grad, tensors_sizes, dim)})


def _concat(tensors, dim=0):
    return _call('cat', tensors, dim)


declare('concat(Tensor[] tensors, int dim=0) -> Tensor', composite=_concat, method=False)
declare('concatenate(Tensor[] tensors, int dim=0) -> Tensor', composite=_concat, method=False)


def _stack_meta(tensors, dim=0):
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._a.shape
    for i, t in enumerate(tensors[1:], 1):
        if t._a.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_lst(s0)} at entry 0 and "
                               f"{_lst(t._a.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    dt = tensors[0]._dtype
    for t in tensors[1:]:
        dt = D._PROMOTE[dt, t._dtype]
    return s0[:d] + (len(tensors),) + s0[d:], dt


declare('stack(Tensor[] tensors, int dim=0) -> Tensor', meta=_stack_meta, out=True, method=False,
        derivatives={'tensors': lambda grad, dim: list(grad.unbind(dim))})


# --- scatters that are the derivatives of views ------------------------------------

def _check_src(src_shape, view_shape):
    if tuple(src_shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {_lst(src_shape)}, "
                           f"slice size = {_lst(view_shape)}")


def _slice_scatter_meta(self, src, dim=0, start=None, end=None, step=1):
    shape, _, _ = _slice_meta(self, dim, start, end, step)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


def _select_scatter_meta(self, src, dim, index):
    if self._a.ndim:
        d = wrap_dim(dim, self._a.ndim)
        n = self._a.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {_lst(self._a.shape)} at "
                             f"dimension {d}")
    shape, _, _ = _select_meta(self, dim, index)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


def _diagonal_scatter_meta(self, src, offset=0, dim1=0, dim2=1):
    shape, _, _ = _diagonal_meta(self, offset, dim1, dim2)
    _check_src(src._a.shape, shape)
    return tuple(self._a.shape), self._dtype


declare('slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) '
        '-> Tensor', meta=_slice_scatter_meta, out=True,
        derivatives={'self': lambda grad, src_sizes, dim, start, end, step:
                     grad.slice_scatter(_zeros(src_sizes, grad), dim, start, end, step),
                     'src': lambda grad, dim, start, end, step: grad.slice(dim, start, end, step)})
declare('select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor', meta=_select_scatter_meta,
        out=True,
        derivatives={'self': lambda grad, src_sizes, dim, index: grad.select_scatter(_zeros(src_sizes, grad), dim, index),
                     'src': lambda grad, dim, index: grad.select(dim, index)})
declare('diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor',
        meta=_diagonal_scatter_meta, out=True,
        derivatives={'self': lambda grad, src_sizes, offset, dim1, dim2:
                     grad.diagonal_scatter(_zeros(src_sizes, grad), offset, dim1, dim2),
                     'src': lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2)})


def _strided_index_meta(size, stride, offset, device=None):
    n = 1
    for s in size:
        n *= int(s)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    return (n,), D.int64


declare('_strided_index(SymInt[] size, SymInt[] stride, SymInt offset, *, Device? device=None) -> Tensor',
        kind='factory', meta=_strided_index_meta, method=False, differentiable=False)


def _unfold_backward_meta(grad_in, input_sizes, dim, size, step):
    sizes = tuple(int(s) for s in input_sizes)
    d = wrap_dim(dim, len(sizes)) if sizes else 0
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return sizes, grad_in._dtype


declare('unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor',
        meta=_unfold_backward_meta, method=False,
        derivatives={'grad_in': lambda grad, dim, size, step: grad.unfold(dim, size, step)})
