"""``torch.nn.modules.pixelshuffle``: the path torch defines PixelShuffle, PixelUnshuffle under; ember keeps them in misc.py.

Programs name classes by torch's module path (super_resolution's ``torch.load`` safe-globals list names
``torch.nn.modules.pixelshuffle.PixelShuffle``), so the path resolves to the same classes.
"""
from .misc import PixelShuffle, PixelUnshuffle  # noqa: F401

__all__ = ['PixelShuffle', 'PixelUnshuffle']
