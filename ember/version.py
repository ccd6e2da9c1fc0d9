"""ember.version: torch.version's fields for this build (no CUDA, no ROCm)."""
from . import __version__  # noqa: F401

cuda = None
hip = None
xpu = None
debug = False
git_version = 'unknown'
