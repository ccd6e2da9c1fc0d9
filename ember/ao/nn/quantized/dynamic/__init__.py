"""ember.ao.nn.quantized.dynamic (also ember.nn.quantized.dynamic): layers with quantized weights and float
inputs and outputs; each call quantizes its input per tensor from the input's own range (quint8, the range
reduced by a bit on x86/fbgemm, as torch's), accumulates in int32 and returns float32."""
import ember
from ember import nn
from ..linear import Linear as _QLinear, LinearPackedParams
from .._utils import _quantize_weight, _hide_children_repr

__all__ = ['Linear', 'LSTM', 'GRU', 'LSTMCell', 'GRUCell', 'RNNCell']

qops = ember.ops.quantized


def _reduce_range():
    return ember.backends.quantized.engine in ('x86', 'fbgemm', 'onednn')


def _observed_weight(w, qconfig):
    obs = qconfig.weight() if qconfig is not None else _default_weight_observer()
    obs(w)
    if obs.dtype != ember.qint8:
        raise AssertionError("ember's dynamic quantization supports qint8 weights (float16 is not provided)")
    return _quantize_weight(w.detach().float(), obs)


def _default_weight_observer():
    from ember.ao.quantization.observer import default_weight_observer
    return default_weight_observer()


class Linear(_QLinear):
    """A linear layer with a qint8 weight, float input and output.

    >>> m = Linear(4, 2)
    >>> m(ember.ones(3, 4)).dtype
    ember.float32
    """
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def _get_name(self):
        return 'DynamicQuantizedLinear'

    def extra_repr(self):
        return (f'in_features={self.in_features}, out_features={self.out_features}, '
                f'dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}')

    def forward(self, x):
        w, b = self._weight_bias()
        return qops._linear_dynamic_unpacked(x, w, b, _reduce_range())

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod).__name__ not in ('Linear', 'NonDynamicallyQuantizableLinear', 'LinearReLU'):
            raise AssertionError(f"nn.quantized.dynamic.Linear.from_float only works for nn.Linear, got {type(mod)}")
        if type(mod).__name__ == 'LinearReLU':
            mod = mod[0]
        q = cls(mod.in_features, mod.out_features, dtype=ember.qint8)
        q.set_weight_bias(_observed_weight(mod.weight, getattr(mod, 'qconfig', None)),
                          None if mod.bias is None else mod.bias.detach().float())
        return q


def _dyn_linear(packed, x):
    """A dynamic quantized linear map by the weight and bias of LinearPackedParams ``packed``."""
    return qops._linear_dynamic_unpacked(x, *packed._weight_bias(), _reduce_range())


# ATen's cells (RNN.cpp), given the input's and the hidden state's linear maps: the gate arithmetic in float32
def _lstm_step(gates_x, gates_h, c):
    i, f, g, o = (gates_h + gates_x).chunk(4, 1)
    c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
    return ember.sigmoid(o) * ember.tanh(c), c


def _gru_step(gates_x, gates_h, h):
    ir, iz, inn = gates_x.chunk(3, 1)
    hr, hz, hn = gates_h.chunk(3, 1)
    r, z = ember.sigmoid(hr + ir), ember.sigmoid(hz + iz)
    n = ember.tanh(inn + hn * r)
    return (h - n) * z + n


