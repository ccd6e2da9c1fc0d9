"""torch.nn.functional's convolution, pooling, normalisation, embedding, attention and resampling
functions, with torch's signatures. Argument handling (ints or tuples, unbatched inputs, string
padding, running statistics) is here; the work is done by the operators of ember/_ops/nn_ops.py
and of the other families, through the public API only.

>>> import ember
>>> import ember.nn.functional as F
>>> F.conv2d(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2)).shape
ember.Size([1, 1, 2, 2])
"""
import math
from ember._warn import warnings

import ember
from ..._prims_common import suggest_memory_format
from ...amp.autocast_mode import _autocast_composite

__all__ = ['affine_grid', 'grid_sample', 'embedding_bag', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'unfold', 'fold',
           'max_pool1d', 'max_pool2d', 'max_pool3d', 'max_pool1d_with_indices', 'max_pool2d_with_indices',
           'max_pool3d_with_indices', 'max_unpool3d', 'lp_pool3d', 'adaptive_max_pool3d',
           'adaptive_max_pool3d_with_indices', 'fractional_max_pool2d', 'fractional_max_pool2d_with_indices',
           'fractional_max_pool3d', 'fractional_max_pool3d_with_indices', 'avg_pool1d', 'avg_pool2d', 'avg_pool3d', 'adaptive_avg_pool3d', 'adaptive_avg_pool1d', 'adaptive_avg_pool2d', 'adaptive_max_pool1d', 'adaptive_max_pool2d',
           'adaptive_max_pool1d_with_indices', 'adaptive_max_pool2d_with_indices', 'max_unpool1d', 'max_unpool2d',
           'lp_pool1d', 'lp_pool2d', 'embedding',
           'layer_norm', 'batch_norm', 'group_norm', 'instance_norm', 'rms_norm', 'local_response_norm',
           'normalize', 'cosine_similarity', 'pairwise_distance',
           'interpolate', 'upsample', 'upsample_nearest', 'upsample_bilinear', 'pixel_shuffle', 'pixel_unshuffle',
           'channel_shuffle', 'native_channel_shuffle']


# --- convolution -------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 1-D convolution; ``padding`` may be an int, a tuple, ``'valid'`` or ``'same'``."""
    if isinstance(padding, str):
        return ember.ops.aten.conv1d.padding(input, weight, bias, stride, padding, dilation, groups)
    return ember.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Applies a 2-D convolution over (N, C, H, W) or unbatched (C, H, W) input.

    >>> F.conv2d(ember.ones(1, 2, 4, 4), ember.ones(3, 2, 3, 3), padding='same').shape
    ember.Size([1, 3, 4, 4])
    """
    if isinstance(padding, str):
        return ember.ops.aten.conv2d.padding(input, weight, bias, stride, padding, dilation, groups)
    return ember.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if isinstance(padding, str):
        return ember.ops.aten.conv3d.padding(input, weight, bias, stride, padding, dilation, groups)
    return ember.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return ember.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed convolution (the gradient of conv2d w.r.t. its input); weight is (C_in, C_out/groups, kH, kW).

    >>> F.conv_transpose2d(ember.ones(1, 2, 3, 3), ember.ones(2, 4, 2, 2), stride=2).shape
    ember.Size([1, 4, 6, 6])
    """
    return ember.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return ember.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks (im2col): (N, C, H, W) -> (N, C*kH*kW, L)."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    return ember.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding local blocks into an image (col2im), the adjoint of :func:`unfold`."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return ember.col2im(input, output_size, kernel_size, dilation, padding, stride)


# --- pooling -----------------------------------------------------------------------

