"""ShuffleNet V2 (Ma et al. 2018) with torchvision's names: ``conv1.{0,1}``, ``stage{2,3,4}.{i}.branch{1,2}.{j}``,
``conv5``, ``fc``. A unit splits (stride 1) or duplicates (stride 2) its input over two branches, concatenates
them and interleaves the two halves' channels (``channel_shuffle``). torchvision leaves the default init."""
import ember
import ember.nn as nn

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['ShuffleNetV2', 'ShuffleNet_V2_X0_5_Weights', 'ShuffleNet_V2_X1_0_Weights', 'ShuffleNet_V2_X1_5_Weights',
           'ShuffleNet_V2_X2_0_Weights', 'shufflenet_v2_x0_5', 'shufflenet_v2_x1_0', 'shufflenet_v2_x1_5',
           'shufflenet_v2_x2_0']

ShuffleNet_V2_X0_5_Weights = _weights('ShuffleNet_V2_X0_5_Weights', {'IMAGENET1K_V1': 'shufflenetv2_x0.5-f707e7126e.pth'})
ShuffleNet_V2_X1_0_Weights = _weights('ShuffleNet_V2_X1_0_Weights', {'IMAGENET1K_V1': 'shufflenetv2_x1-5666bf0f80.pth'})
ShuffleNet_V2_X1_5_Weights = _weights('ShuffleNet_V2_X1_5_Weights', {'IMAGENET1K_V1': 'shufflenetv2_x1_5-3c479a10.pth'})
ShuffleNet_V2_X2_0_Weights = _weights('ShuffleNet_V2_X2_0_Weights', {'IMAGENET1K_V1': 'shufflenetv2_x2_0-8be3c8ee.pth'})


def channel_shuffle(x, groups):
    """Channels ``(g, c)`` reordered as ``(c, g)``: each group's channels spread over all groups."""
    batchsize, num_channels, height, width = x.size()
    x = x.view(batchsize, groups, num_channels // groups, height, width)
    return ember.transpose(x, 1, 2).contiguous().view(batchsize, num_channels, height, width)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError('illegal stride value')
        self.stride = stride
        branch_features = oup // 2
        if self.stride == 1 and inp != branch_features << 1:
            raise ValueError(f'Invalid combination of stride {stride}, inp {inp} and oup {oup} values. If stride == 1 '
                             'then inp should be equal to oup // 2 << 1.')
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if self.stride > 1 else branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3, stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features), nn.ReLU(inplace=True))

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = ember.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = ember.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError('expected stages_repeats as list of 3 positive ints')
        if len(stages_out_channels) != 5:
            raise ValueError('expected stages_out_channels as list of 5 positive ints')
        self._stage_out_channels = stages_out_channels
        input_channels, output_channels = 3, stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, output_channels in zip(('stage2', 'stage3', 'stage4'), stages_repeats,
                                                  stages_out_channels[1:]):
            seq = [inverted_residual(input_channels, output_channels, 2)]
            seq += [inverted_residual(output_channels, output_channels, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels
        output_channels = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        self.fc = nn.Linear(output_channels, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))      # global average pooling


def _shufflenetv2(stages_out_channels, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(ShuffleNetV2([4, 8, 4], stages_out_channels, **kwargs), weights)


@register_model(ShuffleNet_V2_X0_5_Weights)
def shufflenet_v2_x0_5(*, weights=None, progress=True, **kwargs):
    """ShuffleNet V2, 0.5x channels."""
    return _shufflenetv2([24, 48, 96, 192, 1024], ShuffleNet_V2_X0_5_Weights, weights, kwargs)


@register_model(ShuffleNet_V2_X1_0_Weights)
def shufflenet_v2_x1_0(*, weights=None, progress=True, **kwargs):
    """ShuffleNet V2, 1.0x channels."""
    return _shufflenetv2([24, 116, 232, 464, 1024], ShuffleNet_V2_X1_0_Weights, weights, kwargs)


@register_model(ShuffleNet_V2_X1_5_Weights)
def shufflenet_v2_x1_5(*, weights=None, progress=True, **kwargs):
    """ShuffleNet V2, 1.5x channels."""
    return _shufflenetv2([24, 176, 352, 704, 1024], ShuffleNet_V2_X1_5_Weights, weights, kwargs)


@register_model(ShuffleNet_V2_X2_0_Weights)
def shufflenet_v2_x2_0(*, weights=None, progress=True, **kwargs):
    """ShuffleNet V2, 2.0x channels."""
    return _shufflenetv2([24, 244, 488, 976, 2048], ShuffleNet_V2_X2_0_Weights, weights, kwargs)
