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
import numpy as np


def _f32(a):
    return a.astype(np.float32) if a is not None and a.dtype.itemsize == 2 and a.dtype.kind == 'f' else a


def _sigmoid_(a):
    """In place: 1 / (1 + exp(-a)), the formula of the ``sigmoid`` kernel (cpu/pointwise.py), so values agree."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1
    np.reciprocal(a, out=a)
    return a


def _gates(ig, hg, ib, hb):
    g = np.add(_f32(ig), _f32(hg))
    if ib is not None:
        g += _f32(ib)
    if hb is not None:
        g += _f32(hb)
    return g


def _bias_grad(gg):
    return gg.sum(0) if gg.ndim == 2 else gg.copy()


def fused_lstm_cell(ig, hg, cx, ib=None, hb=None):
    """(hy, cy, workspace) of one LSTM step: gates = ig + hg (+ biases), chunks i, f, g, o."""
    w = _gates(ig, hg, ib, hb)
    H = w.shape[-1] // 4
    _sigmoid_(w[..., :2 * H])
    np.tanh(w[..., 2 * H:3 * H], out=w[..., 2 * H:3 * H])
    _sigmoid_(w[..., 3 * H:])
    i, f, g, o = w[..., :H], w[..., H:2 * H], w[..., 2 * H:3 * H], w[..., 3 * H:]
    cy = f * _f32(cx)
    cy += i * g
    hy = np.tanh(cy)
    hy *= o
    return hy, cy, w


def fused_lstm_cell_backward_impl(ghy, gcy, cx, cy, w, has_bias):
    """(grad of the gates, grad_cx, grad of the bias): the gates' gradient serves both input and hidden gates."""
    cx, cy, w = _f32(cx), _f32(cy), _f32(w)
    H = w.shape[-1] // 4
    i, f, g, o = w[..., :H], w[..., H:2 * H], w[..., 2 * H:3 * H], w[..., 3 * H:]
    tc = np.tanh(cy)
    gg = np.empty_like(w)
    gc = np.zeros_like(cy) if gcy is None else _f32(gcy).astype(cy.dtype, copy=True)
    if ghy is not None:
        ghy = _f32(ghy)
        go = gg[..., 3 * H:]
        np.multiply(ghy, tc, out=go)                 # d o = ghy * tanh(cy) * o (1 - o)
        go *= o * (1 - o)
        gc += ghy * o * (1 - tc * tc)
    else:
        gg[..., 3 * H:] = 0
    np.multiply(gc, g * i * (1 - i), out=gg[..., :H])
    np.multiply(gc, cx * f * (1 - f), out=gg[..., H:2 * H])
    np.multiply(gc, i * (1 - g * g), out=gg[..., 2 * H:3 * H])
    gcx = gc * f
    return gg, gcx, (_bias_grad(gg) if has_bias else None)


def fused_gru_cell(ig, hg, hx, ib=None, hb=None):
    """(hy, workspace) of one GRU step: r = σ(ir + hr), z = σ(iz + hz), n = tanh(in + r * hn), hy = n + z (hx - n)."""
    ig, hg, hx = _f32(ig), _f32(hg), _f32(hx)
    H = hx.shape[-1]
    ws = np.empty(hx.shape[:-1] + (5 * H,), np.result_type(ig, hg, hx))
    rz = ws[..., :2 * H]
    np.add(ig[..., :2 * H], hg[..., :2 * H], out=rz)
    hn = ws[..., 4 * H:]
    hn[...] = hg[..., 2 * H:]
    n = ws[..., 2 * H:3 * H]
    n[...] = ig[..., 2 * H:]
    if ib is not None:
        ib = _f32(ib)
        rz += ib[..., :2 * H]
        n += ib[..., 2 * H:]
    if hb is not None:
        hb = _f32(hb)
        rz += hb[..., :2 * H]
        hn += hb[..., 2 * H:]
    _sigmoid_(rz)
    n += ws[..., :H] * hn
    np.tanh(n, out=n)
    ws[..., 3 * H:4 * H] = hx
    hy = hx - n
    hy *= ws[..., H:2 * H]
    hy += n
    return hy, ws


def fused_gru_cell_backward(ghy, ws, has_bias):
    """(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias) from the workspace."""
    ghy, ws = _f32(ghy), _f32(ws)
    H = ws.shape[-1] // 5
    r, z, n, hx, hn = (ws[..., k * H:(k + 1) * H] for k in range(5))
    gi = np.empty(ws.shape[:-1] + (3 * H,), ws.dtype)
    gn = gi[..., 2 * H:]
    np.multiply(ghy, (1 - z) * (1 - n * n), out=gn)             # d (in + r hn)
    np.multiply(ghy, (hx - n) * z * (1 - z), out=gi[..., H:2 * H])
    np.multiply(gn, hn * r * (1 - r), out=gi[..., :H])
    gh = gi.copy()
    gh[..., 2 * H:] *= r
    ghx = ghy * z
    if not has_bias:
        return gi, gh, ghx, None, None
    return gi, gh, ghx, _bias_grad(gi), _bias_grad(gh)


KERNELS = {
    '_thnn_fused_lstm_cell': fused_lstm_cell,
    '_thnn_fused_lstm_cell_backward_impl': fused_lstm_cell_backward_impl,
    '_thnn_fused_gru_cell': fused_gru_cell,
    '_thnn_fused_gru_cell_backward': fused_gru_cell_backward,
}
