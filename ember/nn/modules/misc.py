"""Small wrappers over functionals: distances, pixel/channel shuffles, upsampling, fold/unfold."""
from .. import functional as F
from .module import Module

__all__ = ['CosineSimilarity', 'PairwiseDistance', 'PixelShuffle', 'PixelUnshuffle', 'ChannelShuffle', 'Upsample',
           'UpsamplingNearest2d', 'UpsamplingBilinear2d', 'Fold', 'Unfold']


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f'upscale_factor={self.upscale_factor}'


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f'downscale_factor={self.downscale_factor}'


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f'groups={self.groups}'


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode='nearest', align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = 'scale_factor=' + repr(self.scale_factor) if self.scale_factor is not None else 'size=' + repr(self.size)
        return info + ', mode=' + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='nearest')


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode='bilinear', align_corners=True)


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ('output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, padding={padding}, '
                'stride={stride}'.format(**self.__dict__))


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return 'kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}'.format(
            **self.__dict__)


# the modules of torch's that these classes live in (NOTE [torch's module paths] in normalization.py)
for _cls, _home in ((CosineSimilarity, 'distance'), (PairwiseDistance, 'distance'), (PixelShuffle, 'pixelshuffle'),
                    (PixelUnshuffle, 'pixelshuffle'), (ChannelShuffle, 'channelshuffle'), (Upsample, 'upsampling'),
                    (UpsamplingNearest2d, 'upsampling'), (UpsamplingBilinear2d, 'upsampling'), (Fold, 'fold'),
                    (Unfold, 'fold')):
    _cls.__module__ = f'ember.nn.modules.{_home}'
