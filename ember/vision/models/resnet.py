"""ResNet (He et al. 2015) with torchvision's module names: ``conv1, bn1, layer1..4.{i}.conv1/bn1/.., fc``.

Module structure, initialisation and forward follow torchvision's ``resnet.py`` so that a
torchvision state dict loads unchanged (``downsample.0`` conv, ``downsample.1`` batch norm).
"""
import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _overwrite_named_param, _resolve, _weights, register_model

__all__ = ['ResNet', 'BasicBlock', 'Bottleneck', 'ResNet18_Weights', 'ResNet34_Weights', 'ResNet50_Weights',
           'ResNet101_Weights', 'ResNet152_Weights', 'ResNeXt50_32X4D_Weights', 'ResNeXt101_32X8D_Weights',
           'ResNeXt101_64X4D_Weights', 'Wide_ResNet50_2_Weights', 'Wide_ResNet101_2_Weights', 'resnet18', 'resnet34',
           'resnet50', 'resnet101', 'resnet152', 'resnext50_32x4d', 'resnext101_32x8d', 'resnext101_64x4d',
           'wide_resnet50_2', 'wide_resnet101_2']

ResNet18_Weights = _weights('ResNet18_Weights', {'IMAGENET1K_V1': 'resnet18-f37072fd.pth'})
ResNet34_Weights = _weights('ResNet34_Weights', {'IMAGENET1K_V1': 'resnet34-b627a593.pth'})
ResNet50_Weights = _weights('ResNet50_Weights', {'IMAGENET1K_V1': 'resnet50-0676ba61.pth',
                                                 'IMAGENET1K_V2': 'resnet50-11ad3fa6.pth'})
ResNet101_Weights = _weights('ResNet101_Weights', {'IMAGENET1K_V1': 'resnet101-63fe2227.pth',
                                                   'IMAGENET1K_V2': 'resnet101-cd907fc2.pth'})
ResNet152_Weights = _weights('ResNet152_Weights', {'IMAGENET1K_V1': 'resnet152-394f9c45.pth',
                                                   'IMAGENET1K_V2': 'resnet152-f82ba261.pth'})
ResNeXt50_32X4D_Weights = _weights('ResNeXt50_32X4D_Weights', {'IMAGENET1K_V1': 'resnext50_32x4d-7cdf4587.pth',
                                                               'IMAGENET1K_V2': 'resnext50_32x4d-1a0047aa.pth'})
ResNeXt101_32X8D_Weights = _weights('ResNeXt101_32X8D_Weights', {'IMAGENET1K_V1': 'resnext101_32x8d-8ba56ff5.pth',
                                                                 'IMAGENET1K_V2': 'resnext101_32x8d-110c445d.pth'})
ResNeXt101_64X4D_Weights = _weights('ResNeXt101_64X4D_Weights', {'IMAGENET1K_V1': 'resnext101_64x4d-173b62eb.pth'})
Wide_ResNet50_2_Weights = _weights('Wide_ResNet50_2_Weights', {'IMAGENET1K_V1': 'wide_resnet50_2-95faca4d.pth',
                                                               'IMAGENET1K_V2': 'wide_resnet50_2-9ba9bcbe.pth'})
Wide_ResNet101_2_Weights = _weights('Wide_ResNet101_2_Weights', {'IMAGENET1K_V1': 'wide_resnet101_2-32ee1156.pth',
                                                                 'IMAGENET1K_V2': 'wide_resnet101_2-d733dc28.pth'})


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False,
                     dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity         # in place, as torchvision's (graph tools see add_)
        return self.relu(out)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)   # stride on the 3x3, as torchvision (V1.5)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity         # in place, as torchvision's (graph tools see add_)
        return self.relu(out)


class ResNet(nn.Module):
    """ResNet body from a block type and blocks per stage.

    >>> resnet18(num_classes=10)(ember.rand(1, 3, 32, 32)).shape
    ember.Size([1, 10])
    """

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        self._norm_layer = norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes = 64
        self.dilation = 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = ember.flatten(self.avgpool(x), 1)
        return self.fc(x)


def _resnet(block, layers, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(ResNet(block, layers, **kwargs), weights)


@register_model(ResNet18_Weights)
def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18; ``weights`` a ResNet18_Weights member (from the local cache) or a file path."""
    return _resnet(BasicBlock, [2, 2, 2, 2], ResNet18_Weights, weights, kwargs)


@register_model(ResNet34_Weights)
def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34."""
    return _resnet(BasicBlock, [3, 4, 6, 3], ResNet34_Weights, weights, kwargs)


@register_model(ResNet50_Weights)
def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50 (bottleneck blocks)."""
    return _resnet(Bottleneck, [3, 4, 6, 3], ResNet50_Weights, weights, kwargs)


@register_model(ResNet101_Weights)
def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101."""
    return _resnet(Bottleneck, [3, 4, 23, 3], ResNet101_Weights, weights, kwargs)


@register_model(ResNet152_Weights)
def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152."""
    return _resnet(Bottleneck, [3, 8, 36, 3], ResNet152_Weights, weights, kwargs)


def _resnext(layers, groups, width_per_group, weights_enum, weights, kwargs):
    """A bottleneck ResNet whose 3x3 convolutions have ``groups`` groups of ``width_per_group`` channels
    (ResNeXt), or one group twice as wide (Wide ResNet: width_per_group 128)."""
    _overwrite_named_param(kwargs, 'groups', groups)
    _overwrite_named_param(kwargs, 'width_per_group', width_per_group)
    return _resnet(Bottleneck, layers, weights_enum, weights, kwargs)


@register_model(ResNeXt50_32X4D_Weights)
def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d."""
    return _resnext([3, 4, 6, 3], 32, 4, ResNeXt50_32X4D_Weights, weights, kwargs)


@register_model(ResNeXt101_32X8D_Weights)
def resnext101_32x8d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 32x8d."""
    return _resnext([3, 4, 23, 3], 32, 8, ResNeXt101_32X8D_Weights, weights, kwargs)


@register_model(ResNeXt101_64X4D_Weights)
def resnext101_64x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-101 64x4d."""
    return _resnext([3, 4, 23, 3], 64, 4, ResNeXt101_64X4D_Weights, weights, kwargs)


@register_model(Wide_ResNet50_2_Weights)
def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2: bottlenecks twice as wide as ResNet-50's."""
    return _resnext([3, 4, 6, 3], 1, 64 * 2, Wide_ResNet50_2_Weights, weights, kwargs)


@register_model(Wide_ResNet101_2_Weights)
def wide_resnet101_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-101-2."""
    return _resnext([3, 4, 23, 3], 1, 64 * 2, Wide_ResNet101_2_Weights, weights, kwargs)
