"""DenseNet-BC (Huang et al. 2016) with torchvision's names: ``features.{conv0,norm0,denseblock{i},
transition{i},norm5}``, ``denseblock{i}.denselayer{j}.{norm1,conv1,norm2,conv2}``, ``classifier``.

Each dense layer sees the concatenation of all earlier feature maps of its block. torchvision's
published checkpoints predate dots being refused in module names and say ``denselayer1.norm.1``
for ``denselayer1.norm1``: loading renames those keys, as torchvision's ``_load_state_dict``.
"""
import re
from collections import OrderedDict

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.utils.checkpoint as cp

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['DenseNet', 'DenseNet121_Weights', 'DenseNet161_Weights', 'DenseNet169_Weights', 'DenseNet201_Weights',
           'densenet121', 'densenet161', 'densenet169', 'densenet201']

DenseNet121_Weights = _weights('DenseNet121_Weights', {'IMAGENET1K_V1': 'densenet121-a639ec97.pth'})
DenseNet161_Weights = _weights('DenseNet161_Weights', {'IMAGENET1K_V1': 'densenet161-8d451a50.pth'})
DenseNet169_Weights = _weights('DenseNet169_Weights', {'IMAGENET1K_V1': 'densenet169-b2777c0a.pth'})
DenseNet201_Weights = _weights('DenseNet201_Weights', {'IMAGENET1K_V1': 'densenet201-c1103571.pth'})


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate, memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs):
        return self.conv1(self.relu1(self.norm1(ember.cat(inputs, 1))))

    def forward(self, input):
        prev_features = [input] if isinstance(input, ember.Tensor) else input
        if self.memory_efficient and any(t.requires_grad for t in prev_features):
            # the concatenation and bottleneck are recomputed in backward instead of kept
            bottleneck_output = cp.checkpoint(lambda *inputs: self.bn_function(inputs), *prev_features,
                                              use_reentrant=False)
        else:
            bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    _version = 2

    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f'denselayer{i + 1}', _DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                                              bn_size, drop_rate, memory_efficient))

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return ember.cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """DenseNet-BC: ``growth_rate`` channels per layer, ``block_config`` layers per block, bottlenecks of
    ``bn_size * growth_rate`` channels, transitions halving the channels.

    >>> densenet121(num_classes=5)(ember.rand(1, 3, 32, 32)).shape
    ember.Size([1, 5])
    """

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64, bn_size=4, drop_rate=0,
                 num_classes=1000, memory_efficient=False):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ('conv0', nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ('norm0', nn.BatchNorm2d(num_init_features)),
            ('relu0', nn.ReLU(inplace=True)),
            ('pool0', nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module(f'denseblock{i + 1}', _DenseBlock(num_layers, num_features, bn_size, growth_rate,
                                                                       drop_rate, memory_efficient))
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f'transition{i + 1}', _Transition(num_features, num_features // 2))
                num_features = num_features // 2
        self.features.add_module('norm5', nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x), inplace=True)
        out = ember.flatten(F.adaptive_avg_pool2d(out, (1, 1)), 1)
        return self.classifier(out)


_OLD_KEY = re.compile(r'^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$')


def _rename_old_key(key):
    """``...denselayer1.norm.1.weight`` (the published files) → ``...denselayer1.norm1.weight``."""
    return _OLD_KEY.sub(r'\1\2', key)


def _densenet(growth_rate, block_config, num_init_features, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(DenseNet(growth_rate, block_config, num_init_features, **kwargs), weights, rename=_rename_old_key)


@register_model(DenseNet121_Weights)
def densenet121(*, weights=None, progress=True, **kwargs):
    """DenseNet-121 (growth 32, blocks 6-12-24-16)."""
    return _densenet(32, (6, 12, 24, 16), 64, DenseNet121_Weights, weights, kwargs)


@register_model(DenseNet161_Weights)
def densenet161(*, weights=None, progress=True, **kwargs):
    """DenseNet-161 (growth 48, blocks 6-12-36-24)."""
    return _densenet(48, (6, 12, 36, 24), 96, DenseNet161_Weights, weights, kwargs)


@register_model(DenseNet169_Weights)
def densenet169(*, weights=None, progress=True, **kwargs):
    """DenseNet-169 (growth 32, blocks 6-12-32-32)."""
    return _densenet(32, (6, 12, 32, 32), 64, DenseNet169_Weights, weights, kwargs)


@register_model(DenseNet201_Weights)
def densenet201(*, weights=None, progress=True, **kwargs):
    """DenseNet-201 (growth 32, blocks 6-12-48-32)."""
    return _densenet(32, (6, 12, 48, 32), 64, DenseNet201_Weights, weights, kwargs)
