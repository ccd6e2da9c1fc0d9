"""Swin Transformer (Liu et al. 2021) and Swin Transformer V2 (Liu et al. 2022) with torchvision's names:
``features.0.{0,2}`` (patch embedding: a strided convolution, channels-last, LayerNorm), stages of blocks
``features.{1,3,5,7}.{j}.{norm1,attn.{qkv,proj,...},norm2,mlp.{0,3}}`` with patch merging
``features.{2,4,6}.{reduction,norm}`` between them, then ``norm`` and ``head``.

Activations stay channels-last (N, H, W, C) inside ``features``. A block attends within non-overlapping
windows, every second block of a stage within windows shifted by half a window (NOTE [shifted windows]).
V1 adds a learned bias per relative position; V2 uses cosine attention with a learned temperature and
computes the bias with a small MLP from log-spaced relative coordinates, then normalises after each
residual branch instead of before it.
"""
import math
from functools import partial

import ember
import ember.nn as nn
import ember.nn.functional as F

from ..ops.misc import MLP, Permute, StochasticDepth
from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['SwinTransformer', 'Swin_T_Weights', 'Swin_S_Weights', 'Swin_B_Weights', 'Swin_V2_T_Weights',
           'Swin_V2_S_Weights', 'Swin_V2_B_Weights', 'swin_t', 'swin_s', 'swin_b', 'swin_v2_t', 'swin_v2_s',
           'swin_v2_b']

Swin_T_Weights = _weights('Swin_T_Weights', {'IMAGENET1K_V1': 'swin_t-704ceda3.pth'},
                          meta={'num_params': 28288354, 'min_size': (224, 224)})
Swin_S_Weights = _weights('Swin_S_Weights', {'IMAGENET1K_V1': 'swin_s-5e29d889.pth'},
                          meta={'num_params': 49606258, 'min_size': (224, 224)})
Swin_B_Weights = _weights('Swin_B_Weights', {'IMAGENET1K_V1': 'swin_b-68c6b09e.pth'},
                          meta={'num_params': 87768224, 'min_size': (224, 224)})
Swin_V2_T_Weights = _weights('Swin_V2_T_Weights', {'IMAGENET1K_V1': 'swin_v2_t-b137f0e2.pth'},
                             meta={'num_params': 28351570, 'min_size': (256, 256)})
Swin_V2_S_Weights = _weights('Swin_V2_S_Weights', {'IMAGENET1K_V1': 'swin_v2_s-637d8ceb.pth'},
                             meta={'num_params': 49737442, 'min_size': (256, 256)})
Swin_V2_B_Weights = _weights('Swin_V2_B_Weights', {'IMAGENET1K_V1': 'swin_v2_b-781e5279.pth'},
                             meta={'num_params': 87930848, 'min_size': (256, 256)})


def _patch_merging_pad(x):
    """(..., H, W, C) -> (..., ceil(H/2), ceil(W/2), 4C): each 2x2 neighbourhood's pixels side by side, in the
    order (0,0), (1,0), (0,1), (1,1); an odd side is padded with zeros first."""
    H, W = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, W % 2, 0, H % 2))
    return ember.cat([x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :]], -1)


class PatchMerging(nn.Module):
    """Halve the resolution, double the width: merge 2x2 patches, LayerNorm, then a linear reduction."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x):
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """V2's patch merging: the reduction first, LayerNorm over its output."""

    def __init__(self, dim, norm_layer=nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x):
        return self.norm(self.reduction(_patch_merging_pad(x)))


def _get_relative_position_bias(relative_position_bias_table, relative_position_index, window_size):
    """(1, heads, N, N) bias between the N positions of a window, looked up in a ((2Wh-1)(2Ww-1), heads) table."""
    n = window_size[0] * window_size[1]
    bias = relative_position_bias_table[relative_position_index].view(n, n, -1)
    return bias.permute(2, 0, 1).contiguous().unsqueeze(0)


