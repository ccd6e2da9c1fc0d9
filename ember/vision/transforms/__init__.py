"""``torchvision.transforms`` (v1) on ember: the classes, and ``functional`` for the same operations."""
from . import functional
from .functional import InterpolationMode
from .transforms import *  # noqa: F401,F403
from .transforms import __all__
