"""ember.fft against torch.fft beyond the OpInfo records: helpers, out=, and the parts left out saying so."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize('n', [1, 5, 8])
def test_frequencies_and_shifts_match_torch(n):
    for fn in ('fftfreq', 'rfftfreq'):
        np.testing.assert_allclose(getattr(ember.fft, fn)(n, 0.5).numpy(), getattr(torch.fft, fn)(n, 0.5).numpy())
    x = np.arange(n * 3).reshape(3, n)
    for fn in ('fftshift', 'ifftshift'):
        for dim in (None, 1, (0, 1)):
            assert getattr(ember.fft, fn)(ember.tensor(x), dim).tolist() == \
                getattr(torch.fft, fn)(torch.tensor(x), dim).tolist()


def test_roundtrips_and_out():
    x = ember.randn(4, 6, dtype=ember.float64)
    np.testing.assert_allclose(ember.fft.irfft(ember.fft.rfft(x), 6).numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(ember.fft.ifftn(ember.fft.fftn(x)).real.numpy(), x.numpy(), atol=1e-12)
    out = ember.empty(4, 4, dtype=ember.complex128)
    r = ember.fft.rfft(x, out=out)
    assert r is out and np.allclose(out.numpy(), np.fft.rfft(x.numpy()))


def test_backward_through_a_transform_says_it_is_not_implemented():
    x = ember.randn(8, requires_grad=True)
    y = ember.fft.rfft(x)
    with pytest.raises(NotImplementedError, match='fft_rfft'):
        y.abs().sum().backward()


@pytest.mark.parametrize('name', ['hfft2', 'ihfft2', 'hfftn', 'ihfftn'])
def test_hermitian_nd_transforms_are_left_out_saying_so(name):
    assert hasattr(torch.fft, name)
    with pytest.raises(NotImplementedError, match=f'ember.fft.{name} is not implemented'):
        getattr(ember.fft, name)(ember.ones(2, 2))