def _one(v, name):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"max_pool1d() {name} must be an int or a tuple of one int, but got {list(v)}")
        return int(v[0])
    return int(v)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return ember.ops.aten.max_pool2d_with_indices(input, kernel_size, () if stride is None else stride, padding,
                                                  dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling; ``return_indices`` gives each max's flat index into its input plane.

    >>> F.max_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    if input.is_quantized and not return_indices:      # torch's quantized max pool: the integers' maximum
        k = _pair_list(kernel_size)
        return ember.ops.quantized.max_pool2d(input, k, _pair_list(stride) if stride else k, _pair_list(padding),
                                              _pair_list(dilation), ceil_mode)
    out, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _pair_list(v):
    return [int(x) for x in v] if isinstance(v, (tuple, list)) else [int(v), int(v)]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    k = _one(kernel_size, 'kernel_size')
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _one(stride, 'stride')
    out, idx = ember.ops.aten.max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s),
                                                      (0, _one(padding, 'padding')), (1, _one(dilation, 'dilation')),
                                                      ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return ember.ops.aten.avg_pool2d(input, kernel_size, () if stride is None else stride, padding, ceil_mode,
                                     count_include_pad, divisor_override)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return ember.ops.aten.max_pool3d_with_indices(input, kernel_size, () if stride is None else stride, padding,
                                                  dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return ember.ops.aten.avg_pool3d(input, kernel_size, () if stride is None else stride, padding, ceil_mode,
                                     count_include_pad, divisor_override)


def adaptive_avg_pool3d(input, output_size):
    if isinstance(output_size, int):
        output_size = (output_size,) * 3
    output_size = tuple(input.shape[-3 + i] if o is None else int(o) for i, o in enumerate(output_size))
    return ember.ops.aten.adaptive_avg_pool3d(input, output_size)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    k = _one(kernel_size, 'kernel_size')
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _one(stride, 'stride')
    out = ember.ops.aten.avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _one(padding, 'padding')), ceil_mode,
                                    count_include_pad, None)
    return out.squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size; windows are [floor(i*H/OH), ceil((i+1)*H/OH)); a 1x1 output is the
    mean over H and W, as torch computes it.

    >>> F.adaptive_avg_pool2d(ember.arange(4.).reshape(1, 2, 2), 1)
    tensor([[[1.5000]]])
    """
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    output_size = tuple(input.shape[-2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    return ember.ops.aten.adaptive_avg_pool2d(input, output_size)


def adaptive_avg_pool1d(input, output_size):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' must be 2D or 3D, but got {input.dim()}D")
    o = _one(output_size, 'output_size')
    return ember.ops.aten.adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed output size, windows as in adaptive_avg_pool2d; ``return_indices`` gives flat
    indices into each input plane."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    output_size = tuple(input.shape[-2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    out, idx = ember.ops.aten.adaptive_max_pool2d(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' must be 2D or 3D, but got {input.dim()}D")
    out, idx = ember.ops.aten.adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size, 'output_size')))
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def _unpool(input, indices, nd, kernel_size, stride, padding, output_size, name):
    k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    s = k if stride is None else ((stride,) * nd if isinstance(stride, int) else tuple(stride))
    p = (padding,) * nd if isinstance(padding, int) else tuple(padding)
    isz = tuple(input.shape[-nd:])
    default = tuple((i - 1) * ss - 2 * pp + kk for i, ss, pp, kk in zip(isz, s, p, k))
    if output_size is None:
        osz = default
    else:
        osz = tuple(output_size)[-nd:]
        for o, dflt, ss in zip(osz, default, s):
            if not dflt - ss < o < dflt + ss:
                raise ValueError(f"invalid output_size \"{list(output_size)}\" (dim 0 must be between "
                                 f"{dflt - ss} and {dflt + ss})")
    lead = tuple(input.shape[:-nd])
    plane = 1
    for o in osz:
        plane *= o
    if indices.numel():
        bad = indices.reshape(-1)[((indices < 0).logical_or(indices >= plane)).reshape(-1)]
        if bad.numel():
            raise RuntimeError(f"Found an invalid max index: {int(bad[0])} (output volumes are of size "
                               f"{'x'.join(map(str, osz))})")
    flat = ember.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    out = flat.scatter(-1, indices.reshape(lead + (-1,)), input.reshape(lead + (-1,)))
    return out.reshape(lead + osz)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: each value goes back to its index, the rest is zero."""
    return _unpool(input, indices, 1, kernel_size, stride, padding, output_size, 'max_unpool1d')


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: each value goes back to its flat index in the plane, the rest is zero.

    >>> out, idx = F.max_pool2d(ember.arange(4.).reshape(1, 1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2)
    tensor([[[[0., 0.],
              [0., 3.]]]])
    """
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size, 'max_unpool2d')


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over each window of x**p) ** (1/p)."""
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)



def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: each value goes back to its flat index in the volume."""
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size, 'max_unpool3d')


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over volumes: (sum over each window of x**p) ** (1/p)."""
    kd, kh, kw = (kernel_size,) * 3 if isinstance(kernel_size, int) else kernel_size
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kd * kh * kw).pow(1.0 / norm_type)


# --- pooling over windows at given positions: adaptive_max_pool3d, fractional max pooling ------------------

