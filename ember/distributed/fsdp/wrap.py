"""torch.distributed.fsdp.wrap: auto-wrap policies, the functions that say which submodules FSDP would wrap.

They are plain predicates over modules and parameter counts, as torch's, so they answer here too; ``wrap`` outside
``enable_wrap`` returns the module unchanged, and inside it would wrap in FSDP, which ember does not have.
"""
import contextlib

from ...nn import MultiheadAttention, ModuleList, ModuleDict

__all__ = ['always_wrap_policy', 'lambda_auto_wrap_policy', 'transformer_auto_wrap_policy',
           'size_based_auto_wrap_policy', 'ModuleWrapPolicy', 'CustomPolicy', 'enable_wrap', 'wrap']


def always_wrap_policy(*args, **kwargs):
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    """Recurse everywhere; wrap where ``lambda_fn(module)`` says so."""
    return True if recurse else lambda_fn(module)


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Recurse everywhere; wrap the modules of the given transformer layer classes."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module once the parameters not yet wrapped below it reach ``min_num_params``."""
    force_leaf = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    exclude = size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None else exclude_wrap_modules
    big = nonwrapped_numel >= min_num_params
    if recurse:
        return big and not isinstance(module, tuple(force_leaf))
    return big and not isinstance(module, tuple(exclude))


size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {MultiheadAttention}      # torch's defaults
size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}


class ModuleWrapPolicy:
    """Wrap every module whose class is one of ``module_classes``."""

    def __init__(self, module_classes):
        self._module_classes = set(module_classes)

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else isinstance(module, tuple(self._module_classes))

    def __repr__(self):
        return f'{type(self).__name__}({self._module_classes})'


class CustomPolicy:
    """Wrap where ``lambda_fn(module)`` is true (or returns a dict of FSDP arguments)."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else bool(self._lambda_fn(module))


_wrapping = []


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    _wrapping.append((wrapper_cls, wrapper_kwargs))
    try:
        yield
    finally:
        _wrapping.pop()


def wrap(module, **wrap_overrides):
    """The module itself outside ``enable_wrap``; inside it, the module in the enabled wrapper class."""
    if not _wrapping:
        return module
    cls, kwargs = _wrapping[-1]
    return cls(module, **{**kwargs, **wrap_overrides})
