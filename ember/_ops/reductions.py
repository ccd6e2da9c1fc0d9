"""Reductions, scans, sorting and softmax.

A reduction's meta function resolves ``dim`` the way torch does (an int, a
list/tuple, or None / ``()`` meaning every dimension; negative dims wrap; a
0-d tensor accepts dim 0 and -1) and the result dtype (``sum`` of integers or
bool is int64, ``dtype=`` casts the input first). Kernels receive the raw
``dim`` argument and the resolved NumPy result dtype.

Gradients of reductions are the incoming gradient put back in the reduced
dimensions (`_unreduce`: a reshape to the keepdim shape, then an expand) —
never a hand-written sum-to-shape, which the engine does.
"""
from .._core import dtype as D
from .registry import declare
from .views import wrap_dim


# --- shared rules ----------------------------------------------------------------

def reduce_dims(dim, ndim):
    """The sorted tuple of dims reduced over; None or () means all of them."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int) or hasattr(dim, '__index__') and not isinstance(dim, (list, tuple)):
        dims = (int(dim),)
    else:
        dims = tuple(int(d) for d in dim)
        if not dims:
            return tuple(range(ndim))
    out = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.add(w)
    return tuple(sorted(w for w in out if w < ndim)) if ndim else ()


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _int_to_long(d):
    return D.int64 if d.category <= 1 else d


def _sum_meta(self, dim=None, keepdim=False, dtype=None):
    shape = tuple(self._a.shape)
    dims = reduce_dims(dim, len(shape))
    return reduced_shape(shape, dims, keepdim), dtype if dtype is not None else _int_to_long(self._dtype)


def _unreduce(grad, sizes, dim, keepdim):
    """``grad`` of a reduction over ``dim`` broadcast back to the input's ``sizes``."""
    sizes = tuple(sizes)
    if not keepdim and sizes:
        dims = reduce_dims(dim, len(sizes))
        grad = grad.reshape(reduced_shape(sizes, dims, True))
    return grad.expand(sizes)


declare('sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
        meta=_sum_meta, name='sum', grad_name='SumBackward0',
        derivatives={'self': lambda grad, self_sizes, dim, keepdim: _unreduce(grad, self_sizes, dim, keepdim)})
