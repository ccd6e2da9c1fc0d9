"""ConvNeXt (Liu et al. 2022) with torchvision's names: ``features.{i}`` (stem, stages of ``CNBlock``s
``features.{i}.{j}.block.{0,2,3,5}`` + ``layer_scale``, downsampling layers), ``classifier.{0,2}``.

A block is a depthwise 7x7 convolution, LayerNorm and an MLP over channels-last activations, scaled per
channel (``layer_scale``) and dropped per sample with a probability rising linearly over the blocks.
"""
from functools import partial

import ember
import ember.nn as nn
import ember.nn.functional as F

from ..ops.misc import Conv2dNormActivation, Permute, StochasticDepth
from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['ConvNeXt', 'ConvNeXt_Tiny_Weights', 'ConvNeXt_Small_Weights', 'ConvNeXt_Base_Weights',
           'ConvNeXt_Large_Weights', 'convnext_tiny', 'convnext_small', 'convnext_base', 'convnext_large']

ConvNeXt_Tiny_Weights = _weights('ConvNeXt_Tiny_Weights', {'IMAGENET1K_V1': 'convnext_tiny-983f1562.pth'})
ConvNeXt_Small_Weights = _weights('ConvNeXt_Small_Weights', {'IMAGENET1K_V1': 'convnext_small-0c510722.pth'})
ConvNeXt_Base_Weights = _weights('ConvNeXt_Base_Weights', {'IMAGENET1K_V1': 'convnext_base-6075fbad.pth'})
ConvNeXt_Large_Weights = _weights('ConvNeXt_Large_Weights', {'IMAGENET1K_V1': 'convnext_large-ea097f82.pth'})


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True), Permute([0, 2, 3, 1]),
            norm_layer(dim), nn.Linear(in_features=dim, out_features=4 * dim, bias=True), nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True), Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(ember.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, 'row')

    def forward(self, input):
        return self.stochastic_depth(self.layer_scale * self.block(input)) + input


class CNBlockConfig:
    """A stage: its width, the width the downsampling after it leads to (None for the last), its depth."""

    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self):
        return (f'{type(self).__name__}(input_channels={self.input_channels}, out_channels={self.out_channels}, '
                f'num_layers={self.num_layers})')


class ConvNeXt(nn.Module):
    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000, block=None,
                 norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError('The block_setting should not be empty')
        if not all(isinstance(s, CNBlockConfig) for s in block_setting):
            raise TypeError('The block_setting should be List[CNBlockConfig]')
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4, stride=4, padding=0,
                                       norm_layer=norm_layer, activation_layer=None, bias=True)]
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(norm_layer(cnf.input_channels),
                                            nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        lastconv_output_channels = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(lastconv_output_channels), nn.Flatten(1),
                                        nn.Linear(lastconv_output_channels, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


def _convnext(block_setting, stochastic_depth_prob, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    stochastic_depth_prob = kwargs.pop('stochastic_depth_prob', stochastic_depth_prob)
    return _load(ConvNeXt(block_setting, stochastic_depth_prob=stochastic_depth_prob, **kwargs), weights)


@register_model(ConvNeXt_Tiny_Weights)
def convnext_tiny(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-T."""
    setting = [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 9),
               CNBlockConfig(768, None, 3)]
    return _convnext(setting, 0.1, ConvNeXt_Tiny_Weights, weights, kwargs)


@register_model(ConvNeXt_Small_Weights)
def convnext_small(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-S."""
    setting = [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 27),
               CNBlockConfig(768, None, 3)]
    return _convnext(setting, 0.4, ConvNeXt_Small_Weights, weights, kwargs)


@register_model(ConvNeXt_Base_Weights)
def convnext_base(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-B."""
    setting = [CNBlockConfig(128, 256, 3), CNBlockConfig(256, 512, 3), CNBlockConfig(512, 1024, 27),
               CNBlockConfig(1024, None, 3)]
    return _convnext(setting, 0.5, ConvNeXt_Base_Weights, weights, kwargs)


@register_model(ConvNeXt_Large_Weights)
def convnext_large(*, weights=None, progress=True, **kwargs):
    """ConvNeXt-L."""
    setting = [CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 3), CNBlockConfig(768, 1536, 27),
               CNBlockConfig(1536, None, 3)]
    return _convnext(setting, 0.5, ConvNeXt_Large_Weights, weights, kwargs)
