"""ember.ao.nn.quantized.dynamic (also ember.nn.quantized.dynamic): layers with quantized weights and float
inputs and outputs; each call quantizes its input per tensor from the input's own range (quint8, the range
reduced by a bit on x86/fbgemm, as torch's), accumulates in int32 and returns float32."""
import ember
from ember import nn
from ..linear import Linear as _QLinear, LinearPackedParams
from .._utils import _quantize_weight, _hide_children_repr

__all__ = ['Linear', 'LSTM']

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
        super().__init__()
        self.mode, self.input_size, self.hidden_size = 'LSTM', input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.dtype = float(dropout), bidirectional, dtype
        self.version = 2
        self._all_weight_values = nn.ModuleList()
        # torch's constructor starts from a float LSTM's initial weights, quantized
        self._pack(nn.LSTM(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional), None)

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
        rr = _reduce_range()
        gates_x = qops._linear_dynamic_unpacked(xs, *ih._weight_bias(), rr)
        steps = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
        outs = [None] * xs.shape[0]
        for t in steps:
            gates = gates_x[t] + qops._linear_dynamic_unpacked(h, *hh._weight_bias(), rr)
            i, f, g, o = gates.chunk(4, 1)
            c = ember.sigmoid(f) * c + ember.sigmoid(i) * ember.tanh(g)
            h = ember.sigmoid(o) * ember.tanh(c)
            outs[t] = h
        return ember.stack(outs), h, c

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
        if type(mod).__name__ != 'LSTM':
            raise AssertionError("nn.quantized.dynamic.LSTM.from_float only works for nn.LSTM")
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
