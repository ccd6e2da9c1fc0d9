"""MaxViT (Tu et al. 2022) with torchvision's names: ``stem.{0,1}``, ``blocks.{i}.layers.{j}.layers`` with
``MBconv`` (``proj``, ``layers.{pre_norm,conv_a,conv_b,squeeze_excitation,conv_c}``), ``window_attention`` and
``grid_attention`` (``attn_layer.{0,1}``, ``mlp_layer.{0,1,3}``), and ``classifier.{2,3,5}``.

Each layer is an MBConv (the first of a block halves the resolution), then attention within P x P windows
of neighbouring pixels ("window", local), then attention within a P x P grid of pixels spread evenly over
the map ("grid", global, sparse). Both partitions use the same reshape, so the map must divide into P x P
partitions at every block: ``input_size`` is fixed at construction (224 for maxvit_t's P = 7).
"""
from collections import OrderedDict
from functools import partial

import ember
import ember.nn as nn
import ember.nn.functional as F

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from ._api import _check_num_classes, _load, _overwrite_named_param, _resolve, _weights, register_model
from .swin_transformer import _relative_position_index

__all__ = ['MaxVit', 'MaxVit_T_Weights', 'maxvit_t']

MaxVit_T_Weights = _weights('MaxVit_T_Weights', {'IMAGENET1K_V1': 'maxvit_t-bc5ab103.pth'},
                            meta={'num_params': 30919624, 'min_size': (224, 224)})


def _get_conv_output_shape(input_size, kernel_size, stride, padding):
    return tuple((s - kernel_size + 2 * padding) // stride + 1 for s in input_size)


def _make_block_input_shapes(input_size, n_blocks):
    """The map size each block works at: the stem and every block halve it (3x3 convolutions, stride 2)."""
    shapes, shape = [], _get_conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        shape = _get_conv_output_shape(shape, 3, 2, 1)
        shapes.append(shape)
    return shapes


def _linspace(start, stop, n):
    """NumPy's ``linspace`` values (``start + i * step``, the last exactly ``stop``), which torchvision uses."""
    if n == 1:
        return [start]
    step = (stop - start) / (n - 1)
    return [start + i * step for i in range(n - 1)] + [stop]


class MBConv(nn.Module):
    """Inverted bottleneck: pre-norm, 1x1 expansion, depthwise 3x3 (the stride), squeeze-excitation, 1x1
    projection; the residual is average-pooled and projected when the shape changes."""

    def __init__(self, in_channels, out_channels, expansion_ratio, squeeze_ratio, stride, activation_layer,
                 norm_layer, p_stochastic_dropout=0.0):
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj.insert(0, nn.AvgPool2d(kernel_size=3, stride=stride, padding=1))
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()
        mid_channels = int(out_channels * expansion_ratio)
        sqz_channels = int(out_channels * squeeze_ratio)
        self.stochastic_depth = (StochasticDepth(p_stochastic_dropout, mode='row') if p_stochastic_dropout
                                 else nn.Identity())
        self.layers = nn.Sequential(OrderedDict([
            ('pre_norm', norm_layer(in_channels)),
            ('conv_a', Conv2dNormActivation(in_channels, mid_channels, kernel_size=1, stride=1, padding=0,
                                            activation_layer=activation_layer, norm_layer=norm_layer, inplace=None)),
            ('conv_b', Conv2dNormActivation(mid_channels, mid_channels, kernel_size=3, stride=stride, padding=1,
                                            activation_layer=activation_layer, norm_layer=norm_layer,
                                            groups=mid_channels, inplace=None)),
            ('squeeze_excitation', SqueezeExcitation(mid_channels, sqz_channels, activation=nn.SiLU)),
            ('conv_c', nn.Conv2d(mid_channels, out_channels, kernel_size=1, bias=True))]))

    def forward(self, x):
        return self.proj(x) + self.stochastic_depth(self.layers(x))


class RelativePositionalMultiHeadAttention(nn.Module):
    """Multi-head self-attention over the P*P positions of each partition, (B, G, P*P, D) -> same, with a
    learned bias per relative position and head (as Swin's). The keys are scaled by ``feat_dim ** -0.5``
    (the whole width, not a head's: torchvision's choice, which its checkpoint was trained with)."""

    def __init__(self, feat_dim, head_dim, max_seq_len):
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(max_seq_len ** 0.5)
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim ** -0.5
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.Parameter(
            ember.empty((2 * self.size - 1) * (2 * self.size - 1), self.n_heads, dtype=ember.float32))
        self.register_buffer('relative_position_index',
                             _relative_position_index([self.size, self.size]).view(max_seq_len, max_seq_len))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self):
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        return bias.view(self.max_seq_len, self.max_seq_len, -1).permute(2, 0, 1).contiguous().unsqueeze(0)

    def forward(self, x):
        B, G, P, D = x.shape
        q, k, v = (t.reshape(B, G, P, self.n_heads, self.head_dim).permute(0, 1, 3, 2, 4)
                   for t in ember.chunk(self.to_qkv(x), 3, dim=-1))
        attn = q.matmul((k * self.scale_factor).transpose(-2, -1)) + self.get_relative_positional_bias()
        out = F.softmax(attn, dim=-1).matmul(v)
        return self.merge(out.permute(0, 1, 3, 2, 4).reshape(B, G, P, D))


