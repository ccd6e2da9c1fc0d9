"""CPU kernels for reductions, scans, sorting and softmax (NumPy only).

``dim`` arrives as the user gave it (int, sequence, None); ``dtype`` arrives as
the NumPy dtype of the result, already resolved by the operator's meta function.
Every kernel returns new arrays (never a view of its input).
"""
import numpy as np

from ._layout import c_order, like as _like_layout

from ._complex import logaddexp_complex

from ._fp import quiet as _quiet, is_half as _is_half
from ._torch_sort import (floating as _floating, tied_rows as _tied_rows, ranks_of as _ranks_of,
                          radix_sorted as _radix_sorted, sort_order as _sort_order, topk_order as _topk_order,
                          kth_order as _kth_order, BUDGET as _TIE_BUDGET)
from ._sums import rowsum as _rowsum, blas_sum as _blas_sum, exp_safe as _exp_safe


def _axes(dim, ndim):
    """NumPy ``axis`` for a torch ``dim``: None/() -> all; 0-d tensors have no axes."""
    if ndim == 0:
        return ()
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(dim) if len(dim) else None
    return dim


def _ax1(dim, ndim):
    """A single torch dim as a NumPy axis (0-d tensors: None, handled by the callers)."""
    return None if ndim == 0 else dim


def _half(dt):
    """float16/bfloat16: accumulate in float32 as torch does (the adapter casts the result back)."""
    return _is_half(np.dtype(dt))


def _copy0(a, dtype=None):
    return a.astype(dtype if dtype is not None else a.dtype, copy=True)


# --- sum-like -------------------------------------------------------------------

def _sum(a, dim, keepdim, dtype):
    if a.ndim == 0:
        return _copy0(a, dtype)
    # dtype= only when it changes something: NumPy's own loop is fastest
    acc = np.float32 if _half(dtype) else None if a.dtype == dtype else dtype
    ax = _axes(dim, a.ndim)
    if acc is None:
        r = _blas_sum(a, ax, keepdim)      # NOTE [sums as GEMV]
        if r is not None:
            return r
    return np.add.reduce(a, axis=ax, dtype=acc, keepdims=keepdim)


def _nansum(a, dim, keepdim, dtype):
    if a.dtype.kind == 'f':
        a = np.where(np.isnan(a), 0, a)
    return _sum(a, dim, keepdim, dtype)


def _mean(a, dim, keepdim, dtype):
    if a.ndim == 0:
        return _copy0(a, dtype)
    if a.dtype != dtype:
        a = a.astype(dtype)
    ax = _axes(dim, a.ndim)
    n = a.size if ax is None else _numel_over(a.shape, ax)
    # add.reduce then divide in place: np.mean's Python-level wrapper costs more than the work on small inputs;
    # half precision accumulates in float32 as torch does
    r = _blas_sum(a, ax, keepdim)       # NOTE [sums as GEMV]
    if r is None:
        r = np.add.reduce(a, axis=ax, keepdims=keepdim, dtype=np.float32 if _half(a.dtype) else None)
    with np.errstate(invalid='ignore', divide='ignore'):
        if isinstance(r, np.ndarray) and r.ndim:
            np.true_divide(r, n, out=r)
        else:
            r = np.asarray(np.true_divide(r, n))
    return r.astype(a.dtype, copy=False)


def _numel_over(shape, ax):
    n = 1
    for d in (ax if isinstance(ax, tuple) else (ax,)):
        n *= shape[d]
    return n


def _prod(a, dim, keepdim, dtype):
    if a.ndim == 0:
        return _copy0(a, dtype)
    return np.multiply.reduce(a, axis=dim, dtype=None if a.dtype == dtype else dtype, keepdims=keepdim)


# --- max / min ---------------------------------------------------------------------

def _extreme(ufunc):
    def full(a):
        return np.asarray(ufunc.reduce(a, axis=None))

    def amax(a, dim, keepdim):
        if a.ndim == 0:
            return _copy0(a)
        return ufunc.reduce(a, axis=_axes(dim, a.ndim), keepdims=keepdim)
    return full, amax


_max_all, _amax = _extreme(np.maximum)
_min_all, _amin = _extreme(np.minimum)


