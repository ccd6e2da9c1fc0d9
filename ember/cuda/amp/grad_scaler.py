"""torch.cuda.amp.grad_scaler: the deprecated ``GradScaler`` (ember.cuda.amp), and ``OptState``."""
from ...amp.grad_scaler import OptState, deprecated_scaler  # noqa: F401

__all__ = ['GradScaler']


GradScaler = deprecated_scaler('cuda', __name__, """``ember.cuda.amp.GradScaler(...)`` is
    ``ember.amp.GradScaler('cuda', ...)``, deprecated.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     ember.cuda.amp.GradScaler().is_enabled()     # no CUDA here: disabled, as torch
    False
    """)
