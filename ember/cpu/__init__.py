"""ember.cpu: torch.cpu, the CPU as a device module (always available, one device)."""
import contextlib


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return 'cpu'


def synchronize(device=None):
    """CPU work is synchronous: a no-op."""


def set_device(device):
    """There is one CPU device: a no-op."""


@contextlib.contextmanager
def stream(stream):
    yield


def manual_seed(seed):
    import ember
    return ember.manual_seed(seed)
