"""``torch.cuda.nvtx``: NVTX ranges and marks for Nsight Systems, through CuPy's NVTX bindings. Without CuPy (a
CPU-only install) the module imports, as torch's does on a CPU build, and each call raises torch's error."""
from contextlib import contextmanager

__all__ = ['range_push', 'range_pop', 'range_start', 'range_end', 'mark', 'range']


def _nvtx():
    try:
        from cupy.cuda import nvtx
    except ImportError:
        nvtx = None
    if nvtx is None or not getattr(nvtx, 'available', True):
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")
    return nvtx


def range_push(msg):
    """Push a range named ``msg`` on the stack of nested ranges; returns its depth, as torch's does."""
    _nvtx().RangePush(msg)
    return 0


def range_pop():
    _nvtx().RangePop()
    return 0


def range_start(msg):
    """Start a range that may cross threads; returns the id ``range_end`` takes."""
    return _nvtx().RangeStartEx(msg) if hasattr(_nvtx(), 'RangeStartEx') else range_push(msg)


def range_end(range_id):
    n = _nvtx()
    n.RangeEndEx(range_id) if hasattr(n, 'RangeEndEx') else n.RangePop()


def mark(msg):
    _nvtx().Mark(msg)


@contextmanager
def range(msg, *args, **kwargs):
    """``with nvtx.range('step {}', i):`` a range around the block (``msg`` formatted with the arguments)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
