"""ember.accelerator: torch.accelerator, answered by the CUDA backend where a GPU is present, else for a process
whose only device is the CPU.

torch counts the CPU as no accelerator: without a GPU ``is_available()`` is False,
``current_accelerator()`` is None and every call that needs a device raises
``RuntimeError: Cannot access accelerator device when none is available.`` With CuPy and a GPU the answers are
``ember.cuda``'s (NOTE [cuda backend] in ember/_backends/cuda).

>>> import ember
>>> ember.accelerator.is_available() == ember.cuda.is_available()
True
"""
_NONE = "Cannot access accelerator device when none is available."


def _cuda():
    from . import cuda
    return cuda if cuda.is_available() else None


def is_available():
    return _cuda() is not None


def current_accelerator(check_available=False):
    if _cuda() is None:
        return None
    from ._core.device import device
    return device('cuda')


def device_count():
    cuda = _cuda()
    return 0 if cuda is None else cuda.device_count()


def _none(*args, **kwargs):
    raise RuntimeError(_NONE)


def _delegate(name):
    def fn(*args, **kwargs):
        cuda = _cuda()
        if cuda is None:
            _none()
        return getattr(cuda, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


current_device_index = current_device_idx = _delegate('current_device')
set_device_index = set_device_idx = _delegate('set_device')
synchronize = _delegate('synchronize')
current_stream = _delegate('current_stream')


def set_stream(stream):
    """Make ``stream`` (an ``ember.cuda.Stream``) the current one."""
    if _cuda() is None:
        _none()
    stream._s.use()


class device_index:
    """``with ember.accelerator.device_index(None):`` is a no-op; a real index needs an accelerator."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            if _cuda() is None:
                _none()
            self._ctx = _cuda().device(self.idx)
            self._ctx.__enter__()

    def __exit__(self, *exc):
        if getattr(self, '_ctx', None) is not None:
            self._ctx.__exit__(*exc)
        return False
