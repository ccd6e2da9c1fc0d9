"""torch.cuda.amp.grad_scaler: the deprecated ``GradScaler`` (ember.cuda.amp), and ``OptState``."""
from ember._warn import warnings

from ... import amp as _amp
from ...amp.grad_scaler import OptState  # noqa: F401

__all__ = ['GradScaler']


class GradScaler(_amp.GradScaler):
    """``ember.cuda.amp.GradScaler(...)`` is ``ember.amp.GradScaler('cuda', ...)``, deprecated.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     ember.cuda.amp.GradScaler().is_enabled()     # no CUDA here: disabled, as torch
    False
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__('cuda', init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