def _window_max(input, starts, ends, ksize):
    """Max (and its flat index in each plane) over the windows [starts[d], ends[d]) of the last len(starts) dims
    of (N, C, *S) ``input``; ``starts[d]``/``ends[d]`` are (N, C, O_d) or (1, 1, O_d) int64 tensors, ``ksize[d]``
    the largest window length. Shorter windows repeat their last element (the max and the first-max index are
    unchanged). A composite of gather and max, so the gradient goes to each window's maximum."""
    nd = len(starts)
    N, C = input.shape[:2]
    S = tuple(input.shape[2:])
    flat = None
    stride = 1
    for d in range(nd - 1, -1, -1):
        j = ember.arange(ksize[d], device=input.device)
        idx = ember.minimum(starts[d].unsqueeze(-1) + j, ends[d].unsqueeze(-1) - 1)       # (., ., O_d, K_d)
        # place O_d and K_d among the output and window dims: (., ., O_1..O_nd, K_1..K_nd)
        shape = list(idx.shape[:2]) + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = idx.shape[2], idx.shape[3]
        term = (idx * stride).reshape(shape)
        flat = term if flat is None else flat + term
        stride *= S[d]
    osz = tuple(flat.shape[2:2 + nd])
    flat = flat.expand((N, C) + tuple(flat.shape[2:])).reshape(N, C, -1)
    vals = input.reshape(N, C, -1).gather(2, flat).reshape((N, C) + osz + (-1,))
    out, arg = vals.max(-1)
    index = flat.reshape((N, C) + osz + (-1,)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return out, index


def _batched(input, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    return input.dim() == nd + 2


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to a fixed output size: window i of a dimension
    of length n spans [floor(i n / o), ceil((i + 1) n / o)), as torch's; ``return_indices`` gives flat indices
    into each input volume."""
    batched = _batched(input, 3, 'adaptive_max_pool3d')
    x = input if batched else input.unsqueeze(0)
    if isinstance(output_size, int):
        output_size = (output_size,) * 3
    osz = tuple(x.shape[2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    starts, ends, ks = [], [], []
    for n, o in zip(x.shape[2:], osz):
        st = [(i * n) // o for i in range(o)]
        en = [-(-((i + 1) * n) // o) for i in range(o)]
        starts.append(ember.tensor(st, dtype=ember.int64, device=x.device).view(1, 1, o))
        ends.append(ember.tensor(en, dtype=ember.int64, device=x.device).view(1, 1, o))
        ks.append(max((b - a for a, b in zip(st, en)), default=1))
    out, idx = _window_max(x, starts, ends, ks)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


def _fractional(input, nd, kernel_size, output_size, output_ratio, return_indices, _random_samples, name):
    """torch's fractional max pooling (Graham, 2014): per plane, random window positions from one uniform
    sample u per dimension, start_i = int((i + u) a) - int(u a), a = (n - k) / (o - 1), the last window at n - k
    (computed in the input's dtype, as torch's kernel does). torch's sample order: (W, H) in 2-D, (T, H, W) in 3-D."""
    k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    batched = _batched(input, nd, name)
    x = input if batched else input.unsqueeze(0)
    S = tuple(x.shape[2:])
    if output_size is None:
        r = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        osz = tuple(int(n * rr) for n, rr in zip(S, r))
    else:
        osz = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    N, C = x.shape[:2]
    if _random_samples is None:
        _random_samples = ember.rand(N, C, nd, dtype=x.dtype, device=x.device)
    frame = f'{name}()' if nd == 2 else f'{name}_out()'
    for what, n, o, kk in zip(('height', 'width') if nd == 2 else ('time', 'height', 'width'), S, osz, k):
        if o + kk - 1 > n or (nd == 3 and o + kk - 1 == n):     # torch's 3-D check is strict, its 2-D one not
            raise RuntimeError(f"{frame}: pool {what} {kk} too large relative to input {what} {n}")
    order = (1, 0) if nd == 2 else (0, 1, 2)        # which sample drives each spatial dim
    starts, ends = [], []
    for d, (n, o, kk) in enumerate(zip(S, osz, k)):
        u = _random_samples[..., order[d]].unsqueeze(-1)                   # (N, C, 1)
        if o > 1:
            alpha = ember.tensor(float(n - kk), dtype=x.dtype) / ember.tensor(float(o - 1), dtype=x.dtype)
            i = ember.arange(o, dtype=x.dtype, device=x.device)
            st = ((i + u) * alpha).to(ember.int64) - (u * alpha).to(ember.int64)
            st = ember.where(ember.arange(o, device=x.device) == o - 1, ember.full_like(st, n - kk), st)
        else:
            st = ember.full((N, C, o), n - kk, dtype=ember.int64, device=x.device)
        starts.append(st)
        ends.append(st + kk)
    out, idx = _window_max(x, starts, ends, k)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) input: windows of ``kernel_size`` at
    pseudo-random positions (one uniform draw per plane and dimension) giving ``output_size`` or
    ``output_ratio`` of the input size."""
    return _fractional(input, 2, kernel_size, output_size, output_ratio, return_indices, _random_samples,
                       'fractional_max_pool2d')


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=True,
                                       _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input (see fractional_max_pool2d)."""
    return _fractional(input, 3, kernel_size, output_size, output_ratio, return_indices, _random_samples,
                       'fractional_max_pool3d')


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=True,
                                       _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)

# --- embedding ---------------------------------------------------------------------

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Looks up rows of ``weight``; rows at ``padding_idx`` get no gradient; ``max_norm`` renormalises the
    looked-up rows of ``weight`` in place, as torch does.

    >>> F.embedding(ember.tensor([[0, 2]]), ember.eye(3))
    tensor([[[1., 0., 0.],
             [0., 0., 1.]]])
    """
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with ember.no_grad():
            ember.embedding_renorm_(weight, input, max_norm, norm_type)
    return ember.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode='mean',
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings without building the (bags, length, dim) lookup: a 2-D
    ``input`` is one bag per row; a 1-D one is cut into bags at ``offsets``. Indices equal to ``padding_idx``
    take no part (nor count in a mean); an empty bag gives zeros. Written in operators (a gather, then an
    ``index_add``/``scatter_reduce`` by bag), so its gradient comes from theirs.

    >>> F.embedding_bag(ember.tensor([0, 2, 1]), ember.eye(3), ember.tensor([0, 2]), mode='sum')
    tensor([[1., 0., 1.],
            [0., 1., 0.]])
    """
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dtype not in (ember.int32, ember.int64):
        raise ValueError(f"input has to be an integer tensor, but got {input.dtype}")
    if mode not in ('sum', 'mean', 'max'):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None:
        if mode != 'sum':
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                      "the Pytorch GitHub.")
        if per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                             f"then it must have the same shape as the input ({tuple(input.shape)})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        bags, length = input.shape
        seg = ember.arange(bags).repeat_interleave(length)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.tolist()
        if include_last_offset:
            starts, bags = starts[:-1], len(starts) - 1
        else:
            bags = len(starts)
        if starts and starts[0] != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {starts[0]}")
        if starts and starts[-1] > input.numel():
            raise RuntimeError(f"offsets[-1] can not be greater than input's length ({input.numel()}), but got "
                               f"offsets[-1] of {starts[-1]}")
        seg = ember.bucketize(ember.arange(input.numel()), ember.tensor(starts, dtype=ember.int64), right=True) - 1
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if max_norm is not None:
        with ember.no_grad():
            ember.embedding_renorm_(weight, input, max_norm, norm_type)
    if padding_idx is not None:
        padding_idx = padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx
        keep = input != padding_idx
        input, seg = input[keep], seg[keep]
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights[keep]
    rows = embedding(input, weight, None, None, norm_type, scale_grad_by_freq, sparse)
    out = ember.zeros(bags, weight.shape[1], dtype=weight.dtype, device=weight.device)
    if mode == 'max':
        return out.scatter_reduce(0, seg[:, None].expand(-1, weight.shape[1]), rows, 'amax', include_self=False)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    out = out.index_add(0, seg, rows)
    if mode == 'mean':
        counts = ember.zeros(bags, dtype=weight.dtype, device=weight.device).index_add(
            0, seg, ember.ones(seg.shape[0], dtype=weight.dtype, device=weight.device))
        out = out / counts.clamp(min=1)[:, None]
    return out


