"""torch.backends.cudnn without cuDNN: ``is_available()`` False, ``version()`` None, flags settable."""
import contextlib

enabled = True
benchmark = False
benchmark_limit = None
deterministic = False
allow_tf32 = True
fp32_precision = 'none'


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags inside the block and restore them after, as torch."""
    g = globals()
    names = ('enabled', 'benchmark', 'benchmark_limit', 'deterministic', 'allow_tf32')
    old = {n: g[n] for n in names}
    g.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        g.update(old)
