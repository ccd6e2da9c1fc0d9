"""torch.backends.mkldnn: the flag is settable; ember's kernels are NumPy, so no oneDNN library is present."""
import contextlib

enabled = True


def is_available():
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    global_ = globals()
    old = global_['enabled']
    global_['enabled'] = enabled
    try:
        yield
    finally:
        global_['enabled'] = old
