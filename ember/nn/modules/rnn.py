"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their cells, with torch's parameter names, gate order
(LSTM: i, f, g, o; GRU: r, z, n), initialisation U(-1/√H, 1/√H), shapes and PackedSequence support.

One code path serves padded and packed input: a padded (L, N, *) batch is a
packed batch whose every step has N rows. The input projection of a whole
layer is one ``F.linear`` over all time steps; only the recurrent part loops
over time. When a packed batch shrinks (sequences end), the rows that leave
are the finished sequences' final states (and, running backwards, rows join
with their initial state).
"""
import math
import numbers
import weakref
from ember._warn import warnings

from ..._tensor import Tensor
from ... import _functions as _E
from ... import _python_functions as _PF
from ... import float32 as _float32, float64 as _float64
from ...ops import aten
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ['RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell', 'LSTMCell', 'GRUCell']


# --- one time step of each kind of cell (gi: the input's projection, with b_ih) ----------------

def _rnn_step(act):
    def step(gi, state, w_hh, b_hh, w_hr):
        return act(gi + F.linear(state, w_hh, b_hh))
    return step


def _lstm_step(gi, state, w_hh, b_hh, w_hr):
    h, c = state
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi, h, w_hh, b_hh, w_hr):
    gh = F.linear(h, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (h - n)


# The layers' steps: one fused cell operator (torch's _thnn_fused_*_cell, which torch runs on CUDA) and one autograd
# node per step instead of ~10 (bench/bench_rnn.py). Half precision keeps the operator-by-operator steps above, whose
# roundings are torch's CPU ones. The cells (LSTMCell, ...) keep them too: torch's CPU lstm_cell is that composite,
# and its graph (grad_fn names) is what users see. The hidden bias goes into the hidden projection (torch's fused
# cells take both biases or neither).
_FUSED_DTYPES = (_float32, _float64)


def _lstm_step_fused(gi, state, w_hh, b_hh, w_hr):
    h, c = state
    if gi.dtype not in _FUSED_DTYPES:
        return _lstm_step(gi, state, w_hh, b_hh, w_hr)
    h, c, _ = aten._thnn_fused_lstm_cell.default(gi, F.linear(h, w_hh, b_hh), c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step_fused(gi, h, w_hh, b_hh, w_hr):
    if gi.dtype not in _FUSED_DTYPES:
        return _gru_step(gi, h, w_hh, b_hh, w_hr)
    return aten._thnn_fused_gru_cell.default(gi, F.linear(h, w_hh, b_hh), h)[0]


def _rows(state, a, b):
    return tuple(s.narrow(0, a, b - a) for s in state) if isinstance(state, tuple) else state.narrow(0, a, b - a)


def _join(parts):
    if isinstance(parts[0], tuple):
        return tuple(_E.cat([p[k] for p in parts], 0) for k in range(len(parts[0])))
    return _E.cat(parts, 0)


def _out(state):
    return state[0] if isinstance(state, tuple) else state


def _run_direction(step, xw, batch_sizes, state0, weights, reverse):
    """Run one direction of one layer over packed data ``xw`` (rows of all steps, input projection done).
    Returns (outputs in packed order, final state of every sequence in batch order)."""
    w_hh, b_hh, w_hr = weights
    # the steps' input rows as one split (its backward joins the pieces' gradients once; a narrow per step
    # would make each step's gradient a zero-filled (T*B, gates) tensor, summed T times)
    steps = xw.split(list(batch_sizes), 0)
    T = len(batch_sizes)
    outs = [None] * T
    if not reverse:
        state = _rows(state0, 0, batch_sizes[0])
        finished = []
        for t in range(T):
            bs = batch_sizes[t]
            cur = state[0].size(0) if isinstance(state, tuple) else state.size(0)
            if bs < cur:        # sequences bs..cur-1 ended at t-1: their states are final
                finished.append(_rows(state, bs, cur))
                state = _rows(state, 0, bs)
            state = step(steps[t], state, w_hh, b_hh, w_hr)
            outs[t] = _out(state)
        final = _join([state] + finished[::-1]) if finished else state
    else:
        state = None
        for t in range(T - 1, -1, -1):
            bs = batch_sizes[t]
            cur = 0 if state is None else (state[0].size(0) if isinstance(state, tuple) else state.size(0))
            if bs > cur:        # sequences cur..bs-1 start here (their last step), from their initial state
                new = _rows(state0, cur, bs)
                state = new if state is None else _join([state, new])
            state = step(steps[t], state, w_hh, b_hh, w_hr)
            outs[t] = _out(state)
        final = state
    return _E.cat(outs, 0), final


_CELL_STEPS = {'LSTM': _lstm_step, 'GRU': _gru_step}
_STEPS = {'LSTM': _lstm_step_fused, 'GRU': _gru_step_fused, 'RNN_TANH': _rnn_step(lambda x: x.tanh()),
          'RNN_RELU': _rnn_step(F.relu)}


def run_layers(mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """All layers and directions of a ``mode`` RNN over packed ``data`` (rows of all steps; ``batch_sizes`` a list of
    ints), as torch's ``_VF.lstm``/``gru``/``rnn_tanh``/``rnn_relu`` run them: ``params`` the flat weights (per layer
    and direction w_ih, w_hh, then b_ih, b_hh with biases, then w_hr for an LSTM with projections), ``hx`` a
    (layers*dirs, B, H) tensor or an LSTM's (h, c). Returns (output data, final state(s) stacked like hx)."""
    step = _STEPS[mode]
    nd = 2 if bidirectional else 1
    lstm = mode == 'LSTM'
    per = len(params) // (num_layers * nd)
    if per * num_layers * nd != len(params) or per not in ((2, 4) if not lstm else (2, 3, 4, 5)):
        raise RuntimeError(f"{mode.lower()}: expected {num_layers * nd} groups of weights, got {len(params)} "
                           "parameters")
    proj = lstm and per == (5 if has_biases else 3)
    finals = []
    layer_in = data
    for layer in range(num_layers):
        outs = []
        for d in range(nd):
            idx = layer * nd + d
            p = params[idx * per:(idx + 1) * per]
            w_ih, w_hh = p[0], p[1]
            b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
            w_hr = p[-1] if proj else None
            state0 = (hx[0].select(0, idx), hx[1].select(0, idx)) if lstm else hx.select(0, idx)
            xw = F.linear(layer_in, w_ih, b_ih)
            out, final = _run_direction(step, xw, batch_sizes, state0, (w_hh, b_hh, w_hr), d == 1)
            outs.append(out)
            finals.append(final)
        layer_in = outs[0] if nd == 1 else _E.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            layer_in = F.dropout(layer_in, dropout, True)
    if lstm:
        return layer_in, (_E.stack([f[0] for f in finals]), _E.stack([f[1] for f in finals]))
    return layer_in, _E.stack(finals)


