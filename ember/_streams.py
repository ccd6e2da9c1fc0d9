"""torch.Stream and torch.Event: the device-generic stream and event types (torch.accelerator's).

On a CUDA device they are ember.cuda's (CuPy streams and events). On the CPU, as in torch, every operation has
finished when it returns: the one stream (``stream_id=0``) is always idle, and events, which the CPU backend does
not support, raise torch's error where they would have to record or wait.
"""
from ._core import naming
from ._core.device import device as _device

_NO_EVENTS = "cpu backend doesn't support events."


def _resolve(device):
    if device is None:
        from . import accelerator
        return accelerator.current_accelerator() or _device('cpu')
    return device if isinstance(device, _device) else _device(device)


class Stream:
    """``torch.Stream(device=None, *, priority=0)``.

    >>> s = Stream('cpu')
    >>> s.query(), s.stream_id, s.device_type
    (True, 0, 0)
    """

    def __new__(cls, device=None, *, priority=0, **kwargs):
        dev = _resolve(device)
        if dev.type == 'cuda':
            from . import cuda
            return cuda.Stream(dev, priority=priority)
        if dev.type != 'cpu':
            raise RuntimeError(f"{dev.type} backend doesn't support streams.")
        return super().__new__(cls)

    def __init__(self, device=None, *, priority=0, **kwargs):
        self.device = _device('cpu')
        self.priority = priority

    device_type = property(lambda self: 0)          # c10's DeviceType::CPU
    device_index = property(lambda self: -1)
    stream_id = property(lambda self: 0)

    def query(self):
        return True

    def synchronize(self):
        return None

    def wait_stream(self, stream):      # torch records an event on the other stream: the CPU backend has none
        raise RuntimeError(_NO_EVENTS)

    def wait_event(self, event):
        return None

    def record_event(self, event=None):
        raise RuntimeError(_NO_EVENTS)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and (other.device_type, other.stream_id) == (self.device_type, self.stream_id)

    def __hash__(self):
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self):
        return f'{naming.shown}.Stream device_type=cpu, device_index={self.device_index}, stream_id={self.stream_id}'


class Event:
    """``torch.Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``."""

    def __new__(cls, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        dev = _resolve(device)
        if dev.type == 'cuda':
            from . import cuda
            return cuda.Event(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)
        return super().__new__(cls)

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _resolve(device)
        self.enable_timing = enable_timing

    def record(self, stream=None):
        raise RuntimeError(_NO_EVENTS)

    def wait(self, stream=None):
        raise RuntimeError(_NO_EVENTS)

    def elapsed_time(self, end_event):
        raise RuntimeError(_NO_EVENTS)

    def query(self):
        return True

    def synchronize(self):
        return None

    def __repr__(self):
        return f'{naming.shown}.Event device_type={self.device.type}, device_index=-1, event_flag=0, event_id=0'
