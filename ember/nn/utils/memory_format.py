"""torch.nn.utils.memory_format: give convolution weights a channels-last (or contiguous) layout.

ember's memory formats are strides on an ordinary strided tensor: a channels-last weight is the NHWC
(NDHWC) contiguous copy seen through a permutation back to NCHW (NCDHW), so its strides are torch's
(``(C*H*W, 1, W*C, C)`` for channels_last) and every operator reads it as the same values. Only the
convolution weights change, in place of their ``.data``; the Parameter objects (and optimizers holding
them) stay the same.
"""
__all__ = ['convert_conv2d_weight_memory_format', 'convert_conv3d_weight_memory_format']

_RANK = {'channels_last': 4, 'channels_last_3d': 5}


def _relayout(weight, memory_format):
    """A copy of ``weight`` laid out in ``memory_format`` (torch's clone + resize_ with that format)."""
    fmt = str(memory_format).split('.')[-1]       # 'channels_last' or ember.channels_last
    w = weight.detach()
    if fmt == 'contiguous_format':
        return w.clone(memory_format='contiguous_format')
    if fmt in _RANK:
        if w.dim() != _RANK[fmt]:
            raise RuntimeError(f"required rank {_RANK[fmt]} tensor to use {fmt} format")
        last = (0,) + tuple(range(2, w.dim())) + (1,)           # channels innermost
        back = (0, w.dim() - 1) + tuple(range(1, w.dim() - 1))
        return w.permute(*last).contiguous().permute(*back)
    if fmt == 'preserve_format':
        raise RuntimeError("Unsupported memory formatPreserve")
    raise RuntimeError(f"Unsupported memory format {memory_format}")


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        module.weight.data = _relayout(module.weight, memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Relayout the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (itself included).

    >>> import ember
    >>> m = convert_conv2d_weight_memory_format(ember.nn.Conv2d(2, 4, 3), ember.channels_last)
    >>> m.weight.stride()
    (18, 1, 6, 2)
    """
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Relayout the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (itself included); the
    format is ``'channels_last_3d'`` or ``contiguous_format``.

    >>> import ember
    >>> m = convert_conv3d_weight_memory_format(ember.nn.Conv3d(2, 2, 3), 'channels_last_3d')
    >>> m.weight.stride()
    (54, 1, 18, 6, 2)
    """
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
