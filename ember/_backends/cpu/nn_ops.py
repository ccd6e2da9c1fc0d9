"""CPU kernels for neural-network operators: convolution, pooling, normalisation, embedding, im2col.

Arrays in, arrays out. Shape checks and errors live in the meta functions (ember/_ops/nn_ops.py).

NOTE [convolution kernel] -- which im2col layout and GEMM split: six layouts were measured on the CNN benchmark's
shapes (the table and its command are in BENCHMARKS.md, "Convolution kernel layouts"); the kernel uses
channels-last fields with per-sample GEMMs where the channels are many (16->32) and NCHW fields otherwise (1->16).
The used rows copy the fields a few samples at a time into one reused ~4 MB buffer that stays in cache for the
GEMM reading it (15-25% faster than writing out the whole 7-14 MB column matrix), and sum the weight gradient
over per-sample GEMMs (OpenBLAS is slow on a (32, 144) output with K = N*P = 12544). A NumPy copy costs per
contiguous run (~4 ns per inner loop): NCHW fields have OW-long runs (14 here), channels-last ones kw*C-long (48)
but need x (and the output) transposed; _channels_last_pays weighs the two. The input gradient of a stride-1
convolution is this forward with the flipped kernel. With two BLAS threads, one GEMM per buffer ((m*P, K*C) @ W.T)
would beat the per-sample GEMMs on the 16->32 forward and weight gradient (1.6 vs 1.9 ms; NumPy's stacked matmul
does not thread) but is 15-35% slower on one thread, so it is not used there.

With many channels (in * out >= 64 * 64: resnet's layers) the batch is folded into one GEMM instead:
W' (O, K*C) @ col.T, col the (N*P, K*C) fields of the whole batch, its rows or columns shared among the
threads by _gemm.gemm. Per-sample GEMMs there have P = 4..256 columns against a weight of up to 2.4M values
read once per sample (resnet18's 512->512 layer at 2x2: 18 -> 3.3 ms CPU). The fields are copied channels last
((*K, C) rows, long runs) and the weight permuted to match, except where the weight is at least as large as
the fields (O >= N*P: resnet's layers 3-4), where one strided copy per tap lays them out in the weight's own
(C, *K) order and no weight is permuted. The weight gradient is g as (O, N*P) @ the same fields. The input
gradient is the adjoint GEMM then col2im on a channels-last buffer (C-long runs per tap) where the weight
outweighs the gradient, and the flipped forward elsewhere (its flipped weight costs a strided copy). Figures
per resnet18 layer: BENCHMARKS.md, "resnet18 training step".
"""
from functools import partial

import numpy as np
from numpy.lib.stride_tricks import as_strided as _as_strided
from numpy.lib.stride_tricks import sliding_window_view as _swv

from ._parallel import get_num_threads, parallel_for
from ._gemm import gemm as _gemm
from ._sums import rowsum as _rowsum, row_dots as _row_dots
from ._split import split_copy


def _tup(v, n):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 else v


def _prod(t):
    r = 1
    for x in t:
        r *= x
    return r


# --- convolution ---------------------------------------------------------------

def _windows(xp, k, s, d):
    """(N, C, *S) padded input -> (N, C, *O, *K) view of the receptive fields."""
    nd = len(k)
    full = tuple(dd * (kk - 1) + 1 for kk, dd in zip(k, d))
    w = _swv(xp, full, axis=tuple(range(2, 2 + nd)))
    idx = (slice(None), slice(None)) + tuple(slice(None, None, ss) for ss in s) + tuple(slice(None, None, dd) for dd in d)
    return w[idx]


def _pad_pairs(x, pairs):
    """Zero-pad (or, for negative amounts, crop) the spatial dims by (before, after) pairs. A zeroed buffer and
    one assignment: ~1.7x faster than np.pad."""
    if all(a >= 0 and b >= 0 for a, b in pairs):
        if not any(a or b for a, b in pairs):
            return x
        out = np.zeros(x.shape[:2] + tuple(n + a + b for n, (a, b) in zip(x.shape[2:], pairs)), x.dtype)
        out[(slice(None), slice(None)) + tuple(slice(a, a + n) for n, (a, _) in zip(x.shape[2:], pairs))] = x
        return out
    crop = tuple(slice(max(-a, 0), n - max(-b, 0)) for (a, b), n in zip(pairs, x.shape[2:]))
    return _pad_pairs(x[(slice(None), slice(None)) + crop], tuple((max(a, 0), max(b, 0)) for a, b in pairs))


