"""RegNet (Radosavovic et al. 2020) with torchvision's names: ``stem``, ``trunk_output.block{i}.block{i}-{j}``
(``proj``, ``f.a``/``f.b``/``f.se``/``f.c``), ``fc``.

A RegNet is given by a handful of numbers (depth, initial width ``w_0``, slope ``w_a``, multiplier ``w_m``,
group width): ``BlockParams.from_init_params`` turns them into per-stage widths and depths, quantised as
torchvision does in float32, so the stage shapes (and published checkpoints) agree. RegNetY adds
squeeze-excitation to every block.
"""
import math
from collections import OrderedDict
from functools import partial

import ember
import ember.nn as nn

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ._api import _check_num_classes, _load, _resolve, _weights, register_model
from ._utils import _make_divisible

__all__ = ['RegNet', 'BlockParams', 'RegNet_Y_400MF_Weights', 'RegNet_Y_800MF_Weights', 'RegNet_Y_1_6GF_Weights',
           'RegNet_Y_3_2GF_Weights', 'RegNet_Y_8GF_Weights', 'RegNet_Y_16GF_Weights',
           'RegNet_Y_32GF_Weights', 'RegNet_Y_128GF_Weights', 'RegNet_X_400MF_Weights',
           'RegNet_X_800MF_Weights', 'RegNet_X_1_6GF_Weights', 'RegNet_X_3_2GF_Weights',
           'RegNet_X_8GF_Weights', 'RegNet_X_16GF_Weights', 'RegNet_X_32GF_Weights', 'regnet_y_400mf',
           'regnet_y_800mf', 'regnet_y_1_6gf', 'regnet_y_3_2gf', 'regnet_y_8gf', 'regnet_y_16gf',
           'regnet_y_32gf', 'regnet_y_128gf', 'regnet_x_400mf', 'regnet_x_800mf', 'regnet_x_1_6gf',
           'regnet_x_3_2gf', 'regnet_x_8gf', 'regnet_x_16gf', 'regnet_x_32gf']

RegNet_Y_400MF_Weights = _weights('RegNet_Y_400MF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_400mf-c65dace8.pth', 'IMAGENET1K_V2': 'regnet_y_400mf-e6988f5f.pth'})
RegNet_Y_800MF_Weights = _weights('RegNet_Y_800MF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_800mf-1b27b58c.pth', 'IMAGENET1K_V2': 'regnet_y_800mf-58fc7688.pth'})
RegNet_Y_1_6GF_Weights = _weights('RegNet_Y_1_6GF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_1_6gf-b11a554e.pth', 'IMAGENET1K_V2': 'regnet_y_1_6gf-0d7bc02a.pth'})
RegNet_Y_3_2GF_Weights = _weights('RegNet_Y_3_2GF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_3_2gf-b5a9779c.pth', 'IMAGENET1K_V2': 'regnet_y_3_2gf-9180c971.pth'})
RegNet_Y_8GF_Weights = _weights('RegNet_Y_8GF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_8gf-d0d0e4a8.pth', 'IMAGENET1K_V2': 'regnet_y_8gf-dc2b1b54.pth'})
RegNet_Y_16GF_Weights = _weights('RegNet_Y_16GF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_16gf-9e6ed7dd.pth', 'IMAGENET1K_V2': 'regnet_y_16gf-3e4a00f9.pth',
    'IMAGENET1K_SWAG_E2E_V1': 'regnet_y_16gf_swag-43afe44d.pth', 'IMAGENET1K_SWAG_LINEAR_V1':
    'regnet_y_16gf_lc_swag-f3ec0043.pth'}, default='IMAGENET1K_V2')
RegNet_Y_32GF_Weights = _weights('RegNet_Y_32GF_Weights', {
    'IMAGENET1K_V1': 'regnet_y_32gf-4dee3f7a.pth', 'IMAGENET1K_V2': 'regnet_y_32gf-8db6d4b5.pth',
    'IMAGENET1K_SWAG_E2E_V1': 'regnet_y_32gf_swag-04fdfa75.pth', 'IMAGENET1K_SWAG_LINEAR_V1':
    'regnet_y_32gf_lc_swag-e1583746.pth'}, default='IMAGENET1K_V2')
RegNet_Y_128GF_Weights = _weights('RegNet_Y_128GF_Weights', {
    'IMAGENET1K_SWAG_E2E_V1': 'regnet_y_128gf_swag-c8ce3e52.pth', 'IMAGENET1K_SWAG_LINEAR_V1':
    'regnet_y_128gf_lc_swag-cbe8ce12.pth'}, default='IMAGENET1K_SWAG_E2E_V1')