def cell(mode, input, hx, w_ih, w_hh, b_ih, b_hh):
    """One step of a ``mode`` cell on a (batch, input_size) input: torch's ``lstm_cell``, ``gru_cell``, ...
    (``hx`` an LSTM's (h, c), else h)."""
    return _CELL_STEPS.get(mode, _STEPS[mode])(F.linear(input, w_ih, b_ih), tuple(hx) if mode == 'LSTM' else hx, w_hh,
                                               b_hh, None)


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (parameters, checks, the layer/direction loop)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            # at torch's frame (the subclass's __init__ calling this one), as torch's
            warnings.warn_in_library("dropout option adds dropout after all but last recurrent layer, so non-zero "
                                     f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                                     f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {'LSTM': 4, 'GRU': 3, 'RNN_TANH': 1, 'RNN_RELU': 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        kw = dict(device=device, dtype=dtype)
        real_hidden = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                params = [('weight_ih_l{}{}', (gate_size, layer_input)), ('weight_hh_l{}{}', (gate_size, real_hidden))]
                if bias:
                    params += [('bias_ih_l{}{}', (gate_size,)), ('bias_hh_l{}{}', (gate_size,))]
                if proj_size > 0:
                    params += [('weight_hr_l{}{}', (proj_size, hidden_size))]
                suffix = '_reverse' if direction == 1 else ''
                names = []
                for fmt, shape in params:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(_E.empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()
        self._remember_weights()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # NOTE [flat weights]: torch keeps ``_flat_weights``, the list its forward hands to ``_VF.lstm``, as a plain
    # attribute that libraries replace (higher's monkeypatched modules assign their own tensors). Here it is read
    # fresh from the parameters unless someone assigned a list; an assigned list follows ``self.weight_* = ...`` as
    # torch's does, and ``_apply`` (``.to``, ``.double()``) drops it, as torch re-reads the parameters there; so
    # does a forward after a parameter object was replaced (torch's ``_weights_have_changed``).
    @property
    def _flat_weights(self):
        assigned = self.__dict__.get('_flat_weights')
        return assigned if assigned is not None else [getattr(self, n) for n in self._flat_weights_names]

    @_flat_weights.setter
    def _flat_weights(self, value):
        self.__dict__['_flat_weights'] = list(value)

    def __setattr__(self, name, value):
        assigned = self.__dict__.get('_flat_weights')
        if assigned is not None and name in self.__dict__.get('_flat_weights_names', ()):
            assigned[self._flat_weights_names.index(name)] = value
        super().__setattr__(name, value)

    def _apply(self, fn, recurse=True):
        self.__dict__.pop('_flat_weights', None)
        ret = super()._apply(fn, recurse)
        self._remember_weights()
        return ret

    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), '__getstate__') else self.__dict__
        state = dict(state)
        state.pop('_flat_weight_refs', None)        # weak references do not pickle (torch drops them too)
        # torch's state holds the list (its __setstate__ and forward read it): a file torch loads needs it
        state.setdefault('_flat_weights', [getattr(self, n, None) for n in self._flat_weights_names])
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._remember_weights()

    def _remember_weights(self):
        """Which parameter objects the flat weights came from (torch's ``_flat_weight_refs``)."""
        self.__dict__['_flat_weight_refs'] = [weakref.ref(w) if w is not None else None
                                              for w in (getattr(self, n, None) for n in self._flat_weights_names)]

    def _drop_stale_flat_weights(self):
        """torch's forward re-reads the parameters when one was replaced since they were last read (its
        ``_weights_have_changed``): an assigned list is then dropped."""
        refs = self.__dict__.get('_flat_weight_refs', ())
        if '_flat_weights' in self.__dict__ and any(
                r is not None and r() is not getattr(self, n, None) for r, n in zip(refs, self._flat_weights_names)):
            del self.__dict__['_flat_weights']
            self._remember_weights()

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        pass

    def extra_repr(self):
        s = '{input_size}, {hidden_size}'
        if self.proj_size != 0:
            s += ', proj_size={proj_size}'
        if self.num_layers != 1:
            s += ', num_layers={num_layers}'
        if self.bias is not True:
            s += ', bias={bias}'
        if self.batch_first is not False:
            s += ', batch_first={batch_first}'
        if self.dropout != 0:
            s += ', dropout={dropout}'
        if self.bidirectional is not False:
            s += ', bidirectional={bidirectional}'
        return s.format(**self.__dict__)

    # --- checks -----------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        mini_batch = int(batch_sizes[0]) if batch_sizes is not None else \
            (input.size(0) if self.batch_first else input.size(1))
        nd = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * nd, mini_batch, h)

    def check_hidden_size(self, hx, expected, msg='Expected hidden size {}, got {}'):
        if tuple(hx.size()) != tuple(expected):
            raise RuntimeError(msg.format(expected, list(hx.size())))

    # --- the computation ------------------------------------------------------------------
    def _function(self):
        """torch's function for this kind of RNN (``_VF.lstm``, ...), which ``__torch_function__`` sees."""
        return getattr(_PF, {'LSTM': 'lstm', 'GRU': 'gru', 'RNN_TANH': 'rnn_tanh', 'RNN_RELU': 'rnn_relu'}[self.mode])

    def _zeros_state(self, input, batch):
        nd = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return _E.zeros((self.num_layers * nd, batch, h), dtype=input.dtype, device=input.device)

    def forward(self, input, hx=None):
        self._drop_stale_flat_weights()
        lstm = self.mode == 'LSTM'
        if isinstance(hx, list):        # torch takes (h, c) as a list too
            hx = tuple(hx)
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            batch = batch_sizes[0]
            self.check_input(data, batch_sizes_t)
            if hx is None:
                hx = self._zeros_state(data, batch)
                if lstm:
                    hx = (hx, _E.zeros((hx.size(0), batch, self.hidden_size), dtype=data.dtype, device=data.device))
            elif sorted_indices is not None:
                hx = tuple(h.index_select(1, sorted_indices) for h in hx) if lstm else \
                    hx.index_select(1, sorted_indices)
            self._check_hx(hx, batch)
            out, *h = self._function()(data, batch_sizes_t, hx, self._flat_weights, self.bias, self.num_layers,
                                       self.dropout, self.training, self.bidirectional)
            h = tuple(h) if lstm else h[0]
            if unsorted_indices is not None:
                h = tuple(x.index_select(1, unsorted_indices) for x in h) if lstm else \
                    h.index_select(1, unsorted_indices)
            return PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices), h
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if lstm:
                    if hx[0].dim() != 2 or hx[1].dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                else:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
        else:
            if hx is not None:
                if lstm:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                elif hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")
        N = input.size(batch_dim)
        if hx is None:
            hx = self._zeros_state(input, N)
            if lstm:
                hx = (hx, _E.zeros((hx.size(0), N, self.hidden_size), dtype=input.dtype, device=input.device))
        self._check_hx(hx, N)
        out, *h = self._function()(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                   self.training, self.bidirectional, self.batch_first)
        h = tuple(h) if lstm else h[0]
        if not batched:
            out = out.squeeze(batch_dim)
            h = tuple(x.squeeze(1) for x in h) if lstm else h.squeeze(1)
        return out, h

    def _check_hx(self, hx, mini_batch):
        nd = 2 if self.bidirectional else 1
        expected = (self.num_layers * nd, mini_batch, self.proj_size if self.proj_size > 0 else self.hidden_size)
        if self.mode == 'LSTM':
            self.check_hidden_size(hx[0], expected, 'Expected hidden[0] size {}, got {}')
            cell = (expected[0], expected[1], self.hidden_size)
            self.check_hidden_size(hx[1], cell, 'Expected hidden[1] size {}, got {}')
        else:
            self.check_hidden_size(hx, expected)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (``nonlinearity='relu'`` for ReLU).

    >>> import ember
    >>> out, h = ember.nn.RNN(4, 3, num_layers=2)(ember.randn(5, 2, 4))
    >>> tuple(out.shape), tuple(h.shape)
    ((5, 2, 3), (2, 2, 3))
    """

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop('nonlinearity', 'tanh')
        if self.nonlinearity == 'tanh':
            mode = 'RNN_TANH'
        elif self.nonlinearity == 'relu':
            mode = 'RNN_RELU'
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """LSTM with torch's gate order (input, forget, cell, output) and optional projection (``proj_size``).

    >>> import ember
    >>> out, (h, c) = ember.nn.LSTM(4, 3, batch_first=True)(ember.randn(2, 5, 4))
    >>> tuple(out.shape), tuple(c.shape)
    ((2, 5, 3), (1, 2, 3))
    """

    def __init__(self, *args, **kwargs):
        super().__init__('LSTM', *args, **kwargs)


class GRU(RNNBase):
    """GRU with torch's gate order (reset, update, new): n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__('GRU', *args, **kwargs)


