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


__all__ = ['suggest_memory_format']