RegNet_X_400MF_Weights = _weights('RegNet_X_400MF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_400mf-adf1edd5.pth', 'IMAGENET1K_V2': 'regnet_x_400mf-62229a5f.pth'})
RegNet_X_800MF_Weights = _weights('RegNet_X_800MF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_800mf-ad17e45c.pth', 'IMAGENET1K_V2': 'regnet_x_800mf-94a99ebd.pth'})
RegNet_X_1_6GF_Weights = _weights('RegNet_X_1_6GF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_1_6gf-e3633e7f.pth', 'IMAGENET1K_V2': 'regnet_x_1_6gf-a12f2b72.pth'})
RegNet_X_3_2GF_Weights = _weights('RegNet_X_3_2GF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_3_2gf-f342aeae.pth', 'IMAGENET1K_V2': 'regnet_x_3_2gf-7071aa85.pth'})
RegNet_X_8GF_Weights = _weights('RegNet_X_8GF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_8gf-03ceed89.pth', 'IMAGENET1K_V2': 'regnet_x_8gf-2b70d774.pth'})
RegNet_X_16GF_Weights = _weights('RegNet_X_16GF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_16gf-2007eb11.pth', 'IMAGENET1K_V2': 'regnet_x_16gf-ba3796d7.pth'})
RegNet_X_32GF_Weights = _weights('RegNet_X_32GF_Weights', {
    'IMAGENET1K_V1': 'regnet_x_32gf-9d47f8d0.pth', 'IMAGENET1K_V2': 'regnet_x_32gf-6eb8fdc6.pth'})


class SimpleStemIN(Conv2dNormActivation):
    """A 3x3, stride 2 convolution, norm and activation."""

    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """1x1 (a), grouped 3x3 (b), optional squeeze-excitation (se), 1x1 (c)."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width, bottleneck_multiplier,
                 se_ratio):
        layers = OrderedDict()
        w_b = int(round(width_out * bottleneck_multiplier))
        g = w_b // group_width
        layers['a'] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers['b'] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=g, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        if se_ratio:
            layers['se'] = SqueezeExcitation(input_channels=w_b, squeeze_channels=int(round(se_ratio * width_in)),
                                             activation=activation_layer)
        layers['c'] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """x + f(x), with a 1x1 projection of x where the width or resolution changes."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width=1,
                 bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride, norm_layer=norm_layer,
                                             activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer, group_width,
                                     bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        shortcut = self.proj(x) if self.proj is not None else x
        return self.activation(shortcut + self.f(x))


class AnyStage(nn.Sequential):
    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer, activation_layer,
                 group_width, bottleneck_multiplier, se_ratio=None, stage_index=0):
        super().__init__()
        for i in range(depth):
            block = block_constructor(width_in if i == 0 else width_out, width_out, stride if i == 0 else 1,
                                      norm_layer, activation_layer, group_width, bottleneck_multiplier, se_ratio)
            self.add_module(f'block{stage_index}-{i}', block)


class BlockParams:
    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides, se_ratio=None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0, se_ratio=None, **kwargs):
        """Per-block widths ``w_0 + w_a * j`` snapped to the nearest ``w_0 * w_m**k`` (a multiple of 8); runs of
        equal widths make the stages. The arithmetic is float32, as torchvision's, so roundings agree."""
        QUANT, STRIDE = 8, 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError('Invalid RegNet settings')
        widths_cont = ember.arange(depth, device='cpu') * w_a + w_0    # plain numbers: also under a meta device
        block_capacity = ember.round(ember.log(widths_cont / w_0) / math.log(w_m))
        block_widths = (ember.round(ember.divide(w_0 * ember.pow(w_m, block_capacity), QUANT)) * QUANT).int().tolist()
        num_stages = len(set(block_widths))
        splits = [w != wp for w, wp in zip(block_widths + [0], [0] + block_widths)]
        stage_widths = [w for w, t in zip(block_widths, splits[:-1]) if t]
        starts = [d for d, t in enumerate(splits) if t]
        stage_depths = [b - a for a, b in zip(starts, starts[1:])]
        strides = [STRIDE] * num_stages
        bottleneck_multipliers = [bottleneck_multiplier] * num_stages
        group_widths = [group_width] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(stage_widths, bottleneck_multipliers,
                                                                            group_widths)
        return cls(depths=stage_depths, widths=stage_widths, group_widths=group_widths,
                   bottleneck_multipliers=bottleneck_multipliers, strides=strides, se_ratio=se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths, self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        """Bottleneck widths made divisible by their group width (a group no wider than the bottleneck)."""
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths)]
        ws_bot = [_make_divisible(w_bot, g) for w_bot, g in zip(widths, group_widths_min)]
        stage_widths = [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios)]
        return stage_widths, group_widths_min


class RegNet(nn.Module):
    def __init__(self, block_params, num_classes=1000, stem_width=32, stem_type=None, block_type=None,
                 norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        current_width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f'block{i + 1}', AnyStage(current_width, width_out, stride, depth, block_type, norm_layer,
                                                     activation, group_width, bottleneck_multiplier,
                                                     block_params.se_ratio, stage_index=i + 1)))
            current_width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=current_width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


