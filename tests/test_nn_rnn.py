"""RNN, LSTM, GRU and their cells against torch with identical weights: padded, batch_first, unbatched,
multi-layer, bidirectional, projections, initial states and PackedSequence input (outputs, final states,
gradients of inputs, states and every parameter)."""
import numpy as np
import pytest
import torch

import ember
from test_nn_util import compare_module, same_state_dict_layout, randn, e2n, copy_state

tnn, enn = torch.nn, ember.nn

CONFIGS = [
    ('RNN', {}), ('RNN', {'nonlinearity': 'relu', 'num_layers': 2}), ('RNN', {'bidirectional': True, 'bias': False}),
    ('LSTM', {}), ('LSTM', {'num_layers': 2, 'bidirectional': True}), ('LSTM', {'proj_size': 3}),
    ('LSTM', {'proj_size': 2, 'bidirectional': True, 'num_layers': 2}),
    ('GRU', {}), ('GRU', {'num_layers': 3}), ('GRU', {'bidirectional': True, 'num_layers': 2}),
]


def _mk(name, **kw):
    return getattr(tnn, name)(4, 5, **kw).double(), getattr(enn, name)(4, 5, **kw).double()


@pytest.mark.parametrize('name,kw', CONFIGS, ids=[f'{n}-{k}' for n, k in CONFIGS])
@pytest.mark.parametrize('batch_first', [False, True])
def test_padded_input(name, kw, batch_first):
    t, e = _mk(name, batch_first=batch_first, **kw)
    same_state_dict_layout(t, e)
    assert repr(e) == repr(t)
    x = randn(2, 6, 4, dtype=np.float64) if batch_first else randn(6, 2, 4, dtype=np.float64)
    compare_module(t, e, [x], atol=1e-10)


@pytest.mark.parametrize('name,kw', CONFIGS, ids=[f'{n}-{k}' for n, k in CONFIGS])
def test_initial_state_and_unbatched(name, kw):
    t, e = _mk(name, **kw)
    nd = 2 if kw.get('bidirectional') else 1
    L = kw.get('num_layers', 1)
    hsz = kw.get('proj_size', 5) or 5
    h0 = randn(L * nd, 3, hsz, seed=5, dtype=np.float64)
    x = randn(4, 3, 4, dtype=np.float64)
    state = (h0, randn(L * nd, 3, 5, seed=6, dtype=np.float64)) if name == 'LSTM' else h0
    compare_module(t, e, [x, state], atol=1e-10)
    state1 = (h0[:, 0], randn(L * nd, 5, seed=6, dtype=np.float64)) if name == 'LSTM' else h0[:, 0]
    compare_module(t, e, [x[:, 0], state1], atol=1e-10)
    compare_module(t, e, [x[:, 0]], atol=1e-10)


@pytest.mark.parametrize('name,kw', CONFIGS, ids=[f'{n}-{k}' for n, k in CONFIGS])
@pytest.mark.parametrize('enforce_sorted', [True, False])
def test_packed_sequence(name, kw, enforce_sorted):
    t, e = _mk(name, batch_first=True, **kw)
    copy_state(t, e)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = randn(4, 5, 4, dtype=np.float64)

    def call(m, xx, lib):
        pu = lib.nn.utils.rnn
        packed = pu.pack_padded_sequence(xx, lengths, batch_first=True, enforce_sorted=enforce_sorted)
        out, h = m(packed)
        padded, lens = pu.pad_packed_sequence(out, batch_first=True)
        assert lens.tolist() == lengths
        return padded, h
    compare_module(t, e, [x], call=lambda m, xx: call(m, xx, torch if isinstance(m, tnn.Module) else ember),
                   atol=1e-10, copy=False)