def _relative_position_index(window_size):
    """Index into the bias table of each pair of positions of a window, flattened: (Wh*Ww*Wh*Ww,).
    A pair's offsets (dh, dw) lie in [-(Wh-1), Wh-1] x [-(Ww-1), Ww-1]; the table is that grid row-major."""
    wh, ww = window_size
    rows, cols = ember.meshgrid(ember.arange(wh), ember.arange(ww), indexing='ij')
    rows, cols = rows.flatten(), cols.flatten()
    dh = rows[:, None] - rows[None, :] + (wh - 1)
    dw = cols[:, None] - cols[None, :] + (ww - 1)
    return (dh * (2 * ww - 1) + dw).flatten()


def _to_windows(x, window_size):
    """(B, H, W, C) -> (B * windows, Wh*Ww, C), windows in row-major order."""
    B, H, W, C = x.shape
    wh, ww = window_size
    x = x.view(B, H // wh, wh, W // ww, ww, C).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(B * (H // wh) * (W // ww), wh * ww, C)


def _from_windows(x, window_size, B, H, W):
    """The inverse of :func:`_to_windows`."""
    wh, ww = window_size
    C = x.shape[-1]
    x = x.view(B, H // wh, W // ww, wh, ww, C).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(B, H, W, C)


def _shift_mask(H, W, window_size, shift_size, dtype, device):
    """(windows, N, N) additive mask: -100 between positions that came from different regions of the image
    before the cyclic shift (they are neighbours only because the shift wrapped them around), 0 otherwise."""
    def region(size, window, shift):     # 0 for the unshifted part, 1 for the window that wraps, 2 for the tail
        i = ember.arange(size, device=device)
        return (i >= size - window).long() + (i >= size - shift).long()

    regions = region(H, window_size[0], shift_size[0])[:, None] * 3 + region(W, window_size[1], shift_size[1])
    regions = _to_windows(regions.to(dtype)[None, :, :, None], window_size).squeeze(-1)
    differ = regions.unsqueeze(1) != regions.unsqueeze(2)
    return ember.zeros(differ.shape, dtype=dtype, device=device).masked_fill(differ, -100.0)


# NOTE [shifted windows]: attention runs inside windows of Wh x Ww positions (the map padded with zeros to
# a multiple of the window). In a shifted block the map is first rolled by (-Wh/2, -Ww/2), so a window
# straddles four windows of the block before it, which connects them; the roll wraps the first rows and
# columns around to the end, and a mask keeps the wrapped positions from attending to the others in their
# window. The output is rolled back. A window as large as the map has nothing to shift (no shift then).
def shifted_window_attention(input, qkv_weight, proj_weight, relative_position_bias, window_size, num_heads,
                             shift_size, attention_dropout=0.0, dropout=0.0, qkv_bias=None, proj_bias=None,
                             logit_scale=None, training=True):
    """Multi-head self-attention within (shifted) windows of an (N, H, W, C) map, with a relative position
    bias; ``logit_scale`` (V2) switches to cosine attention with that learned log-temperature per head.

    >>> x = ember.randn(1, 5, 5, 4)
    >>> shifted_window_attention(x, ember.randn(12, 4), ember.randn(4, 4), ember.zeros(1, 2, 9, 9), [3, 3], 2,
    ...                          [1, 1]).shape
    ember.Size([1, 5, 5, 4])
    """
    B, H, W, C = input.shape
    pad_b, pad_r = (-H) % window_size[0], (-W) % window_size[1]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    pad_H, pad_W = H + pad_b, W + pad_r
    shift_size = [0 if window_size[0] >= pad_H else shift_size[0], 0 if window_size[1] >= pad_W else shift_size[1]]
    shifted = sum(shift_size) > 0
    if shifted:
        x = ember.roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))
    x = _to_windows(x, window_size)
    windows, n = x.shape[0], x.shape[1]
    if logit_scale is not None and qkv_bias is not None:     # V2 has no key bias (its gradient is zero)
        third = qkv_bias.numel() // 3
        qkv_bias = ember.cat([qkv_bias[:third], ember.zeros_like(qkv_bias[third:2 * third]), qkv_bias[2 * third:]])
    qkv = F.linear(x, qkv_weight, qkv_bias).reshape(windows, n, 3, num_heads, C // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * ember.clamp(logit_scale, max=math.log(100.0)).exp()
    else:
        attn = (q * (C // num_heads) ** -0.5).matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias
    if shifted:
        mask = _shift_mask(pad_H, pad_W, window_size, shift_size, x.dtype, x.device)
        attn = attn.view(B, windows // B, num_heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, num_heads, n, n)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(windows, n, C)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = _from_windows(x, window_size, B, pad_H, pad_W)
    if shifted:
        x = ember.roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :H, :W, :].contiguous()


class ShiftedWindowAttention(nn.Module):
    """Window attention with a learned bias per relative position and head (see
    :func:`shifted_window_attention`); ``relative_position_index`` is a buffer, as in torchvision."""

    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size, self.shift_size, self.num_heads = window_size, shift_size, num_heads
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.define_relative_position_index()

    def define_relative_position_bias_table(self):
        size = (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(ember.zeros(size, self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def define_relative_position_index(self):
        self.register_buffer('relative_position_index', _relative_position_index(self.window_size))

    def get_relative_position_bias(self):
        return _get_relative_position_bias(self.relative_position_bias_table, self.relative_position_index,
                                           self.window_size)

    def _attend(self, x, logit_scale=None):
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(), self.window_size,
            self.num_heads, shift_size=self.shift_size, attention_dropout=self.attention_dropout,
            dropout=self.dropout, qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, logit_scale=logit_scale,
            training=self.training)

    def forward(self, x):
        return self._attend(x)


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    """V2: cosine attention scaled by ``exp(logit_scale)`` (at most 100), and a continuous position bias,
    ``16 * sigmoid(cpb_mlp(relative_coords_table))``, from log-spaced relative coordinates."""

    def __init__(self, dim, window_size, shift_size, num_heads, qkv_bias=True, proj_bias=True,
                 attention_dropout=0.0, dropout=0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias, proj_bias=proj_bias,
                         attention_dropout=attention_dropout, dropout=dropout)
        self.logit_scale = nn.Parameter(ember.log(10 * ember.ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            third = self.qkv.bias.numel() // 3
            with ember.no_grad():
                self.qkv.bias[third:2 * third].zero_()

    def define_relative_position_bias_table(self):
        """(1, 2Wh-1, 2Ww-1, 2) buffer: each offset scaled to [-8, 8], then sign(x) * log2(1 + |x|) / 3."""
        wh, ww = self.window_size
        dh = ember.arange(-(wh - 1), wh, dtype=ember.float32) / (wh - 1) * 8
        dw = ember.arange(-(ww - 1), ww, dtype=ember.float32) / (ww - 1) * 8
        table = ember.stack(ember.meshgrid(dh, dw, indexing='ij'), dim=-1).unsqueeze(0)
        self.register_buffer('relative_coords_table', ember.sign(table) * ember.log2(table.abs() + 1.0) / 3.0)

    def get_relative_position_bias(self):
        table = self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads)
        return 16 * ember.sigmoid(_get_relative_position_bias(table, self.relative_position_index,
                                                              self.window_size))

    def forward(self, x):
        return self._attend(x, self.logit_scale)


class SwinTransformerBlock(nn.Module):
    """Pre-norm residual block: window attention, then an MLP; both branches dropped per sample."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads, attention_dropout=attention_dropout,
                               dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, 'row')
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x):
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """V2's block: the norms apply to each branch's output (post-norm), with V2 attention."""

    def __init__(self, dim, num_heads, window_size, shift_size, mlp_ratio=4.0, dropout=0.0, attention_dropout=0.0,
                 stochastic_depth_prob=0.0, norm_layer=nn.LayerNorm, attn_layer=ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio, dropout=dropout,
                         attention_dropout=attention_dropout, stochastic_depth_prob=stochastic_depth_prob,
                         norm_layer=norm_layer, attn_layer=attn_layer)

    def forward(self, x):
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    """Patch embedding, stages of Swin blocks (width doubling and resolution halving between stages), LayerNorm,
    global average pooling and a linear head. Any input size works: windows pad the map as needed."""

    def __init__(self, patch_size, embed_dim, depths, num_heads, window_size, mlp_ratio=4.0, dropout=0.0,
                 attention_dropout=0.0, stochastic_depth_prob=0.1, num_classes=1000, norm_layer=None, block=None,
                 downsample_layer=PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        block = block or SwinTransformerBlock
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        layers = [nn.Sequential(nn.Conv2d(3, embed_dim, kernel_size=tuple(patch_size), stride=tuple(patch_size)),
                                Permute([0, 2, 3, 1]), norm_layer(embed_dim))]
        total_blocks, block_id = sum(depths), 0
        for i_stage, depth in enumerate(depths):
            dim = embed_dim * 2 ** i_stage
            stage = []
            for i_layer in range(depth):
                # stochastic depth rises linearly with the block's index over the whole network
                sd_prob = stochastic_depth_prob * float(block_id) / (total_blocks - 1)
                shift = [0 if i_layer % 2 == 0 else w // 2 for w in window_size]
                stage.append(block(dim, num_heads[i_stage], window_size=window_size, shift_size=shift,
                                   mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                                   stochastic_depth_prob=sd_prob, norm_layer=norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < len(depths) - 1:
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)
        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


def _swin(embed_dim, depths, num_heads, window_size, stochastic_depth_prob, weights_enum, weights, kwargs, v2=False):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    if v2:
        kwargs = {'block': SwinTransformerBlockV2, 'downsample_layer': PatchMergingV2, **kwargs}
    model = SwinTransformer(patch_size=[4, 4], embed_dim=embed_dim, depths=depths, num_heads=num_heads,
                            window_size=window_size, stochastic_depth_prob=stochastic_depth_prob, **kwargs)
    return _load(model, weights)


@register_model(Swin_T_Weights)
def swin_t(*, weights=None, progress=True, **kwargs):
    """Swin-T: width 96, depths (2, 2, 6, 2), 7x7 windows.

    >>> swin_t(num_classes=10)(ember.randn(1, 3, 64, 64)).shape
    ember.Size([1, 10])
    """
    return _swin(96, [2, 2, 6, 2], [3, 6, 12, 24], [7, 7], 0.2, Swin_T_Weights, weights, kwargs)


@register_model(Swin_S_Weights)
def swin_s(*, weights=None, progress=True, **kwargs):
    """Swin-S: width 96, depths (2, 2, 18, 2), 7x7 windows."""
    return _swin(96, [2, 2, 18, 2], [3, 6, 12, 24], [7, 7], 0.3, Swin_S_Weights, weights, kwargs)


@register_model(Swin_B_Weights)
def swin_b(*, weights=None, progress=True, **kwargs):
    """Swin-B: width 128, depths (2, 2, 18, 2), 7x7 windows."""
    return _swin(128, [2, 2, 18, 2], [4, 8, 16, 32], [7, 7], 0.5, Swin_B_Weights, weights, kwargs)


@register_model(Swin_V2_T_Weights)
def swin_v2_t(*, weights=None, progress=True, **kwargs):
    """Swin-V2-T: width 96, depths (2, 2, 6, 2), 8x8 windows."""
    return _swin(96, [2, 2, 6, 2], [3, 6, 12, 24], [8, 8], 0.2, Swin_V2_T_Weights, weights, kwargs, v2=True)


@register_model(Swin_V2_S_Weights)
def swin_v2_s(*, weights=None, progress=True, **kwargs):
    """Swin-V2-S: width 96, depths (2, 2, 18, 2), 8x8 windows."""
    return _swin(96, [2, 2, 18, 2], [3, 6, 12, 24], [8, 8], 0.3, Swin_V2_S_Weights, weights, kwargs, v2=True)


@register_model(Swin_V2_B_Weights)
def swin_v2_b(*, weights=None, progress=True, **kwargs):
    """Swin-V2-B: width 128, depths (2, 2, 18, 2), 8x8 windows."""
    return _swin(128, [2, 2, 18, 2], [4, 8, 16, 32], [8, 8], 0.5, Swin_V2_B_Weights, weights, kwargs, v2=True)
