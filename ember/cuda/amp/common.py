"""torch.cuda.amp.common."""
from importlib.util import find_spec


def amp_definitely_not_available():
    """True where neither CUDA nor XLA could run mixed precision (here: no GPU that CuPy sees)."""
    from ... import cuda
    return not (cuda.is_available() or find_spec('torch_xla'))