class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` (chunks x hidden, input), ``weight_hh`` (chunks x hidden, hidden) and
    their biases, initialised uniformly in +-1/sqrt(hidden_size) as torch's are."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(_E.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_E.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_E.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_E.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter('bias_ih', None)
            self.register_parameter('bias_hh', None)
        self.reset_parameters()

    def extra_repr(self):
        s = '{input_size}, {hidden_size}'
        if 'bias' in self.__dict__ and self.bias is not True:
            s += ', bias={bias}'
        if 'nonlinearity' in self.__dict__ and self.nonlinearity != 'tanh':
            s += ', nonlinearity={nonlinearity}'
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, n_states):
        if isinstance(hx, list):        # torch takes (h, c) as a list too
            hx = tuple(hx)
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for h in (hx if isinstance(hx, tuple) else (hx,)):
                if h.dim() not in (1, 2):
                    raise ValueError(f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                     "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(-1)} expected {self.input_size}")
        if hx is None:
            z = _E.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (z, z) if n_states == 2 else z
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(0)
        for h in (hx if isinstance(hx, tuple) else (hx,)):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden0 batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (``nonlinearity='relu'`` for ReLU).

    Inputs: ``input`` (batch, input_size) or (input_size), ``hx`` (batch, hidden_size), zeros when omitted.
    Output: h' (batch, hidden_size).
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ('tanh', 'relu'):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, hx, batched = self._prepare(input, hx, 1)
        fn = _PF.rnn_tanh_cell if self.nonlinearity == 'tanh' else _PF.rnn_relu_cell
        h = fn(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM with torch's gate order (input, forget, cell, output):
    c' = f * c + i * g, h' = o * tanh(c').

    Inputs: ``input`` (batch, input_size) or (input_size), ``(h_0, c_0)`` each (batch, hidden_size), zeros when
    omitted. Output: ``(h_1, c_1)``.
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, 2)
        h, c = _PF.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU with torch's gate order (reset, update, new): n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
    h' = (1 - z) * n + z * h.

    Inputs: ``input`` (batch, input_size) or (input_size), ``hx`` (batch, hidden_size), zeros when omitted.
    Output: h' (batch, hidden_size).
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, 1)
        h = _PF.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)
