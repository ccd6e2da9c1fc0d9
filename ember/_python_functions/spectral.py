"""``stft`` and ``istft``: the short-time Fourier transform and its inverse (torch.stft / torch.istft).

NOTE [stft] -- stft cuts the signal into frames of ``n_fft`` samples every ``hop_length`` (an unfold: a view),
multiplies each by the window (``win_length`` long, zero-padded to ``n_fft`` in the middle) and transforms the
frames (rfft for a real signal and window, one-sided; fft otherwise). ``center`` first pads ``n_fft // 2`` samples
on both sides (``pad_mode``, reflect by default), so frame t is centred at t * hop_length. istft inverts it by
least squares, as torch's: inverse-transform each frame, multiply by the window again, overlap-add the frames
(col2im, F.fold's operator) and divide by the overlap-added squared window, which must stay above 1e-11 over the
kept samples (the NOLA condition). Both are operator composites, so gradients flow through them.
"""
import math
from ember._warn import warnings

from .._tensor import Tensor
from ..ops import aten

__all__ = ['stft', 'istft', 'kaiser_window']

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


_WARNED = set()     # torch gives these warnings once per process (TORCH_WARN_ONCE)


def _warn_once(msg):
    if msg not in _WARNED:
        _WARNED.add(msg)
        warnings.warn(msg, stacklevel=3)


def _desc(t):
    return 'None' if t is None else f"{t.type()}{{{list(t.shape)}}}"


def _window(window, win_length, n_fft, like, left=None):
    """The window zero-padded to n_fft samples, centred (torch's layout)."""
    if window is None:
        window = aten.ones.default([win_length], dtype=like.dtype if not like.is_complex() else None,
                                   device=like.device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = aten.constant_pad_nd.default(window, [left, n_fft - win_length - left], 0)
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect',
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform of a (L,) or (B, L) signal: (B?, n_fft // 2 + 1 or n_fft, frames)
    complex (NOTE [stft]).

    >>> stft(ones(8), 4, hop_length=2, window=ones(4), center=False, return_complex=True)[:, 0]
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if window is None:
        _warn_once(_NO_WINDOW)
    if not return_complex:
        _warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                   "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                   "still call torch.view_as_real on the complex output to recover the old return format.")
    if center:
        dim = input.dim()
        ext = [1] * (3 - dim) + list(input.shape) if dim <= 3 else list(input.shape)
        pad = n_fft // 2
        input = aten.pad.default(input.reshape(ext), [pad, pad], pad_mode)
        input = input.reshape(list(input.shape)[3 - dim:]) if dim <= 3 else input
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    head = (f"stft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_desc(window)}, normalized={int(normalized)}, onesided="
            f"{'None' if onesided is None else int(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={'None' if align_to_window is None else int(align_to_window)}) : ")
    if input.dim() not in (1, 2):
        raise RuntimeError(head + "expected a 1D or 2D tensor")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(head + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(head + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(head + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + f"expected a 1D window tensor of size equal to win_length={win}, but got window "
                                  f"with size {list(window.shape)}")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if align_to_window and win < n_fft:       # frames start where their window does
        left = (n_fft - win) // 2
        frames_n = 1 + (length - win) // hop
        x = aten.constant_pad_nd.default(x, [left, n_fft - win - left], 0)
        frames = x.unfold(-1, n_fft, hop)[:, :frames_n]
    else:
        frames = x.unfold(-1, n_fft, hop)                             # (B, frames, n_fft), a view
    frames = frames * _window(window, win, n_fft, x)
    spec = aten.fft_rfft.default(frames, None, -1) if onesided else aten.fft_fft.default(frames, None, -1)
    if normalized:
        spec = spec * (1.0 / math.sqrt(n_fft))
    spec = spec.transpose(1, 2)
    if not batched:
        spec = spec.squeeze(0)
    return spec if return_complex else aten.view_as_real.default(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft by least squares (NOTE [stft]): (B?, L) from (B?, freq, frames) complex input.

    >>> x = arange(16.)
    >>> w = hann_window(8)
    >>> bool((istft(stft(x, 8, window=w, return_complex=True), 8, window=w) - x).abs().max() < 1e-5)
    True
    """
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        _warn_once(_NO_WINDOW)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    head = (f"istft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_desc(window)}, center={int(center)}, normalized={int(normalized)}, onesided="
            f"{'None' if onesided is None else int(onesided)}, length={length}, return_complex={int(return_complex)}) ")
    if input.dim() not in (2, 3):
        raise RuntimeError(head + f": expected a tensor with a 2 or 3 dimensions of complex dtype, but got "
                                  f"{input.dim()}")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    n_frames, fft_size = spec.shape[2], spec.shape[1]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(head + f": expected the frequency dimension (3rd to the last) of the input tensor to "
                                  f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(head + f": expected the frequency dimension (3rd to the last) of the input tensor to "
                                  f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(head + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(head + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(head + ": Invalid window shape. window has to be 1D and length of `win_length`")
    frames = spec.transpose(1, 2)                                         # (B, frames, freq)
    if normalized:
        frames = frames * math.sqrt(n_fft)
    if onesided:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = aten.fft_irfft.default(frames, n_fft, -1)
    else:
        frames = aten.fft_ifft.default(frames, n_fft, -1)
        if not return_complex:
            frames = frames.real
    w = _window(window, win, n_fft, frames.real if frames.is_complex() else frames)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames, total, n_fft, hop)
    env = _overlap_add((w * w).expand(1, n_frames, n_fft), total, n_fft, hop)
    start = n_fft // 2 if center else 0
    end = total if length is None and not center else (start + length if length is not None else total - n_fft // 2)
    end = min(end, total)
    y, env = y[:, start:end], env[:, start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError(head + f"window overlap add min: {float(env.abs().min())}")
    y = y / env
    if length is not None and y.shape[-1] < length:
        _warn_once("The length of signal is shorter than the length parameter. Result is being padded with zeros in "
                   "the tail. Please check your center and hop_length settings.")
        y = aten.constant_pad_nd.default(y, [0, length - y.shape[-1]], 0)
    return y if batched else y.squeeze(0)


def _overlap_add(frames, total, n_fft, hop):
    """(B, frames, n_fft) -> (B, total): frames summed at multiples of hop (col2im of one row)."""
    cols = frames.transpose(1, 2)                                         # (B, n_fft, frames)
    if cols.is_complex():
        re = _overlap_add(frames.real, total, n_fft, hop)
        im = _overlap_add(frames.imag, total, n_fft, hop)
        return aten.complex.default(re, im)
    out = aten.col2im.default(cols.contiguous(), [1, total], [1, n_fft], [1, 1], [0, 0], [1, hop])
    return out.reshape(out.shape[0], total)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta), N = window_length (+ 1 when
    ``periodic``, the last point dropped), computed in float64 and cast to ``dtype``.

    >>> kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    from .. import get_default_dtype
    dt = dtype or get_default_dtype()
    if window_length < 0:
        raise RuntimeError(f"kaiser_window requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        out = aten.ones.default([window_length], dtype=dt, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        f64 = _f64()
        k = aten.arange.default(0, window_length, 1, dtype=f64)
        arg = (1.0 - (k * (2.0 / (n - 1)) - 1.0) ** 2).clamp(min=0.0).sqrt() * beta
        out = aten.i0.default(arg) / aten.i0.default(aten.full.default([], beta, dtype=f64))
        out = out.to(dt) if device is None else out.to(device=device, dtype=dt)
    return out.requires_grad_() if requires_grad else out


def _f64():
    from .. import float64
    return float64


Tensor.stft = stft
Tensor.istft = istft
