"""torch.cuda.amp.autocast_mode: the deprecated ``autocast``, ``custom_fwd`` and ``custom_bwd`` (ember.cuda.amp)."""
import functools
from ember._warn import warnings

from ... import amp as _amp
from ...amp.autocast_mode import _cast  # noqa: F401  (torch's module holds it too)

__all__ = ['autocast', 'custom_fwd', 'custom_bwd']


class autocast(_amp.autocast):
    """``ember.cuda.amp.autocast(...)`` is ``ember.amp.autocast('cuda', ...)``, deprecated."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        import ember
        super().__init__('cuda', enabled=enabled, dtype=ember.float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


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