# --- normalisation -------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalises over the trailing ``normalized_shape`` dimensions (biased variance), then scales and shifts.

    >>> F.layer_norm(ember.tensor([[1., 3.]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    return ember.native_layer_norm(input, ns, weight, bias, eps)[0]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalises each channel (dim 1) with batch statistics (``training``) or the running ones. In training the
    running statistics are updated in place with the unbiased variance, as torch does."""
    if training:
        size = 1
        for i, s in enumerate(input.shape):
            if i != 1:
                size *= s
        if size == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return ember.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each group of ``C // num_groups`` channels of each sample, then a per-channel affine map
    (one ``native_group_norm``, as torch's).

    >>> F.group_norm(ember.tensor([[1., 3.]]).reshape(1, 2, 1), 1).flatten()
    tensor([-1.0000,  1.0000])
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    sh = tuple(input.shape)
    per_group = sh[0] * sh[1] // num_groups
    for s in sh[2:]:
        per_group *= s
    if per_group == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return ember.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalises each channel of each sample over its spatial dimensions.

    As torch does it: batch norm over the input seen as one sample of N*C channels, with the per-channel
    weight, bias and running statistics repeated per sample (copies, so the batch norm saves those copies
    and not the caller's weight), and the running statistics averaged back over the samples.

    >>> F.instance_norm(ember.tensor([[[1., 3.]]])).round(decimals=3)
    tensor([[[-1.,  1.]]])
    """
    sh = tuple(input.shape)
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher input (got {input.dim()}D input)")
    N, C = sh[0], sh[1]
    if use_input_stats and input.numel() // max(N * C, 1) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    rep = lambda t: None if t is None else t.repeat(N)
    rm, rv = rep(running_mean), rep(running_var)
    out = batch_norm(input.reshape((1, N * C) + sh[2:]), rm, rv, rep(weight), rep(bias), use_input_stats,
                     momentum, eps)
    if use_input_stats:
        with ember.no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.view(N, C).mean(0))
            if running_var is not None:
                running_var.copy_(rv.view(N, C).mean(0))
    return out.view(sh)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x**2 over the trailing dims) + eps) * weight; ``eps`` defaults to finfo(dtype).eps."""
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    sh = tuple(input.shape)
    if len(sh) < len(ns) or sh[len(sh) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(map(str, ns))}], but got input of size{list(sh)}")
    if eps is None:
        eps = ember.finfo(input.dtype).eps
    dims = list(range(input.dim() - len(ns), input.dim()))
    n = 1
    for d in ns:
        n *= d
    out = input / ((input * input).sum(dims, keepdim=True) / n + eps).sqrt()
    return out if weight is None else out * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalises over ``size`` neighbouring channels: x / (k + alpha/size * sum(x**2)) ** beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sh = tuple(input.shape)
    sq = (input * input).reshape(sh[0], 1, sh[1], -1)
    sq = ember.nn.functional.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(sq, (size, 1), stride=1).reshape(sh)
    return input / div.mul(alpha).add(k).pow(beta)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over ``dim``, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along ``dim`` (broadcasting), with each norm clamped to ``eps``."""
    n1 = (x1 * x1).sum(dim, keepdim=True).sqrt().clamp_min(eps)
    n2 = (x2 * x2).sum(dim, keepdim=True).sqrt().clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


# --- resampling ----------------------------------------------------------------------

def _resample_uint8(input, isz, osz, mode, align_corners, scales, antialias):
    """torch's uint8 image resampling (bilinear, bicubic): the width pass, then the height pass, each with the
    weights in fixed point (int16, with as many fraction bits as the largest weight allows) and rounded and
    clamped to 0..255 in between, as Pillow and torch's separable uint8 kernels compute it."""
    import numpy as np
    x = input.detach().numpy().astype(np.int64)
    for d in (1, 0):
        m = _aa_matrix(isz[d], osz[d], mode, scales[d]) if antialias else \
            _interp_matrix(isz[d], osz[d], mode, align_corners, scales[d], None)
        bits = 0
        while bits < 22 and int(0.5 + m.max() * (1 << (bits + 1))) < (1 << 15):
            bits += 1
        v = m * (1 << bits)
        w = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64)
        x = np.moveaxis(np.moveaxis(x, 2 + d, -1) @ w.T, -1, 2 + d)
        x = np.clip((x + (1 << (bits - 1))) >> bits, 0, 255)
    out = ember.from_numpy(np.ascontiguousarray(x.astype(np.uint8))).to(input.device)
    return out.contiguous(memory_format=suggest_memory_format(input))