def _arg(fn):
    def kernel(a, dim=None, keepdim=False):
        if a.ndim == 0:
            return np.zeros((), np.int64)
        if dim is None:
            r = fn(a.reshape(-1))
            return np.full((1,) * a.ndim if keepdim else (), r, np.int64)
        return fn(a, axis=dim, keepdims=keepdim).astype(np.int64, copy=False)
    return kernel


_argmax, _argmin = _arg(np.argmax), _arg(np.argmin)


def _dim_extreme(argfn, ufunc):
    def kernel(a, dim, keepdim):
        if a.ndim == 0:
            return _copy0(a), np.zeros((), np.int64)
        if a.size == 0:
            shape = list(a.shape)
            shape[dim] = 1
            if not keepdim:
                del shape[dim]
            return np.empty(shape, a.dtype), np.empty(shape, np.int64)
        # two C passes beat one take_along_axis; both propagate NaN and argmax/argmin pick the first NaN, as torch
        vals = ufunc.reduce(a, axis=dim, keepdims=keepdim)
        idx = argfn(a, axis=dim, keepdims=keepdim)
        return vals, idx.astype(np.int64, copy=False)
    return kernel


_max_dim, _min_dim = _dim_extreme(np.argmax, np.maximum), _dim_extreme(np.argmin, np.minimum)


def _aminmax(a, dim, keepdim):
    if dim is None:
        mn, mx = np.min(a), np.max(a)
        shape = (1,) * a.ndim if keepdim else ()
        return np.full(shape, mn, a.dtype), np.full(shape, mx, a.dtype)
    return _amin(a, dim, keepdim), _amax(a, dim, keepdim)


# --- var / std ---------------------------------------------------------------------

def _var(a, dim, correction, keepdim):
    c = 1 if correction is None else correction
    acc = np.float64 if a.dtype.itemsize < 8 and (a.dtype.kind == 'f' or _half(a.dtype)) else None   # accuracy like torch's
    if a.ndim == 0:
        with np.errstate(invalid='ignore', divide='ignore'):
            return np.asarray(np.float64(0.0) / max(0, 1 - c)).astype(a.dtype)
    ax = _axes(dim, a.ndim)
    n = a.size if ax is None else int(np.prod([a.shape[d] for d in (ax if isinstance(ax, tuple) else (ax,))]))
    with np.errstate(invalid='ignore', divide='ignore'):
        m = np.mean(a, axis=ax, dtype=acc, keepdims=True)
        d = np.subtract(a, m)
        if d.dtype.kind == 'c':
            d = (d * d.conj()).real
        else:
            np.multiply(d, d, out=d)
        r = np.add.reduce(d, axis=ax, keepdims=keepdim) / max(0, n - c)
    return r.astype(a.real.dtype, copy=False)


def _std(a, dim, correction, keepdim):
    r = _var(a, dim, correction, keepdim)
    return np.sqrt(r, out=r) if r.ndim else np.sqrt(r)


# --- logsumexp, softmax ----------------------------------------------------------------

def _logsumexp(a, dim, keepdim):
    if a.dtype.kind not in 'fc':
        a = a.astype(np.float32)
    if a.ndim == 0:
        return _copy0(a)
    ax = _axes(dim, a.ndim)
    if a.size == 0:
        with np.errstate(divide='ignore'):
            return np.log(np.add.reduce(np.exp(a), axis=ax, keepdims=keepdim))
    m = np.maximum.reduce(a, axis=ax, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)              # rows of -inf / inf: no shift
    e = np.subtract(a, m)
    np.exp(e, out=e)
    s = np.add.reduce(e, axis=ax, keepdims=True)
    with np.errstate(divide='ignore'):
        np.log(s, out=s)
    s += m
    return s if keepdim else s.squeeze(ax) if ax is not None else s.reshape(())


# NOTE [softmax over short rows] lives in _sums.py with ``exp_safe``, which softmax and attention share.


def _sum_keep(a, dim):
    """np.add.reduce(a, dim, keepdims=True), by GEMV when ``dim`` is the last axis of a float32/64 array."""
    if a.ndim and (dim == -1 or dim == a.ndim - 1):
        return _rowsum(a)[..., None]        # NOTE [row sums as GEMV] in _sums.py
    return np.add.reduce(a, axis=dim, keepdims=True)


