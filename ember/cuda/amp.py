"""``ember.cuda.amp`` (torch.cuda.amp): deprecated spellings of ``ember.amp.autocast('cuda', ...)``,
``ember.amp.GradScaler('cuda', ...)``, ``custom_fwd`` and ``custom_bwd``.

Each warns as torch does (FutureWarning). Without a CUDA device, autocast and the scaler then warn
again and disable themselves, as torch's do: they never pretend a GPU exists.
"""
import functools
from ember._warn import warnings

from .. import amp as _amp

__all__ = ['autocast', 'GradScaler', 'custom_fwd', 'custom_bwd']


class autocast(_amp.autocast):
    """``ember.cuda.amp.autocast(...)`` is ``ember.amp.autocast('cuda', ...)``, deprecated."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        import ember
        super().__init__('cuda', enabled=enabled, dtype=ember.float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


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


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``ember.amp.custom_fwd(device_type='cuda', ...)``, deprecated."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_amp.custom_fwd, device_type='cuda')(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """``ember.amp.custom_bwd(device_type='cuda')``, deprecated."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_amp.custom_bwd, device_type='cuda')(bwd)