class LSTM(nn.Module):
    """A dynamically quantized LSTM: each gate's two linear maps are dynamic quantized linears (weights qint8 per
    tensor, biases float), the gate nonlinearities run in float32 (torch's ``quantized_lstm``).

    >>> m = LSTM(3, 4)
    >>> out, (h, c) = m(ember.randn(5, 2, 3))
    >>> out.shape
    ember.Size([5, 2, 4])
    """
    _FLOAT_MODULE = nn.LSTM

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=ember.qint8):
        nn.Module.__init__(self)
        float_cls = self._FLOAT_MODULE          # nn.LSTM, or nn.GRU for the GRU below
        self.mode, self.input_size, self.hidden_size = float_cls.__name__, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.dtype = float(dropout), bidirectional, dtype
        self.version = 2
        self._all_weight_values = nn.ModuleList()
        # torch's constructor starts from a float module's initial weights, quantized
        self._pack(float_cls(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional), None)

    def _get_name(self):
        return 'DynamicQuantizedLSTM'

    def __repr__(self):
        return _hide_children_repr(self, nn.ModuleList)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if self.batch_first is not False:
            s += f', batch_first={self.batch_first}'
        if self.dropout != 0:
            s += f', dropout={self.dropout}'
        if self.bidirectional is not False:
            s += f', bidirectional={self.bidirectional}'
        return s

    def _run(self, xs, h, c, ih, hh, reverse):
        """One layer, one direction. As ATen's CPU LSTM, the input projection of the whole sequence is one call, so
        the input is quantized with one scale for all time steps; the hidden state's, one per step."""
        gates_x = _dyn_linear(ih, xs)
        steps = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
        outs = [None] * xs.shape[0]
        for t in steps:
            h, c = self._step(gates_x[t], h, c, hh)
            outs[t] = h
        return ember.stack(outs), h, c

    @staticmethod
    def _step(gates_x, h, c, hh):
        return _lstm_step(gates_x, _dyn_linear(hh, h), c)

    def forward(self, input, hx=None):
        batched = input.dim() == 3
        x = input if batched else input.unsqueeze(1)
        if self.batch_first and batched:
            x = x.transpose(0, 1)
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            z = ember.zeros(self.num_layers * dirs, x.shape[1], self.hidden_size)
            hx = (z, z.clone())
        elif not batched:
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                ih, hh = self._all_weight_values[2 * k], self._all_weight_values[2 * k + 1]
                out, h, c = self._run(x, hx[0][k], hx[1][k], ih, hh, reverse=d == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            x = ember.cat(outs, -1) if dirs == 2 else outs[0]
        out = x.transpose(0, 1) if self.batch_first and batched else x
        h, c = ember.stack(hs), ember.stack(cs)
        if not batched:
            return out.squeeze(1), (h.squeeze(1), c.squeeze(1))
        return out, (h, c)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        name = cls._FLOAT_MODULE.__name__           # LSTM, or GRU for the subclass
        if type(mod).__name__ != name:
            raise AssertionError(f"nn.quantized.dynamic.{name}.from_float only works for nn.{name}")
        q = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                mod.bidirectional)
        q._pack(mod, getattr(mod, 'qconfig', None))
        return q

    def _pack(self, mod, qconfig):
        """Quantize a float LSTM's weights (per tensor, qint8) into ``_all_weight_values``: w_ih, w_hh per layer
        and direction, each with its float bias."""
        self._all_weight_values = nn.ModuleList()
        for layer in range(mod.num_layers):
            for sfx in [''] + (['_reverse'] if mod.bidirectional else []):
                for kind in ('ih', 'hh'):
                    w = getattr(mod, f'weight_{kind}_l{layer}{sfx}')
                    b = getattr(mod, f'bias_{kind}_l{layer}{sfx}') if mod.bias else None
                    p = LinearPackedParams(ember.qint8)
                    p.set_weight_bias(_observed_weight(w, qconfig), None if b is None else b.detach().float())
                    self._all_weight_values.append(p)


class GRU(LSTM):
    """A dynamically quantized GRU: the input's and the hidden state's maps are dynamic quantized linears (weights
    qint8 per tensor, biases float), the gates run in float32 (torch's ``quantized_gru``).

    >>> out, h = GRU(3, 4)(ember.randn(5, 2, 3))
    >>> out.shape, h.shape
    (ember.Size([5, 2, 4]), ember.Size([1, 2, 4]))
    """
    _FLOAT_MODULE = nn.GRU

    def _get_name(self):
        return 'DynamicQuantizedGRU'

    @staticmethod
    def _step(gates_x, h, c, hh):
        h = _gru_step(gates_x, _dyn_linear(hh, h), h)
        return h, c

    def forward(self, input, hx=None):
        cell = None if hx is None else (hx, hx)
        out, (h, _) = super().forward(input, cell)
        return out, h