def _shifted(a, dim, dtype, may_skip=True):
    """``a - max(a, dim)`` as a new array in the result dtype (softmax's numerically safe start; for softmax the
    maximum may be skipped, NOTE [softmax over short rows]); half precision computes in float32."""
    dtype = np.float32 if _half(dtype) else dtype
    if a.dtype != dtype:
        a = a.astype(dtype)
    if may_skip and _exp_safe(a):
        return a.copy()
    m = np.maximum.reduce(a, axis=dim, keepdims=True)
    return np.subtract(a, m)


def _softmax(a, dim, dtype):
    if a.dtype.kind in 'biu' and np.dtype(dtype).kind in 'biu':    # empty integer input: torch allows it
        return np.empty(a.shape, dtype)
    if a.ndim == 0:
        return np.ones((), dtype) if not np.isnan(a) else np.full((), np.nan, dtype)
    if a.size == 0:
        return np.empty(a.shape, dtype)
    if a.shape[dim] == 1:
        return _single(a, dtype, 1)
    e = _shifted(a, dim, dtype)
    np.exp(e, out=e)
    e *= np.reciprocal(_sum_keep(e, dim))
    return e


def _single(a, dtype, value):
    """softmax (1) or log_softmax (0) over a dimension of one element: exactly that value, as torch's exp(x - x)
    gives (NaN where x is not finite). The shortcut's exp(x) * (1 / exp(x)) can be one bit below 1, which code
    that standardises the result (whisper's word alignment) turns into a different answer."""
    return np.where(np.isfinite(a), value, np.nan).astype(np.float32 if _half(dtype) else dtype, copy=False)


def _log_softmax(a, dim, dtype):
    if a.dtype.kind in 'biu' and np.dtype(dtype).kind in 'biu':
        return np.empty(a.shape, dtype)
    if a.ndim == 0:
        return np.zeros((), dtype) if not np.isnan(a) else np.full((), np.nan, dtype)
    if a.size == 0:
        return np.empty(a.shape, dtype)
    if a.shape[dim] == 1:
        return _single(a, dtype, 0)
    e = _shifted(a, dim, dtype, may_skip=False)     # x - log(sum(exp x)) of a confident row loses its digits
    s = _sum_keep(np.exp(e), dim)
    np.log(s, out=s)
    e -= s
    return e


def _softmax_backward_data(g, y, dim, input_dtype):
    """y * (g - sum(g * y)): three passes, two temporaries."""
    if y.ndim == 0:
        return np.zeros((), y.dtype)
    gy = np.multiply(g, y)
    s = _sum_keep(gy, dim)
    t = np.multiply(y, s)
    np.subtract(gy, t, out=gy)
    return gy


def _log_softmax_backward_data(g, y, dim, input_dtype):
    """g - exp(y) * sum(g)."""
    if y.ndim == 0:
        return np.zeros((), y.dtype)
    s = _sum_keep(g, dim)
    t = np.exp(y)
    np.multiply(t, s, out=t)
    np.subtract(g, t, out=t)
    return t


# --- logical, counting, norms --------------------------------------------------------

def _logical(fn):
    def kernel(a, dim, keepdim):
        if isinstance(dim, (list, tuple)) and not len(dim):     # all/any over no dims: just the truth values
            return a != 0
        return np.asarray(fn(a, axis=_axes(dim, a.ndim), keepdims=keepdim))
    return kernel


_all, _any = _logical(np.all), _logical(np.any)


def _count_nonzero(a, dim):
    return np.asarray(np.count_nonzero(a, axis=_axes(dim, a.ndim)), dtype=np.int64)


