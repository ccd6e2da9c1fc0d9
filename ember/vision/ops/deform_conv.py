"""``torchvision.ops.deform_conv2d`` and ``DeformConv2d``: deformable convolution (Dai et al. 2017), with the
modulation mask of v2 (Zhu et al. 2018), written in ember ops (NOTE [deformable convolution by gathering]).
"""
import math

import ember
import ember.nn as nn
from ember.nn.modules.utils import _pair

__all__ = ['deform_conv2d', 'DeformConv2d']


# NOTE [deformable convolution by gathering]
# Kernel tap ``(i, j)`` of output pixel ``(y, x)`` reads the input at ``(y * stride - pad + i * dilation + dy,
# x * stride - pad + j * dilation + dx)``, ``(dy, dx)`` being that tap's learnt offset (channel ``2 * tap`` holds dy,
# ``2 * tap + 1`` dx, per offset group). A fractional position is read bilinearly from its four neighbouring
# pixels, a neighbour outside the map counting as zero (so a position one pixel or more outside reads zero), as
# torchvision's kernel. Here the neighbours' indices (floors of the positions, no gradient) select input values
# with ``gather``, and the bilinear weights are ember expressions in the offsets, so autograd gives the gradients
# of input, offset, mask, weight and bias: the offset's is the slope of the bilinear surface, torchvision's
# coordinate gradient. The sampled columns (an im2col whose taps have moved) are multiplied by the weight, group by
# group, as a convolution's.


def _tap_positions(out_size, kernel, stride, pad, dilation):
    """``(kernel, out_size)`` undeformed input coordinate of each tap and output position along one axis."""
    return (ember.arange(out_size) * stride - pad).view(1, -1) + (ember.arange(kernel) * dilation).view(-1, 1)


def _bilinear_gather(planes, py, px):
    """Sample ``planes`` ``(N, G, Cg, H, W)`` at positions ``py``, ``px`` ``(N, G, P)``: ``(N, G, Cg, P)``."""
    n, g, cg, h, w = planes.shape
    y0, x0 = py.detach().floor(), px.detach().floor()
    ly, lx = py - y0, px - x0
    flat = planes.reshape(n, g, cg, h * w)
    out = 0
    for dy, wy in ((0, 1 - ly), (1, ly)):
        for dx, wx in ((0, 1 - lx), (1, lx)):
            yi, xi = (y0 + dy).long(), (x0 + dx).long()
            valid = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            index = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1)).unsqueeze(2).expand(n, g, cg, -1)
            weight = ember.where(valid, wy * wx, ember.zeros((), dtype=py.dtype))
            out = out + flat.gather(3, index) * weight.unsqueeze(2)
    return out


def _check_shapes(input, offset, oh, ow, offset_channels, channels_divide):
    """torchvision's kernel checks, with its messages."""
    if offset.shape[1] != offset_channels:
        raise RuntimeError(f"offset.shape[1] is not valid: got: {offset.shape[1]}")
    if offset.shape[0] != input.shape[0]:
        raise RuntimeError("invalid batch size of offset")
    if tuple(offset.shape[2:]) != (oh, ow):
        raise RuntimeError(f"offset output dims: ({offset.shape[2]}, {offset.shape[3]}) - computed output dims: "
                           f"({oh}, {ow})")
    if not channels_divide:
        raise RuntimeError("Expected input_c.size(1) % n_offset_grps == 0 to be true, but got false.")


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), mask=None):
    """Deformable 2-D convolution (NOTE [deformable convolution by gathering]).

    ``offset``: ``(N, 2 * offset_groups * kh * kw, OH, OW)``; ``mask`` (optional, v2):
    ``(N, offset_groups * kh * kw, OH, OW)``. With zero offsets and a mask of ones it is ``conv2d``.

    >>> x, w = ember.arange(16.).view(1, 1, 4, 4), ember.ones(1, 1, 2, 2)
    >>> deform_conv2d(x, ember.zeros(1, 8, 3, 3), w).view(-1).tolist()[:3]
    [10.0, 14.0, 18.0]
    >>> deform_conv2d(x, ember.full((1, 8, 3, 3), 0.5), w).view(-1).tolist()[:3]
    [20.0, 24.0, 20.0]
    """
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, w = input.shape
    out_channels, group_channels, kh, kw = weight.shape
    taps = kh * kw
    offset_groups = offset.shape[1] // (2 * taps)
    if offset_groups == 0:
        raise RuntimeError("the shape of the offset tensor at dimension 1 is not valid. It should be a multiple of "
                           f"2 * weight.size[2] * weight.size[3].\nGot offset.shape[1]={offset.shape[1]}, while "
                           f"2 * weight.size[2] * weight.size[3]={2 * taps}")
    oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    _check_shapes(input, offset, oh, ow, offset_groups * 2 * taps, c % offset_groups == 0)
    # (N, G, taps, OH, OW) sampling positions
    offset = offset.reshape(n, offset_groups, taps, 2, oh, ow)
    base_y = _tap_positions(oh, kh, sh, ph, dh).to(input.dtype).view(kh, 1, oh, 1).expand(kh, kw, oh, ow)
    base_x = _tap_positions(ow, kw, sw, pw, dw).to(input.dtype).view(1, kw, 1, ow).expand(kh, kw, oh, ow)
    py = (offset[:, :, :, 0] + base_y.reshape(taps, oh, ow)).reshape(n, offset_groups, -1)
    px = (offset[:, :, :, 1] + base_x.reshape(taps, oh, ow)).reshape(n, offset_groups, -1)
    planes = input.reshape(n, offset_groups, c // offset_groups, h, w)
    columns = _bilinear_gather(planes, py, px).reshape(n, offset_groups, c // offset_groups, taps, oh * ow)
    if mask is not None:
        columns = columns * mask.reshape(n, offset_groups, 1, taps, oh * ow)
    groups = c // group_channels
    columns = columns.reshape(n, groups, group_channels * taps, oh * ow)
    out = ember.matmul(weight.reshape(groups, out_channels // groups, group_channels * taps), columns)
    out = out.reshape(n, out_channels, oh, ow)
    return out if bias is None else out + bias.view(1, -1, 1, 1)


class DeformConv2d(nn.Module):
    """Module form of :func:`deform_conv2d`: ``forward(input, offset, mask=None)``; Conv2d's initialisation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.weight = nn.Parameter(ember.empty(out_channels, in_channels // groups, *self.kernel_size))
        self.bias = nn.Parameter(ember.empty(out_channels)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            nn.init.uniform_(self.bias, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))

    def forward(self, input, offset, mask=None):
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride, padding=self.padding,
                             dilation=self.dilation, mask=mask)

    def __repr__(self):
        s = f"{type(self).__name__}({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"