def _conv_out(isz, k, s, d, pairs):
    return tuple((i + a + b - dd * (kk - 1) - 1) // ss + 1 for i, kk, ss, dd, (a, b) in zip(isz, k, s, d, pairs))


def _channels_last_pays(x_shape, O, k, s, d, osz, groups, moves_output):
    """Whether receptive fields copied from a channels-last copy of x beat NCHW im2col (NOTE [convolution
    kernel]). A NumPy copy costs ~0.1 ns per contiguous element, ~0.4 per strided one and ~4 per inner loop; a
    field's inner runs are kw*C long channels-last and OW long in NCHW, but channels-last first transposes x
    (and, in the forward, the output back), ~0.4 ns per element."""
    N, C = x_shape[:2]
    K = _prod(k)
    if groups != 1 or K == 1:
        return False
    cols = N * C * K * _prod(osz)
    run = k[-1] * C if d[-1] == 1 else C
    nchw = cols * ((1 if s[-1] == 1 else 4) + 40 / osz[-1])
    last = cols * (1 + 40 / run) + 4 * (_prod(x_shape) + (N * O * _prod(osz) if moves_output else 0))
    return last < nchw


def _fields_nchw(x, k, s, d, pairs, osz, groups):
    """View of the receptive fields, (N, G, Cg, *K, *O): NCHW im2col order."""
    nd = len(k)
    N, C = x.shape[:2]
    win = _windows(_pad_pairs(x, pairs), k, s, d)         # N, C, *O, *K
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)]
    win = win.reshape((N, groups, C // groups) + win.shape[2:])
    return win.transpose((0, 1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + tuple(range(3, 3 + nd)))


def _padded_last(x, pairs, lo=0, hi=None, split=True):
    """A zero-padded channels-last copy (n, *S', C) of samples lo:hi of x (negative pairs crop), its samples
    shared among the intra-op threads unless ``split`` is False (a caller already on one of them)."""
    C = x.shape[1]
    crop = tuple(slice(max(-a, 0), n - max(-b, 0)) for (a, b), n in zip(pairs, x.shape[2:]))
    x = x[(slice(lo, hi), slice(None)) + crop]
    pairs = tuple((max(a, 0), max(b, 0)) for a, b in pairs)
    xh = np.zeros((x.shape[0],) + tuple(n + a + b for n, (a, b) in zip(x.shape[2:], pairs)) + (C,), x.dtype)
    inner = tuple(slice(a, a + n) for n, (a, _) in zip(x.shape[2:], pairs))
    src = np.moveaxis(x, 1, -1)

    def fill(lo, hi):
        xh[(slice(lo, hi),) + inner] = src[lo:hi]
    if split:
        _split_samples(x.shape[0], _prod(src.shape[1:]), fill)
    else:
        fill(0, x.shape[0])
    return xh


def _fields_of(xh, k, s, d, osz):
    """View of the receptive fields, (n, *O, *K, C), of a padded channels-last xh."""
    st = xh.strides
    return _as_strided(xh, (xh.shape[0],) + osz + k + (xh.shape[-1],),
                       (st[0],) + tuple(st[1 + i] * ss for i, ss in enumerate(s))
                       + tuple(st[1 + i] * dd for i, dd in enumerate(d)) + (st[-1],), writeable=False)


def _fields_last(x, k, s, d, pairs, osz):
    """View of the receptive fields, (N, *O, *K, C), on a zero-padded channels-last copy of x (negative pairs
    crop): there each field is prod(K[:-1]) runs of kw*C contiguous values."""
    return _fields_of(_padded_last(x, pairs), k, s, d, osz)


def _chunks(win, shape, budget=4 << 20):
    """(n0, n1, col): the fields view as contiguous (n1 - n0, *shape) column blocks, a few samples at a time.
    One reused ~4 MB buffer stays in cache for the GEMM that reads it, where one big column matrix is written
    out to memory (and page-faulted in) first: ~15-25% faster on the CNN benchmark. No copy at all when the
    view already is that matrix (1x1 kernels)."""
    N = win.shape[0]
    try:
        whole = win.reshape((N,) + shape, copy=False)
    except (ValueError, TypeError):         # TypeError: CuPy's reshape (the CUDA backend's twin) has no copy=
        whole = None
    if whole is not None:
        yield 0, N, whole
        return
    nb = max(1, min(N, budget // max(_prod(shape) * win.itemsize, 1)))
    buf = np.empty((nb,) + win.shape[1:], win.dtype)
    for n0 in range(0, N, nb):
        n1 = min(N, n0 + nb)
        col = buf[:n1 - n0]
        np.copyto(col, win[n0:n1])
        yield n0, n1, col.reshape((n1 - n0,) + shape)


def _conv_forward(x, w, b, stride, padding, dilation, groups, pairs=None):
    """The convolution, its batch shared out among the intra-op threads (each sample's GEMMs are
    independent; each thread writes its samples' slice of the output)."""
    nd = x.ndim - 2
    N = x.shape[0]
    k = w.shape[2:]
    if pairs is None:
        pairs = tuple((pp, pp) for pp in _tup(padding, nd))
    s, d = _tup(stride, nd), _tup(dilation, nd)
    osz = _conv_out(x.shape[2:], k, s, d, pairs)
    if _gemm_pays(x.shape, w.shape[0], k, osz, groups):
        return _conv_forward_gemm(x, w, b, s, d, pairs, osz)
    per_sample = w.size * _prod(osz)                    # multiply-adds
    if N < 2 or get_num_threads() < 2 or per_sample * N < 2 * _CONV_GRAIN:
        return _conv_forward_into(x, w, b, s, d, groups, pairs, osz)
    res = np.empty((N, w.shape[0]) + osz, np.result_type(x, w))

    def run(lo, hi):
        _conv_forward_into(x[lo:hi], w, b, s, d, groups, pairs, osz, res[lo:hi])
    parallel_for(N, run, max(1, _CONV_GRAIN // max(per_sample, 1)))
    return res


_CONV_GRAIN = 1 << 21      # multiply-adds per task


def _conv_forward_into(x, w, b, s, d, groups, pairs, osz, res=None):
    """One GEMM per sample (and group) over the receptive fields: W (Og, Cg*K) @ col (Cg*K, P), or, from
    channels-last fields, col (P, K*C) @ W.T then one pass that moves the channels back and adds the bias."""
    nd = x.ndim - 2
    N, C = x.shape[:2]
    O = w.shape[0]
    G = groups
    k = w.shape[2:]
    P = _prod(osz)
    if res is None:
        res = np.empty((N, O) + osz, np.result_type(x, w))
    if _channels_last_pays(x.shape, O, k, s, d, osz, G, True):
        wm = w.transpose(tuple(range(2, 2 + nd)) + (1, 0)).reshape(_prod(k) * C, O)
        bias = None if b is None else b.reshape((1, O) + (1,) * nd)
        for n0, n1, col in _chunks(_fields_last(x, k, s, d, pairs, osz), (P, _prod(k) * C)):
            src = np.moveaxis(np.matmul(col, wm).reshape((n1 - n0,) + osz + (O,)), -1, 1)
            if bias is None:
                np.copyto(res[n0:n1], src)
            else:
                np.add(src, bias, out=res[n0:n1])
        return res
    wm = w.reshape(G, O // G, (C // G) * _prod(k))
    for n0, n1, col in _chunks(_fields_nchw(x, k, s, d, pairs, osz, G), (G, (C // G) * _prod(k), P)):
        np.matmul(wm, col, out=res[n0:n1].reshape(n1 - n0, G, O // G, P))
    if b is not None:
        res += b.reshape((1, O) + (1,) * nd)
    return res


def _conv_transpose(x, w, b, stride, padding, dilation, output_padding, groups):
    """The adjoint of the convolution (the gradient of conv w.r.t. its input).

    Stride 1: a convolution with the flipped, channel-swapped kernel (the fast forward path; ~6x faster than
    col2im on the CNN benchmark's 16->32 layer). Otherwise W.T @ x, then col2im (one strided add per tap)."""
    nd = x.ndim - 2
    s, p, d, op = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd), _tup(output_padding, nd)
    N, Cin = x.shape[:2]
    G = groups
    Og = w.shape[1]
    k = w.shape[2:]
    isz = x.shape[2:]
    osz = tuple((i - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1 for i, ss, pp, dd, kk, oo in zip(isz, s, p, d, k, op))
    stride1 = all(ss == 1 for ss in s)
    if _gemm_pays((N, G * Og) + osz, Cin, k, isz, G) and (not stride1 or w.size > 2 * x.size):
        return _conv_transpose_gemm(x, w, b, s, p, d, osz)
    if stride1:
        flip = (slice(None), slice(None)) + (slice(None, None, -1),) * nd
        wf = w.reshape((G, Cin // G, Og) + k).swapaxes(1, 2).reshape((G * Og, Cin // G) + k)[flip]
        pairs = tuple((dd * (kk - 1) - pp, dd * (kk - 1) - pp + oo) for dd, kk, pp, oo in zip(d, k, p, op))
        return _conv_forward(x, wf, b, s, None, d, G, pairs)
    wm = w.reshape(G, Cin // G, Og * _prod(k)).transpose(0, 2, 1)      # G, Og*K, Cg
    xm = x.reshape(N, G, Cin // G, _prod(isz))
    cols = np.matmul(wm, xm).reshape((N, G * Og) + k + isz)           # N, Cout, *K, *I
    out = _col2im(cols, osz, k, s, p, d)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def convolution_backward_weight(g, x, weight_sizes, stride, padding, dilation, groups):
    """The weight gradient, summed over the batch: each intra-op thread sums its samples' share, then the
    (small) partial sums are added."""
    N = x.shape[0]
    nd = x.ndim - 2
    k = tuple(int(v) for v in weight_sizes[2:])
    if _gemm_pays(x.shape, g.shape[1], k, g.shape[2:], groups):
        return _conv_weight_grad_gemm(g, x, k, _tup(stride, nd), _tup(dilation, nd),
                                      tuple((pp, pp) for pp in _tup(padding, nd)))
    per_sample = _prod(weight_sizes) * _prod(g.shape[2:])
    if N < 2 or get_num_threads() < 2 or per_sample * N < 2 * _CONV_GRAIN:
        return _conv_weight_grad(g, x, weight_sizes, stride, padding, dilation, groups)
    parts = []

    def run(lo, hi):
        parts.append(_conv_weight_grad(g[lo:hi], x[lo:hi], weight_sizes, stride, padding, dilation, groups))
    parallel_for(N, run, max(1, _CONV_GRAIN // max(per_sample, 1)))
    total = parts[0]
    for q in parts[1:]:
        total += q
    return total


def _conv_weight_grad(g, x, weight_sizes, stride, padding, dilation, groups):
    """d<g, conv(x, w)>/dw = sum over samples of g_n (Og, P) @ col_n.T (P, Cg*K), over the forward's receptive
    fields. Per-sample GEMMs summed work in cache, ~2-3x faster on the CNN benchmark than one (Og, N*P) @
    (N*P, Cg*K) GEMM; that one (per block of samples) is kept where per-sample products outweigh their inputs."""
    nd = x.ndim - 2
    s, p, d = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    k = tuple(int(v) for v in weight_sizes[2:])
    N, C = x.shape[:2]
    O = g.shape[1]
    G = groups
    Og = O // G
    osz = tuple(g.shape[2:])
    P, CK = _prod(osz), (C // G) * _prod(k)
    pairs = tuple((pp, pp) for pp in p)
    per_sample = Og * CK <= P * (Og + CK)
    dtype = np.result_type(g, x)
    if _channels_last_pays(x.shape, O, k, s, d, osz, G, False):
        dw = np.zeros((O, CK), dtype)                                          # O, (*K, C)
        for n0, n1, col in _chunks(_fields_last(x, k, s, d, pairs, osz), (P, CK)):
            gm = g[n0:n1].reshape(n1 - n0, O, P)
            if per_sample:
                dw += np.matmul(gm, col).sum(0)
            else:
                dw += np.ascontiguousarray(gm.transpose(1, 0, 2)).reshape(O, -1) @ col.reshape(-1, CK)
        return np.ascontiguousarray(np.moveaxis(dw.reshape((O,) + k + (C,)), -1, 1))
    dw = np.zeros((G, Og, CK), dtype)
    for n0, n1, col in _chunks(_fields_nchw(x, k, s, d, pairs, osz, G), (G, CK, P)):
        gm = g[n0:n1].reshape(n1 - n0, G, Og, P)
        if per_sample:
            dw += np.matmul(col, gm.swapaxes(-1, -2)).sum(0).swapaxes(-1, -2)   # ~1.3x faster than gm @ col.T
        else:
            colT = np.ascontiguousarray(col.transpose(1, 2, 0, 3)).reshape(G, CK, -1)
            gT = np.ascontiguousarray(gm.transpose(1, 2, 0, 3)).reshape(G, Og, -1)
            dw += np.matmul(gT, colT.transpose(0, 2, 1))
    return dw.reshape(tuple(int(v) for v in weight_sizes))


def _col2im(cols, osz, k, s, p, d):
    """Sum (N, C, *K, *I) columns into an (N, C, *osz) image: one strided add per kernel tap."""
    nd = len(k)
    N, C = cols.shape[:2]
    isz = cols.shape[2 + nd:]
    buf_sz = tuple(max(o + 2 * pp, (i - 1) * ss + dd * (kk - 1) + 1)
                   for o, pp, i, ss, dd, kk in zip(osz, p, isz, s, d, k))
    buf = np.zeros((N, C) + buf_sz, cols.dtype)
    for tap in np.ndindex(*k):
        sl = tuple(slice(t * dd, t * dd + ss * (i - 1) + 1, ss) for t, dd, ss, i in zip(tap, d, s, isz))
        buf[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + tap]
    crop = tuple(slice(pp, pp + o) for pp, o in zip(p, osz))
    return np.ascontiguousarray(buf[(slice(None), slice(None)) + crop])


def convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        return _conv_transpose(x, w, b, stride, padding, dilation, output_padding, groups)
    if groups == 1 and _is_channels_last(x) and (x.ndim == 4 or x.dtype != np.float64):    # torch's float64 3-D
        return _conv_forward_last(x, w, b, stride, padding, dilation)                      # convolution: NCDHW
    return _conv_forward(x, w, b, stride, padding, dilation, groups)


def _is_channels_last(x):
    """x's memory is NHWC (NDHWC) seen as NCHW: the layout a convolution's result then takes (NOTE [channels_last
    outputs] in _core/storage.py)."""
    return x.ndim in (4, 5) and x.shape[1] > 1 and x.strides[1] == x.itemsize and not x.flags.c_contiguous


def _conv_forward_last(x, w, b, stride, padding, dilation):
    """The convolution of a channels-last x into a channels-last result: the GEMM of the channels-last receptive
    fields, (n * P, K*C) @ (K*C, O), is already the result's memory (n, *O, O), so the result is a view of it and
    neither the input nor the output is transposed (the NCHW kernels would transpose both, then the layout the
    meta asks for would transpose the result back)."""
    nd = x.ndim - 2
    N, C = x.shape[:2]
    O, k = w.shape[0], w.shape[2:]
    pairs = tuple((pp, pp) for pp in _tup(padding, nd))
    s, d = _tup(stride, nd), _tup(dilation, nd)
    osz = _conv_out(x.shape[2:], k, s, d, pairs)
    P, KC = _prod(osz), _prod(k) * C
    out = np.empty((N,) + osz + (O,), np.result_type(x, w))
    rows = out.reshape(N * P, O)
    wm = w.transpose(tuple(range(2, 2 + nd)) + (1, 0)).reshape(KC, O)
    for n0, n1, col in _chunks(_fields_last(x, k, s, d, pairs, osz), (P, KC)):
        rows[n0 * P:n1 * P] = _gemm(col.reshape(-1, KC), wm)
    if b is not None:
        out += b
    return np.moveaxis(out, -1, 1)


# --- one-GEMM convolution (NOTE [convolution kernel], the batch folded into the GEMM's rows) ---------------

def _split_samples(n, per_sample, fn):
    """``fn(lo, hi)`` over [0, n) samples, shared out among the intra-op threads when each range has work."""
    if n < 2 or get_num_threads() < 2 or per_sample * n < _COPY_GRAIN:
        fn(0, n)
    else:
        parallel_for(n, fn, max(1, _COPY_GRAIN // max(per_sample, 1) // 2))


_COPY_GRAIN = 1 << 17      # elements copied per task
_GEMM_MIN = 64 * 64      # in_channels * out_channels from which the batch-folded GEMM pays


def _cols_last(x, k, s, d, pairs, osz):
    """The receptive fields as one contiguous (N*P, K*C) matrix, each row a field in (*K, C) order, copied
    from a zero-padded channels-last copy of x (runs of kw*C contiguous values). Each thread pads and copies
    its own samples (one hand-off, the padded block still in cache)."""
    N, C = x.shape[:2]
    col = np.empty((N,) + osz + k + (C,), x.dtype)

    def fill(lo, hi):
        np.copyto(col[lo:hi], _fields_of(_padded_last(x, pairs, lo, hi, False), k, s, d, osz))
    _split_samples(N, _prod(col.shape[1:]), fill)
    return col.reshape(N * _prod(osz), _prod(k) * C)


def _cols_first(x, k, s, d, pairs, osz):
    """The receptive fields as one contiguous (N*P, C*K) matrix in the weight's own (C, *K) order: one
    strided copy per kernel tap from the padded channels-last x. Dearer than _cols_last per element, but it
    spares permuting a weight larger than the fields (resnet18's 512->512 at 2x2: 0.12 ms here against
    0.07 + 0.8 ms, and as much again for the weight gradient's way back)."""
    nd = len(k)
    N, C = x.shape[:2]
    col = np.empty((N,) + osz + (C,) + k, x.dtype)
    inner = (slice(None),) * (nd + 1)

    def fill(lo, hi):
        xh = _padded_last(x, pairs, lo, hi, False)
        for tap in np.ndindex(*k):
            sl = tuple(slice(t * dd, t * dd + ss * (o - 1) + 1, ss) for t, dd, ss, o in zip(tap, d, s, osz))
            col[(slice(lo, hi),) + inner + tap] = xh[(slice(None),) + sl]
    _split_samples(N, _prod(col.shape[1:]), fill)
    return col.reshape(N * _prod(osz), C * _prod(k))


def _weight_first(O, rows):
    """Whether the GEMM takes the fields in the weight's (C, *K) order (no weight permutation): when the
    weight (O x C*K) is at least as large as the fields matrix (rows x C*K)."""
    return O >= rows


def _cols(x, k, s, d, pairs, osz, first):
    return (_cols_first if first else _cols_last)(x, k, s, d, pairs, osz)


_copy_split = split_copy       # a new C-contiguous copy, in blocks over the intra-op threads (NOTE [split pointwise])


def _to_last(w):
    """(O, C, *K) -> (O, *K*C): a weight's rows in the channels-last fields' order."""
    return _copy_split(np.moveaxis(w, 1, -1)).reshape(w.shape[0], -1)


def _from_last(m, C):
    """(O, *K*C) GEMM output -> new (O, C, *K) weight-shaped array."""
    return _copy_split(np.moveaxis(m, -1, 1))


def _batch_major(m, N, P):
    """(O, N*P) GEMM output -> new (N, O, P) array: P-long contiguous runs."""
    return _copy_split(m.reshape(m.shape[0], N, P).transpose(1, 0, 2))


def _channel_major(g):
    """(N, O, *S) -> new (O, N*P) array: P-long contiguous runs."""
    N, O = g.shape[:2]
    P = _prod(g.shape[2:])
    return _copy_split(g.reshape(N, O, P).transpose(1, 0, 2)).reshape(O, N * P)


def _nchw_to_rows(g):
    """(N, O, *S) -> new (N*P, O) array (channels last)."""
    N, O = g.shape[:2]
    P = _prod(g.shape[2:])
    return _copy_split(g.reshape(N, O, P).transpose(0, 2, 1)).reshape(N * P, O)


def _gemm_pays(x_shape, O, k, osz, groups):
    """Whether the batch-folded GEMM beats the per-sample ones (CPU time per call, BENCHMARKS.md "resnet18
    training step"): 512->512 at 2x2 18 -> 4 ms, 64->128 stride 2 even, 64->64 at 16x16 even; the per-sample
    GEMMs stay ahead (10-60%) below 64x64 channels (the CNN benchmark, resnet's 3->64 stem)."""
    return groups == 1 and _prod(k) > 1 and x_shape[1] * O >= _GEMM_MIN


def _conv_forward_gemm(x, w, b, s, d, pairs, osz):
    """W' (O, K*C) @ col.T (K*C, N*P), one GEMM whose rows (or columns) _gemm shares out among the threads,
    then the output's samples moved first (P-long runs; the (N*P, O) product's transpose costs up to 10x
    more on resnet's stem-sized outputs)."""
    N, O = x.shape[0], w.shape[0]
    first = _weight_first(O, N * _prod(osz))
    col = _cols(x, w.shape[2:], s, d, pairs, osz, first)
    wm = w.reshape(O, -1) if first else _to_last(w)
    out = _batch_major(_gemm(wm, col.T), N, _prod(osz)).reshape((N, O) + osz)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(osz))
    return out


def _conv_transpose_gemm(x, w, b, s, p, d, osz):
    """The adjoint of the convolution, any stride: cols (N*I, K*C) = x' (N*I, Cin) @ W' (Cin, K*C), then
    col2im on a channels-last buffer, one strided add per kernel tap with C-long contiguous runs."""
    nd = x.ndim - 2
    N = x.shape[0]
    k = w.shape[2:]
    isz = x.shape[2:]
    C = w.shape[1]
    first = _weight_first(x.shape[1], N * _prod(isz))
    if first:
        cols = _gemm(_nchw_to_rows(x), w.reshape(w.shape[0], -1)).reshape((N,) + isz + (C,) + k)
    else:
        cols = _gemm(_nchw_to_rows(x), _to_last(w)).reshape((N,) + isz + k + (C,))
    buf_sz = tuple(max(o + 2 * pp, (i - 1) * ss + dd * (kk - 1) + 1)
                   for o, pp, i, ss, dd, kk in zip(osz, p, isz, s, d, k))
    buf = np.zeros((N,) + buf_sz + (C,), cols.dtype)
    lead = (slice(None),) * (1 + nd)

    def add(lo, hi):
        for tap in np.ndindex(*k):
            sl = tuple(slice(t * dd, t * dd + ss * (i - 1) + 1, ss) for t, dd, ss, i in zip(tap, d, s, isz))
            buf[(slice(lo, hi),) + sl] += cols[(slice(lo, hi),) + lead[1:] + ((slice(None),) + tap if first else tap)]
    _split_samples(N, _prod(cols.shape[1:]), add)
    crop = buf[(slice(None),) + tuple(slice(pp, pp + o) for pp, o in zip(p, osz))]
    out = _copy_split(np.moveaxis(crop, -1, 1))
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd)
    return out


def _conv_weight_grad_gemm(g, x, k, s, d, pairs):
    """dW' (O, K*C) = g' (O, N*P) @ col (N*P, K*C), then back to (O, C, *K)."""
    osz = g.shape[2:]
    N, O, C = x.shape[0], g.shape[1], x.shape[1]
    first = _weight_first(O, N * _prod(osz))
    dw = _gemm(_channel_major(g), _cols(x, k, s, d, pairs, osz, first))
    return dw.reshape((O, C) + k) if first else _from_last(dw.reshape((O,) + k + (C,)), C)


# --- im2col / col2im (F.unfold / F.fold) ---------------------------------------

def im2col(x, kernel_size, dilation, padding, stride):
    k, d, p, s = _tup(kernel_size, 2), _tup(dilation, 2), _tup(padding, 2), _tup(stride, 2)
    batched = x.ndim == 4
    xb = x if batched else x[None]
    win = _windows(_pad_pairs(xb, tuple((pp, pp) for pp in p)), k, s, d)   # N, C, OH, OW, kh, kw
    N, C, OH, OW = win.shape[:4]
    out = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(N, C * k[0] * k[1], OH * OW)
    return out if batched else out[0]


def col2im(x, output_size, kernel_size, dilation, padding, stride):
    osz, k, d, p, s = _tup(output_size, 2), _tup(kernel_size, 2), _tup(dilation, 2), _tup(padding, 2), _tup(stride, 2)
    batched = x.ndim == 3
    xb = x if batched else x[None]
    N = xb.shape[0]
    nb = tuple((o + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for o, pp, dd, kk, ss in zip(osz, p, d, k, s))
    cols = xb.reshape((N, -1) + k + nb)
    out = _col2im(cols, osz, k, s, p, d)
    return out if batched else out[0]


# --- pooling ---------------------------------------------------------------------

def _pool_out(i, k, s, p, d, ceil):
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _pool_pads(isz, k, s, p, d, osz):
    """Padding on each side so every window (ceil_mode included) lies inside the padded input."""
    need = tuple((o - 1) * ss + dd * (kk - 1) + 1 for o, ss, dd, kk in zip(osz, s, d, k))
    return tuple((pp, max(0, n - i - pp)) for pp, n, i in zip(p, need, isz))


def _stride_or_kernel(stride, k):
    if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0):
        return k
    return _tup(stride, len(k))


def _plane_strides(isz):
    st, acc = [], 1
    for n in reversed(isz):
        st.append(acc)
        acc *= n
    return st[::-1]


def _integral(dt):
    return dt.kind in 'iub'


def _lowest(dt):
    """Where a max-pooling window's padding starts: -inf for the float dtypes (bfloat16's kind is NumPy's 'V'),
    the least integer for the integral ones."""
    return np.iinfo(dt).min if dt.kind in 'iu' else False if dt.kind == 'b' else -np.inf


def _first_max_tap(taps, val, valid=None):
    """The number of the first tap holding each maximum: a "not found yet" mask is ANDed tap by tap and summed
    into a small integer (cheap bool ops; np.where on int64 costs ~5x more). A NaN maximum takes the LAST NaN
    tap, as torch's CPU kernel (it updates on every NaN). ``valid[t]``, when given, masks tap t's positions
    that lie in the padding, which hold the fill value and must never win."""
    nf = np.not_equal(taps[0], val)
    if valid is not None and valid[0] is not None:
        nf |= ~valid[0]
    tap = nf.astype(np.uint8 if len(taps) <= 256 else np.intp)
    hit = np.empty_like(nf)
    for t, ok in zip(taps[1:-1], (valid or [None] * len(taps))[1:-1]):
        np.not_equal(t, val, out=hit)
        if ok is not None:
            hit |= ~ok
        nf &= hit
        tap += nf.view(np.uint8) if tap.dtype == np.uint8 else nf
    if not _integral(val.dtype) and np.isnan(val).any():
        for n, t in enumerate(taps):
            np.copyto(tap, n, where=np.isnan(t))
    return tap


def _pool_eligible(k, s, p, d, osz):
    """Per tap, a bool mask (broadcastable to the output) of the windows where that tap is not in the leading
    padding; None for a tap that never is. torch's index for a window whose max equals the padding's fill is its
    first position at or after the input's start in every dim (that position itself may lie past the end when
    the whole window is padding)."""
    nd = len(k)
    masks = []
    for tap in np.ndindex(*k):
        m = True
        for i, (t, ss, pp, dd, o) in enumerate(zip(tap, s, p, d, osz)):
            m = m & (np.arange(o) * ss - pp + t * dd >= 0).reshape((o,) + (1,) * (nd - 1 - i))
        masks.append(None if np.all(m) else m)
    return masks


def _max_pool_batched(x, kernel_size, stride, padding, dilation, ceil_mode, nd):
    """``_max_pool`` with the batch shared out among the intra-op threads (the indices are per plane, so
    samples are independent); the pieces are joined at the end (a quarter of the input for 2x2 pools)."""
    N = x.shape[0]
    if x.ndim != nd + 2 or N < 2 or get_num_threads() < 2 or x.size < 2 * _POOL_GRAIN:
        return _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, nd)
    parts = {}

    def run(lo, hi):
        parts[lo] = _max_pool(x[lo:hi], kernel_size, stride, padding, dilation, ceil_mode, nd)
    parallel_for(N, run, max(1, _POOL_GRAIN // max(x[0].size, 1)))
    order = [parts[lo] for lo in sorted(parts)]
    return np.concatenate([v for v, _ in order]), np.concatenate([i for _, i in order])


_POOL_GRAIN = 1 << 17      # input elements per task


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, nd):
    """Max over the kernel taps, then the first tap holding the max (torch's index: flat position in the input
    plane). Windows that tile the input (stride == kernel, no padding or dilation, the usual 2x2 pool) are first
    copied tap-major so that all the work runs on contiguous arrays; otherwise the taps are strided views of the
    padded input."""
    k = _tup(kernel_size, nd)
    s = _stride_or_kernel(stride, k)
    p, d = _tup(padding, nd), _tup(dilation, nd)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    isz = xb.shape[2:]
    osz = tuple(_pool_out(i, kk, ss, pp, dd, ceil_mode) for i, kk, ss, pp, dd in zip(isz, k, s, p, d))
    if s == k and not any(p) and all(dd == 1 for dd in d) and all(o * kk <= i for o, kk, i in zip(osz, k, isz)):
        crop = xb[(slice(None), slice(None)) + tuple(slice(0, o * kk) for o, kk in zip(osz, k))]
        split = crop.reshape(xb.shape[:2] + sum(((o, kk) for o, kk in zip(osz, k)), ()))   # N, C, O1, k1, O2, k2
        perm = tuple(3 + 2 * i for i in range(nd)) + (0, 1) + tuple(2 + 2 * i for i in range(nd))
        taps = np.ascontiguousarray(split.transpose(perm)).reshape((-1,) + xb.shape[:2] + osz)
        val = taps.max(axis=0)                           # propagates NaN, as torch does
        tap = _first_max_tap(taps, val)
    else:
        pads = _pool_pads(isz, k, s, p, d, osz)
        fill = _lowest(xb.dtype)
        padded = any(a or b for a, b in pads)
        xp = np.pad(xb, ((0, 0), (0, 0)) + pads, constant_values=fill) if padded else xb
        taps = [xp[(slice(None), slice(None)) + tuple(slice(t * dd, t * dd + ss * (o - 1) + 1, ss)
                                                      for t, dd, ss, o in zip(tap, d, s, osz))]
                for tap in np.ndindex(*k)]
        val = taps[0].copy()
        for t in taps[1:]:
            np.maximum(val, t, out=val)
        # a maximum equal to the fill may be a padding tap, which must not win (see _pool_eligible)
        valid = _pool_eligible(k, s, p, d, osz) if padded and np.equal(val, fill).any() else None
        tap = _first_max_tap(taps, val, valid)
    pst = _plane_strides(isz)
    offs = np.array([sum(t * dd * ps for t, dd, ps in zip(tap, d, pst)) for tap in np.ndindex(*k)], np.int64)
    base = 0                                             # flat position of each window's first tap
    for i, (o, ss, pp, ps) in enumerate(zip(osz, s, p, pst)):
        base = base + ((np.arange(o) * ss - pp) * ps).reshape((o,) + (1,) * (nd - 1 - i))
    idx = offs.take(tap)
    idx += base
    if not batched:
        val, idx = val[0], idx[0]
    return val, idx


def _max_pool_backward(g, x, kernel_size, stride, padding, dilation, ceil_mode, indices, nd):
    """Send each output gradient to the input position its max came from: a plain scatter when windows do not
    overlap (each input position is hit at most once), else a sum of duplicates with one bincount pass."""
    k = _tup(kernel_size, nd)
    s, d = _stride_or_kernel(stride, k), _tup(dilation, nd)
    plane = _prod(x.shape[-nd:])
    lead = _prod(x.shape[:-nd])
    idx = (indices.reshape(lead, -1) + (np.arange(lead, dtype=np.int64) * plane)[:, None]).ravel()
    if all(ss >= dd * (kk - 1) + 1 for ss, dd, kk in zip(s, d, k)):
        out = np.zeros(lead * plane, x.dtype)
        out[idx] = g.reshape(-1)
        return out.reshape(x.shape)
    if x.ndim == nd + 2 and x.shape[0] > 1:       # by samples among the intra-op threads: their planes are apart
        N = x.shape[0]
        per = lead // N
        out = np.empty((N, per * plane), x.dtype)
        idx, gf = idx.reshape(N, -1), g.reshape(N, -1)

        def run(lo, hi):
            r = np.bincount((idx[lo:hi] - lo * per * plane).ravel(), weights=gf[lo:hi].ravel(),
                            minlength=(hi - lo) * per * plane)
            out[lo:hi] = r.reshape(hi - lo, -1)
        _split_samples(N, per * plane, run)
        return out.reshape(x.shape)
    r = np.bincount(idx, weights=g.reshape(-1), minlength=lead * plane)
    return r.astype(x.dtype, copy=False).reshape(x.shape)


def _avg_setup(x, kernel_size, stride, padding, ceil_mode, nd):
    k = _tup(kernel_size, nd)
    s = _stride_or_kernel(stride, k)
    p = _tup(padding, nd)
    isz = x.shape[-nd:]
    osz = tuple(_pool_out(i, kk, ss, pp, 1, ceil_mode) for i, kk, ss, pp in zip(isz, k, s, p))
    return k, s, p, isz, osz


def _avg_div(isz, osz, k, s, p, count_include_pad, divisor_override, dtype):
    """The divisor of each output position: torch's pool size, clipped to the padded (or real) input."""
    if divisor_override:
        return np.asarray(divisor_override, dtype)
    div = np.ones((), np.int64)
    nd = len(isz)
    for a, (i, o, kk, ss, pp) in enumerate(zip(isz, osz, k, s, p)):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, i + pp)
        n = end - start if count_include_pad else np.minimum(end, i) - np.maximum(start, 0)
        div = div * n.reshape((o,) + (1,) * (nd - 1 - a))
    return div.astype(dtype)


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    k, s, p, isz, osz = _avg_setup(x, kernel_size, stride, padding, ceil_mode, nd)
    batched = x.ndim == nd + 2
    xb = x if batched else x[None]
    pads = _pool_pads(isz, k, s, p, (1,) * nd, osz)
    xp = np.pad(xb, ((0, 0), (0, 0)) + pads) if any(a or b for a, b in pads) else xb
    if s == k and all(n == o * kk for n, o, kk in zip(xp.shape[2:], osz, k)):   # non-overlapping: a reshape
        split = sum(((o, kk) for o, kk in zip(osz, k)), ())
        tot = xp.reshape(xp.shape[:2] + split).sum(tuple(3 + 2 * i for i in range(nd)))
    else:
        win = _windows(xp, k, s, (1,) * nd)
        tot = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)].sum(tuple(range(-nd, 0)))
    out = (tot / _avg_div(isz, osz, k, s, p, count_include_pad, divisor_override, x.dtype)).astype(x.dtype, copy=False)
    return out if batched else out[0]


def _avg_pool_backward(g, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    k, s, p, isz, osz = _avg_setup(x, kernel_size, stride, padding, ceil_mode, nd)
    batched = x.ndim == nd + 2
    gb = g if batched else g[None]
    gd = (gb / _avg_div(isz, osz, k, s, p, count_include_pad, divisor_override, x.dtype)).astype(x.dtype, copy=False)
    N, C = gb.shape[:2]
    cols = np.broadcast_to(gd.reshape((N, C) + (1,) * nd + osz), (N, C) + k + osz)
    out = _col2im(cols, isz, k, s, p, (1,) * nd)
    return out if batched else out[0]


def _adaptive_matrix(i, o, dtype):
    """(o, i) averaging matrix of adaptive pooling: row j averages [floor(j*i/o), ceil((j+1)*i/o))."""
    j = np.arange(o)
    start = (j * i) // o
    end = -((-(j + 1) * i) // o)
    cols = np.arange(i)
    m = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
    return (m / (end - start)[:, None]).astype(dtype)


def _along(a, m, axis):
    """Apply the (o, i) matrix ``m`` along ``axis`` of ``a``."""
    return np.moveaxis(np.matmul(m, np.moveaxis(a, axis, -2)), -2, axis)


def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling is separable: per spatial dim, each output sums its window (gathered at the
    largest window size, the surplus positions left out) and divides by its size. Summing the gathered values
    (not a product with an averaging matrix, whose 0 * inf terms spread a non-finite input to every output) keeps an
    inf or nan in the windows that hold it, as torch's kernel does. A finite input takes the averaging matrices
    (A_h @ x @ A_w.T: BLAS, ~6x faster than the gathers on 32x32 -> 7x7)."""
    o = tuple(int(v) for v in output_size)
    nd = len(o)
    out = x
    if np.isfinite(x).all():
        for i, oo in enumerate(o):
            out = _along(out, _adaptive_matrix(x.shape[-nd + i], oo, x.dtype), -nd + i)
        return np.ascontiguousarray(out)
    for i, oo in enumerate(o):
        axis = x.ndim - nd + i
        n = x.shape[axis]
        idx, mask = _adaptive_windows(n, oo)                # (oo, k) each
        g = np.take(out, idx, axis=axis)                    # ..., oo, k, ...
        shape = [1] * g.ndim
        shape[axis], shape[axis + 1] = idx.shape
        if not mask.all():
            g = np.where(mask.reshape(shape), g, g.dtype.type(0))
        counts = mask.sum(1).astype(x.dtype).reshape(shape[:axis + 1] + shape[axis + 2:])
        out = np.add.reduce(g, axis=axis + 1) / counts
    return np.ascontiguousarray(out, dtype=x.dtype)


def _adaptive_avg_pool_backward(g, x, nd):
    out = g
    for i in range(nd):
        out = _along(out, _adaptive_matrix(x.shape[-nd + i], g.shape[-nd + i], x.dtype).T, -nd + i)
    return np.ascontiguousarray(out, dtype=x.dtype)


def _adaptive_windows(i, o):
    j = np.arange(o)
    start = (j * i) // o
    end = -((-(j + 1) * i) // o)
    kmax = int((end - start).max()) if o else 0
    idx = start[:, None] + np.arange(kmax)[None, :]
    return np.minimum(idx, i - 1), idx < end[:, None]


def adaptive_max_pool2d(x, output_size):
    """Each output's window [floor(j*H/OH), ceil((j+1)*H/OH)) gathered at the largest window size, the
    surplus positions masked to -inf; the first maximum wins (torch's index: flat position in the plane)."""
    oh, ow = _tup(output_size, 2)
    H, W = x.shape[-2:]
    hi, hm = _adaptive_windows(H, oh)
    wi, wm = _adaptive_windows(W, ow)
    g = x[..., hi[:, :, None, None], wi[None, None, :, :]]            # ..., OH, kh, OW, kw
    mask = hm[:, :, None, None] & wm[None, None, :, :]
    low = _lowest(x.dtype)
    g = np.where(mask, g, np.asarray(low, x.dtype))
    g = np.moveaxis(g, -3, -2)                                          # ..., OH, OW, kh, kw
    kh, kw = g.shape[-2:]
    flat = g.reshape(g.shape[:-2] + (kh * kw,))
    a = flat.argmax(-1)
    val = np.take_along_axis(flat, a[..., None], -1)[..., 0]
    idx = hi[np.arange(oh)[:, None], a // kw] * W + wi[np.arange(ow)[None, :], a % kw]
    return val, idx.astype(np.int64)


def adaptive_max_pool2d_backward(g, x, indices):
    plane = x.shape[-2] * x.shape[-1]
    lead = _prod(x.shape[:-2])
    idx = (indices.reshape(lead, -1) + (np.arange(lead, dtype=np.int64) * plane)[:, None]).ravel()
    r = np.bincount(idx, weights=g.reshape(-1), minlength=lead * plane)
    return r.astype(x.dtype, copy=False).reshape(x.shape)


# --- embedding -------------------------------------------------------------------

def embedding(w, idx, padding_idx, scale_grad_by_freq, sparse):
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    return np.take(w, idx, axis=0)


def embedding_dense_backward(g, idx, num_weights, padding_idx, scale_grad_by_freq):
    """Sum the gradient rows of equal indices: sort the indices once, then np.add.reduceat over the runs.
    GPT shapes (8192 rows of 128, 65 embeddings): 1.6-1.9 ms; np.add.at 17-18 ms; a one-hot matmul 1.5 ms
    but O(rows * num_weights) memory, too much for large vocabularies."""
    D = g.shape[-1]
    flat = idx.reshape(-1).astype(np.int64, copy=False)
    rows = g.reshape(-1, D)
    out = np.zeros((num_weights, D), g.dtype)
    if flat.size == 0:
        return out
    order = np.argsort(flat, kind='stable')
    sidx = flat[order]
    starts = np.flatnonzero(np.r_[True, sidx[1:] != sidx[:-1]])
    sums = np.add.reduceat(rows[order], starts, axis=0)
    uniq = sidx[starts]
    if scale_grad_by_freq:
        counts = np.diff(np.r_[starts, sidx.size])
        sums = sums / counts[:, None].astype(g.dtype)
    out[uniq] = sums
    if padding_idx is not None and padding_idx >= 0:
        out[padding_idx] = 0
    return out


def embedding_renorm(w, idx, max_norm, norm_type):
    out = w.copy()
    u = np.unique(idx.reshape(-1))
    rows = out[u].astype(np.float64)
    norms = np.sqrt((rows * rows).sum(1)) if norm_type == 2 else np.linalg.norm(rows, ord=norm_type, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    out[u] = (rows * scale[:, None]).astype(w.dtype)
    return out


# --- normalisation ---------------------------------------------------------------
# NOTE [batch norm kernels]: each (sample, channel) plane is a row of an (N*C, P) matrix, so every per-channel
# statistic is a row sum (a GEMV with ones, NOTE [row sums as GEMV]) or a row dot product (np.einsum 'ij,ij->i')
# summed down the N samples; the samples are shared out among the intra-op threads, each with its own rows.
# Float32 and float64 work in their own type with the per-row sums combined in float64; half types in float32.

_BN_BLOCK = 1 << 16      # elements of a cache-resident temporary


def _bn_acc(x):
    return x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)


def _bn_rows(a):
    """(N, C, *S) -> (N, C, P) (a copy only when the layout asks for one)."""
    return a.reshape(a.shape[:2] + (_prod(a.shape[2:]),))


def _bn_layout(a3):
    """(view, per_channel): ``a3`` (N, C, P) as (N, C*P) with per-channel vectors repeated P times where the
    planes are short, else as it is with (C, 1) vectors. NumPy's broadcast loops pay per inner run: resnet's
    (16, 512, 4) * (512, 1) takes 18 us, (16, 2048) * (2048,) 4 us."""
    N, C, P = a3.shape
    if P < _BN_SHORT:
        return a3.reshape(N, C * P), lambda v: np.repeat(v, P)
    return a3, lambda v: v[:, None]


_BN_SHORT = 64


def _plane_dots(a, b, C, P):
    """Per (sample, channel) plane, sum(a * b): einsum over long planes; a product and a GEMV over short ones
    (einsum's inner loop on 4-element planes: 32 us for (16, 512, 4), against 13)."""
    n = a.shape[0]
    if P < _BN_SHORT:
        return _rowsum((a * b).reshape(-1, P)).reshape(n, C)
    return _row_dots(a.reshape(n, C, P), b.reshape(n, C, P))


def _bn_forward_train(x3, eps):
    """(mean, var) per channel, two passes: the row sums, then the centred squares (no E[x^2] - E[x]^2
    cancellation)."""
    N, C, P = x3.shape
    rows = np.empty((N, C))
    sq = np.empty((N, C))

    def sums(lo, hi):
        rows[lo:hi] = _rowsum(x3[lo:hi].reshape(-1, P)).reshape(hi - lo, C)
    _split_samples(N, C * P, sums)
    mean64 = rows.sum(0) / max(N * P, 1)
    xv, per_channel = _bn_layout(x3)
    mean = per_channel(mean64.astype(x3.dtype))
    step = max(1, _BN_BLOCK // max(C * P, 1))

    def squares(lo, hi):
        for i in range(lo, hi, step):   # a few samples' centred copy at a time stays in cache
            xc = xv[i:min(i + step, hi)] - mean
            sq[i:i + len(xc)] = _plane_dots(xc, xc, C, P)
    _split_samples(N, C * P, squares)
    return mean64, sq.sum(0) / max(N * P, 1)


def native_batch_norm(x, w, b, running_mean, running_var, training, momentum, eps):
    """out = x * scale + shift per channel (scale = weight * invstd, shift = bias - mean * scale): one pass
    after the statistics."""
    C = x.shape[1]
    xa = _bn_acc(x)
    x3 = _bn_rows(xa)
    N, _, P = x3.shape
    if training and N * P == 0:     # torch's F.batch_norm: an empty result, the running statistics untouched
        nan = np.full(C, np.nan, x.dtype)
        return np.empty(x.shape, x.dtype), nan, nan.copy()
    if training:
        n = N * P
        mean, var = _bn_forward_train(x3, eps)
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None:     # torch's native_batch_norm updates the running stats in place
            running_mean *= 1 - momentum
            running_mean += (momentum * mean).astype(running_mean.dtype)
        if running_var is not None:
            running_var *= 1 - momentum
            running_var += (momentum * var * (n / max(n - 1, 1))).astype(running_var.dtype)
        save_mean, save_invstd = mean.astype(x.dtype), invstd.astype(x.dtype)
    else:
        mean = running_mean.astype(np.float64)
        invstd = 1.0 / np.sqrt(running_var.astype(np.float64) + eps)
        save_mean, save_invstd = np.zeros(0, x.dtype), np.zeros(0, x.dtype)
    scale = invstd if w is None else invstd * w
    shift = -mean * scale if b is None else b - mean * scale
    xv, per_channel = _bn_layout(x3)
    scale, shift = per_channel(scale.astype(x3.dtype)), per_channel(shift.astype(x3.dtype))
    out = np.empty(xv.shape, x3.dtype)

    def norm(lo, hi):
        o = np.multiply(xv[lo:hi], scale, out=out[lo:hi])
        o += shift
    _split_samples(N, C * P, norm)
    return out.reshape(x.shape).astype(x.dtype, copy=False), save_mean, save_invstd


def native_batch_norm_backward(g, x, w, running_mean, running_var, save_mean, save_invstd, train, eps, output_mask):
    """torch's batch-norm backward. With sg = sum(g), sgx = sum(g * x) per channel, dot = sgx - mean * sg:
    dx = a * g + b * x + c, a = w * invstd, b = -a * invstd^2 * dot / n, c = -a * sg / n - b * mean (training;
    in evaluation dx = a * g), dw = dot * invstd, db = sg. Two passes: the sums, then dx."""
    C = x.shape[1]
    xa, ga = _bn_acc(x), _bn_acc(g)
    x3, g3 = _bn_rows(xa), _bn_rows(ga)
    N, _, P = x3.shape
    n = N * P
    if train:
        mean = save_mean.astype(np.float64)
        invstd = save_invstd.astype(np.float64)
    else:
        mean = running_mean.astype(np.float64)
        invstd = 1.0 / np.sqrt(running_var.astype(np.float64) + eps)
    wv = np.ones(C) if w is None else w.astype(np.float64)
    sg_rows, sgx_rows = np.empty((N, C)), np.empty((N, C))
    need_sums = train and output_mask[0] or output_mask[1] or output_mask[2]
    xv, per_channel = _bn_layout(x3)
    gv, _ = _bn_layout(g3)

    def sums(lo, hi):
        sg_rows[lo:hi] = _rowsum(g3[lo:hi].reshape(-1, P)).reshape(hi - lo, C)
        sgx_rows[lo:hi] = _plane_dots(gv[lo:hi], xv[lo:hi], C, P)
    if need_sums:
        _split_samples(N, C * P, sums)
    sg = sg_rows.sum(0)
    dot = sgx_rows.sum(0) - mean * sg
    dx = dw = db = None
    if output_mask[0]:
        a = wv * invstd
        if train:
            bb = -a * invstd * invstd * dot / max(n, 1)
            c = -a * sg / max(n, 1) - bb * mean
        dt = x3.dtype
        a3 = per_channel(a.astype(dt))
        out = np.empty(xv.shape, dt)
        if train:
            b3, c3 = per_channel(bb.astype(dt)), per_channel(c.astype(dt))

        step = max(1, _BN_BLOCK // max(C * P, 1))

        def grad_input(lo, hi):
            o = np.multiply(gv[lo:hi], a3, out=out[lo:hi])
            if train:
                for i in range(lo, hi, step):
                    t = xv[i:min(i + step, hi)] * b3
                    t += c3
                    o[i - lo:i - lo + step] += t
        _split_samples(N, C * P, grad_input)
        dx = out.reshape(x.shape).astype(x.dtype, copy=False)
    if output_mask[1]:          # (an empty batch: zeros, as torch, not 0 * the NaN statistics)
        dw = (dot * invstd if n else np.zeros(C)).astype(x.dtype if w is None else w.dtype)
    if output_mask[2]:
        db = sg.astype(x.dtype if w is None else w.dtype)
    return dx, dw, db


KERNELS = {
    'convolution': convolution,
    'convolution_backward_weight': convolution_backward_weight,
    'im2col': im2col,
    'col2im': col2im,
    'max_pool2d_with_indices': partial(_max_pool_batched, nd=2),
    'max_pool3d_with_indices': partial(_max_pool_batched, nd=3),
    'max_pool2d_with_indices_backward': partial(_max_pool_backward, nd=2),
    'max_pool3d_with_indices_backward': partial(_max_pool_backward, nd=3),
    'avg_pool2d': partial(_avg_pool, nd=2),
    'avg_pool3d': partial(_avg_pool, nd=3),
    'avg_pool2d_backward': partial(_avg_pool_backward, nd=2),
    'avg_pool3d_backward': partial(_avg_pool_backward, nd=3),
    '_adaptive_avg_pool2d': adaptive_avg_pool,
    '_adaptive_avg_pool3d': adaptive_avg_pool,
    '_adaptive_avg_pool2d_backward': partial(_adaptive_avg_pool_backward, nd=2),
    '_adaptive_avg_pool3d_backward': partial(_adaptive_avg_pool_backward, nd=3),
    'adaptive_max_pool2d': adaptive_max_pool2d,
    'adaptive_max_pool2d_backward': adaptive_max_pool2d_backward,
    'embedding': embedding,
    'embedding_dense_backward': embedding_dense_backward,
    'embedding_renorm': embedding_renorm,
    'native_batch_norm': native_batch_norm,
    'native_batch_norm_backward': native_batch_norm_backward,
}
