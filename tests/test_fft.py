"""ember.fft against torch.fft beyond the OpInfo records: helpers, out=, training through the transforms, and
the parts left out saying so."""
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


def _spectral_training(lib, steps=8):
    """A Fourier layer as in Fourier Neural Operator programs: rfft2, complex weights on the low modes written
    into a slice of a complex zero tensor, irfft2; trained with Adam on a spectral-plus-spatial loss."""
    rng = np.random.default_rng(0)
    X = lib.tensor(rng.standard_normal((4, 2, 8, 8)))
    Y = lib.tensor(rng.standard_normal((4, 3, 8, 8)))
    w0 = rng.standard_normal((2, 3, 3, 3)) + 1j * rng.standard_normal((2, 3, 3, 3))
    W = lib.nn.Parameter(lib.tensor(w0 * 0.1))
    opt = lib.optim.Adam([W], lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        xf = lib.fft.rfft2(X)
        out = lib.zeros(4, 3, 8, 5, dtype=lib.complex128)
        out[:, :, :3, :3] = lib.einsum('bixy,ioxy->boxy', xf[:, :, :3, :3], W)
        y = lib.fft.irfft2(out, s=(8, 8))
        loss = (y - Y).pow(2).mean() + (lib.fft.fft(y, norm='ortho').abs() - 1).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, W


def test_training_through_transforms_matches_torch():
    (le, we), (lt, wt) = _spectral_training(ember), _spectral_training(torch)
    np.testing.assert_allclose(le, lt, rtol=1e-9)
    np.testing.assert_allclose(we.detach().numpy(), wt.detach().numpy(), rtol=1e-8, atol=1e-12)
    assert le[-1] < le[0]


@pytest.mark.parametrize('name', ['hfft2', 'ihfft2', 'hfftn', 'ihfftn'])
@pytest.mark.parametrize('kw', [{}, {'s': (3, 6)}, {'dim': (0, 2), 'norm': 'ortho'}, {'norm': 'forward'}])
def test_hermitian_nd_transforms_match_torch(name, kw):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 5)) + (1j * rng.standard_normal((2, 4, 5)) if name.startswith('h') else 0)
    res, w = {}, None
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.fft, name)(t, **kw)
        if w is None:
            w = rng.standard_normal(tuple(y.shape)) + (1j * rng.standard_normal(tuple(y.shape)) if y.is_complex() else 0)
        res[lib] = (y, lib.autograd.grad(y, t, lib.tensor(w))[0])
    for e, t in zip(res[ember], res[torch]):
        np.testing.assert_allclose(np.asarray(e.detach().tolist()), np.asarray(t.detach().tolist()), rtol=1e-9, atol=1e-12)
