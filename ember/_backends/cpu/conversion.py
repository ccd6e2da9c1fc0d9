"""CPU kernels for copies."""
import numpy as np

from ._split import split_copy

KERNELS = {
    'fill.Scalar': lambda a, value: np.full(a.shape, value, a.dtype),
    'fill.Tensor': lambda a, value: np.full(a.shape, value, a.dtype),
    # one copy, in blocks over the intra-op threads when large (NOTE [split pointwise] in _split.py)
    'clone': lambda a, memory_format: (split_copy(a) if memory_format == 'contiguous_format'
                                       else split_copy(a) if a.flags.c_contiguous
                                       else np.array(a, copy=True, order='K')),
}