@pytest.mark.parametrize('name', ['RNN', 'LSTM', 'GRU'])
def test_packed_with_initial_state_unsorted(name):
    t, e = _mk(name, num_layers=2, bidirectional=True)
    copy_state(t, e)
    lengths = [2, 4, 3]
    x = randn(4, 3, 4, dtype=np.float64)
    h0 = randn(4, 3, 5, seed=2, dtype=np.float64)
    state = (h0, randn(4, 3, 5, seed=3, dtype=np.float64)) if name == 'LSTM' else h0

    def call(m, xx, st):
        lib = torch if isinstance(m, tnn.Module) else ember
        packed = lib.nn.utils.rnn.pack_padded_sequence(xx, lengths, enforce_sorted=False)
        out, h = m(packed, st)
        return lib.nn.utils.rnn.pad_packed_sequence(out, total_length=5)[0], h
    compare_module(t, e, [x, state], call=call, atol=1e-10, copy=False)


def test_dropout_between_layers_only_in_training():
    e = enn.GRU(4, 5, num_layers=2, dropout=0.5)
    x = ember.randn(3, 2, 4)
    e.eval()
    a, b = e(x)[0], e(x)[0]
    np.testing.assert_array_equal(e2n(a), e2n(b))
    e.train()
    assert not np.allclose(e2n(e(x)[0]), e2n(e(x)[0]))


def test_rnn_errors_like_torch():
    t, e = _mk('LSTM')
    cases = [lambda L: (L.randn(3, 2, 3, dtype=L.float64),),
             lambda L: (L.randn(3, 2, 2, 4, dtype=L.float64),),
             lambda L: (L.randn(3, 2, 4, dtype=L.float64), (L.zeros(1, 3, 5, dtype=L.float64),
                                                            L.zeros(1, 2, 5, dtype=L.float64))),
             lambda L: (L.randn(3, 2, 4, dtype=L.float64), (L.zeros(2, 5, dtype=L.float64),
                                                            L.zeros(2, 5, dtype=L.float64)))]
    for c in cases:
        with pytest.raises(Exception) as te:
            t(*c(torch))
        with pytest.raises(type(te.value)) as ee:
            e(*c(ember))
        assert str(ee.value) == str(te.value)
    for kw in ({'dropout': 2}, {'num_layers': 0}, {'proj_size': 5}):
        with pytest.raises(ValueError) as te:
            tnn.LSTM(4, 5, **kw)
        with pytest.raises(ValueError) as ee:
            enn.LSTM(4, 5, **kw)
        assert str(ee.value) == str(te.value)
    with pytest.warns(UserWarning, match='dropout option adds dropout'):
        enn.GRU(2, 3, dropout=0.3)


@pytest.mark.parametrize('name,kw', [('RNNCell', {}), ('RNNCell', {'nonlinearity': 'relu', 'bias': False}),
                                     ('LSTMCell', {}), ('GRUCell', {}), ('GRUCell', {'bias': False})])
def test_cells(name, kw):
    t, e = getattr(tnn, name)(4, 5, **kw).double(), getattr(enn, name)(4, 5, **kw).double()
    same_state_dict_layout(t, e)
    assert repr(e) == repr(t)
    x = randn(3, 4, dtype=np.float64)
    compare_module(t, e, [x], atol=1e-10)
    h = randn(3, 5, seed=1, dtype=np.float64)
    state = (h, randn(3, 5, seed=2, dtype=np.float64)) if name == 'LSTMCell' else h
    compare_module(t, e, [x, state], atol=1e-10)
    compare_module(t, e, [x[0]], atol=1e-10)


def test_lstm_trains_like_torch_over_steps():
    t, e = tnn.LSTM(3, 4, batch_first=True), enn.LSTM(3, 4, batch_first=True)
    copy_state(t, e)
    ot = torch.optim.SGD(t.parameters(), lr=0.1)
    x = randn(2, 5, 3)
    for _ in range(3):
        ot.zero_grad()
        t(torch.from_numpy(x))[0].pow(2).mean().backward()
        ot.step()
        e.zero_grad()
        out = e(ember.from_numpy(x))[0]
        (out * out).mean().backward()
        with ember.no_grad():
            for p in e.parameters():
                p.sub_(p.grad * 0.1)
    for (n, a), (_, b) in zip(e.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(e2n(a), b.detach().numpy(), atol=1e-5, err_msg=n)
