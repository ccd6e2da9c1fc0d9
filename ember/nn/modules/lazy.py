"""``LazyModuleMixin``: modules whose parameter shapes come from their first input (torch.nn.modules.lazy).

A lazy module (``LazyLinear(out_features)``, ``LazyConv2d(out_channels, k)``, ``LazyBatchNorm2d()``, ...)
starts with UninitializedParameter / UninitializedBuffer (NOTE [lazy parameters]). A forward pre-hook runs
``initialize_parameters(*args, **kwargs)`` on the first call: the module reads the input's size, materializes
its parameters and runs its ``reset_parameters`` (drawing from the generator as the eager module would, so
a seeded program gets torch's values); then the hooks are removed and the module's class becomes
``cls_to_become`` (a LazyLinear is a Linear from then on). Loading a state dict into a module that has not
run yet materializes the parameters with the checkpoint's shapes first.

>>> import ember
>>> m = ember.nn.LazyLinear(3)
>>> m(ember.randn(2, 5)).shape, type(m).__name__, m.in_features
(ember.Size([2, 3]), 'Linear', 5)
"""
import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ['LazyModuleMixin']


class LazyModuleMixin:
    """Mixin for modules whose parameters are inferred from the first input (see the module docstring)."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materialize each uninitialized parameter or buffer that the state dict holds an initialized value for."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f'module {self._get_name()} has not been fully initialized')
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, '_initialize_hook')
        delattr(module, '_load_hook')
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
