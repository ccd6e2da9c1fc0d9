"""torch.nn.utils.init: build a module without running its parameter initialisation.

The module is constructed on the meta device (shapes and dtypes only, so ``reset_parameters`` costs
nothing) and then given uninitialised storage on the requested device with ``Module.to_empty``, as torch
does; that is why the module's constructor must take ``device=``.
"""
import inspect

__all__ = ['skip_init']


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with parameters and buffers left uninitialised (as ``ember.empty``).

    >>> import ember
    >>> m = skip_init(ember.nn.Linear, 5, 1)
    >>> m.weight.shape, m.weight.device.type, m.weight.requires_grad
    (ember.Size([1, 5]), 'cpu', True)
    """
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if 'device' not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop('device', 'cpu')
    kwargs['device'] = 'meta'
    return module_cls(*args, **kwargs).to_empty(device=final_device)