def _regnet(params, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    block_params = BlockParams.from_init_params(**params, **kwargs)
    norm_layer = kwargs.pop('norm_layer', partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return _load(RegNet(block_params, norm_layer=norm_layer, **kwargs), weights)


@register_model(RegNet_Y_400MF_Weights)
def regnet_y_400mf(*, weights=None, progress=True, **kwargs):
    """RegNetY_400MF."""
    return _regnet(dict(depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25), RegNet_Y_400MF_Weights, weights, kwargs)


@register_model(RegNet_Y_800MF_Weights)
def regnet_y_800mf(*, weights=None, progress=True, **kwargs):
    """RegNetY_800MF."""
    return _regnet(dict(depth=14, w_0=56, w_a=38.84, w_m=2.4, group_width=16, se_ratio=0.25), RegNet_Y_800MF_Weights, weights, kwargs)


@register_model(RegNet_Y_1_6GF_Weights)
def regnet_y_1_6gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_1.6GF."""
    return _regnet(dict(depth=27, w_0=48, w_a=20.71, w_m=2.65, group_width=24, se_ratio=0.25), RegNet_Y_1_6GF_Weights, weights, kwargs)


@register_model(RegNet_Y_3_2GF_Weights)
def regnet_y_3_2gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_3.2GF."""
    return _regnet(dict(depth=21, w_0=80, w_a=42.63, w_m=2.66, group_width=24, se_ratio=0.25), RegNet_Y_3_2GF_Weights, weights, kwargs)


@register_model(RegNet_Y_8GF_Weights)
def regnet_y_8gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_8GF."""
    return _regnet(dict(depth=17, w_0=192, w_a=76.82, w_m=2.19, group_width=56, se_ratio=0.25), RegNet_Y_8GF_Weights, weights, kwargs)


@register_model(RegNet_Y_16GF_Weights)
def regnet_y_16gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_16GF."""
    return _regnet(dict(depth=18, w_0=200, w_a=106.23, w_m=2.48, group_width=112, se_ratio=0.25), RegNet_Y_16GF_Weights, weights, kwargs)


@register_model(RegNet_Y_32GF_Weights)
def regnet_y_32gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_32GF."""
    return _regnet(dict(depth=20, w_0=232, w_a=115.89, w_m=2.53, group_width=232, se_ratio=0.25), RegNet_Y_32GF_Weights, weights, kwargs)


@register_model(RegNet_Y_128GF_Weights)
def regnet_y_128gf(*, weights=None, progress=True, **kwargs):
    """RegNetY_128GF."""
    return _regnet(dict(depth=27, w_0=456, w_a=160.83, w_m=2.52, group_width=264, se_ratio=0.25), RegNet_Y_128GF_Weights, weights, kwargs)


@register_model(RegNet_X_400MF_Weights)
def regnet_x_400mf(*, weights=None, progress=True, **kwargs):
    """RegNetX_400MF."""
    return _regnet(dict(depth=22, w_0=24, w_a=24.48, w_m=2.54, group_width=16), RegNet_X_400MF_Weights, weights, kwargs)


@register_model(RegNet_X_800MF_Weights)
def regnet_x_800mf(*, weights=None, progress=True, **kwargs):
    """RegNetX_800MF."""
    return _regnet(dict(depth=16, w_0=56, w_a=35.73, w_m=2.28, group_width=16), RegNet_X_800MF_Weights, weights, kwargs)


@register_model(RegNet_X_1_6GF_Weights)
def regnet_x_1_6gf(*, weights=None, progress=True, **kwargs):
    """RegNetX_1.6GF."""
    return _regnet(dict(depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24), RegNet_X_1_6GF_Weights, weights, kwargs)


@register_model(RegNet_X_3_2GF_Weights)
def regnet_x_3_2gf(*, weights=None, progress=True, **kwargs):
    """RegNetX_3.2GF."""
    return _regnet(dict(depth=25, w_0=88, w_a=26.31, w_m=2.25, group_width=48), RegNet_X_3_2GF_Weights, weights, kwargs)


@register_model(RegNet_X_8GF_Weights)
def regnet_x_8gf(*, weights=None, progress=True, **kwargs):
    """RegNetX_8GF."""
    return _regnet(dict(depth=23, w_0=80, w_a=49.56, w_m=2.88, group_width=120), RegNet_X_8GF_Weights, weights, kwargs)


@register_model(RegNet_X_16GF_Weights)
def regnet_x_16gf(*, weights=None, progress=True, **kwargs):
    """RegNetX_16GF."""
    return _regnet(dict(depth=22, w_0=216, w_a=55.59, w_m=2.1, group_width=128), RegNet_X_16GF_Weights, weights, kwargs)


@register_model(RegNet_X_32GF_Weights)
def regnet_x_32gf(*, weights=None, progress=True, **kwargs):
    """RegNetX_32GF."""
    return _regnet(dict(depth=23, w_0=320, w_a=69.86, w_m=2.0, group_width=168), RegNet_X_32GF_Weights, weights, kwargs)
