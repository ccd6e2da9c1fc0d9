"""torchvision.ops.FeaturePyramidNetwork (Lin et al., "Feature Pyramid Networks for Object Detection"): lateral 1x1
convolutions bring every level to ``out_channels``, a top-down pass adds each coarser result (upsampled, nearest)
to the next finer lateral, and a 3x3 convolution smooths each sum; extra blocks (``LastLevelMaxPool``,
``LastLevelP6P7``) append coarser levels. Module names, initialisation and results are torchvision's, so its
state dicts load."""
from collections import OrderedDict

import ember.nn as nn
import ember.nn.functional as F

from .misc import Conv2dNormActivation

__all__ = ['FeaturePyramidNetwork', 'ExtraFPNBlock', 'LastLevelMaxPool', 'LastLevelP6P7']


class ExtraFPNBlock(nn.Module):
    """Base class of the blocks run on the FPN's results: ``forward(results, x, names) -> (results, names)``, with
    ``x`` the original feature maps."""

    def forward(self, results, x, names):
        raise NotImplementedError


class LastLevelMaxPool(ExtraFPNBlock):
    """Appends a level ``'pool'``: the coarsest result subsampled by 2 (a 1x1 max pool of stride 2)."""

    def forward(self, x, y, names):
        names.append('pool')
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """RetinaNet's P6 and P7: two stride-2 3x3 convolutions (ReLU between) on P5, or on C5 when the channel counts
    differ."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        p6 = self.p6(p[-1] if self.use_P5 else c[-1])
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(['p6', 'p7'])
        return p, names


class FeaturePyramidNetwork(nn.Module):
    """``FeaturePyramidNetwork([10, 20, 30], 5)(OrderedDict(feat0=..., feat1=..., feat2=...))``: the levels, finest
    first, each with ``out_channels`` channels and its input's spatial size, under the input's keys.

    >>> import ember
    >>> fpn = FeaturePyramidNetwork([4, 8], 6)
    >>> out = fpn(OrderedDict(a=ember.rand(1, 4, 8, 8), b=ember.rand(1, 8, 4, 4)))
    >>> [(k, tuple(v.shape)) for k, v in out.items()]
    [('a', (1, 6, 8, 8)), ('b', (1, 6, 4, 4))]
    """

    _version = 2

    def __init__(self, in_channels_list, out_channels, extra_blocks=None, norm_layer=None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(in_channels, out_channels, kernel_size=1, padding=0,
                                                          norm_layer=norm_layer, activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(out_channels, out_channels, kernel_size=3,
                                                          norm_layer=norm_layer, activation_layer=None))
        for m in self.modules():        # before the extra blocks, whose own initialisation stays
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not {type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def get_result_from_inner_blocks(self, x, idx):
        return self.inner_blocks[idx](x)

    def get_result_from_layer_blocks(self, x, idx):
        return self.layer_blocks[idx](x)

    def forward(self, x):
        names, feats = list(x.keys()), list(x.values())
        last_inner = self.get_result_from_inner_blocks(feats[-1], -1)
        results = [self.get_result_from_layer_blocks(last_inner, -1)]
        for idx in range(len(feats) - 2, -1, -1):
            lateral = self.get_result_from_inner_blocks(feats[idx], idx)
            top_down = F.interpolate(last_inner, size=lateral.shape[-2:], mode='nearest')
            last_inner = lateral + top_down
            results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, feats, names)
        return OrderedDict(zip(names, results))
