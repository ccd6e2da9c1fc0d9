"""CPU kernels for copies."""
import numpy as np

from ._fp import half_ready
from ._split import split_copy

def _clone(a, memory_format):
    # one copy, in blocks over the intra-op threads when large (NOTE [split pointwise] in _split.py)
    if memory_format in ('channels_last', 'channels_last_3d'):
        # the channels innermost: a C-order copy of the (N, *spatial, C) permutation, viewed back as (N, C, ...)
        perm = (0,) + tuple(range(2, a.ndim)) + (1,)
        back = (0, a.ndim - 1) + tuple(range(1, a.ndim - 1))
        return split_copy(a.transpose(perm)).transpose(back)
    if memory_format == 'contiguous_format' or a.flags.c_contiguous:
        return split_copy(a)
    return np.array(a, copy=True, order='K')


KERNELS = {
    'fill.Scalar': lambda a, value: np.full(a.shape, half_ready(value, a.dtype), a.dtype),
    'fill.Tensor': lambda a, value: np.full(a.shape, half_ready(value, a.dtype), a.dtype),
    'clone': _clone,
}
