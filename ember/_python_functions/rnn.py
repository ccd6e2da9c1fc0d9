"""torch's recurrent-network functions: ``torch.lstm``, ``torch.gru``, ``torch.rnn_tanh``, ``torch.rnn_relu`` (each
over a padded batch or packed data) and the one-step ``lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``,
``rnn_relu_cell``, also reached as ``torch._VF.lstm`` and so on. nn.LSTM, nn.GRU, nn.RNN and their cells call them,
as torch's modules call ``_VF``, so a program that calls them itself, and a ``__torch_function__`` handler, sees
what it sees in torch. The layer-and-direction loop lives with the modules (nn/modules/rnn.py, ``run_layers``).
"""
from ..amp.autocast_mode import _autocast_composite
from ..ops import aten

__all__ = ['lstm', 'gru', 'rnn_tanh', 'rnn_relu', 'lstm_cell', 'gru_cell', 'rnn_tanh_cell', 'rnn_relu_cell']


def _modules():
    from ..nn.modules import rnn        # loaded after the public functions: looked up at the first call
    return rnn


def _run(mode, args):
    """Both of torch's overloads: ``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` over a padded (L, N, H) batch ((N, L, H) with batch_first), and ``(data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)`` over packed rows. Returns the output and the final
    state(s): (output, h) or, for an LSTM, (output, h, c)."""
    rnn = _modules()
    name = mode.lower()
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 arguments ({len(args)} given)")
    if isinstance(args[3], (list, tuple)):      # the packed form: params come fourth
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        out, h = rnn.run_layers(mode, data, [int(b) for b in batch_sizes.tolist()], _state(mode, hx), list(params),
                                has_biases, num_layers, dropout, train, bidirectional)
    else:
        input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        if input.dim() != 3:
            raise RuntimeError(f"{name}: expected input to have 3 dimensions, got {input.dim()}")
        if batch_first:
            input = input.transpose(0, 1)
        L, N = input.size(0), input.size(1)
        out, h = rnn.run_layers(mode, input.reshape(L * N, input.size(-1)), [N] * L, _state(mode, hx), list(params),
                                has_biases, num_layers, dropout, train, bidirectional)
        # a tensor of its own, as torch's output is (not a view of the layers' rows: an in-place op on it records
        # the op's node, not a view's AsStridedBackward0)
        out = aten._unsafe_view.default(out, (L, N, out.size(-1)))
        if batch_first:     # torch's RNN/GRU turn theirs in place (TransposeBackward1); its CPU LSTM (mkldnn) does not
            out = out.transpose(0, 1) if mode == 'LSTM' else out.transpose_(0, 1)
    return (out, *h) if mode == 'LSTM' else (out, h)


def _state(mode, hx):
    if mode != 'LSTM':
        return hx
    if not isinstance(hx, (list, tuple)) or len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return tuple(hx)


def lstm(*args):
    """``torch.lstm``: a multi-layer LSTM over a padded batch or packed data (see ``_run``): (output, h_n, c_n)."""
    if len(args) == 9 and not isinstance(args[3], (list, tuple)):
        return _lstm_padded(*args)
    return _run('LSTM', args)


@_autocast_composite('mkldnn_rnn_layer')
def _lstm_padded(*args):
    """torch's CPU LSTM over a padded batch runs oneDNN's layer, which CPU autocast lists as a lower-precision
    operator: under ``autocast('cpu')`` the input, states and weights are cast and the outputs come back in the
    autocast dtype (torch's GRU and RNN, and packed input, take other paths that keep float32)."""
    return _run('LSTM', args)


def gru(*args):
    """``torch.gru``: a multi-layer GRU over a padded batch or packed data: (output, h_n)."""
    return _run('GRU', args)


def rnn_tanh(*args):
    """``torch.rnn_tanh``: a multi-layer Elman RNN with tanh: (output, h_n)."""
    return _run('RNN_TANH', args)


def rnn_relu(*args):
    """``torch.rnn_relu``: a multi-layer Elman RNN with ReLU: (output, h_n)."""
    return _run('RNN_RELU', args)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step on a (batch, input_size) input, ``hx`` = (h, c): (h', c')."""
    return tuple(_modules().cell('LSTM', input, _state('LSTM', hx), w_ih, w_hh, b_ih, b_hh))


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: h'."""
    return _modules().cell('GRU', input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One tanh RNN step: tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)."""
    return _modules().cell('RNN_TANH', input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One ReLU RNN step."""
    return _modules().cell('RNN_RELU', input, hx, w_ih, w_hh, b_ih, b_hh)