def _aa_matrix(n_in, n_out, mode, scale):
    """The (n_out, n_in) antialiased resampling matrix (torch's and PIL's): the bilinear triangle or the a = -0.5
    cubic, stretched over the source pixels an output pixel covers when downscaling, normalised per row."""
    import numpy as np
    s = (n_in / n_out) if scale is None else 1.0 / scale
    stretch = max(s, 1.0)
    if mode == 'bilinear':
        def kernel(x):
            x = np.abs(x)
            return np.where(x < 1.0, 1.0 - x, 0.0)
        support = stretch
    else:
        def kernel(x, a=-0.5):
            x = np.abs(x)
            return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                            np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))
        support = 2.0 * stretch
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        center = (i + 0.5) * s
        lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n_in)
        w = kernel((np.arange(lo, hi) - center + 0.5) / stretch)
        total = w.sum()
        m[i, lo:hi] = w / total if total else w
    return m


def _interp_matrix(n_in, n_out, mode, align_corners, scale, dtype):
    """The (n_out, n_in) matrix of 1-D resampling (the uint8 kernels' fixed-point weights): its taps summed."""
    import numpy as np
    m = np.zeros((n_out, n_in), np.float64)
    rows = np.arange(n_out)
    for idx, w in _interp_taps(n_in, n_out, mode, align_corners, scale):
        np.add.at(m, (rows, idx), 1.0 if w is None else w)
    return m


def _interp_taps(n_in, n_out, mode, align_corners, scale):
    """The taps of 1-D resampling, as torch's upsample kernels read them: a list of (input index, weight) pairs
    of arrays over the outputs (the weight None for the nearest modes). _interp_matrix sums them into a matrix."""
    import numpy as np
    o = np.arange(n_out, dtype=np.float64)
    if mode in ('nearest', 'nearest-exact'):
        s = (n_in / n_out) if scale is None else 1.0 / scale
        src = np.floor((o + (0.5 if mode == 'nearest-exact' else 0.0)) * s).astype(np.int64)
        return [(np.minimum(src, n_in - 1), None)]
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        x = o * s
    else:
        s = (n_in / n_out) if scale is None else 1.0 / scale
        x = (o + 0.5) * s - 0.5
    if mode in ('linear', 'bilinear', 'trilinear'):
        if not align_corners:
            x = np.maximum(x, 0)
        x0 = np.minimum(np.floor(x).astype(np.int64), n_in - 1)
        lam = x - x0
        return [(x0, 1 - lam), (np.minimum(x0 + 1, n_in - 1), lam)]
    if mode == 'bicubic':
        A = -0.75
        x0 = np.floor(x).astype(np.int64)
        t = x - x0

        def near(d):   # |d| <= 1
            return ((A + 2) * d - (A + 3)) * d * d + 1

        def far(d):    # 1 < |d| < 2
            return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A
        return [(np.clip(x0 + k, 0, n_in - 1), w)
                for k, w in zip(range(-1, 3), [far(t + 1), near(t), near(1 - t), far(2 - t)])]
    raise NotImplementedError(f"Got unsupported interpolation mode: {mode}")


_MODES = {'nearest': None, 'nearest-exact': None, 'linear': 1, 'bilinear': 2, 'bicubic': 2, 'trilinear': 3,
          'area': None}


# --- spatial transformers: affine_grid and grid_sample ----------------------------------

