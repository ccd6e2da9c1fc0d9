"""Where the device twins choose otherwise than the CPU kernels do (NOTE [device choices]).

NOTE [device choices] -- The CPU kernels make choices for a host with a few cores and small caches: they
share work out among the intra-op threads (``parallel_for``, the split pointwise wrappers of ``_split``), cut
it into cache-sized blocks (the convolution's receptive fields a few samples at a time, batch norm's centred
squares, GELU's chain of passes, a scaled subtraction's temporary), skip a pass after reading the data
(softmax and attention subtract the row maximum only when some score could overflow exp), and take row dot
products with NumPy's einsum (no temporary). Each of these costs more on a GPU: a block is a kernel launch
(CuPy's Python and the driver, 5-10 us), host threads issue launches that one device stream runs in order
anyway, reading a value waits for everything queued before it, and CuPy plans an einsum in Python on every
call. So the twins (NOTE [cuda backend]) see these helpers and constants with the device's answers: one
intra-op thread, ranges run whole, blocks as large as the array, the maximum always subtracted, and a row dot
product as a product and a sum. The operations and the elements they touch stay the CPU kernel's, so its
values hold to rounding; tests/test_device_twins.py runs every operator's samples through twins that make
these choices.

This module imports no CuPy: the tests' NumPy stand-in uses the same tables.
"""
import numpy as np


def parallel_for(n, fn, grain):
    """The whole range in one call: the device splits the work among its own cores."""
    fn(0, n)


def get_num_threads():
    """One: no host thread issues device work beside the caller's (split pointwise kernels run whole)."""
    return 1


def chunks(win, shape, budget=None):
    """The convolution's receptive fields for the whole batch at once: one copy, then one batched GEMM."""
    n = win.shape[0]
    yield 0, n, win.reshape((n,) + tuple(shape))


def row_dots(a, b):
    """sum(a * b, -1) as a product and a reduction: CuPy's einsum plans its contraction in Python each call."""
    return (a * b).sum(-1)


def exp_safe(a):
    """False without reading ``a``: subtracting the row maximum costs a reduction, reading the bounds a sync."""
    return False


_WHOLE = 1 << 62

# the CPU helpers the twins call in their place, by the helper's module and name (kernels.HELPERS)
HELPERS = {
    ('_parallel', 'parallel_for'): parallel_for,
    ('_parallel', 'get_num_threads'): get_num_threads,
    ('nn_ops', '_chunks'): chunks,
    ('_sums', 'exp_safe'): exp_safe,
    ('_sums', 'row_dots'): row_dots,
}

# module constants the twins see with another value, by module and name: the cache-sized blocks
CONSTANTS = {
    ('nn_ops', '_BN_BLOCK'): _WHOLE,
    ('pointwise', '_BLOCK'): _WHOLE,
    ('pointwise', '_SCALED_BLOCK'): _WHOLE,
    # NOTE [tie order of torch's sort] emulates libstdc++'s std::sort, which torch's CPU runs; its CUDA sort has
    # orders of its own (in-register sorts for short rows, cub's stable radix sort for long ones), not emulated:
    # the twins keep NumPy's stable order (the emulation would also cost ~25 launches per call)
    ('reductions', '_TIE_BUDGET'): 0,
    ('factories', '_WIDE64'): np.float64,     # no long double on the device (CuPy): linspace's steps in float64
}
