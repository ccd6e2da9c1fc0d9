"""``ember.cpu.amp`` (torch.cpu.amp): deprecated spellings of ``ember.amp.autocast('cpu', ...)`` and
``ember.amp.GradScaler('cpu', ...)``.

Each warns as torch does (FutureWarning) and then behaves as the ``ember.amp`` object.
"""
from ember._warn import warnings

from .. import amp as _amp
from ..amp.grad_scaler import deprecated_scaler

__all__ = ['autocast', 'GradScaler']


class autocast(_amp.autocast):
    """``ember.cpu.amp.autocast(...)`` is ``ember.amp.autocast('cpu', ...)``, deprecated.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     with ember.cpu.amp.autocast():
    ...         ember.is_autocast_enabled('cpu')
    True
    """

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__('cpu', enabled=enabled, dtype=_dtype(dtype), cache_enabled=cache_enabled)


def _dtype(dtype):
    import ember
    return ember.bfloat16 if dtype is None else dtype


GradScaler = deprecated_scaler(
    'cpu', __name__, """``ember.cpu.amp.GradScaler(...)`` is ``ember.amp.GradScaler('cpu', ...)``, deprecated.""")
