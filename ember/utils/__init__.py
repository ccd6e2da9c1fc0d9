"""ember.utils: data loading, checkpointing, swap_tensors, and the PrivateUse1 device hooks."""
import numpy as np

from ._swap_tensors import swap_tensors
# ember.__future__ (torch.__future__) becomes an attribute of the ember package here, as torch/__init__ imports
# it: ember imports utils early, and __future__ imports nothing
from .. import __future__  # noqa: F401,E402


_privateuse1 = ['privateuseone']


def rename_privateuse1_backend(backend_name, allocator=None, to_host=None, from_host=None):
    """Name the PrivateUse1 device type (``'npu'``) so ``ember.device('npu')`` works.

    ``allocator``/``to_host``/``from_host`` describe its memory (see
    ``ember.library.register_device``); by default it keeps NumPy arrays
    (a simulated device). Kernels are then registered for 'PrivateUse1'.
    """
    from ..library import register_device
    _privateuse1[0] = backend_name
    copy = lambda a, index=None: np.array(a, copy=True)
    return register_device(backend_name, allocator=allocator, to_host=to_host or copy,
                           from_host=from_host or copy, key='PrivateUse1')


def get_privateuse1_backend_name():
    return _privateuse1[0]


def generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=False,
                                             unsupported_dtype=None):
    """Add ``Tensor.is_<name>``, ``Tensor.<name>()`` and ``Module.<name>()`` for the renamed backend."""
    import ember
    Tensor = ember.Tensor
    name = _privateuse1[0]
    if for_tensor:
        setattr(Tensor, f'is_{name}', property(lambda self: self.device.type == name))
        setattr(Tensor, name, lambda self, device=None: self.to(ember.device(name, device) if isinstance(device, int)
                                                                else device or name))
    if for_module:
        from ..nn import modules as _m
        Module = getattr(_m, 'Module', None)
        if Module is not None:
            setattr(Module, name, lambda self, device=None: self.to(device or name))


def __getattr__(name):
    # ember.utils.data (and checkpoint, safetensors) are imported on first use, so `import ember` stays light
    # (data pulls in multiprocessing)
    if name in ('data', 'checkpoint', 'safetensors'):
        import importlib
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
