"""The order in which torch's CPU sort, topk and kthvalue return equal elements (NumPy only).

NOTE [tie order of torch's sort]
torch's CPU ``sort`` with ``stable=False`` (the default, so also ``argsort`` and ``msort``) is libstdc++'s
``std::sort`` on (value, index) pairs compared by value alone (NaN the largest, all NaNs equal): an introsort
(median of three moved to the front, unguarded Hoare partition, heapsort below a depth of 2*floor(log2 n), a final
insertion sort over runs of at most 16), which permutes equal elements in a way the input fixes. One exception:
a 1-D integer tensor of at least 32768 elements sorted ascending goes to fbgemm's radix sort, which is stable.
``topk`` is ``std::partial_sort`` when k*64 <= n, else ``std::nth_element`` and, when ``sorted``, ``std::sort`` of
the first k-1; ``kthvalue`` is TH's quickselect (Sedgewick's partition). ``median(dim)`` breaks ties by index,
as NumPy's stable sort does, so it needs nothing here.

ember sorts with NumPy's stable sort, then recomputes only the rows that have equal elements, by running those
algorithms on the rows' dense ranks (only comparisons matter to them): the partitions of every segment of one
recursion depth, in all rows at once, as one pass of array operations; the heap paths (rare) and the quickselect
in Python. tests/test_sort_ties.py compares the indices with torch's.

The emulation costs ~25 array passes over the tied rows (a float32 tensor of 1e5 normal draws has a few equal
values: its sort would take ~120 ms instead of ~9), so it runs only while the rows to recompute hold at most
``BUDGET`` elements in all (a few ms); past that, one call's ties keep the stable order, as before (COMPAT.md).
"""

import numpy as np

from ._fp import is_half

BUDGET = 16384   # elements in the rows recomputed by one call (NOTE above)
_RUN = 16        # libstdc++'s _S_threshold: introsort leaves runs of at most this many to the insertion sort


def _lg(n):
    return int(n).bit_length() - 1


def _swap(key, idx, p, q):
    key[p], key[q] = key[q], key[p].copy()
    idx[p], idx[q] = idx[q], idx[p].copy()


def _segments(s, e):
    """Positions of all segments [s, e), segment by segment, with the segment number of each."""
    lens = e - s
    seg = np.repeat(np.arange(len(s)), lens)
    start = np.cumsum(lens) - lens
    return np.arange(len(seg)) + np.repeat(s - start, lens), seg


def _partition(key, idx, s, e):
    """libstdc++'s __unguarded_partition_pivot on every segment [s, e) (each longer than 3) at once; returns the
    cuts. The k-th swap of a Hoare partition exchanges the k-th element from the left that is not below the pivot
    with the k-th from the right that is not above it, while the first is left of the second."""
    a, b, c = s + 1, s + (e - s) // 2, e - 1
    ka, kb, kc = key[a], key[b], key[c]
    med = np.where(ka < kb, np.where(kb < kc, b, np.where(ka < kc, c, a)),
                   np.where(ka < kc, a, np.where(kb < kc, c, b)))
    _swap(key, idx, s, med)
    pos, seg = _segments(s + 1, e)
    kv, pv, g = key[pos], key[s][seg], len(s)
    ge, le = kv >= pv, kv <= pv
    lp, rp = pos[ge], pos[le]
    nl, nr = np.bincount(seg[ge], minlength=g), np.bincount(seg[le], minlength=g)
    lo, ro = np.cumsum(nl) - nl, np.cumsum(nr) - nr
    npair = np.minimum(nl, nr)
    pg = np.repeat(np.arange(g), npair)
    pk = np.arange(len(pg)) - np.repeat(np.cumsum(npair) - npair, npair)
    left, right = lp[lo[pg] + pk], rp[ro[pg] + nr[pg] - 1 - pk]
    ok = left < right
    _swap(key, idx, left[ok], right[ok])
    m = np.bincount(pg[ok], minlength=g)
    # where the left scan stops after m swaps: the next element not below the pivot, or the last swapped-in one
    nxt = np.where(m < nl, lp[lo + np.minimum(m, nl - 1)], np.iinfo(np.int64).max)
    last = rp[ro + nr - np.maximum(m, 1)]
    return np.where(m == 0, lp[lo], np.minimum(nxt, last))


def _pairs(key, idx, s, e):
    return [[int(k), int(i)] for k, i in zip(key[s:e], idx[s:e])]


