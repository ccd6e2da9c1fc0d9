"""CPU kernels for copies."""
import numpy as np

KERNELS = {
    'fill.Scalar': lambda a, value: np.full(a.shape, value, a.dtype),
    'fill.Tensor': lambda a, value: np.full(a.shape, value, a.dtype),
    'clone': lambda a, memory_format: (np.ascontiguousarray(a).copy() if memory_format == 'contiguous_format'
                                       else np.array(a, copy=True, order='K')),
}
