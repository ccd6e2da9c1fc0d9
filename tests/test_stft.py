"""torch.stft / torch.istft against torch: spectra and their gradients for real and complex signals, batched and
not, centred (reflect and constant padding) or not, windows shorter than n_fft, align_to_window, normalized,
two-sided and the deprecated real output; istft's round trips, lengths and gradients; the warnings and
errors torch gives."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X1, X2 = RNG.standard_normal(100), RNG.standard_normal((3, 64))
XC = RNG.standard_normal(50) + 1j * RNG.standard_normal(50)


def _win(lib, w):
    return {None: None, 'hann': lambda: lib.hann_window(16, dtype=lib.float64),
            'hamming6': lambda: lib.hamming_window(6, dtype=lib.float64),
            'ones4': lambda: lib.ones(4, dtype=lib.float64)}[w]() if w else None


STFT = [
    (X1, dict(n_fft=16, return_complex=True)),
    (X1, dict(n_fft=16, hop_length=5, window='hann', return_complex=True)),
    (X2, dict(n_fft=8, win_length=6, window='hamming6', center=False, return_complex=True)),
    (X2, dict(n_fft=8, win_length=4, window='ones4', center=False, align_to_window=True, return_complex=True,
              hop_length=3)),
    (X1, dict(n_fft=16, normalized=True, onesided=False, pad_mode='constant', return_complex=True)),
    (X1, dict(n_fft=16, return_complex=False, window='hann')),
    (XC, dict(n_fft=10, hop_length=3)),
]


@pytest.mark.filterwarnings('ignore::UserWarning')
@pytest.mark.parametrize('x,kw', STFT, ids=[str(i) for i in range(len(STFT))])
def test_stft_matches_torch(x, kw):
    res = []
    for lib in (torch, ember):
        k = dict(kw, window=_win(lib, kw.get('window')))
        X = lib.tensor(x, requires_grad=True)
        s = X.stft(**k) if lib is ember else lib.stft(X, **k)
        (s.abs().sum() if s.is_complex() else s.sum()).backward()
        res.append((s.detach().numpy(), X.grad.numpy()))
    for a, b in zip(*res):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)


ISTFT = [(X1, dict(n_fft=16, window='hann')), (X2, dict(n_fft=8, hop_length=2, win_length=6, window='hamming6')),
         (X1, dict(n_fft=16, window='hann', length=90)), (X1, dict(n_fft=16, window='hann', length=110)),
         (X1, dict(n_fft=16, window='hann', normalized=True))]


@pytest.mark.parametrize('x,kw', ISTFT, ids=[str(i) for i in range(len(ISTFT))])
def test_istft_matches_torch(x, kw):
    res = []
    for lib in (torch, ember):
        k = dict(kw, window=_win(lib, kw.get('window')))
        length = k.pop('length', None)
        s = lib.stft(lib.tensor(x), return_complex=True, **k)
        S = s.detach().clone().requires_grad_(True)
        y = lib.istft(S, length=length, **k)
        (y * lib.arange(y.shape[-1], dtype=y.dtype)).sum().backward()
        res.append((y.detach().numpy(), S.grad.numpy()))
    for a, b in zip(*res):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9)
    if length is None:
        np.testing.assert_allclose(res[1][0], x, atol=1e-9)          # the round trip gives the signal back


def test_warnings_and_errors_as_torch():
    for lib in (torch, ember):
        x = lib.randn(100)
        with pytest.raises(RuntimeError, match='stft requires the return_complex parameter be given for real inputs'):
            lib.stft(x, 16)
        w = lib.hann_window(16)
        for kw, msg in ((dict(hop_length=0), r'expected hop_length > 0, but got hop_length=0'),
                        (dict(win_length=20), r'expected 0 < win_length <= n_fft, but got win_length=20'),
                        (dict(window=lib.ones(15)), r'expected a 1D window tensor of size equal to win_length=16, '
                                                    r'but got window with size \[15\]')):
            with pytest.raises(RuntimeError, match=msg):
                lib.stft(x, 16, return_complex=True, **{'window': w, **kw})
        with pytest.raises(RuntimeError, match='expected a 1D or 2D tensor'):
            lib.stft(x.view(2, 5, 10), 4, window=lib.ones(4), return_complex=True)
        with pytest.raises(RuntimeError, match='Cannot have onesided output if window or input is complex'):
            lib.stft(x + 0j, 16, window=w, onesided=True)
        with pytest.raises(RuntimeError, match='stft align_to_window should only be set when center = false'):
            lib.stft(x, 16, window=w, return_complex=True, align_to_window=True)
        s = lib.stft(x, 16, window=w, return_complex=True)
        with pytest.raises(RuntimeError, match='istft requires a complex-valued input tensor'):
            lib.istft(s.real, 16, window=w)
        with pytest.raises(RuntimeError, match='window overlap add min'):
            lib.istft(s, 16, window=w, center=False)


def test_no_window_warns_once_per_process(monkeypatch):
    """torch warns about a missing window and about real output once per process (TORCH_WARN_ONCE); so does
    ember."""
    from ember._python_functions import spectral
    monkeypatch.setattr(spectral, '_WARNED', set())
    with pytest.warns(UserWarning, match='A window was not provided'):
        ember.stft(ember.randn(100), 16, return_complex=True)
    with pytest.warns(UserWarning, match='stft with return_complex=False is deprecated'):
        ember.stft(ember.randn(100), 16, window=ember.ones(16), return_complex=False)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ember.stft(ember.randn(100), 16, return_complex=True)
        ember.stft(ember.randn(100), 16, window=ember.ones(16), return_complex=False)


@pytest.mark.parametrize('args,kw', [((10,), {}), ((9, False), {}), ((16, True, 5.0), {}), ((7, True, 0.5), {}),
                                     ((1,), {}), ((0,), {}), ((12,), {'dtype': 'float64'})])
def test_kaiser_window_matches_torch(args, kw):
    res = []
    for lib in (torch, ember):
        k = dict(kw, dtype=getattr(lib, kw['dtype'])) if 'dtype' in kw else kw
        w = lib.kaiser_window(*args, **k)
        res.append((w.numpy(), str(w.dtype).split('.')[-1]))
    assert res[0][1] == res[1][1]
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=2e-6, atol=1e-7)
