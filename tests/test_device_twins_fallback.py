"""The CUDA backend's host fallback (NOTE [cuda backend]) on a machine without a GPU, with the NumPy stand-in of
test_device_twins.py whose ``np`` lacks some functions: a twin that fails falls back with torch's warning, once,
gives the operator's own values (its generator rewound) and errors, and writes back what the kernel updated."""
import warnings

import numpy as np
import pytest

import ember
from ember._backends import cuda as backend
from test_device_twins import _registered, _spec


def test_a_twin_that_fails_falls_back_to_the_host_with_torchs_warning():
    undo = _registered(_spec(broken={'searchsorted', 'broadcast_to'}))
    try:
        backend.FALLBACKS.pop('searchsorted.Tensor', None)         # the counts and reasons are process-wide
        backend.REASONS.pop('searchsorted.Tensor', None)
        seq, v = ember.tensor([1., 3., 5., 7.]), ember.tensor([[2., 6.], [0., 9.]])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            r = ember.searchsorted(seq.to('twin'), v.to('twin'))
            ember.searchsorted(seq.to('twin'), v.to('twin'))
        assert r.device.type == 'twin' and r.cpu().tolist() == ember.searchsorted(seq, v).tolist()
        msgs = [str(m.message) for m in w if 'aten::searchsorted.Tensor' in str(m.message)]
        assert msgs == ["The operator 'aten::searchsorted.Tensor' is not currently supported on the CUDA backend "
                        "and will fall back to run on the CPU. This may have performance implications."]
        assert backend.FALLBACKS['searchsorted.Tensor'] == 2          # the second call went to the host directly
        assert backend.REASONS['searchsorted.Tensor'] == 'TypeError: the device has no searchsorted'
        # bernoulli draws, then needs broadcast_to: the host run draws the same numbers again
        p = ember.full((3, 5), 0.5)
        ember.manual_seed(7)
        expected = ember.bernoulli(p)
        ember.manual_seed(7)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            got = ember.bernoulli(p.to('twin'))
        assert got.cpu().tolist() == expected.tolist()
        # an error the kernel raises (on the device, then on the host) is the operator's own
        logp = ember.randn(2, 3).log_softmax(1)
        with pytest.raises(IndexError, match='Target 4 is out of bounds'):
            ember.nn.functional.nll_loss(logp.to('twin'), ember.tensor([0, 4]).to('twin'))
    finally:
        undo()


def test_a_host_run_writes_back_what_the_kernel_updates_in_place():
    undo = _registered(_spec(host_only={'native_batch_norm'}))
    try:
        x = ember.randn(8, 3, 4, 4)
        bn = ember.nn.BatchNorm2d(3)
        bn(x)
        tbn = ember.nn.BatchNorm2d(3).to('twin')
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            tbn(x.to('twin'))
        np.testing.assert_allclose(tbn.running_mean.cpu().numpy(), bn.running_mean.numpy(), rtol=1e-6)
        np.testing.assert_allclose(tbn.running_var.cpu().numpy(), bn.running_var.numpy(), rtol=1e-6)
    finally:
        undo()