def _vector_norm(a, ord, dim, keepdim, dtype):
    if a.dtype != dtype and a.dtype.kind != 'c':
        a = a.astype(dtype)
    if _half(a.dtype):
        a = a.astype(np.float32)
    ax = _axes(dim, a.ndim)
    x = np.abs(a)
    ord = float(ord)
    if ord == 2.0:
        if a.dtype.kind != 'c':
            x = np.multiply(a, a)
        else:
            np.multiply(x, x, out=x)
        r = np.add.reduce(x, axis=ax, keepdims=keepdim)
        return np.sqrt(r, out=r) if isinstance(r, np.ndarray) and r.ndim else np.sqrt(r)
    if ord == float('inf'):
        return np.maximum.reduce(x, axis=ax, keepdims=keepdim)
    if ord == float('-inf'):
        return np.minimum.reduce(x, axis=ax, keepdims=keepdim)
    if ord == 0.0:
        return np.add.reduce((x != 0).astype(x.dtype), axis=ax, keepdims=keepdim)
    if ord == 1.0:
        return np.add.reduce(x, axis=ax, keepdims=keepdim)
    with np.errstate(divide='ignore'):
        return np.power(np.add.reduce(np.power(x, ord), axis=ax, keepdims=keepdim), 1.0 / ord)


# --- sorting and selection ------------------------------------------------------------

def _argsort(a, dim, descending, stable=True):
    """Indices that sort ``a`` along ``dim``; NaN is the largest value, as in torch. Descending order keeps
    equal elements in their original order (argsort of the reversed array, reversed back)."""
    if not descending:
        return np.argsort(a, axis=dim, kind='stable')
    n = a.shape[dim]
    rev = np.flip(a, dim)
    idx = np.flip(np.argsort(rev, axis=dim, kind='stable'), dim)
    return (n - 1) - idx


def _rows(a, dim):
    """``a`` as rows (m, n) along ``dim``, and the shape to give back with ``_unrows``."""
    x = np.moveaxis(a, dim, -1)
    return x.reshape(-1, x.shape[-1]), x.shape


def _unrows(r, shape, dim):
    return np.moveaxis(r.reshape(shape), -1, dim)


def _eq_count(v, b):
    """How many elements of each row of ``v`` equal ``b`` (m, 1), NaN equal to NaN."""
    eq = v == b
    if _floating(v.dtype):
        eq |= np.isnan(v) & np.isnan(b)
    return np.add.reduce(eq, axis=1)


def _unstable_sort(a, idx, vals, dim, descending):
    """torch's order of equal elements for ``sort(stable=False)``, recomputed for the rows that have any
    (NOTE [tie order of torch's sort]); ``idx`` is the stable order, ``vals`` the sorted values. Returns both."""
    if a.shape[dim] < 2 or a.strides[dim] == 0 or _radix_sorted(a, descending):
        return idx, vals    # a stride-0 row torch leaves unsorted (all equal): its indices are 0..n-1
    sv, _ = _rows(vals, dim)
    tied = _tied_rows(sv)
    if not tied.any() or np.count_nonzero(tied) * sv.shape[1] > _TIE_BUDGET:
        return idx, vals
    v, shape = _rows(a, dim)
    i, _ = _rows(idx, dim)
    i = i.copy()
    i[tied] = _sort_order(_ranks_of(v[tied], i[tied]))
    idx = _unrows(i, shape, dim)
    return idx, np.take_along_axis(a, idx, dim)


def _sort(a, dim, descending, stable):
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    idx = _argsort(a, dim, descending)
    vals = np.take_along_axis(a, idx, dim)
    if not stable:
        idx, vals = _unstable_sort(a, idx, vals, dim, descending)
    return _like_layout(a, vals), _like_layout(a, idx.astype(np.int64, copy=False))  # a dense input's strides


def _topk_ties(a, idx, k, dim, largest, is_sorted):
    """torch's topk indices where equal elements make them ambiguous, and its order when not ``sorted``
    (NOTE [tie order of torch's sort]); ``idx`` is the stable, sorted choice."""
    n = a.shape[dim]
    if k == 0 or n < 2:
        return idx
    v, shape = _rows(a, dim)
    i, ishape = _rows(idx, dim)
    if is_sorted or k * 64 <= n:
        tv = np.take_along_axis(v, i, 1)
        b = tv[:, -1:]
        need = _tied_rows(tv) | (_eq_count(v, b) > _eq_count(tv, b))
        if not need.any():
            return idx
    else:
        need = np.ones(len(v), bool)     # nth_element's order, ties or not
    if np.count_nonzero(need) * n > _TIE_BUDGET:
        return idx
    w = v[need]
    i = i.copy()
    i[need] = _topk_order(_ranks_of(w, _argsort(w, 1, largest)), k, is_sorted)
    return _unrows(i, ishape, dim)


