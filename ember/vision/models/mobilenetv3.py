"""MobileNetV3 (Howard et al. 2019) with torchvision's names: ``features.{i}.block.{j}``, ``classifier.{0,3}``.

Blocks are built from ``InvertedResidualConfig`` rows (kernel, expansion, squeeze-excitation, hard-swish
or ReLU, stride, dilation) scaled by ``width_mult``; ``reduced_tail`` halves the last stage's channels
and ``dilated`` trades its stride for dilation, as torchvision's segmentation backbones use.
"""
from functools import partial

import ember
import ember.nn as nn

from ..ops.misc import Conv2dNormActivation, SqueezeExcitation as SElayer
from ._api import _check_num_classes, _load, _resolve, _weights, register_model
from ._utils import _init_mobile, _make_divisible

__all__ = ['MobileNetV3', 'MobileNet_V3_Large_Weights', 'MobileNet_V3_Small_Weights', 'mobilenet_v3_large',
           'mobilenet_v3_small']

MobileNet_V3_Large_Weights = _weights('MobileNet_V3_Large_Weights', {
    'IMAGENET1K_V1': 'mobilenet_v3_large-8738ca79.pth', 'IMAGENET1K_V2': 'mobilenet_v3_large-5c1a4163.pth'})
MobileNet_V3_Small_Weights = _weights('MobileNet_V3_Small_Weights', {'IMAGENET1K_V1': 'mobilenet_v3_small-047dcff4.pth'})


class InvertedResidualConfig:
    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride, dilation,
                 width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == 'HS'
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer, se_layer=partial(SElayer, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError('illegal stride value')
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=stride, dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation_layer))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        return result + input if self.use_res_connect else result


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None, norm_layer=None,
                 dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError('The inverted_residual_setting should not be empty')
        if not all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting):
            raise TypeError('The inverted_residual_setting should be List[InvertedResidualConfig]')
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = 6 * lastconv_input_channels
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(lastconv_output_channels, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        _init_mobile(self, lambda w: nn.init.normal_(w, 0, 0.01))

    def forward(self, x):
        return self.classifier(ember.flatten(self.avgpool(self.features(x)), 1))


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False, **kwargs):
    """The block rows of the large or small network (input, kernel, expanded, out, SE, activation, stride,
    dilation) and the classifier's hidden width."""
    r = 2 if reduced_tail else 1
    d = 2 if dilated else 1
    c = partial(InvertedResidualConfig, width_mult=width_mult)
    if arch == 'mobilenet_v3_large':
        setting = [c(16, 3, 16, 16, False, 'RE', 1, 1), c(16, 3, 64, 24, False, 'RE', 2, 1),
                   c(24, 3, 72, 24, False, 'RE', 1, 1), c(24, 5, 72, 40, True, 'RE', 2, 1),
                   c(40, 5, 120, 40, True, 'RE', 1, 1), c(40, 5, 120, 40, True, 'RE', 1, 1),
                   c(40, 3, 240, 80, False, 'HS', 2, 1), c(80, 3, 200, 80, False, 'HS', 1, 1),
                   c(80, 3, 184, 80, False, 'HS', 1, 1), c(80, 3, 184, 80, False, 'HS', 1, 1),
                   c(80, 3, 480, 112, True, 'HS', 1, 1), c(112, 3, 672, 112, True, 'HS', 1, 1),
                   c(112, 5, 672, 160 // r, True, 'HS', 2, d), c(160 // r, 5, 960 // r, 160 // r, True, 'HS', 1, d),
                   c(160 // r, 5, 960 // r, 160 // r, True, 'HS', 1, d)]
        last_channel = InvertedResidualConfig.adjust_channels(1280 // r, width_mult)
    elif arch == 'mobilenet_v3_small':
        setting = [c(16, 3, 16, 16, True, 'RE', 2, 1), c(16, 3, 72, 24, False, 'RE', 2, 1),
                   c(24, 3, 88, 24, False, 'RE', 1, 1), c(24, 5, 96, 40, True, 'HS', 2, 1),
                   c(40, 5, 240, 40, True, 'HS', 1, 1), c(40, 5, 240, 40, True, 'HS', 1, 1),
                   c(40, 5, 120, 48, True, 'HS', 1, 1), c(48, 5, 144, 48, True, 'HS', 1, 1),
                   c(48, 5, 288, 96 // r, True, 'HS', 2, d), c(96 // r, 5, 576 // r, 96 // r, True, 'HS', 1, d),
                   c(96 // r, 5, 576 // r, 96 // r, True, 'HS', 1, d)]
        last_channel = InvertedResidualConfig.adjust_channels(1024 // r, width_mult)
    else:
        raise ValueError(f'Unsupported model type {arch}')
    return setting, last_channel


def _mobilenet_v3(arch, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    setting, last_channel = _mobilenet_v3_conf(arch, **kwargs)
    return _load(MobileNetV3(setting, last_channel, **kwargs), weights)


@register_model(MobileNet_V3_Large_Weights)
def mobilenet_v3_large(*, weights=None, progress=True, **kwargs):
    """MobileNetV3-Large."""
    return _mobilenet_v3('mobilenet_v3_large', MobileNet_V3_Large_Weights, weights, kwargs)


@register_model(MobileNet_V3_Small_Weights)
def mobilenet_v3_small(*, weights=None, progress=True, **kwargs):
    """MobileNetV3-Small."""
    return _mobilenet_v3('mobilenet_v3_small', MobileNet_V3_Small_Weights, weights, kwargs)
