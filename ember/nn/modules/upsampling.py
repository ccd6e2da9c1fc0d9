"""``torch.nn.modules.upsampling``: the path torch defines Upsample, UpsamplingNearest2d, UpsamplingBilinear2d under; ember keeps them in misc.py.

Programs name classes by torch's module path (super_resolution's ``torch.load`` safe-globals list names
``torch.nn.modules.pixelshuffle.PixelShuffle``), so the path resolves to the same classes.
"""
from .misc import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401

__all__ = ['Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d']
