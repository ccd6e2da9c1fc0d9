"""nn.utils against torch: clip_grad_norm_ (every norm type, non-finite errors), clip_grad_value_,
parameters_to_vector / vector_to_parameters, pad_sequence, pack/pad/unpack of sequences."""
import math

import numpy as np
import pytest
import torch

import ember
from test_nn_util import e2n, t2e

TU, EU = torch.nn.utils, ember.nn.utils


def _params(lib, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    ps = []
    for shape in [(3, 4), (5,), (2, 2, 2)]:
        p = lib.nn.Parameter(lib.from_numpy(rng.standard_normal(shape).astype(np.float32)))
        p.grad = lib.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
        ps.append(p)
    ps.append(lib.nn.Parameter(lib.zeros(2)))      # no grad
    return ps


@pytest.mark.parametrize('norm_type', [2.0, 1, 3.5, math.inf, 0])
@pytest.mark.parametrize('max_norm', [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    tp, ep = _params(torch), _params(ember)
    tn = TU.clip_grad_norm_(tp, max_norm, norm_type)
    en = EU.clip_grad_norm_(ep, max_norm, norm_type)
    assert isinstance(en, ember.Tensor) and en.dim() == 0 and en.dtype == ember.float32
    np.testing.assert_allclose(float(en), float(tn), rtol=1e-5)
    for a, b in zip(ep, tp):
        if b.grad is not None:
            np.testing.assert_allclose(e2n(a.grad), b.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_single_tensor_generator_and_empty():
    p = ember.nn.Parameter(ember.ones(4))
    p.grad = ember.full((4,), 3.0)
    assert float(EU.clip_grad_norm_(p, 1.0)) == 6.0
    np.testing.assert_allclose(e2n(p.grad), np.full(4, 0.5), rtol=1e-5)
    assert float(EU.clip_grad_norm_([ember.nn.Parameter(ember.ones(2))], 1.0)) == 0.0
    with pytest.warns(UserWarning, match='empty generator'):
        EU.clip_grad_norm_((p for p in []), 1.0)
    EU.clip_grad_norm_(_params(ember), 1.0, foreach=True)


def test_clip_grad_norm_nonfinite():
    ep = _params(ember)
    ep[0].grad = ember.full((3, 4), float('inf'))
    with pytest.raises(RuntimeError, match='non-finite'):
        EU.clip_grad_norm_(ep, 1.0, error_if_nonfinite=True)
    tp = _params(torch)
    tp[0].grad = torch.full((3, 4), float('nan'))
    ep[0].grad = ember.full((3, 4), float('nan'))
    assert math.isnan(float(EU.clip_grad_norm_(ep, 1.0))) and math.isnan(float(TU.clip_grad_norm_(tp, 1.0)))


def test_get_total_norm_and_clip_with_norm():
    tp, ep = _params(torch), _params(ember)
    tn = TU.get_total_norm([p.grad for p in tp if p.grad is not None], 3.0)
    en = EU.get_total_norm([p.grad for p in ep if p.grad is not None], 3.0)
    np.testing.assert_allclose(float(en), float(tn), rtol=1e-5)
    TU.clip_grads_with_norm_(tp, 1.0, tn)
    EU.clip_grads_with_norm_(ep, 1.0, en)
    np.testing.assert_allclose(e2n(ep[0].grad), tp[0].grad.numpy(), rtol=1e-5)


def test_clip_grad_value():
    tp, ep = _params(torch, scale=3), _params(ember, scale=3)
    assert TU.clip_grad_value_(tp, 1.5) is None and EU.clip_grad_value_(ep, 1.5) is None
    for a, b in zip(ep, tp):
        if b.grad is not None:
            np.testing.assert_array_equal(e2n(a.grad), b.grad.numpy())


def test_parameters_vector_round_trip():
    tp, ep = _params(torch), _params(ember)
    tv, ev = TU.parameters_to_vector(tp), EU.parameters_to_vector(ep)
    np.testing.assert_array_equal(e2n(ev), tv.detach().numpy())
    new = np.arange(ev.numel(), dtype=np.float32)
    TU.vector_to_parameters(torch.from_numpy(new), tp)
    EU.vector_to_parameters(ember.from_numpy(new.copy()), ep)
    for a, b in zip(ep, tp):
        np.testing.assert_array_equal(e2n(a), b.detach().numpy())
        assert isinstance(a, ember.nn.Parameter)
    with pytest.raises(TypeError):
        EU.vector_to_parameters([1, 2], ep)
    # gradient flows through parameters_to_vector
    m = ember.nn.Linear(2, 2)
    EU.parameters_to_vector(m.parameters()).sum().backward()
    assert float(m.weight.grad.sum()) == 4.0


SEQS = [(4, 3), (2, 3), (5, 3), (1, 3)]


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('padding_side', ['right', 'left'])
def test_pad_sequence(batch_first, padding_side):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in SEQS]
    t = torch.nn.utils.rnn.pad_sequence([torch.from_numpy(a) for a in arrs], batch_first, -1.0, padding_side)
    e = EU.rnn.pad_sequence([ember.from_numpy(a) for a in arrs], batch_first, -1.0, padding_side)
    np.testing.assert_array_equal(e2n(e), t.numpy())
    with pytest.raises(ValueError):
        EU.rnn.pad_sequence([ember.from_numpy(a) for a in arrs], padding_side='middle')


@pytest.mark.parametrize('enforce_sorted', [True, False])
@pytest.mark.parametrize('batch_first', [False, True])
def test_pack_pad_round_trip(enforce_sorted, batch_first):
    rng = np.random.default_rng(1)
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3)).astype(np.float32)
    tp = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), torch.tensor(lengths), batch_first,
                                                 enforce_sorted)
    ex = ember.from_numpy(x.copy()).requires_grad_()
    ep = EU.rnn.pack_padded_sequence(ex, ember.tensor(lengths), batch_first, enforce_sorted)
    np.testing.assert_array_equal(e2n(ep.data), tp.data.numpy())
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist() and ep.batch_sizes.dtype == ember.int64
    for a, b in [(ep.sorted_indices, tp.sorted_indices), (ep.unsorted_indices, tp.unsorted_indices)]:
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    tpad, tl = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first, 0.5, total_length=7)
    epad, el = EU.rnn.pad_packed_sequence(ep, batch_first, 0.5, total_length=7)
    np.testing.assert_array_equal(e2n(epad), tpad.numpy())
    assert el.tolist() == tl.tolist()
    epad.sum().backward()
    mask = np.zeros_like(x)
    for b, n in enumerate(lengths):
        if batch_first:
            mask[b, :n] = 1
        else:
            mask[:n, b] = 1
    np.testing.assert_array_equal(e2n(ex.grad), mask)


def test_pack_sequence_unpack_and_errors():
    seqs = [ember.ones(3, 2), ember.ones(1, 2) * 2, ember.ones(2, 2) * 3]
    p = EU.rnn.pack_sequence(seqs, enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_sequence([torch.ones(3, 2), torch.ones(1, 2) * 2, torch.ones(2, 2) * 3],
                                          enforce_sorted=False)
    np.testing.assert_array_equal(e2n(p.data), tp.data.numpy())
    back = EU.rnn.unpack_sequence(p)
    assert [tuple(s.shape) for s in back] == [(3, 2), (1, 2), (2, 2)]
    assert float(back[2].sum()) == 12.0
    unp = EU.rnn.unpad_sequence(EU.rnn.pad_sequence(seqs), ember.tensor([3, 1, 2]))
    assert [tuple(s.shape) for s in unp] == [(3, 2), (1, 2), (2, 2)]
    with pytest.raises(RuntimeError, match='must be sorted in decreasing order'):
        EU.rnn.pack_sequence(seqs)
    with pytest.raises(ValueError, match='Expected total_length to be at least'):
        EU.rnn.pad_packed_sequence(p, total_length=2)
    assert isinstance(p, tuple) and p.to(ember.float64).data.dtype == ember.float64
