"""``ember.cpu.amp`` (torch.cpu.amp): deprecated spellings of ``ember.amp.autocast('cpu', ...)`` and
``ember.amp.GradScaler('cpu', ...)``.

Each warns as torch does (FutureWarning) and then behaves as the ``ember.amp`` object.
"""
from ember._warn import warnings

from .. import amp as _amp

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


class GradScaler(_amp.GradScaler):
    """``ember.cpu.amp.GradScaler(...)`` is ``ember.amp.GradScaler('cpu', ...)``, deprecated."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__('cpu', init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
