"""torch.fft's transforms on NumPy's pocketfft (ember/_ops/fft.py has the shapes and dtypes). NumPy computes
in double precision; the adapter rounds to the output dtype (complex64 for float32 inputs, as torch)."""
import numpy as np


def _axes(a, s, dim, default, c2r):
    nd = a.ndim
    if dim is None:
        axes = list(range(nd - len(s), nd)) if s is not None else default(nd)
    else:
        axes = [d % nd if nd else 0 for d in ([dim] if isinstance(dim, int) else dim)]
    if s is not None:       # -1: that dim's default, which for the last dim of a c2r transform is 2 (m - 1)
        last = len(axes) - 1
        s = [(2 * (a.shape[ax] - 1) if c2r and i == last else a.shape[ax]) if n == -1 else n
             for i, (n, ax) in enumerate(zip(s, axes))]
    return s, axes


def _torch_layout(r, a, axes, halved):
    """``r`` laid out as torch's transforms lay out their results: dense with the batch (untransformed) dimensions
    outermost, then the transformed ones, each group in the input's stride order (largest first), except that a
    real<->complex transform's halved dimension (the last one given) goes innermost (``fft(x, dim=0)`` of a
    (4, 6, 8) tensor has strides (1, 32, 4)). Code that walks memory order (dropout's mask, ``view``) then sees
    what it sees in torch."""
    nd = r.ndim
    by_stride = lambda ds: sorted(ds, key=lambda d: -a.strides[d])        # noqa: E731 (stable: ties keep order)
    last = [axes[-1]] if halved else []
    perm = by_stride([d for d in range(nd) if d not in axes]) + by_stride([d for d in axes if d not in last]) + last
    if r.transpose(perm).flags.c_contiguous:
        return r
    out = np.empty([r.shape[p] for p in perm], r.dtype).transpose(np.argsort(perm))
    out[...] = r
    return out


def _one(fn):
    def kernel(a, n, dim, norm):
        return _torch_layout(fn(a, n=n, axis=dim, norm=norm or 'backward'), a, [dim % a.ndim], False)
    return kernel


def _many(fn, default):
    c2r = fn is np.fft.irfftn
    halved = c2r or fn is np.fft.rfftn

    def kernel(a, s, dim, norm):
        s, axes = _axes(a, None if s is None else list(s), dim, default, c2r)
        return _torch_layout(fn(a, s=s, axes=axes, norm=norm or 'backward'), a, axes, halved)
    return kernel


def _all(nd):
    return list(range(nd))


def _two(nd):
    return [nd - 2, nd - 1]


KERNELS = {
    'fft_fft': _one(np.fft.fft), 'fft_ifft': _one(np.fft.ifft), 'fft_rfft': _one(np.fft.rfft),
    'fft_irfft': _one(np.fft.irfft), 'fft_hfft': _one(np.fft.hfft), 'fft_ihfft': _one(np.fft.ihfft),
    'fft_fft2': _many(np.fft.fftn, _two), 'fft_ifft2': _many(np.fft.ifftn, _two),
    'fft_rfft2': _many(np.fft.rfftn, _two), 'fft_irfft2': _many(np.fft.irfftn, _two),
    'fft_fftn': _many(np.fft.fftn, _all), 'fft_ifftn': _many(np.fft.ifftn, _all),
    'fft_rfftn': _many(np.fft.rfftn, _all), 'fft_irfftn': _many(np.fft.irfftn, _all),
}