def _put(key, idx, s, a):
    key[s:s + len(a)] = [p[0] for p in a]
    idx[s:s + len(a)] = [p[1] for p in a]


def _adjust_heap(a, hole, n, value):
    """libstdc++'s __adjust_heap on a[:n] (a max-heap under ``<`` of the first item)."""
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if a[child][0] < a[child - 1][0]:
            child -= 1
        a[hole] = a[child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[hole] = a[child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and a[parent][0] < value[0]:
        a[hole] = a[parent]
        hole, parent = parent, (parent - 1) // 2
    a[hole] = value


def _make_heap(a, n):
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, parent, n, a[parent])


def _sort_heap(a, n):
    for last in range(n - 1, 0, -1):
        value, a[last] = a[last], a[0]
        _adjust_heap(a, 0, last, value)


def _heap_sort(key, idx, s, e):
    """std::partial_sort(first, last, last): introsort's fallback past its depth limit."""
    a = _pairs(key, idx, s, e)
    _make_heap(a, len(a))
    _sort_heap(a, len(a))
    _put(key, idx, s, a)


def _introsort(key, idx, s, e):
    """libstdc++'s __introsort_loop on every segment [s, e) of the flat arrays at once, a depth at a time."""
    d = np.array([2 * _lg(n) for n in e - s], np.int64)
    while len(s):
        big = e - s > _RUN
        s, e, d = s[big], e[big], d[big]
        deep = d == 0
        for i in np.flatnonzero(deep):
            _heap_sort(key, idx, s[i], e[i])
        s, e, d = s[~deep], e[~deep], d[~deep] - 1
        if len(s):
            cut = _partition(key, idx, s, e)
            s, e, d = np.concatenate([s, cut]), np.concatenate([cut, e]), np.concatenate([d, d])


def _insertion_sort(key, idx, s, e, width):
    """The final insertion sort (stable) of segments [s, e) at most ``width`` long."""
    pos = s[:, None] + np.arange(width)
    valid = pos < e[:, None]
    pos = np.where(valid, pos, s[:, None])
    k = np.where(valid, key[pos], np.iinfo(np.int64).max)      # padding sorts last and is not written back
    o = np.argsort(k, axis=1, kind='stable')
    key[pos[valid]] = np.take_along_axis(k, o, 1)[valid]
    idx[pos[valid]] = np.take_along_axis(idx[pos], o, 1)[valid]


def _std_sort(key, idx, s, n):
    """std::sort of the segments [s, s + n) (all of length n) of the flat arrays."""
    if n < 2:
        return
    _introsort(key, idx, s, s + n)
    pos = s[:, None] + np.arange(n)
    o = np.argsort(key[pos], axis=1, kind='stable')     # after introsort, insertion sort == a stable sort
    key[pos], idx[pos] = np.take_along_axis(key[pos], o, 1), np.take_along_axis(idx[pos], o, 1)


def _flat(ranks):
    m, n = ranks.shape
    return ranks.reshape(-1).astype(np.int64), np.tile(np.arange(n, dtype=np.int64), m), np.arange(m) * n


def sort_order(ranks):
    """Indices std::sort gives rows of integer keys ``ranks`` (m, n) compared with ``<``."""
    m, n = ranks.shape
    key, idx, s = _flat(ranks)
    _std_sort(key, idx, s, n)
    return idx.reshape(m, n)


def _heap_select_row(r, k):
    """std::partial_sort(first, first + k, last) of one row: the first k indices."""
    a = [[int(v), i] for i, v in enumerate(r[:k])]
    _make_heap(a, k)
    for i in np.flatnonzero(r[k:] < a[0][0]) + k:      # the heap's top only decreases: others never enter
        if r[i] < a[0][0]:
            _adjust_heap(a, 0, k, [int(r[i]), int(i)])
    _sort_heap(a, k)
    return [p[1] for p in a]


def _nth_element(key, idx, s, n, nth):
    """std::nth_element(first, first + nth, first + n) on the segments starting at s (libstdc++'s introselect)."""
    e, t = s + n, s + nth
    d = np.full(len(s), 2 * _lg(n), np.int64)
    live = np.ones(len(s), bool)
    while True:
        act = live & (e - s > 3)
        for i in np.flatnonzero(act & (d == 0)):
            a = _pairs(key, idx, s[i], e[i])
            m = t[i] - s[i] + 1
            _make_heap(a, m)
            for j in range(m, len(a)):
                if a[j][0] < a[0][0]:
                    value, a[j] = a[j], a[0]
                    _adjust_heap(a, 0, m, value)
            a[0], a[m - 1] = a[m - 1], a[0]
            _put(key, idx, s[i], a)
            live[i] = act[i] = False
        act &= d > 0
        if not act.any():
            break
        w = np.flatnonzero(act)
        cut = _partition(key, idx, s[w], e[w])
        d[w] -= 1
        s[w], e[w] = np.where(cut <= t[w], cut, s[w]), np.where(cut <= t[w], e[w], cut)
    w = np.flatnonzero(live)
    if len(w):
        _insertion_sort(key, idx, s[w], e[w], 3)


def topk_order(ranks, k, is_sorted):
    """Indices torch's topk gives for rows of keys ``ranks`` (m, n), best (smallest key) first."""
    m, n = ranks.shape
    if k * 64 <= n:
        return np.array([_heap_select_row(r, k) for r in ranks], np.int64).reshape(m, k)
    key, idx, s = _flat(ranks)
    _nth_element(key, idx, s.copy(), n, k - 1)
    if is_sorted:
        _std_sort(key, idx, s, k - 1)
    return idx.reshape(m, n)[:, :k]


def _quick_select_row(r, k):
    """TH's quick_select_template (Sedgewick, 1978) of one row; returns the index it leaves at position k."""
    a = [[int(v), i] for i, v in enumerate(r)]
    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:
            if a[lo][0] > a[hi][0]:
                a[lo], a[hi] = a[hi], a[lo]
            break
        p = (lo + hi) >> 1
        a[p], a[lo + 1] = a[lo + 1], a[p]
        if a[lo + 1][0] > a[hi][0]:
            a[lo + 1], a[hi] = a[hi], a[lo + 1]
        if a[lo][0] > a[hi][0]:
            a[lo], a[hi] = a[hi], a[lo]
        if a[lo + 1][0] > a[lo][0]:
            a[lo + 1], a[lo] = a[lo], a[lo + 1]
        i, j, piv = lo + 1, hi, a[lo][0]
        while True:
            i += 1
            while piv > a[i][0]:
                i += 1
            j -= 1
            while a[j][0] > piv:
                j -= 1
            if j < i:
                break
            a[i], a[j] = a[j], a[i]
        a[lo], a[j] = a[j], a[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return a[k][1]


def kth_order(ranks, k):
    """Index torch's kthvalue gives (the k-th smallest, 1-based k) in each row of keys ``ranks`` (m, n)."""
    return np.array([_quick_select_row(r, k - 1) for r in ranks], np.int64)


# --- from values to ranks ---------------------------------------------------------------

def floating(dt):
    return dt.kind == 'f' or is_half(dt)


def _nan_pair(v, i, j):
    return np.isnan(v[:, i]) & np.isnan(v[:, j]) if floating(v.dtype) else np.zeros(len(v), bool)


def tied_rows(v):
    """Rows of ``v`` (m, n), sorted along axis 1 (NaNs together at one end), with two equal elements."""
    if v.shape[1] < 2:
        return np.zeros(len(v), bool)
    tied = (v[:, 1:] == v[:, :-1]).any(1)
    if floating(v.dtype):
        tied |= _nan_pair(v, 0, 1) | _nan_pair(v, -1, -2)
    return tied


def ranks_of(v, order):
    """Dense ranks (m, n) of the rows of values whose sorted order is ``order``: the position of each element's
    value among the row's distinct values in that order (all NaNs one value, -0.0 == 0.0)."""
    sv = np.take_along_axis(v, order, 1)
    new = sv[:, 1:] != sv[:, :-1]
    if floating(sv.dtype):
        new &= ~(np.isnan(sv[:, 1:]) & np.isnan(sv[:, :-1]))
    rs = np.zeros(sv.shape, np.int64)
    np.cumsum(new, axis=1, out=rs[:, 1:])
    r = np.empty_like(rs)
    np.put_along_axis(r, order, rs, 1)
    return r


def radix_sorted(a, descending):
    """Whether torch sorts ``a`` with fbgemm's radix sort (stable): 1-D integers, ascending, >= 32768 elements."""
    return a.ndim == 1 and a.dtype.kind in 'iu' and not descending and a.size >= 32768
