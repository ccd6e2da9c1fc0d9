"""EfficientNet B0-B7 (Tan & Le 2019) and V2 S/M/L (2021) with torchvision's names: ``features.{stage}.{block}
.block.{j}``, ``features.{i}.{block}.stochastic_depth``, ``classifier.1``.

A stage is a config row (expansion, kernel, stride, channels in/out, layers); B1-B7 scale the channels
by ``width_mult`` and the layers by ``depth_mult``. Each block's residual branch is dropped with a
probability growing linearly with its index (stochastic depth, ``stochastic_depth_prob`` at the end).
"""
import copy
import math
from dataclasses import dataclass
from functools import partial

import ember
import ember.nn as nn

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from ._api import _check_num_classes, _load, _resolve, _weights, register_model
from ._utils import _init_mobile, _make_divisible

__all__ = ['EfficientNet', 'EfficientNet_B0_Weights', 'EfficientNet_B1_Weights', 'EfficientNet_B2_Weights',
           'EfficientNet_B3_Weights', 'EfficientNet_B4_Weights', 'EfficientNet_B5_Weights', 'EfficientNet_B6_Weights',
           'EfficientNet_B7_Weights', 'EfficientNet_V2_S_Weights', 'EfficientNet_V2_M_Weights',
           'EfficientNet_V2_L_Weights', 'efficientnet_b0', 'efficientnet_b1', 'efficientnet_b2', 'efficientnet_b3',
           'efficientnet_b4', 'efficientnet_b5', 'efficientnet_b6', 'efficientnet_b7', 'efficientnet_v2_s',
           'efficientnet_v2_m', 'efficientnet_v2_l']

EfficientNet_B0_Weights = _weights('EfficientNet_B0_Weights', {'IMAGENET1K_V1': 'efficientnet_b0_rwightman-7f5810bc.pth'})
EfficientNet_B1_Weights = _weights('EfficientNet_B1_Weights', {
    'IMAGENET1K_V1': 'efficientnet_b1_rwightman-bac287d4.pth', 'IMAGENET1K_V2': 'efficientnet_b1-c27df63c.pth'})
EfficientNet_B2_Weights = _weights('EfficientNet_B2_Weights', {'IMAGENET1K_V1': 'efficientnet_b2_rwightman-c35c1473.pth'})
EfficientNet_B3_Weights = _weights('EfficientNet_B3_Weights', {'IMAGENET1K_V1': 'efficientnet_b3_rwightman-b3899882.pth'})
EfficientNet_B4_Weights = _weights('EfficientNet_B4_Weights', {'IMAGENET1K_V1': 'efficientnet_b4_rwightman-23ab8bcd.pth'})
EfficientNet_B5_Weights = _weights('EfficientNet_B5_Weights', {'IMAGENET1K_V1': 'efficientnet_b5_lukemelas-1a07897c.pth'})
EfficientNet_B6_Weights = _weights('EfficientNet_B6_Weights', {'IMAGENET1K_V1': 'efficientnet_b6_lukemelas-24a108a5.pth'})
EfficientNet_B7_Weights = _weights('EfficientNet_B7_Weights', {'IMAGENET1K_V1': 'efficientnet_b7_lukemelas-c5b4e57e.pth'})
EfficientNet_V2_S_Weights = _weights('EfficientNet_V2_S_Weights', {'IMAGENET1K_V1': 'efficientnet_v2_s-dd5fe13b.pth'})
EfficientNet_V2_M_Weights = _weights('EfficientNet_V2_M_Weights', {'IMAGENET1K_V1': 'efficientnet_v2_m-dc08266a.pth'})
EfficientNet_V2_L_Weights = _weights('EfficientNet_V2_L_Weights', {'IMAGENET1K_V1': 'efficientnet_v2_l-59c71312.pth'})


