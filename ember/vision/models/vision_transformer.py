"""Vision Transformer (Dosovitskiy et al. 2020) with torchvision's names: ``conv_proj``, ``class_token``,
``encoder.pos_embedding``, ``encoder.layers.encoder_layer_{i}.{ln_1,self_attention,ln_2,mlp.0,mlp.3}``,
``encoder.ln``, ``heads.head``. ``image_size`` may be any multiple of the patch size (tests use 32).

``conv_stem_configs`` (a list of :class:`ConvStemConfig`) replaces the one patchifying convolution by a
stack of conv-norm-activation blocks and a final 1x1 convolution (Xiao et al. 2021, "Early convolutions
help transformers see better"), as ``conv_proj.conv_bn_relu_{i}`` and ``conv_proj.conv_last``; the
strides should multiply to the patch size so that the sequence length stays ``(image_size // patch_size) ** 2``.
"""
import math
from collections import OrderedDict
from functools import partial
from typing import Callable, NamedTuple

import ember
import ember.nn as nn

from ..ops.misc import Conv2dNormActivation
from ._api import _check_num_classes, _load, _overwrite_named_param, _resolve, _weights, register_model

__all__ = ['VisionTransformer', 'ConvStemConfig', 'ViT_B_16_Weights', 'ViT_B_32_Weights', 'ViT_L_16_Weights',
           'ViT_L_32_Weights', 'ViT_H_14_Weights', 'vit_b_16', 'vit_b_32', 'vit_l_16', 'vit_l_32', 'vit_h_14']


def _published(file, num_params, size):
    return file, {'num_params': num_params, 'min_size': (size, size)}


# torchvision's checkpoints; the SWAG end-to-end ones were trained at a larger image size, which the
# builder then uses (their position embeddings are longer)
ViT_B_16_Weights = _weights('ViT_B_16_Weights', {
    'IMAGENET1K_V1': _published('vit_b_16-c867db91.pth', 86567656, 224),
    'IMAGENET1K_SWAG_E2E_V1': _published('vit_b_16_swag-9ac1b537.pth', 86859496, 384),
    'IMAGENET1K_SWAG_LINEAR_V1': _published('vit_b_16_lc_swag-4e70ced5.pth', 86567656, 224)},
    default='IMAGENET1K_V1')
ViT_B_32_Weights = _weights('ViT_B_32_Weights', {
    'IMAGENET1K_V1': _published('vit_b_32-d86f8d99.pth', 88224232, 224)})
ViT_L_16_Weights = _weights('ViT_L_16_Weights', {
    'IMAGENET1K_V1': _published('vit_l_16-852ce7e3.pth', 304326632, 224),
    'IMAGENET1K_SWAG_E2E_V1': _published('vit_l_16_swag-4f3808c9.pth', 305174504, 512),
    'IMAGENET1K_SWAG_LINEAR_V1': _published('vit_l_16_lc_swag-4d563306.pth', 304326632, 224)},
    default='IMAGENET1K_V1')
ViT_L_32_Weights = _weights('ViT_L_32_Weights', {
    'IMAGENET1K_V1': _published('vit_l_32-c7638314.pth', 306535400, 224)})
ViT_H_14_Weights = _weights('ViT_H_14_Weights', {
    'IMAGENET1K_SWAG_E2E_V1': _published('vit_h_14_swag-80465313.pth', 633470440, 518),
    'IMAGENET1K_SWAG_LINEAR_V1': _published('vit_h_14_lc_swag-c1eb923e.pth', 632045800, 224)},
    default='IMAGENET1K_SWAG_E2E_V1')


class ConvStemConfig(NamedTuple):
    """One block of a convolutional stem: its convolution's output channels, kernel size and stride, and
    the norm and activation layers that follow it."""
    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: Callable[..., nn.Module] = nn.BatchNorm2d
    activation_layer: Callable[..., nn.Module] = nn.ReLU


