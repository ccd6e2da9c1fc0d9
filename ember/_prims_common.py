"""``torch._prims_common``: the helpers torch's Python decompositions share; ember has the layout one that
libraries and ember's own Python composites ask (NOTE [channels_last outputs] in _core/storage.py)."""
from ._core import storage as _storage
from ._core.memory_format import contiguous_format, channels_last, channels_last_3d

_FORMATS = {'contiguous_format': contiguous_format, 'channels_last': channels_last,
            'channels_last_3d': channels_last_3d}


def suggest_memory_format(x):
    """The memory format ``x``'s strides suggest: ``channels_last`` for a 4-D tensor whose strides grow C, W, H, N
    (``x.permute(0, 3, 1, 2)`` of NHWC data is one), ``channels_last_3d`` for such a 5-D one, else
    ``contiguous_format`` (torch's ``Tensor.suggest_memory_format``).

    >>> suggest_memory_format(ember.zeros(2, 5, 6, 3).permute(0, 3, 1, 2))
    torch.channels_last
    """
    return _FORMATS[_storage.suggest_memory_format(tuple(x.shape), x.stride())]


def make_contiguous_strides_for(shape, row_major=True):
    """The strides of a contiguous tensor of ``shape`` (a size-0 dimension counts as 1); with ``row_major=False``
    those of a batch of column-major (Fortran) matrices, as BLAS and LAPACK want them.

    >>> make_contiguous_strides_for((2, 3, 4)), make_contiguous_strides_for((2, 3, 4), row_major=False)
    ((12, 4, 1), (12, 1, 3))
    """
    if any(not isinstance(s, int) and not hasattr(s, '__index__') for s in shape) or any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension or non-integer size: {list(shape)}")
    strides, multiplier = [], 1
    for size in reversed(shape):
        strides.append(multiplier)
        multiplier *= max(size, 1)
    result = tuple(reversed(strides))
    if row_major or len(shape) < 2:
        return result
    return result[:-2] + (1, max(shape[-2], 1))


__all__ = ['suggest_memory_format', 'make_contiguous_strides_for']
