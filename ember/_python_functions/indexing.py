"""``Tensor.__getitem__`` / ``__setitem__`` with torch's semantics, and the
indexing functions that are not one operator (``nonzero(as_tuple=True)``, one-argument ``where``).

Indexing is two steps, as in torch's python_variable_indexing.cpp:

1. basic indices (ints, slices, None, Ellipsis) become view operators applied left to right
   (``select``, ``slice``, ``unsqueeze``), so ``x[0]`` and ``x[:, 1:3]`` are views recorded by autograd
   like any other view and never touch the advanced path;
2. what remains (integer/boolean tensors, lists) is one ``index.Tensor`` call (``index_put_`` when
   assigning) on the result of step 1, with None for the dimensions not indexed.

>>> import ember
>>> x = ember.arange(6).reshape(2, 3)
>>> x[1, 1:]
tensor([4, 5])
>>> x[:, ember.tensor([0, 2])]
tensor([[0, 2],
        [3, 5]])
"""
from ember._warn import warnings

import numpy as np

from .._core import dtype as D
from .._core.storage import as_size
from .._tensor import Tensor
from ..ops import aten
from .._C._functorch import is_batchedtensor
from .._core.dtype import SAME_DTYPE
from ._out import write_out
from ..utils._python_dispatch import _len_torch_dispatch_stack

__all__ = ['where', 'nonzero', 'index_put', 'index_put_']


_select = aten.select.int
_slice = aten.slice.Tensor
_unsqueeze = aten.unsqueeze.default
_alias = aten.alias.default
_index = aten.index.Tensor
_index_put_ = aten.index_put_.default
_copy_ = aten.copy_.default
_INTS = (int, np.integer)
_SEQ_ITEMS = (slice, type(Ellipsis), type(None), list, tuple, Tensor, np.ndarray)


def _bad_index(x):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                      f"indices (got {type(x).__name__})")


_INDEX_LIST_DTYPES = (D.bool_, D.uint8, D.int64)


def _as_index_tensor(x, device):
    """Lists, NumPy arrays and bools used as indices become tensors (``x[[0, 2]]``): bool and uint8 ones masks,
    any other sequence int64, as torch's indexing_tensor_from_data makes them (``x[[]]`` and ``x[[1.7]]`` take
    rows); a lone float stays one, for the index check to refuse."""
    from .._creation import tensor
    try:
        t = tensor(x, device=device)
    except (TypeError, ValueError):
        raise _bad_index(x) from None
    return t if t.dtype in _INDEX_LIST_DTYPES or not isinstance(x, (list, tuple, np.ndarray)) else t.long()


def _normalize(self, idx):
    """The index as a tuple (torch's rules for treating a list as a tuple of indices)."""
    if type(idx) is tuple:
        return idx
    if isinstance(idx, list) and any(isinstance(i, _SEQ_ITEMS) for i in idx):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                      "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
                      "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
                      "or a different result", UserWarning, stacklevel=3)
        return tuple(idx)
    return (idx,)


def _int_index(v):
    """An index that selects (a Python/NumPy int or a 0-d integer tensor), as an int; else None."""
    if isinstance(v, _INTS) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, Tensor) and v.ndim == 0 and v.dtype.category == 1 and not is_batchedtensor(v):
        return int(v.item())
    return None     # a 0-d index batched under vmap has no one value: it indexes as a tensor (transformers' masks)


def _apply(self, idx):
    """Step 1 (views) of indexing; returns the view and the advanced indices as ``[(dim, tensor)]``."""
    items = _normalize(self, idx)
    consumed = 0
    for it in items:
        if it is None or isinstance(it, (bool, np.bool_)):
            continue
        if it is Ellipsis:
            pass
        elif isinstance(it, Tensor) and it.dtype in (D.bool_, D.uint8):
            consumed += it.ndim if it.ndim else 0
        else:
            consumed += 1
    ndim = self.ndim
    if consumed > ndim:
        if ndim == 0 and len(items) == 1 and _int_index(items[0]) is not None:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                             "in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    res, dim, adv = self, 0, []
    orig = 0            # the dimension of ``self`` an index refers to (torch's messages name it)
    for it in items:
        i = _int_index(it)
        if i is not None:
            if dim >= res.ndim:
                raise IndexError(f"index {i} is out of bounds for dimension {orig} with size 0")
            n = res.shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {orig} with size {n}")
            res = _select(res, dim, i)
            orig += 1
            continue
        if type(it) is slice:
            res = _slice_view(res, dim, it)
            dim += 1
            orig += 1
        elif it is None:
            res = _unsqueeze(res, dim)
            dim += 1
        elif it is Ellipsis:
            dim += ndim - consumed
            orig += ndim - consumed
        elif isinstance(it, (bool, np.bool_)):
            res = _unsqueeze(res, dim)
            adv.append((dim, _as_index_tensor([bool(it)], self.device)))
            dim += 1
        else:
            t = it if isinstance(it, Tensor) else _as_index_tensor(it, self.device)
            if t.device.type == 'cpu' and self.device.type not in ('cpu', 'meta'):
                t = t.to(self.device)       # CPU indices of a GPU tensor travel to it, as torch lets them
            if t.dtype.category >= 2:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if t.dtype in (D.bool_, D.uint8) and t.ndim == 0:
                res = _unsqueeze(res, dim)
                t = t.reshape(1)
            adv.append((dim, t))
            k = t.ndim if t.dtype in (D.bool_, D.uint8) else 1
            dim += k
            orig += k
    return res, adv


