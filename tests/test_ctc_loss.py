"""F.ctc_loss and nn.CTCLoss against torch's: losses for every reduction, padded and concatenated targets,
repeated labels, per-sample lengths (empty targets and inputs included), another blank, float32 and float64,
infinite losses with and without zero_infinity; gradients of the logits through log_softmax and of the
log-probabilities themselves (torch's formula, NOTE [CTC loss]); argument errors."""
import numpy as np
import pytest
import torch

import ember

CASES = [
    {}, {'red': 'sum'}, {'red': 'none'},
    {'lens': [6, 4, 5], 'tlens': [3, 1, 2]},
    {'concat': True, 'tlens': [3, 0, 2]},
    {'lens': [2, 6, 6], 'red': 'none'},                    # sample 0 cannot fit its target: an infinite loss
    {'lens': [2, 6, 6], 'red': 'mean', 'zi': True},
    {'blank': 4}, {'dtype': 'float32'}, {'T': 1, 'L': 1},
    {'lens': [0, 6, 6], 'tlens': [0, 2, 3], 'red': 'none'},
    {'unbatched': True}, {'tensor_lengths': True, 'red': 'sum'},
]


def _run(lib, T=6, N=3, C=5, L=3, lens=None, tlens=None, red='mean', zi=False, concat=False, blank=0,
         dtype='float64', unbatched=False, tensor_lengths=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, N, C))
    tg = rng.integers(1, C, (N, L))
    if blank:
        tg = np.where(tg == blank, 0, tg)
    tg[0, :2] = tg[0, 0]                                    # a repeated label needs a blank between
    lens, tlens = lens or [T] * N, tlens or [L] * N
    X = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    lp = X.log_softmax(-1)
    lp.retain_grad()
    tgt = lib.tensor(np.concatenate([tg[i, :tlens[i]] for i in range(N)]) if concat else tg)
    if unbatched:
        lp_in, tgt, lens, tlens = lp[:, 0], tgt[0], lib.tensor(lens[0]), lib.tensor(tlens[0])
    else:
        lp_in = lp
        if tensor_lengths:
            lens, tlens = lib.tensor(lens), lib.tensor(tlens)
    loss = lib.nn.CTCLoss(blank=blank, reduction=red, zero_infinity=zi)(lp_in, tgt, lens, tlens)
    (loss.sum() if red == 'none' else loss).backward()
    return loss.detach().numpy(), X.grad.numpy(), lp.grad.numpy()


@pytest.mark.parametrize('kw', CASES, ids=[str(i) for i in range(len(CASES))])
def test_ctc_loss_matches_torch(kw):
    t, e = _run(torch, **kw), _run(ember, **kw)
    tol = 1e-5 if kw.get('dtype') == 'float32' else 1e-10
    for name, a, b in zip(('loss', 'logits grad', 'log_probs grad'), t, e):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


def test_ctc_loss_errors_as_torch():
    for lib in (torch, ember):
        F = lib.nn.functional
        lp, tg = lib.randn(5, 2, 4).log_softmax(2), lib.tensor([[1, 2], [3, 3]])
        with pytest.raises(RuntimeError, match='Expected input_lengths to have value at most 5, but got value 6'):
            F.ctc_loss(lp, tg, [6, 5], [2, 2])
        with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1, but got size 2"):
            F.ctc_loss(lp, tg, [5, 5], [3, 2])
        with pytest.raises(RuntimeError, match='input_lengths must be of size batch_size'):
            F.ctc_loss(lp, tg, [5], [2, 2])
        with pytest.raises(RuntimeError, match='target_lengths must be of size batch_size'):
            F.ctc_loss(lp, tg, [5, 5], [2])
        with pytest.raises(RuntimeError, match='blank must be in label range'):
            F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4)
        with pytest.raises(ValueError, match='bad is not a valid value for reduction'):
            F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction='bad')