class SwapAxes(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.a, self.b = a, b

    def forward(self, x):
        return ember.swapaxes(x, self.a, self.b)


class WindowPartition(nn.Module):
    """(B, C, H, W) -> (B, H/p * W/p, p*p, C): the map cut into p x p windows, each window's pixels in a row."""

    def forward(self, x, p):
        B, C, H, W = x.shape
        x = x.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(B, (H // p) * (W // p), p * p, C)


class WindowDepartition(nn.Module):
    """The inverse of :class:`WindowPartition`, given the number of windows down and across."""

    def forward(self, x, p, h_partitions, w_partitions):
        B, G, PP, C = x.shape
        x = x.reshape(B, h_partitions, w_partitions, p, p, C).permute(0, 5, 1, 3, 2, 4)
        return x.reshape(B, C, h_partitions * p, w_partitions * p)


class PartitionAttentionLayer(nn.Module):
    """Attention then an MLP (pre-norm residual branches) within partitions of an NCHW map.

    ``'window'``: partitions are ``partition_size``-sided windows. ``'grid'``: the map is cut into
    ``grid_size / partition_size``-sided windows and the axes swapped, so a partition gathers the pixels at the
    same place in every window: a ``partition_size`` x ``partition_size`` grid spanning the whole map.
    """

    def __init__(self, in_channels, head_dim, partition_size, partition_type, grid_size, mlp_ratio,
                 activation_layer, norm_layer, attention_dropout, mlp_dropout, p_stochastic_dropout):
        super().__init__()
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type not in ['grid', 'window']:
            raise ValueError("partition_type must be either 'grid' or 'window'")
        if partition_type == 'window':
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        self.partition_swap = SwapAxes(-2, -3) if partition_type == 'grid' else nn.Identity()
        self.departition_swap = SwapAxes(-2, -3) if partition_type == 'grid' else nn.Identity()
        self.attn_layer = nn.Sequential(norm_layer(in_channels),
                                        RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size ** 2),
                                        nn.Dropout(attention_dropout))
        self.mlp_layer = nn.Sequential(nn.LayerNorm(in_channels), nn.Linear(in_channels, in_channels * mlp_ratio),
                                       activation_layer(), nn.Linear(in_channels * mlp_ratio, in_channels),
                                       nn.Dropout(mlp_dropout))
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode='row')

    def forward(self, x):
        if self.grid_size[0] % self.p != 0 or self.grid_size[1] % self.p != 0:
            raise AssertionError(f"Grid size must be divisible by partition size. Got grid size of {self.grid_size} "
                                 f"and partition size of {self.p}")
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    """MBConv, window attention, grid attention (``layers.{MBconv,window_attention,grid_attention}``)."""

    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, stride, norm_layer,
                 activation_layer, head_dim, mlp_ratio, mlp_dropout, attention_dropout, p_stochastic_dropout,
                 partition_size, grid_size):
        super().__init__()
        attention = partial(PartitionAttentionLayer, in_channels=out_channels, head_dim=head_dim,
                            partition_size=partition_size, grid_size=grid_size, mlp_ratio=mlp_ratio,
                            activation_layer=activation_layer, norm_layer=nn.LayerNorm,
                            attention_dropout=attention_dropout, mlp_dropout=mlp_dropout,
                            p_stochastic_dropout=p_stochastic_dropout)
        self.layers = nn.Sequential(OrderedDict([
            ('MBconv', MBConv(in_channels, out_channels, expansion_ratio=expansion_ratio, squeeze_ratio=squeeze_ratio,
                              stride=stride, activation_layer=activation_layer, norm_layer=norm_layer,
                              p_stochastic_dropout=p_stochastic_dropout)),
            ('window_attention', attention(partition_type='window')),
            ('grid_attention', attention(partition_type='grid'))]))

    def forward(self, x):
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """``n_layers`` MaxViT layers at one resolution; the first halves the input grid (``grid_size`` is the result)."""

    def __init__(self, in_channels, out_channels, squeeze_ratio, expansion_ratio, norm_layer, activation_layer,
                 head_dim, mlp_ratio, mlp_dropout, attention_dropout, partition_size, input_grid_size, n_layers,
                 p_stochastic):
        super().__init__()
        if not len(p_stochastic) == n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got p_stochastic={p_stochastic}.")
        self.layers = nn.ModuleList()
        self.grid_size = _get_conv_output_shape(input_grid_size, kernel_size=3, stride=2, padding=1)
        for idx, p in enumerate(p_stochastic):
            self.layers.append(MaxVitLayer(
                in_channels if idx == 0 else out_channels, out_channels, squeeze_ratio=squeeze_ratio,
                expansion_ratio=expansion_ratio, stride=2 if idx == 0 else 1, norm_layer=norm_layer,
                activation_layer=activation_layer, head_dim=head_dim, mlp_ratio=mlp_ratio, mlp_dropout=mlp_dropout,
                attention_dropout=attention_dropout, p_stochastic_dropout=p, partition_size=partition_size,
                grid_size=self.grid_size))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    """Convolutional stem (stride 2), blocks of MaxViT layers (each halving the map), then pooling, LayerNorm,
    a tanh pre-logits layer and a bias-free head. Stochastic depth rises linearly over all layers."""

    def __init__(self, input_size, stem_channels, partition_size, block_channels, block_layers, head_dim,
                 stochastic_depth_prob, norm_layer=None, activation_layer=nn.GELU, squeeze_ratio=0.25,
                 expansion_ratio=4, mlp_ratio=4, mlp_dropout=0.0, attention_dropout=0.0, num_classes=1000):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        block_input_sizes = _make_block_input_shapes(input_size, len(block_channels))
        for idx, size in enumerate(block_input_sizes):
            if size[0] % partition_size != 0 or size[1] % partition_size != 0:
                raise ValueError(
                    f"Input size {size} of block {idx} is not divisible by partition size {partition_size}. "
                    f"Consider changing the partition size or the input size.\n"
                    f"Current configuration yields the following block input sizes: {block_input_sizes}.")
        self.stem = nn.Sequential(
            Conv2dNormActivation(3, stem_channels, 3, stride=2, norm_layer=norm_layer,
                                 activation_layer=activation_layer, bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None, activation_layer=None,
                                 bias=True))
        grid = _get_conv_output_shape(input_size, kernel_size=3, stride=2, padding=1)
        self.partition_size = partition_size
        self.blocks = nn.ModuleList()
        p_stochastic = _linspace(0.0, stochastic_depth_prob, sum(block_layers))
        first = 0
        for in_channel, out_channel, n in zip([stem_channels] + block_channels[:-1], block_channels, block_layers):
            self.blocks.append(MaxVitBlock(
                in_channel, out_channel, squeeze_ratio=squeeze_ratio, expansion_ratio=expansion_ratio,
                norm_layer=norm_layer, activation_layer=activation_layer, head_dim=head_dim, mlp_ratio=mlp_ratio,
                mlp_dropout=mlp_dropout, attention_dropout=attention_dropout, partition_size=partition_size,
                input_grid_size=grid, n_layers=n, p_stochastic=p_stochastic[first:first + n]))
            grid = self.blocks[-1].grid_size
            first += n
        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(block_channels[-1]),
            nn.Linear(block_channels[-1], block_channels[-1]), nn.Tanh(),
            nn.Linear(block_channels[-1], num_classes, bias=False))
        self._init_weights()

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)


@register_model(MaxVit_T_Weights)
def maxvit_t(*, weights=None, progress=True, **kwargs):
    """MaxViT-T: stem 64, blocks of width (64, 128, 256, 512) and depth (2, 2, 5, 2), 7x7 partitions, heads of
    32 channels. ``input_size`` defaults to (224, 224); it must halve to multiples of 7 at every block.

    >>> maxvit_t(num_classes=10, input_size=(224, 224)).classifier[5]
    Linear(in_features=512, out_features=10, bias=False)
    """
    weights = _resolve(MaxVit_T_Weights, weights, kwargs)
    _check_num_classes(weights, kwargs)
    if weights is not None and not isinstance(weights, str):
        _overwrite_named_param(kwargs, 'input_size', weights.meta['min_size'])
    input_size = kwargs.pop('input_size', (224, 224))
    model = MaxVit(input_size=input_size, stem_channels=64, partition_size=7, block_channels=[64, 128, 256, 512],
                   block_layers=[2, 2, 5, 2], head_dim=32, stochastic_depth_prob=0.2, **kwargs)
    return _load(model, weights)
