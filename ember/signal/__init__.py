"""ember.signal: torch.signal, window functions modelled on SciPy's ``scipy.signal.windows``."""
from . import windows  # noqa: F401

__all__ = ['windows']
