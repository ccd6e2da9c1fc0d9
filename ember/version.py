"""ember.version: torch.version's fields for this build (no CUDA, no ROCm)."""
from . import __version__  # noqa: F401

# the version of torch's API that ember follows (the oracle its tests compare with): torch.__version__ under ember run
torch_api = '2.13.0'

cuda = None
hip = None
xpu = None
debug = False
git_version = 'unknown'