def _base_coords(n, align_corners, dtype, device):
    """The normalised centres of n pixels in [-1, 1] (the corners' centres at +-1 with align_corners)."""
    if n <= 1:
        return ember.zeros(n, dtype=dtype, device=device)     # the centre, as torch's linspace_from_neg_one
    c = ember.linspace(-1, 1, n, dtype=dtype, device=device)
    return c if align_corners else c * (n - 1) / n                # two roundings, as torch's (not one factor)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (x, y in [-1, 1]) of the affine maps ``theta`` (N, 2, 3) over a 2-D ``size``
    (N, C, H, W), or (N, D, H, W, 3) of (N, 3, 4) over a 3-D one, for ``grid_sample``.

    >>> F.affine_grid(ember.tensor([[[1., 0., 0.], [0., 1., 0.]]]), (1, 1, 2, 2), align_corners=True)[0, :, :, 0]
    tensor([[-1.,  1.],
            [-1.,  1.]])
    """
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{tuple(theta.shape)}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{tuple(theta.shape)}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    k = len(spatial)
    axes = [_base_coords(n, align_corners, theta.dtype, theta.device) for n in reversed(spatial)]   # x, y(, z)
    axes = [a.reshape([a.shape[0] if e == k - 1 - d else 1 for e in range(k)]).expand(*spatial)
            for d, a in enumerate(axes)]                                              # a meshgrid, in fewer ops
    ones = ember.ones(spatial, dtype=theta.dtype, device=theta.device)
    base = ember.stack(axes + [ones], dim=-1)                                       # (*spatial, k + 1)
    grid = base.reshape(1, -1, base.shape[-1]).matmul(theta.transpose(1, 2))       # (N, prod, k)
    return grid.reshape(size[0], *spatial, len(spatial))


def _unnormalise(coord, n, align_corners):
    return (coord + 1) / 2 * (n - 1) if align_corners else ((coord + 1) * n - 1) / 2


def _reflect(x, lo, hi):
    """Reflect x into [lo, hi] (twice the bounds, as torch's reflect_coordinates, in pixel units)."""
    if hi == lo:
        return ember.zeros_like(x)
    span = hi - lo
    x = (x - lo).abs()
    flips = ember.floor(x / span)
    extra = x - flips * span
    return ember.where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


# NOTE [grid_sample non-finite grid]: torch's CPU kernels disagree with each other on NaN / inf coordinates and
# ember follows each. The 2-D kernel (vectorised) clips a NaN coordinate to 0 (border, reflection), and with zeros
# padding multiplies its NaN weights with the zeroed out-of-bounds taps: the output is NaN (bilinear, bicubic), 0
# (nearest). The 3-D kernel (scalar, std::min/std::max) clips NaN to size - 1, skips every out-of-bounds corner (a
# point with a non-finite coordinate under zeros padding gives 0, not NaN), and its backward does not clip NaN
# (nor, under reflection, inf): such a point gives no gradient at all, to the input or the grid.

def _clip(x, n, nan_to):
    """x clamped into [0, n - 1] with torch's clip_coordinates_set_grad: the borders count as outside, so the
    gradient to x is zero at and beyond them (a plain clamp would pass it at the border itself). NaN becomes
    ``nan_to`` (NOTE [grid_sample non-finite grid])."""
    inside = (x > 0) & (x < n - 1)
    return ember.where(inside, x, x.detach().clamp(0, n - 1).nan_to_num(nan_to))


def _source(coord, n, padding_mode, align_corners, k):
    """The pixel coordinate read for the normalised ``coord`` along a dim of size n, in a k-dim grid_sample."""
    x = _unnormalise(coord, n, align_corners)
    nan_to = 0. if k == 2 else n - 1.               # NOTE [grid_sample non-finite grid]
    if padding_mode == 'border':
        x = _clip(x, n, nan_to)
    elif padding_mode == 'reflection':
        x = _reflect(x, 0, n - 1) if align_corners else _reflect(x, -0.5, n - 0.5)
        x = _clip(x, n, nan_to)
    elif k == 3:                                    # zeros: every corner outside, finite weights
        x = ember.where(x.isfinite(), x, -2.)
    return x


class _ZeroGradToGrid(ember.autograd.Function):
    """Nearest sampling's output, unchanged, with the zero gradient torch's grid_sampler gives its grid."""

    @staticmethod
    def forward(ctx, out, grid):
        ctx.grid_shape, ctx.grid_dtype = grid.shape, grid.dtype
        return out.view_as(out)

    @staticmethod
    def backward(ctx, grad):
        return grad, ember.zeros(ctx.grid_shape, dtype=ctx.grid_dtype)


def _check_grid_sampler(input, grid, mode):
    """torch's check_grid_sampler_common, then its 2-D / 3-D checks, in torch's order and words."""
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {d} being empty")
    rank = 4 if input.dim() == 4 else 5
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == 'bicubic' and rank == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _gather_taps(input):
    """``tap(idx)``: input at the integer-valued float indices ``idx`` (one tensor per spatial dim, outermost
    first, broadcasting together to (N, *shape)), zero outside the input (and at NaN / inf): (N, C, *shape). All
    taps are one gather, so the backward is one scatter."""
    n, c, sizes = input.shape[0], input.shape[1], list(input.shape[2:])
    flat = input.reshape(n, c, math.prod(sizes))
    strides = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]

    def tap(idx):
        inside, lin = None, None
        for i, size, stride in zip(idx, sizes, strides):
            if i.dtype in (ember.bfloat16, ember.float16):      # bounds compared exactly: in bf16, 1023 is 1024
                i = i.double()
            ok = (i >= 0) & (i <= size - 1)
            j = ember.where(ok, i, 0).long()        # int64 before the stride: bf16 rounds 1023 to 1024
            j = j * stride if stride != 1 else j
            inside = ok if inside is None else inside & ok
            lin = j if lin is None else lin + j
        shape = list(lin.shape[1:])
        pts = math.prod(shape)
        taps = flat.gather(2, lin.reshape(n, 1, pts).expand(n, c, pts)).reshape(n, c, *shape)
        return ember.where(inside.unsqueeze(1), taps, 0)    # where, not a product: no NaN gradient at a masked tap
    return tap


def _on_corner_axis(parts, d, k):
    """``parts`` (each (N, *out)) stacked on the corner axis d of k: (N, 1, .., len(parts), .., 1, *out), so that
    the k dims' corners broadcast into the whole neighbourhood."""
    t = ember.stack(parts, 1)
    return t.reshape(t.shape[0], *[len(parts) if e == d else 1 for e in range(k)], *t.shape[2:])


_CUBIC_A = -0.75    # torch's (and OpenCV's) cubic convolution constant


def _cubic_coefficients(t):
    """The weights of the taps at -1, 0, 1, 2 for the fraction t in [0, 1) (Keys' cubic convolution, A = -0.75,
    as ATen's get_cubic_upsample_coefficients)."""
    def far(x):         # 1 <= |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def near(x):        # |x| < 1
        return ((a + 2) * x - (a + 3)) * x * x + 1
    a = _CUBIC_A
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _bicubic_tap_index(i, n, padding_mode, align_corners):
    """Where the integer taps i (a float tensor) read, as ATen's compute_coordinates: the 4 x 4 neighbourhood is
    clamped or reflected tap by tap (zeros padding reads zero outside, in _gather_taps); NaN clips to 0, as
    torch's 2-D kernel (NOTE [grid_sample non-finite grid])."""
    if padding_mode == 'border':
        return i.clamp(0, n - 1).nan_to_num(0.)
    if padding_mode == 'reflection':
        r = _reflect(i, 0, n - 1) if align_corners else _reflect(i, -0.5, n - 0.5)
        return r.clamp(0, n - 1).nan_to_num(0.)
    return i