class RNNCellBase(nn.Module):
    """The dynamically quantized cells: ``_packed_weight_ih`` and ``_packed_weight_hh`` hold the qint8 weights
    (per tensor) with their float biases; a call quantizes the input and the hidden state each from its range."""
    _FLOAT_NAME = None
    _CHUNKS = 1

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=None, dtype=ember.qint8):
        super().__init__()
        if dtype != ember.qint8:
            raise AssertionError("ember's dynamic quantization supports qint8 weights (float16 is not provided)")
        self.input_size, self.hidden_size, self.bias, self.weight_dtype = input_size, hidden_size, bias, dtype
        n = (num_chunks or self._CHUNKS) * hidden_size
        # torch's constructor: random weights quantized with scale 1, random biases
        self.bias_ih = ember.randn(n) if bias else None
        self.bias_hh = ember.randn(n) if bias else None
        w_ih = ember.quantize_per_tensor(ember.randn(n, input_size), 1.0, 0, ember.qint8)
        w_hh = ember.quantize_per_tensor(ember.randn(n, hidden_size), 1.0, 0, ember.qint8)
        self._set_packed(w_ih, self.bias_ih, w_hh, self.bias_hh)

    def _set_packed(self, w_ih, b_ih, w_hh, b_hh):
        self._packed_weight_ih = LinearPackedParams(ember.qint8)
        self._packed_weight_ih.set_weight_bias(w_ih, b_ih)
        self._packed_weight_hh = LinearPackedParams(ember.qint8)
        self._packed_weight_hh.set_weight_bias(w_hh, b_hh)

    def _get_name(self):
        return 'DynamicQuantized' + type(self).__name__

    def __repr__(self):
        return _hide_children_repr(self, LinearPackedParams)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if getattr(self, 'nonlinearity', 'tanh') != 'tanh':
            s += f', nonlinearity={self.nonlinearity}'
        return s

    def check_forward_input(self, input):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)}, expected "
                               f"{self.input_size}")

    def check_forward_hidden(self, input, hx, hidden_label=''):
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{hidden_label} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{hidden_label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                               f"{self.hidden_size}")

    def _zeros(self, input):
        return ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype)

    def _gates(self, input, hx):
        return _dyn_linear(self._packed_weight_ih, input), _dyn_linear(self._packed_weight_hh, hx)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod).__name__ != cls._FLOAT_NAME:
            raise AssertionError(f"nn.quantized.dynamic.{cls.__name__}.from_float only works for "
                                 f"nn.{cls._FLOAT_NAME}")
        kw = {'nonlinearity': mod.nonlinearity} if cls is RNNCell else {}
        q = cls(mod.input_size, mod.hidden_size, bias=mod.bias, **kw)
        qconfig = getattr(mod, 'qconfig', None)
        b_ih = None if mod.bias_ih is None else mod.bias_ih.detach().float()
        b_hh = None if mod.bias_hh is None else mod.bias_hh.detach().float()
        q.bias_ih, q.bias_hh = b_ih, b_hh
        q._set_packed(_observed_weight(mod.weight_ih, qconfig), b_ih, _observed_weight(mod.weight_hh, qconfig), b_hh)
        return q


class LSTMCell(RNNCellBase):
    """A dynamically quantized LSTMCell (torch's ``quantized_lstm_cell_dynamic``).

    >>> h, c = LSTMCell(3, 4)(ember.randn(2, 3))
    >>> h.shape
    ember.Size([2, 4])
    """
    _FLOAT_NAME, _CHUNKS = 'LSTMCell', 4

    def forward(self, input, hx=None):
        self.check_forward_input(input)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        self.check_forward_hidden(input, hx[0], '[0]')
        self.check_forward_hidden(input, hx[1], '[1]')
        return _lstm_step(*self._gates(input, hx[0]), hx[1])


class GRUCell(RNNCellBase):
    """A dynamically quantized GRUCell (torch's ``quantized_gru_cell_dynamic``).

    >>> GRUCell(3, 4)(ember.randn(2, 3)).shape
    ember.Size([2, 4])
    """
    _FLOAT_NAME, _CHUNKS = 'GRUCell', 3

    def forward(self, input, hx=None):
        self.check_forward_input(input)
        if hx is None:
            hx = self._zeros(input)
        self.check_forward_hidden(input, hx, '')
        return _gru_step(*self._gates(input, hx), hx)


class RNNCell(RNNCellBase):
    """A dynamically quantized RNNCell, tanh or relu (torch's ``quantized_rnn_tanh_cell_dynamic``).

    >>> RNNCell(3, 4, nonlinearity='relu')(ember.randn(2, 3)).min() >= 0
    tensor(True)
    """
    _FLOAT_NAME = 'RNNCell'

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', dtype=ember.qint8):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        self.check_forward_input(input)
        if hx is None:
            hx = self._zeros(input)
        self.check_forward_hidden(input, hx, '')
        gx, gh = self._gates(input, hx)
        if self.nonlinearity == 'tanh':
            return ember.tanh(gh + gx)
        if self.nonlinearity == 'relu':
            return ember.relu(gh + gx)
        raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