@dataclass
class _MBConvConfig:
    expand_ratio: float
    kernel: int
    stride: int
    input_channels: int
    out_channels: int
    num_layers: int
    block: type

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConvConfig(_MBConvConfig):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, width_mult=1.0,
                 depth_mult=1.0, block=None):
        super().__init__(expand_ratio, kernel, stride, self.adjust_channels(input_channels, width_mult),
                         self.adjust_channels(out_channels, width_mult), self.adjust_depth(num_layers, depth_mult),
                         block or MBConv)

    @staticmethod
    def adjust_depth(num_layers, depth_mult):
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block=None):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block or FusedMBConv)


class _Block(nn.Module):
    """What MBConv and FusedMBConv share: the stride check, and the residual connection (with stochastic depth)
    around ``block`` where the block keeps the input's shape."""

    def __init__(self, cnf):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError('illegal stride value')
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels

    def _set_block(self, layers, cnf, stochastic_depth_prob):
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, 'row')
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        return self.stochastic_depth(result) + input if self.use_res_connect else result


class MBConv(_Block):
    """1x1 expansion, depthwise k x k, squeeze-excitation, 1x1 projection (SiLU activations)."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__(cnf)
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(se_layer(expanded, max(1, cnf.input_channels // 4), activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self._set_block(layers, cnf, stochastic_depth_prob)


class FusedMBConv(_Block):
    """A full k x k expansion convolution then a 1x1 projection (one k x k convolution without expansion)."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer):
        super().__init__(cnf)
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers = [Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU),
                      Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer, activation_layer=nn.SiLU)]
        self._set_block(layers, cnf, stochastic_depth_prob)


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError('The inverted_residual_setting should not be empty')
        if not all(isinstance(s, _MBConvConfig) for s in inverted_residual_setting):
            raise TypeError('The inverted_residual_setting should be List[MBConvConfig]')
        norm_layer = norm_layer or nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.SiLU)]
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:            # later blocks of a stage keep its width and resolution
                    block_cnf.input_channels, block_cnf.stride = block_cnf.out_channels, 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = last_channel if last_channel is not None else 4 * lastconv_input_channels
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(lastconv_output_channels, num_classes))
        _init_mobile(self, lambda w: nn.init.uniform_(w, -1.0 / math.sqrt(w.shape[0]), 1.0 / math.sqrt(w.shape[0])))

    def forward(self, x):
        return self.classifier(ember.flatten(self.avgpool(self.features(x)), 1))


def _efficientnet_conf(arch, width_mult=1.0, depth_mult=1.0):
    """The stage rows of ``arch`` and its last convolution's width (None: 4x the last stage's)."""
    if arch.startswith('efficientnet_b'):
        c = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
        return [c(1, 3, 1, 32, 16, 1), c(6, 3, 2, 16, 24, 2), c(6, 5, 2, 24, 40, 2), c(6, 3, 2, 40, 80, 3),
                c(6, 5, 1, 80, 112, 3), c(6, 5, 2, 112, 192, 4), c(6, 3, 1, 192, 320, 1)], None
    f, m = FusedMBConvConfig, MBConvConfig
    if arch.startswith('efficientnet_v2_s'):
        return [f(1, 3, 1, 24, 24, 2), f(4, 3, 2, 24, 48, 4), f(4, 3, 2, 48, 64, 4), m(4, 3, 2, 64, 128, 6),
                m(6, 3, 1, 128, 160, 9), m(6, 3, 2, 160, 256, 15)], 1280
    if arch.startswith('efficientnet_v2_m'):
        return [f(1, 3, 1, 24, 24, 3), f(4, 3, 2, 24, 48, 5), f(4, 3, 2, 48, 80, 5), m(4, 3, 2, 80, 160, 7),
                m(6, 3, 1, 160, 176, 14), m(6, 3, 2, 176, 304, 18), m(6, 3, 1, 304, 512, 5)], 1280
    if arch.startswith('efficientnet_v2_l'):
        return [f(1, 3, 1, 32, 32, 4), f(4, 3, 2, 32, 64, 7), f(4, 3, 2, 64, 96, 7), m(4, 3, 2, 96, 192, 10),
                m(6, 3, 1, 192, 224, 19), m(6, 3, 2, 224, 384, 25), m(6, 3, 1, 384, 640, 7)], 1280
    raise ValueError(f'Unsupported model type {arch}')