def _grid_sample_bicubic(input, grid, padding_mode, align_corners):
    """2-D bicubic grid_sample as torch's CPU kernel: 16 taps around floor(x), floor(y) of the unnormalised
    (unclipped) coordinates, each placed by the padding mode, interpolated along x, then y; the gradient reaches
    the grid through the fractions only (the taps' positions are integers), as torch's."""
    h, w = input.shape[2], input.shape[3]
    x = _unnormalise(grid[..., 0], w, align_corners)
    y = _unnormalise(grid[..., 1], h, align_corners)
    ix, iy = ember.floor(x).detach(), ember.floor(y).detach()
    offsets = ember.tensor([-1., 0., 1., 2.], dtype=ix.dtype, device=ix.device).reshape(4, *[1] * ix.dim())
    rows = _bicubic_tap_index(iy.unsqueeze(0) + offsets, h, padding_mode, align_corners)    # (4, N, *out)
    cols = _bicubic_tap_index(ix.unsqueeze(0) + offsets, w, padding_mode, align_corners)
    taps = _gather_taps(input)([rows.movedim(0, 1).unsqueeze(2), cols.movedim(0, 1).unsqueeze(1)])  # (N, C, 4, 4, *out)
    cx = _on_corner_axis(list(_cubic_coefficients(x - ix)), 1, 2).unsqueeze(1)
    cy = _on_corner_axis(list(_cubic_coefficients(y - iy)), 0, 2).unsqueeze(1)
    return ((taps * cx).sum(3, keepdim=True) * cy).sum((2, 3))


def _no_grad_at_nonfinite_3d(out, grid, padding_mode):
    """torch's 3-D backward reads NaN (reflection: NaN or inf) coordinates unclipped: no gradient from those
    points (NOTE [grid_sample non-finite grid])."""
    bad = grid.isnan() if padding_mode == 'border' else ~grid.isfinite()
    return ember.where(bad.any(-1).unsqueeze(1), out.detach(), out)


def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    """Output (N, C, Ho, Wo): ``input`` (N, C, H, W) sampled at the normalised (x, y) of ``grid`` (N, Ho, Wo, 2),
    -1 being the left/top edge (the first pixel's centre with ``align_corners``); or, volumetric, (N, C, Do, Ho, Wo)
    of ``input`` (N, C, D, H, W) at the (x, y, z) of ``grid`` (N, Do, Ho, Wo, 3). ``mode`` 'bilinear' (trilinear
    in 3-D), 'nearest' or 'bicubic' (2-D only), ``padding_mode`` 'zeros', 'border' or 'reflection'. Written in
    operators (one gather of the corner pixels, and their weights), so gradients reach both the input and the grid.
    NaN / inf in the grid give what torch's CPU kernels give (NOTE [grid_sample non-finite grid]).

    >>> img = ember.arange(4.).reshape(1, 1, 2, 2)
    >>> F.grid_sample(img, ember.zeros(1, 1, 1, 2), align_corners=False).item()
    1.5
    >>> F.grid_sample(ember.arange(8.).reshape(1, 1, 2, 2, 2), ember.zeros(1, 1, 1, 1, 3), align_corners=True).item()
    3.5
    """
    if mode not in ('bilinear', 'nearest', 'bicubic'):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ('zeros', 'border', 'reflection'):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    if mode == 'bicubic':
        return _grid_sample_bicubic(input, grid, padding_mode, align_corners)
    out = _grid_sample_linear_or_nearest(input, grid, mode, padding_mode, align_corners)
    grad = ember.is_grad_enabled() and (input.requires_grad or grid.requires_grad)
    if grad and grid.shape[-1] == 3 and padding_mode != 'zeros':
        out = _no_grad_at_nonfinite_3d(out, grid, padding_mode)
    if mode == 'nearest' and grad and grid.requires_grad:     # the grid's gradient is zeros, as torch's
        out = _ZeroGradToGrid.apply(out, grid)
    return out


def _grid_sample_linear_or_nearest(input, grid, mode, padding_mode, align_corners):
    sizes = list(input.shape[2:])                      # (D,) H, W: outermost first; the grid lists x (W) first
    k = len(sizes)
    src = [_source(grid[..., k - 1 - d], sizes[d], padding_mode, align_corners, k) for d in range(k)]
    tap = _gather_taps(input)
    if mode == 'nearest':       # round half to even, as torch's nearbyint
        return tap([ember.round(s) for s in src])
    lo = [ember.floor(s) for s in src]
    frac = [s - f for s, f in zip(src, lo)]
    w = None
    for d in reversed(range(k)):                       # x first: torch's (ix_se - ix) * (iy_se - iy) (* ...)
        wd = _on_corner_axis([1 - frac[d], frac[d]], d, k)
        w = wd if w is None else w * wd
    taps = tap([_on_corner_axis([f, f + 1], d, k) for d, f in enumerate(lo)])     # (N, C, 2, 2(, 2), *out)
    return (taps * w.unsqueeze(1)).sum(tuple(range(2, 2 + k)))


