"""CPU kernels for factory operators. ``dtype`` arrives as the resolved NumPy dtype."""
import math

import numpy as np

from ._fp import half_ready
from ._torch_random import integers as _t_integers, normal as _t_normal, permutation as _t_permutation, uniform as _t_uniform



# float64 linspace takes its steps in extended precision, as torch's fused multiply-add rounds once; the device
# twins, whose CuPy has no long double, take them in float64 (NOTE [device choices])
_WIDE64 = np.longdouble

def _arange(start, end, step, dtype, device):
    if end is None:
        start, end = 0, start
    n = max(0, int(np.ceil((float(end) - float(start)) / float(step))))
    if np.issubdtype(dtype, np.integer):
        return (start + step * np.arange(n, dtype=np.int64)).astype(dtype)
    return (start + step * np.arange(n, dtype=np.float64)).astype(dtype)


def _linspace(start, end, steps, dtype, device):
    """NOTE [linspace values]: torch's CPU kernel rather than NumPy's, so that seeded code indexing a linspace
    (augmentation magnitude bins, schedules) sees torch's exact numbers. The endpoints are cast to the dtype
    first and the step is ``(end - start) / (steps - 1)`` in the dtype (double for integers); the first
    ``steps // 2`` values count up from ``start``, the rest down from ``end``. For float32 and float64 torch's
    compiled kernel fuses each ``start + step * i`` into one multiply-add rounded once: done here in a wider type
    (exact for float32; long double for float64, which may round twice in rare cases). One step gives ``start``."""
    dtype = np.dtype(dtype)
    if dtype.kind == 'c':
        return np.linspace(start, end, steps, dtype=dtype)
    if steps == 1:
        return np.full(1, start).astype(dtype)
    i = np.arange(steps)
    down = steps - 1 - i
    if dtype.kind in 'iub':
        lo, hi = (np.float64(np.array(x).astype(dtype)) for x in (start, end))
        step = (hi - lo) / (steps - 1)
        return np.where(i < steps // 2, lo + step * i, hi - step * down).astype(dtype)
    lo, hi = dtype.type(start), dtype.type(end)
    step = dtype.type((hi - lo) / dtype.type(steps - 1))
    if dtype.itemsize < 4:      # half types: each operation rounds to the dtype (no fused multiply-add)
        return np.where(i < steps // 2, lo + step * i.astype(dtype), hi - step * down.astype(dtype)).astype(dtype)
    wide = np.float64 if dtype.itemsize < 8 else _WIDE64
    return np.where(i < steps // 2, wide(step) * i + wide(lo), -wide(step) * down + wide(hi)).astype(dtype)


def _empty_strided(size, stride, dtype, device):
    if not size:
        return np.empty((), dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = np.zeros(max(extent, 1), dtype)
    isz = base.itemsize
    return np.ndarray(tuple(size), dtype, base, 0, tuple(s * isz for s in stride))


def _complex(draw, size, dtype):
    """A complex sample as torch draws it: over the real view, real and imaginary parts in turn."""
    real = np.float32 if dtype == np.complex64 else np.float64
    return draw(real, (2 * math.prod(size),)).view(dtype).reshape(tuple(size))


def _randn(size, rng, dtype, device):
    if np.dtype(dtype).kind == 'c':     # each part N(0, 1/2): torch's normal_(0, 1 / sqrt 2) on the real view
        return _complex(lambda dt, n: _t_normal(rng, n, dt, 0.0, 1 / math.sqrt(2)), size, dtype)
    return _t_normal(rng, tuple(size), dtype)


def _rand(size, rng, dtype, device):
    if np.dtype(dtype).kind == 'c':
        return _complex(lambda dt, n: _t_uniform(rng, n, dt), size, dtype)
    return _t_uniform(rng, tuple(size), dtype)


KERNELS = {
    'empty': lambda size, dtype, device: np.empty(size, dtype),
    'zeros': lambda size, dtype, device: np.zeros(size, dtype),
    'ones': lambda size, dtype, device: np.ones(size, dtype),
    'full': lambda size, fill, dtype, device: np.full(size, half_ready(fill, np.dtype(dtype)), dtype),
    'arange': _arange,
    'linspace': _linspace,
    'eye': lambda n, m, dtype, device: np.eye(n, m, dtype=dtype),
    'empty_strided': _empty_strided,
    'rand': _rand,
    'randn': _randn,
    'randint.low': lambda low, high, size, rng, dtype, device: _t_integers(rng, low, high, tuple(size), dtype),
    'randperm': lambda n, rng, dtype, device: _t_permutation(rng, n, dtype),
}
