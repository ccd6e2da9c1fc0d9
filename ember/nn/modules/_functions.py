"""Autograd Functions behind legacy modules (torch.nn.modules._functions): ``CrossMapLRN2d``, Lua torch's
cross-channel local response normalisation, whose backward is a formula of its own rather than the derivative
of its forward (see below)."""
from ...autograd.function import Function
from ... import _functions as _E
from ..._creation import tensor as _tensor


def _channel_windows(channels, size):
    """The (channels, channels) 0/1 matrices ``(forward, backward)``: row ``c`` marks the channels summed into
    channel ``c``'s scale (forward) and the channels whose ratio reaches channel ``c``'s gradient (backward).

    The forward replays torch's running sum: channel 0 sums the first ``pre_pad`` squares, each next channel adds
    the square ``pre_pad - 1`` ahead and drops the one ``pre_pad`` behind, but only from ``c > pre_pad`` on, so
    channel 0's square is never dropped. The backward sums a plain window of ``size`` channels starting
    ``size - (size - 1) // 2`` before ``c`` in a zero-padded buffer. The two windows differ: torch's gradient is
    not the derivative of its forward, and ember gives torch's numbers."""
    pre_pad = int((size - 1) / 2 + 1)
    fwd = [[0] * channels for _ in range(channels)]
    for j in range(min(pre_pad, channels)):
        fwd[0][j] = 1
    for c in range(1, channels):
        fwd[c] = list(fwd[c - 1])
        if c < channels - pre_pad + 1:
            fwd[c][c + pre_pad - 1] += 1
        if c > pre_pad:
            fwd[c][c - pre_pad] -= 1
    inverse_pre_pad = int(size - (size - 1) / 2)
    bwd = [[1 if c - inverse_pre_pad <= r < c - inverse_pre_pad + size else 0 for r in range(channels)]
           for c in range(channels)]
    return fwd, bwd


def _mix_channels(window, t):
    """``out[:, c] = sum_r window[c][r] * t[:, r]`` for an (N, C, H, W) tensor."""
    w = _tensor(window, dtype=t.dtype, device=t.device)
    return _E.einsum('cr,nrhw->nchw', [w, t])


class CrossMapLRN2d(Function):
    """``output = input * (k + alpha / size * sum of squares over neighbouring channels) ** -beta``."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        fwd, _ = _channel_windows(input.size(1), size)
        ctx.scale = _mix_channels(fwd, input * input) * (alpha / size) + k
        output = ctx.scale.pow(-beta) * input
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        _, bwd = _channel_windows(input.size(1), ctx.size)
        ratio = grad_output * output / ctx.scale
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output \
            - cache_ratio_value * input * _mix_channels(bwd, ratio)
        return grad_input, None, None, None, None
