"""torch._C._nn: the argument parsing that ``Module.to`` shares with libraries (Lightning's dtype mixins)."""


def _parse_to(*args, **kwargs):
    """``(device, dtype, non_blocking, memory_format)`` from ``to()``'s arguments, as torch parses them.

    >>> import ember
    >>> _parse_to('cpu', ember.float16)
    (device(type='cpu'), ember.float16, False, None)
    """
    from ..nn.modules.module import _parse_module_to
    from .._core.device import device
    dev, dtype, non_blocking, memory_format = _parse_module_to(args, dict(kwargs))
    if dev is not None and not isinstance(dev, device):
        dev = device(dev)
    return dev, dtype, non_blocking, memory_format