@_autocast_composite('interpolate')    # matmuls inside, but torch's upsample kernels are not autocast
def interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """Resamples the spatial dims: nearest, nearest-exact, (bi/tri)linear, bicubic, area. Each is separable, so
    each spatial dim is one matmul with a fixed (out, in) matrix, and the gradient comes from matmul's.

    >>> F.interpolate(ember.tensor([[[1., 2.]]]), scale_factor=2, mode='linear', align_corners=True)
    tensor([[[1.0000, 1.3333, 1.6667, 2.0000]]])
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    nsp = input.dim() - 2
    if nsp < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D)")
    want = _MODES[mode]
    if want is not None and want != nsp:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {want + 2}D input")
    if mode in ('nearest', 'nearest-exact', 'area'):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    isz = tuple(input.shape[2:])
    scales = [None] * nsp
    if size is not None:
        osz = (size,) * nsp if isinstance(size, int) else tuple(int(s) for s in size)
        if len(osz) != nsp:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(isz)} and output size of {list(osz)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
    else:
        sf = (scale_factor,) * nsp if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
        if len(sf) != nsp:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(isz)} and scale_factor of shape {list(sf)}. Please "
                             f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, "
                             f"...,sK) format.")
        osz = tuple(int(math.floor(i * float(f))) for i, f in zip(isz, sf))
        if not recompute_scale_factor:
            scales = [float(f) for f in sf]
    if mode == 'area':
        if nsp == 2:
            return adaptive_avg_pool2d(input, osz)
        if nsp == 1:
            return adaptive_avg_pool1d(input, osz[0])
        raise NotImplementedError("area interpolation of 5-D input is not supported")
    if input.is_quantized and mode in ('nearest', 'nearest-exact'):
        return _interpolate_quantized(input, osz, mode, scales)
    if antialias and (mode not in ('bilinear', 'bicubic') or nsp != 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    blend = not input.is_floating_point() and mode not in ('nearest', 'nearest-exact')
    if blend and input.dtype == ember.uint8 and nsp == 2:
        return _resample_uint8(input, isz, osz, mode, align_corners, scales, antialias)
    # other integer inputs are resampled in float32 and rounded to the nearest integer in range; nearest modes
    # pick values, so they stay in the input's dtype
    out = input.to(ember.float32) if blend else input
    aten = ember.ops.aten
    # NOTE [resampling taps]: each output reads its taps (1 for nearest, 2 for linear, 4 for bicubic) by index,
    # weighted: a non-finite input reaches only the outputs that read it, as in torch's kernels, where a dense
    # (out, in) matrix product spreads one inf or nan to every output through its 0 * inf terms. The matrix
    # product is 2-4x faster for the linear and cubic modes, so a finite input whose values can be read here (a
    # plain tensor, no dispatch mode, vmap or compile: there the taps, which also show no matrix product to a FLOP
    # counter, as torch's upsample kernels count none) takes it
    dense = (antialias or mode not in ('nearest', 'nearest-exact')) and _values_readable(out) and \
        bool(aten.all.default(aten.isfinite.default(out)))
    for d in reversed(range(nsp)):      # the last dim first: torch's kernels nest it innermost
        dim = 2 + d
        if antialias or dense:
            m = _aa_matrix(isz[d], osz[d], mode, scales[d]) if antialias else \
                _interp_matrix(isz[d], osz[d], mode, align_corners, scales[d], None)
            mt = ember.from_numpy(m.T.copy()).to(dtype=out.dtype, device=input.device)
            nd = out.dim()
            to_last = [i for i in range(nd) if i != dim] + [dim]
            back = list(range(dim)) + [nd - 1] + list(range(dim, nd - 1))
            out = aten.permute.default(aten.matmul.default(aten.permute.default(out, to_last), mt), back)
            continue
        acc = None
        for idx, w in _interp_taps(isz[d], osz[d], mode, align_corners, scales[d]):
            v = aten.index_select.default(out, dim, ember.from_numpy(idx).to(input.device))
            if w is not None:
                shape = [1] * out.dim()
                shape[dim] = osz[d]
                v = aten.mul.Tensor(v, ember.from_numpy(w.reshape(shape)).to(dtype=out.dtype, device=input.device))
            acc = v if acc is None else aten.add.Tensor(acc, v)
        out = acc
    if blend:
        info = ember.iinfo(input.dtype)
        out = out.round().clamp(info.min, info.max).to(input.dtype)
    # torch's upsampling kernels lay the result out as the input (NOTE [channels_last outputs])
    return aten.contiguous.default(out, memory_format=suggest_memory_format(input))


def _values_readable(t):
    """Whether a kernel choice may read ``t``'s values: a plain tensor with data, outside tracing (no dispatch
    mode, vmap level or compile, where reading them would make the trace depend on them)."""
    from ...utils._python_dispatch import _get_current_dispatch_mode
    from ..._C._functorch import is_batchedtensor
    return type(t) is ember.Tensor and t.device.type != 'meta' and _get_current_dispatch_mode() is None and \
        not is_batchedtensor(t) and not ember.compiler.is_compiling()


def _interpolate_quantized(input, size, mode, scales):
    """Nearest modes pick entries, so a quantized tensor's integers are resampled and keep its parameters
    (torch's quantized upsample_nearest kernels)."""
    ints = interpolate(input.int_repr(), size, mode=mode) if scales[0] is None else \
        interpolate(input.int_repr(), scale_factor=scales, mode=mode)
    return ember._make_per_tensor_quantized_tensor(ints, input.q_scale(), input.q_zero_point())


def _deprecated_upsample(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None):
    """Deprecated (torch warns): ``interpolate`` with the same arguments."""
    _deprecated_upsample('upsample')
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated (torch warns): ``interpolate(mode='nearest')``."""
    _deprecated_upsample('upsample_nearest')
    return interpolate(input, size, scale_factor, mode='nearest')


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated (torch warns): ``interpolate(mode='bilinear', align_corners=True)``."""
    _deprecated_upsample('upsample_bilinear')
    return interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)


# --- shuffles ---------------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    return ember.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return ember.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    return ember.channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """torch's name for the same shuffle (its native kernel)."""
    return ember.channel_shuffle(input, groups)
