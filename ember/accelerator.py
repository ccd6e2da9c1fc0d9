"""ember.accelerator: torch.accelerator, answered for a process whose only device is the CPU.

torch counts the CPU as no accelerator: ``is_available()`` is False,
``current_accelerator()`` is None and every call that needs a device raises
``RuntimeError: Cannot access accelerator device when none is available.``

>>> import ember
>>> ember.accelerator.is_available(), ember.accelerator.current_accelerator()
(False, None)
"""
_NONE = "Cannot access accelerator device when none is available."


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0


def _none(*args, **kwargs):
    raise RuntimeError(_NONE)


current_device_index = current_device_idx = set_device_index = set_device_idx = _none
synchronize = current_stream = set_stream = _none


class device_index:
    """``with ember.accelerator.device_index(None):`` is a no-op; a real index needs an accelerator."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            _none()

    def __exit__(self, *exc):
        return False
