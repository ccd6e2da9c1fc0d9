"""Fused recurrent cells: one LSTM or GRU time step from its input and hidden gate projections.

torch declares ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` and runs them on CUDA only (its CPU dispatch
raises NotImplementedError); ember gives them CPU kernels (_backends/cpu/rnn_cells.py) because nn.LSTM / nn.GRU
loop over time in Python, and one operator and one autograd node per step replace ~10 of each
(``bench/bench_rnn.py``: fwd+bwd 13-24% faster on its four cases). They are internal,
``aten._thnn_fused_lstm_cell.default`` only, as in torch, where no ``torch.*`` function names them.

Derivatives follow torch's derivatives.yaml: a first-order backward runs the fused backward kernels on the saved
workspace (``_thnn_fused_lstm_cell_backward_impl``, ``_thnn_fused_gru_cell_backward``); a recorded one
(create_graph) runs torch's ``_thnn_differentiable_*_cell_backward``, written here in ember operators, so higher
orders work as in torch.
"""
from .registry import declare
from .._dispatch.ops_namespace import aten


def _check_2d(name, t, k, op):
    if t.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {t.dim()}-dimensional tensor for argument #{k} "
                           f"'{name}' (while checking arguments for {op})")


def _check_cell(op, gates, input_gates, hidden_gates, state, sname, input_bias, hidden_bias):
    _check_2d('input_gates', input_gates, 1, op)
    for k, (n, t) in enumerate((('hidden_gates', hidden_gates), (sname, state)), 2):
        _check_2d(n, t, k, op)
    B, H = state.shape
    for n, t in (('input_gates', input_gates), ('hidden_gates', hidden_gates)):
        if tuple(t.shape) != (B, gates * H):
            raise RuntimeError(f"{op}: expected {n} of size [{B}, {gates * H}] ({gates} gates of {sname}'s {H} "
                               f"features), but got {list(t.shape)}")
    for n, t in (('input_bias', input_bias), ('hidden_bias', hidden_bias)):
        if t is not None and tuple(t.shape) != (gates * H,):
            raise RuntimeError(f"{op}: expected {n} of size [{gates * H}], but got {list(t.shape)}")
    if (input_bias is None) != (hidden_bias is None):
        raise RuntimeError(f"{op}: input_bias and hidden_bias must be both given or both None")
    dts = {t._dtype for t in (input_gates, hidden_gates, state, input_bias, hidden_bias) if t is not None}
    if len(dts) != 1 or not next(iter(dts)).is_floating_point:
        raise RuntimeError(f"{op}: expected floating-point tensors of one dtype, but got "
                           f"{sorted(str(d) for d in dts)}")


def _gates(input_gates, hidden_gates, input_bias, hidden_bias):
    g = input_gates + hidden_gates
    if input_bias is not None:
        g = g + input_bias
    if hidden_bias is not None:
        g = g + hidden_bias
    return g


# --- LSTM ----------------------------------------------------------------------------------------

