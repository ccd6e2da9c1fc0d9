"""``torch.nn.modules.fold``: the path torch defines Fold, Unfold under; ember keeps them in misc.py.

Programs name classes by torch's module path (super_resolution's ``torch.load`` safe-globals list names
``torch.nn.modules.pixelshuffle.PixelShuffle``), so the path resolves to the same classes.
"""
from .misc import Fold, Unfold  # noqa: F401

__all__ = ['Fold', 'Unfold']
