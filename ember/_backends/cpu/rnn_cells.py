"""CPU kernels for the fused recurrent cells: one LSTM or GRU time step from its two gate projections.

Arrays in, arrays out; shape checks are the meta functions' (ember/_ops/rnn_cells.py). torch has these operators
on CUDA only (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``); ember's recurrent layers call them once per
time step instead of ~10 elementwise operators, and the backward kernels compute every gate's gradient from the
saved workspace in a few passes.

Workspaces, as torch's CUDA kernels lay them out:
  LSTM (B, 4H): the activated gates i, f, g, o (sigmoid, sigmoid, tanh, sigmoid);
  GRU  (B, 5H): r, z, n, hx and the hidden projection's n part (with its bias), hn.
Half-precision inputs are computed in float32; the adapter rounds results to the meta dtypes.
"""
from time import perf_counter as _perf_counter

import numpy as np

from ._fp import quiet as _quiet, is_half as _is_half
from ._parallel import get_num_threads, parallel_for
from ._split import SPLIT_WORK as _SPLIT_WORK, _Choice


def _f32(a):
    return a.astype(np.float32) if a is not None and _is_half(a.dtype) else a


def _sigmoid_(a):
    """In place: 1 / (1 + exp(-a)), the formula of the ``sigmoid`` kernel (cpu/pointwise.py), so values agree."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1
    np.reciprocal(a, out=a)
    return a


_CHOICES = {}     # kernel name -> _Choice: whole or split calls, whichever measured faster (NOTE [split pointwise])


def _rows(name, n, width, fn):
    """``fn(lo, hi)`` over all rows, with NumPy's floating-point warnings off (NOTE [silent floating-point errors]:
    exp overflows to the right limit), in row blocks over ember's intra-op threads when the step is large enough
    to pay for the hand-off (a transcendental pass over at least SPLIT_WORK // 8 elements, as NOTE [split
    pointwise] splits the ufuncs this kernel replaces) and splitting has measured faster on this machine; NumPy
    releases the GIL inside each pass. Either way the values are the same bits."""
    fn = _quiet(fn)
    grain = max(1, -(-_SPLIT_WORK // 8 // max(width, 1)))
    if n < 2 * grain or get_num_threads() < 2:
        return fn(0, n)
    choice = _CHOICES.get(name) or _CHOICES.setdefault(name, _Choice())
    split = choice.split_now()
    t = _perf_counter()
    if split:
        parallel_for(n, fn, grain)
    else:
        fn(0, n)
    choice.record(split, _perf_counter() - t, n)


def _bias_grad(gg):
    return gg.sum(0)


def _gate_major(a, k, H):
    """A (rows, k*H) block as its (k, rows, H) gate-major view (no copy): NumPy's loops over a gate's strided
    (rows, H) view pay per row of H, so the kernels copy each block gate-major once, compute on contiguous
    gates and copy the results back once (1024 x 32 LSTM step: 500 -> 220 us, the same bits)."""
    return a.reshape(a.shape[0], k, H).transpose(1, 0, 2)


def fused_lstm_cell(ig, hg, cx, ib=None, hb=None):
    """(hy, cy, workspace) of one LSTM step: gates = ig + hg (+ biases), chunks i, f, g, o."""
    ig, hg, cx, ib, hb = _f32(ig), _f32(hg), _f32(cx), _f32(ib), _f32(hb)
    B, H = cx.shape
    dt = np.result_type(ig, hg, cx)
    w, cy, hy = np.empty((B, 4 * H), dt), np.empty((B, H), dt), np.empty((B, H), dt)

    def block(lo, hi):
        s = np.empty((4, hi - lo, H), dt)       # i, f, g, o
        np.add(_gate_major(ig[lo:hi], 4, H), _gate_major(hg[lo:hi], 4, H), out=s)
        if ib is not None:
            s += ib.reshape(4, 1, H)
            s += hb.reshape(4, 1, H)
        _sigmoid_(s[:2])
        np.tanh(s[2], out=s[2])
        _sigmoid_(s[3])
        c, h = cy[lo:hi], hy[lo:hi]
        np.multiply(s[1], cx[lo:hi], out=c)
        np.multiply(s[0], s[2], out=h)
        c += h
        np.tanh(c, out=h)
        h *= s[3]
        _gate_major(w[lo:hi], 4, H)[...] = s
    _rows('lstm', B, 4 * H, block)
    return hy, cy, w


def fused_lstm_cell_backward_impl(ghy, gcy, cx, cy, w, has_bias):
    """(grad of the gates, grad_cx, grad of the bias): the gates' gradient serves both input and hidden gates."""
    ghy, gcy, cx, cy, w = _f32(ghy), _f32(gcy), _f32(cx), _f32(cy), _f32(w)
    B, H = cx.shape
    gg, gcx = np.empty_like(w), np.empty_like(cy)

    def block(lo, hi):
        i, f, g, o = np.ascontiguousarray(_gate_major(w[lo:hi], 4, H))
        out = np.empty((4, hi - lo, H), w.dtype)
        gc = np.zeros_like(cy[lo:hi]) if gcy is None else gcy[lo:hi].copy()
        if ghy is not None:
            tc = np.tanh(cy[lo:hi])
            np.multiply(ghy[lo:hi], tc, out=out[3])     # d o: ghy tanh(cy) o (1 - o)
            out[3] *= o - o * o
            tc *= tc
            np.subtract(1, tc, out=tc)
            tc *= o
            tc *= ghy[lo:hi]
            gc += tc                                    # d cy: gcy + ghy o (1 - tanh(cy)^2)
        else:
            out[3] = 0
        np.multiply(gc, g, out=out[0])
        out[0] *= i - i * i
        np.multiply(gc, cx[lo:hi], out=out[1])
        out[1] *= f - f * f
        np.multiply(g, g, out=out[2])
        np.subtract(1, out[2], out=out[2])
        out[2] *= i
        out[2] *= gc
        np.multiply(gc, f, out=gcx[lo:hi])
        _gate_major(gg[lo:hi], 4, H)[...] = out
    _rows('lstm_backward', B, 4 * H, block)
    return gg, gcx, (_bias_grad(gg) if has_bias else None)