def _topk(a, k, dim, largest, sorted):
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    n = a.shape[dim]
    if 0 < k < n // 4:
        # partition first (O(n)), then sort only the k chosen; NaN partitions as the largest value
        part = np.argpartition(a, n - k if largest else k - 1, axis=dim)
        cand = np.take(part, np.arange(n - k, n) if largest else np.arange(k), axis=dim)
        order = _argsort(np.take_along_axis(a, cand, dim), dim, largest)
        idx = np.take_along_axis(cand, order, dim)
    else:
        idx = np.take(_argsort(a, dim, largest), np.arange(k), axis=dim)
    idx = _topk_ties(a, idx, k, dim, largest, sorted)
    return np.take_along_axis(a, idx, dim), idx.astype(np.int64, copy=False)


def _pick(a, idx, dim, keepdim):
    idx = np.expand_dims(idx, dim)
    vals = np.take_along_axis(a, idx, dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx.astype(np.int64, copy=False)


def _kthvalue(a, k, dim, keepdim):
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    idx = np.take(_argsort(a, dim, False), k - 1, axis=dim)
    return _pick(a, _kth_ties(a, idx, k, dim), dim, keepdim)


def _kth_ties(a, idx, k, dim):
    """The index torch's quickselect picks among elements equal to the k-th smallest (NOTE [tie order of
    torch's sort]); ``idx`` is the stable choice."""
    v, _ = _rows(a, dim)
    i = idx.reshape(-1)
    need = _eq_count(v, v[np.arange(len(v)), i][:, None]) > 1
    if not need.any() or np.count_nonzero(need) * v.shape[1] > _TIE_BUDGET:
        return idx
    w = v[need]
    i = i.copy()
    i[need] = _kth_order(_ranks_of(w, _argsort(w, 1, False)), k)
    return i.reshape(idx.shape)


def _median_idx(a, dim):
    """Index of the lower median along ``dim``; where a row has NaN, its first NaN (torch's rule)."""
    n = a.shape[dim]
    idx = np.take(_argsort(a, dim, False), (n - 1) // 2, axis=dim)
    if a.dtype.kind == 'f':
        nan = np.isnan(a)
        has = nan.any(axis=dim)
        if has.any():
            idx = np.where(has, np.argmax(nan, axis=dim), idx)
    return idx


def _median_all(a):
    if a.size == 0:
        return np.full((), np.nan, a.dtype)
    flat = a.reshape(-1)
    return np.asarray(flat[_median_idx(flat, 0)]).copy()


def _median_dim(a, dim, keepdim):
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    if a.size == 0:
        return _max_dim(a, dim, keepdim)
    return _pick(a, _median_idx(a, dim), dim, keepdim)


def _nanmedian_idx(a, dim):
    """Index of the lower median of the non-NaN values along ``dim`` (NaN sorts last)."""
    order = _argsort(a, dim, False)
    if a.dtype.kind != 'f':
        return np.take(order, (a.shape[dim] - 1) // 2, axis=dim)
    k = np.maximum((np.add.reduce(~np.isnan(a), axis=dim, keepdims=True) - 1) // 2, 0)
    return np.take_along_axis(order, k, dim).squeeze(dim)


def _nanmedian_all(a):
    if a.size == 0:
        return np.full((), np.nan, a.dtype)
    flat = a.reshape(-1)
    return np.asarray(flat[_nanmedian_idx(flat, 0)]).copy()


def _nanmedian_dim(a, dim, keepdim):
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    if a.size == 0:
        return _max_dim(a, dim, keepdim)
    return _pick(a, _nanmedian_idx(a, dim), dim, keepdim)


def _mode(a, dim, keepdim):
    """Most frequent value along ``dim`` (the smallest of those tied) and the index of its last occurrence."""
    if a.ndim == 0:
        return _copy0(a), np.zeros((), np.int64)
    if a.size == 0:
        return _max_dim(a, dim, keepdim)
    x = np.moveaxis(a, dim, -1)
    lead, n = x.shape[:-1], x.shape[-1]
    x = x.reshape(-1, n)
    s = np.sort(x, axis=1)
    pos = np.arange(n)
    start = np.ones(s.shape, bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    run_start = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
    count = pos - run_start + 1
    best = np.argmax(count, axis=1)                       # first maximal run: the smallest value
    vals = s[np.arange(len(s)), best]
    eq = x == vals[:, None]
    idx = n - 1 - np.argmax(eq[:, ::-1], axis=1)
    vals, idx = vals.reshape(lead), idx.reshape(lead).astype(np.int64)
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


# --- scans ---------------------------------------------------------------------------

# torch's CPU cumulative kernels carry the running value in acc_type: double for float32 (and complex double for
# complex64), float for float16/bfloat16; each element is rounded to the result's type from it
_CUM_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _cumulative(ufunc):
    def kernel(a, dim, dtype):
        if a.ndim == 0:
            return _copy0(a, dtype)
        dt = np.dtype(dtype)
        acc = np.float32 if _half(dt) else _CUM_ACC.get(dt)
        if acc is None:
            return ufunc.accumulate(a, axis=dim, dtype=dt)
        return ufunc.accumulate(a, axis=dim, dtype=acc).astype(dt)
    return kernel


_cumsum = _cumulative(np.add)
_cumprod = _cumulative(np.multiply)


def _logcumsumexp(a, dim):
    if a.ndim == 0:
        return _copy0(a)
    if a.dtype.kind == 'c':          # no complex logaddexp ufunc in NumPy: accumulate slice by slice
        out = np.moveaxis(a.copy(), dim, 0)
        for i in range(1, out.shape[0]):
            out[i] = logaddexp_complex(out[i - 1], out[i])
        return np.moveaxis(out, 0, dim)
    return np.logaddexp.accumulate(a, axis=dim)


def _cumext(ufunc):
    def kernel(a, dim):
        if a.ndim == 0:
            return _copy0(a), np.zeros((), np.int64)
        vals = ufunc.accumulate(a, axis=dim)
        hit = a == vals
        if a.dtype.kind == 'f':
            hit |= np.isnan(a)
        shape = [1] * a.ndim
        shape[dim] = a.shape[dim]
        pos = np.arange(a.shape[dim]).reshape(shape)
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)   # the latest position of the running extreme
        return vals, idx.astype(np.int64, copy=False)
    return kernel


# a reduction's result is a fresh C-contiguous tensor in torch whatever its input's layout (NumPy keeps the
# input's dimension order: sum(channels_last_x, 0) would have strides (1, 15, 3) for torch's (20, 5, 1))
_KERNELS = {
    'sum.dim_IntList': c_order(_sum),
    'nansum': c_order(_nansum),
    'mean.dim': c_order(_mean),
    'prod.dim_int': c_order(_prod),
    'max': _max_all,
    'min': _min_all,
    'max.dim': c_order(_max_dim),
    'min.dim': c_order(_min_dim),
    'amax': c_order(_amax),
    'amin': c_order(_amin),
    'aminmax': c_order(_aminmax),
    'argmax': c_order(_argmax),
    'argmin': c_order(_argmin),
    'var.correction': c_order(_var),
    'std.correction': c_order(_std),
    'logsumexp': c_order(_logsumexp),
    'softmax.int': _softmax,
    'log_softmax.int': _log_softmax,
    '_softmax_backward_data': _softmax_backward_data,
    '_log_softmax_backward_data': _log_softmax_backward_data,
    'all.dims': c_order(_all),
    'any.dims': c_order(_any),
    'count_nonzero.dim_IntList': c_order(_count_nonzero),
    'linalg_vector_norm': c_order(_vector_norm),
    'sort': _sort,
    'topk': _topk,
    'kthvalue': _kthvalue,
    'median': _median_all,
    'median.dim': c_order(_median_dim),
    'mode': _mode,
    'nanmedian': _nanmedian_all,
    'nanmedian.dim': c_order(_nanmedian_dim),
    'cumsum': c_order(_cumsum),
    'cumprod': c_order(_cumprod),
    'logcumsumexp': c_order(_logcumsumexp),
    'cummax': c_order(_cumext(np.maximum)),
    'cummin': c_order(_cumext(np.minimum)),
}

# sums and softmaxes of inf/-inf/NaN must stay silent, as in torch
KERNELS = {name: _quiet(fn) for name, fn in _KERNELS.items()}
