"""``torchvision.transforms`` (v1) on ember: the classes, and ``functional`` for the same operations."""
from . import functional
from .functional import InterpolationMode
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all
from . import autoaugment
from .autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide

__all__ = _transforms_all + autoaugment.__all__