def _slice_view(t, dim, s):
    start, stop, step = s.start, s.stop, s.step
    if step is not None:
        step = int(step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")
    else:
        step = 1
    start = None if start is None else as_size(start)        # a symbolic bound stays one (NOTE [symbolic sizes])
    stop = None if stop is None else as_size(stop)
    if step == 1 and not start and (stop is None or stop >= t.shape[dim]):
        return t        # a full slice is no view at all, as in torch's applySlice
    # torch's indexing passes the open ends as 0 and INT64_MAX (a handler of __torch_dispatch__ sees them)
    return _slice(t, dim, 0 if start is None else start, _OPEN_END if stop is None else stop, step)


_OPEN_END = 2 ** 63 - 1


def _indices_list(adv):
    out = []
    for d, t in adv:
        while len(out) < d:
            out.append(None)
        out.append(t)
    return out


def _check_int_index(self, idx):
    """torch's errors for ``x[i]`` out of range (select's own message names select)."""
    if self.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number") from None
    n = self.shape[0]
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of bounds for dimension 0 with size {n}") from None


def _basic_views(self, idx):
    """``self[idx]`` for a tuple of ints, slices, None and at most one Ellipsis, or None for any other index
    (then the general path raises torch's errors or takes the advanced indices)."""
    consumed, ellipsis = 0, False
    for it in idx:
        ti = type(it)
        if ti is int or ti is slice:
            consumed += 1
        elif it is Ellipsis:
            if ellipsis:
                return None
            ellipsis = True
        elif it is not None:
            return None
    ndim = self.ndim
    if consumed > ndim:
        return None
    res, dim = self, 0
    for it in idx:
        ti = type(it)
        if ti is int:
            try:
                res = _select(res, dim, it)
            except IndexError:
                return None                     # the general path raises torch's message
        elif ti is slice:
            res = _slice_view(res, dim, it)
            dim += 1
        elif it is None:
            res = _unsqueeze(res, dim)
            dim += 1
        else:
            dim += ndim - consumed
    return res


def getitem(self, idx):
    # fast paths: x[i], x[a:b]
    t = type(idx)
    if t is int:
        try:
            return _select(self, 0, idx)        # select's meta function checks the bounds
        except IndexError:
            _check_int_index(self, idx)         # raises torch's message for x[i]
            raise
    if t is slice and self.ndim:
        r = _slice_view(self, 0, idx)
        return r if r is not self else _alias(self)
    if idx is Ellipsis or (t is tuple and not idx):
        return _alias(self)
    if idx is None:
        return _unsqueeze(self, 0)
    if t is tuple:      # fast path: ints, slices, None and one Ellipsis (the views _apply would make, in its order)
        res = _basic_views(self, idx)
        if res is not None:
            return res if res is not self else _alias(self)
    if t is Tensor and idx.ndim and idx._dtype.category <= 1 and idx._device is self._device:   # x[idx] / x[mask]
        return _index(self, [idx])
    res, adv = _apply(self, idx)
    if not adv:
        return res if res is not self else _alias(self)
    return _index(res, _indices_list(adv))


def setitem(self, idx, value):
    if isinstance(value, Tensor):
        v = value
    elif isinstance(value, (int, float, bool, complex, np.number, np.bool_)):
        v = None
    else:
        from .._creation import tensor
        v = tensor(value, dtype=self.dtype, device=self.device)
    if type(idx) is int:      # fast path: x[i] = v
        try:
            res = _select(self, 0, idx)
        except IndexError:
            _check_int_index(self, idx)
            raise
        adv = None
    elif type(idx) is Tensor and idx.ndim and idx._dtype.category <= 1:
        res, adv = self, [(0, idx)]
    else:
        res, adv = _apply(self, idx)
    if v is None:
        v = _scalar_tensor(value, self._dtype, self._device)
        if not adv:
            _copy_(res, v)      # a 0-d value: nothing to strip or check
            return
    elif not adv:
        vs, rs = v.shape, res.shape
        if vs != rs and (len(vs) > len(rs) or any(a != 1 and a != b for a, b in zip(vs[::-1], rs))):
            # torch expands the value to the target first, so its error names the target sizes
            _strip_leading_ones(v, res.ndim).expand(res.shape)
    if not adv:
        _copy_(res, _strip_leading_ones(v, res.ndim))
        return
    _index_put_(res, _indices_list(adv), _strip_leading_ones(v, None), False)


_SCALARS = {}


def _scalar_tensor(value, dtype, device):
    """A 0-d tensor holding a Python number assigned with ``x[i] = 1.5``; kept (it is only ever read) so a loop of
    assignments does not build one per call."""
    if _len_torch_dispatch_stack():     # under a mode (a trace, fake tensors) it is the mode's: made there each time
        return aten.full.default((), value, dtype=dtype, device=device)
    key = (type(value), value, dtype, device)
    t = _SCALARS.get(key)
    if t is None:
        t = aten.full.default((), value, dtype=dtype, device=device)
        if len(_SCALARS) < 256:
            _SCALARS[key] = t
    return t


def _strip_leading_ones(v, ndim):
    """torch drops leading size-1 dimensions of the value (``x[0] = y[None]`` works)."""
    shape = tuple(v.shape)
    k = 0
    while k < len(shape) and shape[k] == 1 and (ndim is None or len(shape) - k > ndim):
        k += 1
    return v.reshape(shape[k:]) if k else v


getitem.__name__, getitem.__qualname__ = '__getitem__', 'Tensor.__getitem__'      # the names torch's methods have
setitem.__name__, setitem.__qualname__ = '__setitem__', 'Tensor.__setitem__'
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem


# --- overload choosers ------------------------------------------------------------------------

def where(condition, input=None, other=None, *, out=None):
    """``where(condition, x, y)`` chooses elementwise; ``where(condition)`` is ``nonzero(condition, as_tuple=True)``.

    >>> import ember
    >>> ember.where(ember.tensor([True, False, True]))
    (tensor([0, 2]),)
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if out is not None:
        return write_out(out, aten.where.self(condition, input, other), same_dtype="Expected out type to be {res} but got {out}",
                         refuse_grad='where')
    return aten.where.self(condition, input, other)


def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dimension.

    >>> import ember
    >>> ember.nonzero(ember.tensor([0, 3, 0, 4]))
    tensor([[1],
            [3]])
    """
    if not as_tuple:
        return aten.nonzero.default(input) if out is None else aten.nonzero.out(input, out=out)
    r = aten.nonzero.default(input.reshape(1) if input.ndim == 0 else input)
    return tuple(r.unbind(1))


def index_put(input, indices, values, accumulate=False):
    """Out-of-place ``input[indices] = values`` (``accumulate=True`` adds, summing repeated indices).

    >>> import ember
    >>> ember.index_put(ember.zeros(3), (ember.tensor([0, 0]),), ember.tensor([1., 2.]), accumulate=True)
    tensor([3., 0., 0.])
    """
    return aten.index_put.default(input, list(indices), values, accumulate)


def index_put_(input, indices, values, accumulate=False):
    return aten.index_put_.default(input, list(indices), values, accumulate)


Tensor.index_put = index_put
Tensor.index_put_ = index_put_
Tensor.nonzero = lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple)