# per model: (width_mult, depth_mult, default dropout, batch norm eps / momentum, or None for the defaults)
_B_EPS = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
_V2_EPS = partial(nn.BatchNorm2d, eps=0.001)
_CONFIGS = {'efficientnet_b0': (1.0, 1.0, 0.2, None), 'efficientnet_b1': (1.0, 1.1, 0.2, None),
            'efficientnet_b2': (1.1, 1.2, 0.3, None), 'efficientnet_b3': (1.2, 1.4, 0.3, None),
            'efficientnet_b4': (1.4, 1.8, 0.4, None), 'efficientnet_b5': (1.6, 2.2, 0.4, _B_EPS),
            'efficientnet_b6': (1.8, 2.6, 0.5, _B_EPS), 'efficientnet_b7': (2.0, 3.1, 0.5, _B_EPS),
            'efficientnet_v2_s': (1.0, 1.0, 0.2, _V2_EPS), 'efficientnet_v2_m': (1.0, 1.0, 0.3, _V2_EPS),
            'efficientnet_v2_l': (1.0, 1.0, 0.4, _V2_EPS)}


def _efficientnet(arch, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    width_mult, depth_mult, dropout, norm_layer = _CONFIGS[arch]
    setting, last_channel = _efficientnet_conf(arch, width_mult, depth_mult)
    fixed = {} if norm_layer is None else {'norm_layer': norm_layer}     # as torchvision: not to be overridden
    model = EfficientNet(setting, kwargs.pop('dropout', dropout), last_channel=last_channel, **fixed, **kwargs)
    return _load(model, weights)


@register_model(EfficientNet_B0_Weights)
def efficientnet_b0(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B0."""
    return _efficientnet('efficientnet_b0', EfficientNet_B0_Weights, weights, kwargs)


@register_model(EfficientNet_B1_Weights)
def efficientnet_b1(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B1."""
    return _efficientnet('efficientnet_b1', EfficientNet_B1_Weights, weights, kwargs)


@register_model(EfficientNet_B2_Weights)
def efficientnet_b2(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B2."""
    return _efficientnet('efficientnet_b2', EfficientNet_B2_Weights, weights, kwargs)


@register_model(EfficientNet_B3_Weights)
def efficientnet_b3(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B3."""
    return _efficientnet('efficientnet_b3', EfficientNet_B3_Weights, weights, kwargs)


@register_model(EfficientNet_B4_Weights)
def efficientnet_b4(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B4."""
    return _efficientnet('efficientnet_b4', EfficientNet_B4_Weights, weights, kwargs)


@register_model(EfficientNet_B5_Weights)
def efficientnet_b5(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B5."""
    return _efficientnet('efficientnet_b5', EfficientNet_B5_Weights, weights, kwargs)


@register_model(EfficientNet_B6_Weights)
def efficientnet_b6(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B6."""
    return _efficientnet('efficientnet_b6', EfficientNet_B6_Weights, weights, kwargs)


@register_model(EfficientNet_B7_Weights)
def efficientnet_b7(*, weights=None, progress=True, **kwargs):
    """EfficientNet-B7."""
    return _efficientnet('efficientnet_b7', EfficientNet_B7_Weights, weights, kwargs)


@register_model(EfficientNet_V2_S_Weights)
def efficientnet_v2_s(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-S."""
    return _efficientnet('efficientnet_v2_s', EfficientNet_V2_S_Weights, weights, kwargs)


@register_model(EfficientNet_V2_M_Weights)
def efficientnet_v2_m(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-M."""
    return _efficientnet('efficientnet_v2_m', EfficientNet_V2_M_Weights, weights, kwargs)


@register_model(EfficientNet_V2_L_Weights)
def efficientnet_v2_l(*, weights=None, progress=True, **kwargs):
    """EfficientNetV2-L."""
    return _efficientnet('efficientnet_v2_l', EfficientNet_V2_L_Weights, weights, kwargs)
