"""optim.swa_utils against torch's: AveragedModel (SWA mean, EMA by multi_avg_fn and by avg_fn, with and
without buffers), SWALR's annealed learning rates and update_bn, on the same seeded model and data."""
import numpy as np
import pytest
import torch

import ember


def _run(lib, use_buffers=False, avg='swa', strategy='cos'):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    su = lib.optim.swa_utils
    kw = {'ema': {'multi_avg_fn': su.get_ema_multi_avg_fn(0.9)}, 'ema_one': {'avg_fn': su.get_ema_avg_fn(0.9)},
          'swa_multi': {'multi_avg_fn': su.get_swa_multi_avg_fn()}}.get(avg, {})
    swa = su.AveragedModel(model, use_buffers=use_buffers, **kw)
    sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    x, y = lib.randn(32, 4), lib.randint(0, 2, (32,))
    lrs = []
    for _ in range(6):
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        swa.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    su.update_bn([(x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)], swa)
    state = [t.detach().numpy().copy() for t in list(swa.parameters()) + list(swa.buffers())]
    return state, lrs, swa(x).detach().numpy()


@pytest.mark.parametrize('kw', [{}, {'use_buffers': True}, {'avg': 'ema'}, {'avg': 'ema_one'}, {'avg': 'swa_multi'},
                                {'strategy': 'linear'}])
def test_swa_utils_match_torch(kw):
    (ts, tl, to), (es, el, eo) = _run(torch, **kw), _run(ember, **kw)
    assert len(ts) == len(es)
    for t, e in zip(ts, es):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(el, tl)
    np.testing.assert_allclose(eo, to, rtol=1e-5, atol=1e-6)


def test_swa_utils_errors():
    opt = ember.optim.SGD(ember.nn.Linear(2, 2).parameters(), lr=0.1)
    su = ember.optim.swa_utils
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear'"):
        su.SWALR(opt, 0.05, anneal_strategy='exp')
    with pytest.raises(ValueError, match='anneal_epochs must be equal or greater than 0'):
        su.SWALR(opt, 0.05, anneal_epochs=-1)
    with pytest.raises(ValueError, match=r'Invalid decay value 2 provided'):
        su.get_ema_avg_fn(2)