class MLPBlock(nn.Sequential):
    """Linear → GELU → Dropout → Linear → Dropout (indices 0..4, as torchvision.ops.MLP)."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(mlp_dim, in_dim),
                         nn.Dropout(dropout))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        if input.dim() != 3:
            raise ValueError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(input.shape)}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer):
        super().__init__()
        self.pos_embedding = nn.Parameter(ember.empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f'encoder_layer_{i}', EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None, norm_layer=None,
                 conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise ValueError("Input shape indivisible by patch size!")
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.mlp_dim, self.attention_dropout, self.dropout = mlp_dim, attention_dropout, dropout
        self.num_classes, self.representation_size = num_classes, representation_size
        self.norm_layer = norm_layer
        if conv_stem_configs is None:
            self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        else:
            self.conv_proj = _conv_stem(conv_stem_configs, hidden_dim)
        seq_length = (image_size // patch_size) ** 2 + 1      # + the class token
        self.class_token = nn.Parameter(ember.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads['head'] = nn.Linear(hidden_dim, num_classes)
        else:
            heads['pre_logits'] = nn.Linear(hidden_dim, representation_size)
            heads['act'] = nn.Tanh()
            heads['head'] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.conv_proj.bias)
        else:       # a conv stem: He initialisation of its last 1x1 convolution, by its output channels
            last = self.conv_proj.conv_last
            nn.init.normal_(last.weight, mean=0.0, std=math.sqrt(2.0 / last.out_channels))
            nn.init.zeros_(last.bias)
        if hasattr(self.heads, 'pre_logits'):
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise AssertionError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise AssertionError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        n = x.shape[0]
        x = ember.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


def _conv_stem(configs, hidden_dim):
    stem = nn.Sequential()
    channels = 3
    for i, config in enumerate(configs):
        stem.add_module(f'conv_bn_relu_{i}', Conv2dNormActivation(
            channels, config.out_channels, kernel_size=config.kernel_size, stride=config.stride,
            norm_layer=config.norm_layer, activation_layer=config.activation_layer))
        channels = config.out_channels
    stem.add_module('conv_last', nn.Conv2d(channels, hidden_dim, kernel_size=1))
    return stem


def _vision_transformer(weights_enum, weights, kwargs, **arch):
    """Build a ViT of the given architecture; published weights fix ``num_classes`` and ``image_size``
    (the size they were trained at), a caller's different value is an error."""
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    if weights is not None and not isinstance(weights, str):
        _overwrite_named_param(kwargs, 'image_size', weights.meta['min_size'][0])
    image_size = kwargs.pop('image_size', 224)
    return _load(VisionTransformer(image_size=image_size, **arch, **kwargs), weights)


@register_model(ViT_B_16_Weights)
def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16 (12 layers, 12 heads, width 768); ``image_size`` defaults to 224.

    >>> sum(p.numel() for p in vit_b_16(image_size=32).parameters())
    86420200
    """
    return _vision_transformer(ViT_B_16_Weights, weights, kwargs, patch_size=16, num_layers=12, num_heads=12,
                               hidden_dim=768, mlp_dim=3072)


@register_model(ViT_B_32_Weights)
def vit_b_32(*, weights=None, progress=True, **kwargs):
    """ViT-B/32 (12 layers, 12 heads, width 768, 32x32 patches)."""
    return _vision_transformer(ViT_B_32_Weights, weights, kwargs, patch_size=32, num_layers=12, num_heads=12,
                               hidden_dim=768, mlp_dim=3072)


@register_model(ViT_L_16_Weights)
def vit_l_16(*, weights=None, progress=True, **kwargs):
    """ViT-L/16 (24 layers, 16 heads, width 1024)."""
    return _vision_transformer(ViT_L_16_Weights, weights, kwargs, patch_size=16, num_layers=24, num_heads=16,
                               hidden_dim=1024, mlp_dim=4096)


@register_model(ViT_L_32_Weights)
def vit_l_32(*, weights=None, progress=True, **kwargs):
    """ViT-L/32 (24 layers, 16 heads, width 1024, 32x32 patches)."""
    return _vision_transformer(ViT_L_32_Weights, weights, kwargs, patch_size=32, num_layers=24, num_heads=16,
                               hidden_dim=1024, mlp_dim=4096)


@register_model(ViT_H_14_Weights)
def vit_h_14(*, weights=None, progress=True, **kwargs):
    """ViT-H/14 (32 layers, 16 heads, width 1280, 14x14 patches); its default weights were trained at 518."""
    return _vision_transformer(ViT_H_14_Weights, weights, kwargs, patch_size=14, num_layers=32, num_heads=16,
                               hidden_dim=1280, mlp_dim=5120)
