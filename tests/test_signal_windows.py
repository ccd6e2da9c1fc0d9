"""torch.signal.windows: every window against torch's, over lengths, sym/periodic, dtypes; graphs and errors."""
import numpy as np
import pytest
import torch

import ember

NAMES = ['bartlett', 'blackman', 'cosine', 'exponential', 'gaussian', 'general_cosine', 'general_hamming',
         'hamming', 'hann', 'kaiser', 'nuttall']
KW = {'general_cosine': {'a': [0.4, 0.3, 0.2, 0.1]}, 'gaussian': {'std': 1.7}, 'kaiser': {'beta': 5.0},
      'general_hamming': {'alpha': 0.6}}


@pytest.mark.parametrize('name', NAMES)
def test_windows_match_torch(name):
    assert sorted(torch.signal.windows.__all__) == sorted(ember.signal.windows.__all__) == NAMES
    for M in (0, 1, 2, 3, 6, 7, 64):
        for sym in (True, False):
            for dt, tol in (('float32', 3e-7), ('float64', 1e-14)):
                kw = dict(KW.get(name, {}))
                if name == 'exponential' and not sym:
                    kw.update(center=1.5, tau=2.0)     # a periodic window may move its centre, even off a 1-point one
                t = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dt), **kw)
                e = getattr(ember.signal.windows, name)(M, sym=sym, dtype=getattr(ember, dt), **kw)
                assert e.dtype == getattr(ember, dt) and tuple(e.shape) == tuple(t.shape)
                # within the last bits of float32 exp/sin/cos (NumPy's kernels) and float64 i0
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tol, atol=tol, err_msg=f'{name} {M} {sym} {dt}')


@pytest.mark.parametrize('name', NAMES)
def test_windows_record_torch_graphs(name):
    kw = {'a': [0.5, 0.5]} if name == 'general_cosine' else {}
    t = getattr(torch.signal.windows, name)(5, requires_grad=True, **kw)
    e = getattr(ember.signal.windows, name)(5, requires_grad=True, **kw)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    assert getattr(ember.signal.windows, name)(1, requires_grad=True, **kw).requires_grad


@pytest.mark.parametrize('call', [
    lambda W, lib: W.hann(-1), lambda W, lib: W.hann(3, dtype=lib.int64), lambda W, lib: W.gaussian(3, std=0),
    lambda W, lib: W.exponential(3, tau=0), lambda W, lib: W.exponential(4, center=1.), lambda W, lib: W.kaiser(3, beta=-1),
    lambda W, lib: W.general_cosine(3, a=[]), lambda W, lib: W.general_cosine(3, a=1),
    lambda W, lib: W.bartlett(3, layout=lib.sparse_coo)])
def test_window_errors_match_torch(call):
    with pytest.raises(Exception) as want:
        call(torch.signal.windows, torch)
    with pytest.raises(type(want.value)) as got:
        call(ember.signal.windows, ember)
    assert str(got.value).replace('ember', 'torch') == str(want.value)