# --- index_reduce: scatter_reduce with one index per slice ------------------------------------------------
_REDUCTIONS = ('prod', 'mean', 'amax', 'amin')


def _check_index_reduce(input, dim, index, source, reduce):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if index.dtype not in (D.int32, D.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{D.scalar_name(index.dtype)}")
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{D.scalar_name(index.dtype)} and size: {list(index.shape)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({D.scalar_name(input.dtype)}) and source "
                           f"({D.scalar_name(source.dtype)}) must have the same scalar type")
    shape, sshape = list(input.shape), list(source.shape)
    if len(shape) != len(sshape) or shape[:dim] + shape[dim + 1:] != sshape[:dim] + sshape[dim + 1:]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {shape} source.shape = {sshape}")
    if index.numel() != sshape[dim]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({sshape[dim]}), for dim: {dim}")
    if index.numel() and (index.min().item() < 0 or index.max().item() >= shape[dim]):
        raise IndexError("index out of range in self")


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduce the slices ``source.select(dim, i)`` into ``input.select(dim, index[i])`` with ``reduce``
    ('prod', 'mean', 'amax' or 'amin'), the input's own values taking part unless ``include_self=False``:
    ``scatter_reduce`` with the index spread over the other dims, so gradients are scatter_reduce's.

    >>> import ember
    >>> ember.ones(3).index_reduce(0, ember.tensor([0, 0, 2]), ember.tensor([2., 3., 4.]), 'prod')
    tensor([6., 1., 4.])
    """
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning)
    nd = max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    dim %= nd
    _check_index_reduce(input, dim, index, source, reduce)
    shape = [1] * source.dim()
    shape[dim] = -1
    spread = index.to(D.int64).reshape(shape).expand(source.shape)
    r = aten.scatter_reduce.two(input, dim, spread, source, reduce, include_self=include_self)
    return r if out is None else write_out(out, r, same_dtype=SAME_DTYPE)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


__all__ += ['index_reduce']
Tensor.index_reduce = lambda self, dim, index, source, reduce, *, include_self=True: index_reduce(
    self, dim, index, source, reduce, include_self=include_self)
Tensor.index_reduce_ = _index_reduce_
