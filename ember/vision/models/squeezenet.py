"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016): ``features.{i}.squeeze/expand1x1/expand3x3``, ``classifier.1``."""
import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['SqueezeNet', 'SqueezeNet1_0_Weights', 'SqueezeNet1_1_Weights', 'squeezenet1_0', 'squeezenet1_1']

SqueezeNet1_0_Weights = _weights('SqueezeNet1_0_Weights', {'IMAGENET1K_V1': 'squeezenet1_0-b66bff10.pth'})
SqueezeNet1_1_Weights = _weights('SqueezeNet1_1_Weights', {'IMAGENET1K_V1': 'squeezenet1_1-b8a52dc0.pth'})


class Fire(nn.Module):
    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return ember.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    def __init__(self, version='1_0', num_classes=1000, dropout=0.5):
        super().__init__()
        self.num_classes = num_classes
        if version == '1_0':
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True), Fire(512, 64, 256, 256))
        elif version == '1_1':       # 1.1: a 3x3 stem and earlier pooling, 2.4x less computation
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128),
                nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return ember.flatten(self.classifier(self.features(x)), 1)


def _squeezenet(version, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(SqueezeNet(version, **kwargs), weights)


@register_model(SqueezeNet1_0_Weights)
def squeezenet1_0(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.0."""
    return _squeezenet('1_0', SqueezeNet1_0_Weights, weights, kwargs)


@register_model(SqueezeNet1_1_Weights)
def squeezenet1_1(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.1."""
    return _squeezenet('1_1', SqueezeNet1_1_Weights, weights, kwargs)