def fused_gru_cell(ig, hg, hx, ib=None, hb=None):
    """(hy, workspace) of one GRU step: r = σ(ir + hr), z = σ(iz + hz), n = tanh(in + r * hn), hy = n + z (hx - n)."""
    ig, hg, hx, ib, hb = _f32(ig), _f32(hg), _f32(hx), _f32(ib), _f32(hb)
    B, H = hx.shape
    dt = np.result_type(ig, hg, hx)
    ws, hy = np.empty((B, 5 * H), dt), np.empty((B, H), dt)

    def block(lo, hi):
        i3, h3 = _gate_major(ig[lo:hi], 3, H), _gate_major(hg[lo:hi], 3, H)
        s = np.empty((5, hi - lo, H), dt)           # r, z, n, hx, hn
        np.add(i3[:2], h3[:2], out=s[:2])
        s[2], s[3], s[4] = i3[2], hx[lo:hi], h3[2]
        if ib is not None:
            s[:2] += ib.reshape(3, 1, H)[:2]
            s[:2] += hb.reshape(3, 1, H)[:2]
            s[2] += ib[2 * H:]
            s[4] += hb[2 * H:]
        _sigmoid_(s[:2])
        h = hy[lo:hi]
        np.multiply(s[0], s[4], out=h)
        s[2] += h
        np.tanh(s[2], out=s[2])
        np.subtract(s[3], s[2], out=h)
        h *= s[1]
        h += s[2]
        _gate_major(ws[lo:hi], 5, H)[...] = s
    _rows('gru', B, 5 * H, block)
    return hy, ws


def fused_gru_cell_backward(ghy, ws, has_bias):
    """(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias) from the workspace."""
    ghy, ws = _f32(ghy), _f32(ws)
    B, H = ghy.shape
    gi, gh, ghx = np.empty((B, 3 * H), ws.dtype), np.empty((B, 3 * H), ws.dtype), np.empty((B, H), ws.dtype)

    def block(lo, hi):
        g = ghy[lo:hi]
        r, z, n, hx, hn = np.ascontiguousarray(_gate_major(ws[lo:hi], 5, H))
        out = np.empty((3, hi - lo, H), ws.dtype)
        gr, gz, gn = out
        np.multiply(n, n, out=gn)
        np.subtract(1, gn, out=gn)
        gn *= 1 - z
        gn *= g                                             # d (in + r hn): ghy (1 - z) (1 - n^2)
        np.subtract(hx, n, out=gz)
        gz *= z - z * z
        gz *= g
        np.multiply(gn, hn, out=gr)
        gr *= r - r * r
        np.multiply(g, z, out=ghx[lo:hi])
        _gate_major(gi[lo:hi], 3, H)[...] = out
        gn *= r
        _gate_major(gh[lo:hi], 3, H)[...] = out
    _rows('gru_backward', B, 5 * H, block)
    if not has_bias:
        return gi, gh, ghx, None, None
    return gi, gh, ghx, _bias_grad(gi), _bias_grad(gh)


KERNELS = {
    '_thnn_fused_lstm_cell': fused_lstm_cell,
    '_thnn_fused_lstm_cell_backward_impl': fused_lstm_cell_backward_impl,
    '_thnn_fused_gru_cell': fused_gru_cell,
    '_thnn_fused_gru_cell_backward': fused_gru_cell_backward,
}
