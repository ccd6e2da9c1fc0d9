"""VGG (Simonyan & Zisserman 2014) with torchvision's names: ``features.{i}``, ``classifier.{0,3,6}``."""
import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['VGG', 'VGG11_Weights', 'VGG11_BN_Weights', 'VGG13_Weights', 'VGG13_BN_Weights', 'VGG16_Weights',
           'VGG16_BN_Weights', 'VGG19_Weights', 'VGG19_BN_Weights', 'vgg11', 'vgg11_bn', 'vgg13', 'vgg13_bn', 'vgg16',
           'vgg16_bn', 'vgg19', 'vgg19_bn']

VGG11_Weights = _weights('VGG11_Weights', {'IMAGENET1K_V1': 'vgg11-8a719046.pth'})
VGG11_BN_Weights = _weights('VGG11_BN_Weights', {'IMAGENET1K_V1': 'vgg11_bn-6002323d.pth'})
VGG16_Weights = _weights('VGG16_Weights', {'IMAGENET1K_V1': 'vgg16-397923af.pth'})
VGG13_Weights = _weights('VGG13_Weights', {'IMAGENET1K_V1': 'vgg13-19584684.pth'})
VGG13_BN_Weights = _weights('VGG13_BN_Weights', {'IMAGENET1K_V1': 'vgg13_bn-abd245e5.pth'})
VGG16_BN_Weights = _weights('VGG16_BN_Weights', {'IMAGENET1K_V1': 'vgg16_bn-6c64b313.pth'})
VGG19_Weights = _weights('VGG19_Weights', {'IMAGENET1K_V1': 'vgg19-dcbb9e9d.pth'})
VGG19_BN_Weights = _weights('VGG19_BN_Weights', {'IMAGENET1K_V1': 'vgg19_bn-c79401a0.pth'})

cfgs = {'A': [64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'],
        'B': [64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M'],
        'D': [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'],
        'E': [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M', 512, 512, 512, 512, 'M']}


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = ember.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


def make_layers(cfg, batch_norm=False):
    layers, in_channels = [], 3
    for v in cfg:
        if v == 'M':
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [conv, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def _vgg(cfg, batch_norm, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    if weights is not None:
        kwargs['init_weights'] = False
    _check_num_classes(weights, kwargs)
    return _load(VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs), weights)


@register_model(VGG11_Weights)
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration A)."""
    return _vgg('A', False, VGG11_Weights, weights, kwargs)


@register_model(VGG11_BN_Weights)
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 with batch norm."""
    return _vgg('A', True, VGG11_BN_Weights, weights, kwargs)


@register_model(VGG13_Weights)
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration B)."""
    return _vgg('B', False, VGG13_Weights, weights, kwargs)


@register_model(VGG13_BN_Weights)
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 with batch norm."""
    return _vgg('B', True, VGG13_BN_Weights, weights, kwargs)


@register_model(VGG16_Weights)
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration D)."""
    return _vgg('D', False, VGG16_Weights, weights, kwargs)


@register_model(VGG16_BN_Weights)
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 with batch norm."""
    return _vgg('D', True, VGG16_BN_Weights, weights, kwargs)


@register_model(VGG19_Weights)
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration E)."""
    return _vgg('E', False, VGG19_Weights, weights, kwargs)


@register_model(VGG19_BN_Weights)
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 with batch norm."""
    return _vgg('E', True, VGG19_BN_Weights, weights, kwargs)
