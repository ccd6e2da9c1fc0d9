"""torch.utils._device: the default device of the factory functions, as a context and a decorator (litgpt imports
it). ``DeviceContext(device)`` is ``with ember.device(device):`` (NOTE in _core/device.py: ember keeps a default-
device stack rather than torch's TorchFunctionMode, with the same effect on factories and on the parameters
modules create)."""
import functools

import ember

__all__ = ['DeviceContext', 'device_decorator', 'set_device']

CURRENT_DEVICE = None


class DeviceContext:
    def __init__(self, device):
        self.device = ember.device(device)

    def __enter__(self):
        global CURRENT_DEVICE
        self.old_device, CURRENT_DEVICE = CURRENT_DEVICE, self.device
        self.device.__enter__()
        return self

    def __exit__(self, *exc):
        global CURRENT_DEVICE
        CURRENT_DEVICE = self.old_device
        return self.device.__exit__(*exc)


def device_decorator(device, func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with DeviceContext(device):
            return func(*args, **kwargs)
    return wrapper


def set_device(device):
    """A decorator: ``func`` runs with ``device`` as the default device."""
    return lambda func: device_decorator(device, func)