def _lstm_meta(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    _check_cell('_thnn_fused_lstm_cell', 4, input_gates, hidden_gates, cx, 'cx', input_bias, hidden_bias)
    B, H = cx.shape
    return [((B, H), cx._dtype), ((B, H), cx._dtype), ((B, 4 * H), cx._dtype)]


def _lstm_grads(grads, input_gates, hidden_gates, cx, input_bias, hidden_bias, result1, output_mask):
    """torch's _thnn_differentiable_lstm_cell_backward: the gates recomputed in ember ops (create_graph)."""
    grad_hy, grad_cy = grads[0], grads[1]
    i, f, c, o = _gates(input_gates, hidden_gates, input_bias, hidden_bias).chunk(4, 1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    tcy = result1.tanh()
    gog = grad_hy * tcy * o * (1 - o)
    gcx = grad_hy * o * (1 - tcy * tcy) + grad_cy
    gates = aten.cat.default([gcx * c * i * (1 - i), gcx * cx * f * (1 - f), gcx * i * (1 - c * c), gog], 1)
    return [gates if output_mask[0] else None, gates if output_mask[1] else None,
            gcx * f if output_mask[2] else None, gates if output_mask[3] else None,
            gates if output_mask[4] else None]


def _lstm_grads_fused(grads, cx, result1, result2, output_mask):
    """A first-order backward: the fused kernel on the saved workspace."""
    has_bias = output_mask[3] or output_mask[4]
    gates, gcx, gb = aten._thnn_fused_lstm_cell_backward_impl.default(grads[0], grads[1], cx, result1, result2,
                                                                      has_bias)
    return [gates if output_mask[0] else None, gates if output_mask[1] else None, gcx if output_mask[2] else None,
            gb if output_mask[3] else None, gb if output_mask[4] else None]


_LSTM_INPUTS = ('input_gates', 'hidden_gates', 'cx', 'input_bias', 'hidden_bias')

declare('_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? input_bias=None, '
        'Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)', meta=_lstm_meta, method=False, function=False,
        output_differentiability=(True, True, False), forward='transpose',
        derivatives={_LSTM_INPUTS: _lstm_grads}, first_order={_LSTM_INPUTS: _lstm_grads_fused})


def _lstm_backward_meta(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    B, H = cx.shape
    if tuple(workspace.shape) != (B, 4 * H) or tuple(cy.shape) != (B, H):
        raise RuntimeError(f"_thnn_fused_lstm_cell_backward_impl: expected cy of size [{B}, {H}] and workspace of "
                           f"size [{B}, {4 * H}], but got {list(cy.shape)} and {list(workspace.shape)}")
    return [((B, 4 * H), cx._dtype), ((B, H), cx._dtype), ((4 * H,), cx._dtype) if has_bias else None]


declare('_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, '
        'Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)', meta=_lstm_backward_meta, method=False,
        function=False, differentiable=False)


# --- GRU -----------------------------------------------------------------------------------------

def _gru_meta(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    _check_cell('_thnn_fused_gru_cell', 3, input_gates, hidden_gates, hx, 'hx', input_bias, hidden_bias)
    B, H = hx.shape
    return [((B, H), hx._dtype), ((B, 5 * H), hx._dtype)]


def _gru_grads(grad, input_gates, hidden_gates, hx, input_bias, hidden_bias, output_mask):
    """torch's _thnn_differentiable_gru_cell_backward, in ember ops (create_graph)."""
    ir, ii, in_ = (input_gates if input_bias is None else input_gates + input_bias).chunk(3, 1)
    hr, hi, hn = (hidden_gates if hidden_bias is None else hidden_gates + hidden_bias).chunk(3, 1)
    rg, ig = (ir + hr).sigmoid(), (ii + hi).sigmoid()
    ng = (in_ + rg * hn).tanh()
    gig = grad * (hx - ng) * ig * (1 - ig)
    gin = grad * (1 - ig) * (1 - ng * ng)
    grg = gin * hn * rg * (1 - rg)
    gi = aten.cat.default([grg, gig, gin], 1)
    gh = aten.cat.default([grg, gig, gin * rg], 1)
    return [gi if output_mask[0] else None, gh if output_mask[1] else None, grad * ig if output_mask[2] else None,
            gi if output_mask[3] else None, gh if output_mask[4] else None]


def _gru_grads_fused(grad, result1, output_mask):
    gi, gh, ghx, gbi, gbh = aten._thnn_fused_gru_cell_backward.default(grad, result1, output_mask[3] or output_mask[4])
    return [g if m else None for g, m in zip((gi, gh, ghx, gbi, gbh), output_mask)]


_GRU_INPUTS = ('input_gates', 'hidden_gates', 'hx', 'input_bias', 'hidden_bias')

declare('_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? input_bias=None, '
        'Tensor? hidden_bias=None) -> (Tensor, Tensor)', meta=_gru_meta, method=False, function=False,
        output_differentiability=(True, False), forward='transpose',
        derivatives={_GRU_INPUTS: _gru_grads}, first_order={_GRU_INPUTS: _gru_grads_fused})


def _gru_backward_meta(grad_hy, workspace, has_bias):
    B, H = grad_hy.shape
    if tuple(workspace.shape) != (B, 5 * H):
        raise RuntimeError(f"_thnn_fused_gru_cell_backward: expected workspace of size [{B}, {5 * H}], but got "
                           f"{list(workspace.shape)}")
    g, b = ((B, 3 * H), grad_hy._dtype), ((3 * H,), grad_hy._dtype)
    return [g, g, ((B, H), grad_hy._dtype), b if has_bias else None, b if has_bias else None]


declare('_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) '
        '-> (Tensor, Tensor, Tensor, Tensor, Tensor)', meta=_gru_backward_meta, method=False, function=False,
        differentiable=False)
