"""MNASNet (Tan et al. 2018) with torchvision's names: ``layers.{i}`` (stem, six stacks of inverted residuals
``layers.{i}.{j}.layers.{k}``, head), ``classifier.1``. ``alpha`` scales the widths.

As torchvision, the state dict is version 2 (``_version``): a version-1 checkpoint of a model with alpha
other than 1.0 had a fixed-width stem, which loading rebuilds (with a warning); a state dict without
version metadata is refused with torchvision's ValueError.
"""
import ember.nn as nn
from ember._warn import warnings

from ._api import _check_num_classes, _load, _resolve, _weights, register_model

__all__ = ['MNASNet', 'MNASNet0_5_Weights', 'MNASNet0_75_Weights', 'MNASNet1_0_Weights', 'MNASNet1_3_Weights',
           'mnasnet0_5', 'mnasnet0_75', 'mnasnet1_0', 'mnasnet1_3']

MNASNet0_5_Weights = _weights('MNASNet0_5_Weights', {'IMAGENET1K_V1': 'mnasnet0.5_top1_67.823-3ffadce67e.pth'})
MNASNet0_75_Weights = _weights('MNASNet0_75_Weights', {'IMAGENET1K_V1': 'mnasnet0_75-7090bc5f.pth'})
MNASNet1_0_Weights = _weights('MNASNet1_0_Weights', {'IMAGENET1K_V1': 'mnasnet1.0_top1_73.512-f206786ef8.pth'})
MNASNet1_3_Weights = _weights('MNASNet1_3_Weights', {'IMAGENET1K_V1': 'mnasnet1_3-a4c69d6f.pth'})

# TensorFlow's batch norm decay 0.9997 as a PyTorch momentum
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in [1, 2]:
            raise ValueError(f'stride should be 1 or 2 instead of {stride}')
        if kernel_size not in [3, 5]:
            raise ValueError(f'kernel_size should be 3 or 5 instead of {kernel_size}')
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False), nn.BatchNorm2d(mid_ch, momentum=bn_momentum), nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum), nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False), nn.BatchNorm2d(out_ch, momentum=bn_momentum))

    def forward(self, input):
        return self.layers(input) + input if self.apply_residual else self.layers(input)


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    if repeats < 1:
        raise ValueError(f'repeats should be >= 1, instead got {repeats}')
    first = _InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum=bn_momentum)
    return nn.Sequential(first, *[_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, bn_momentum=bn_momentum)
                                  for _ in range(1, repeats)])


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    """The multiple of ``divisor`` nearest ``val``, rounded up when that would fall under 90% of ``val``."""
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError(f'round_up_bias should be greater than 0.0 and smaller than 1.0 instead of {round_up_bias}')
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    return [_round_to_multiple_of(depth * alpha, 8) for depth in [32, 16, 24, 40, 80, 96, 192, 320]]


def _stem(widths, d2):
    """The first nine entries of ``layers``: 3x3 conv, depthwise 3x3, 1x1 to ``widths[1]``, first stack."""
    return [nn.Conv2d(3, widths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(widths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(widths[0], widths[0], 3, padding=1, stride=1, groups=widths[0], bias=False),
            nn.BatchNorm2d(widths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(widths[0], widths[1], 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(widths[1], momentum=_BN_MOMENTUM),
            _stack(widths[1], d2, 3, 2, 3, 3, _BN_MOMENTUM)]


class MNASNet(nn.Module):
    _version = 2

    def __init__(self, alpha, num_classes=1000, dropout=0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f'alpha should be greater than 0.0 instead of {alpha}')
        self.alpha = alpha
        self.num_classes = num_classes
        depths = _get_depths(alpha)
        layers = _stem(depths, depths[2]) + [
            _stack(depths[2], depths[3], 5, 2, 3, 3, _BN_MOMENTUM), _stack(depths[3], depths[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 3, 1, 6, 2, _BN_MOMENTUM), _stack(depths[5], depths[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[6], depths[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM), nn.ReLU(inplace=True)]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode='fan_out', nonlinearity='sigmoid')
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get('version', None)
        if version not in [1, 2]:
            raise ValueError(f'version should be set to 1 or 2 instead of {version}')
        if version == 1 and not self.alpha == 1.0:
            # version 1 kept the stem at 32 and 16 channels whatever alpha was
            for idx, layer in enumerate(_stem([32, 16], _get_depths(self.alpha)[2])):
                self.layers[idx] = layer
            self._version = 1
            warnings.warn('A new version of MNASNet model has been implemented. Your checkpoint was saved using the '
                          'previous version. This checkpoint will load and work as before, but you may want to upgrade '
                          'by training a newer model or transfer learning from an updated ImageNet checkpoint.',
                          UserWarning)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


def _mnasnet(alpha, weights_enum, weights, kwargs):
    weights = _resolve(weights_enum, weights, kwargs)
    _check_num_classes(weights, kwargs)
    return _load(MNASNet(alpha, **kwargs), weights)


@register_model(MNASNet0_5_Weights)
def mnasnet0_5(*, weights=None, progress=True, **kwargs):
    """MNASNet with depth multiplier 0.5."""
    return _mnasnet(0.5, MNASNet0_5_Weights, weights, kwargs)


@register_model(MNASNet0_75_Weights)
def mnasnet0_75(*, weights=None, progress=True, **kwargs):
    """MNASNet with depth multiplier 0.75."""
    return _mnasnet(0.75, MNASNet0_75_Weights, weights, kwargs)


@register_model(MNASNet1_0_Weights)
def mnasnet1_0(*, weights=None, progress=True, **kwargs):
    """MNASNet with depth multiplier 1.0."""
    return _mnasnet(1.0, MNASNet1_0_Weights, weights, kwargs)


@register_model(MNASNet1_3_Weights)
def mnasnet1_3(*, weights=None, progress=True, **kwargs):
    """MNASNet with depth multiplier 1.3."""
    return _mnasnet(1.3, MNASNet1_3_Weights, weights, kwargs)
