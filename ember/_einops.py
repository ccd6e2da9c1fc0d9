"""einops on ember tensors with ``import ember as torch``.

einops picks a backend by the type of the tensor it is given, among the backends of frameworks already imported;
its torch backend answers for ``torch.Tensor`` only, so ember tensors were "unknown to einops" unless the program
ran under ``ember run`` (where ember's tensors are torch's). This module adds a backend for ember, the torch
backend with ember as its ``torch``; ``ember/__init__`` registers it when einops is imported, before or after ember.
"""
import importlib.abc
import importlib.util
import sys


def register():
    from einops import _backends

    if any(getattr(c, 'framework_name', None) == 'ember' for c in _backends.AbstractBackend.__subclasses__()) or \
            not hasattr(_backends, 'TorchBackend'):
        return

    class EmberBackend(_backends.TorchBackend):
        framework_name = 'ember'

        def __init__(self):        # torch's backend without its torch._dynamo registrations
            import ember
            self.torch = ember

        def is_appropriate_type(self, tensor):
            return isinstance(tensor, self.torch.Tensor)

    # einops finds backends through AbstractBackend.__subclasses__(), which holds classes weakly: a class made in this
    # function would be collected with the next garbage collection
    _BACKENDS.append(EmberBackend)


_BACKENDS = []


class _AfterEinops(importlib.abc.MetaPathFinder):
    """Registers the backend right after ``einops._backends`` is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != 'einops._backends':
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            sys.modules[name] = module
            register()
        spec.loader.exec_module = exec_module
        return spec


def install():
    if 'einops._backends' in sys.modules:
        register()
    elif not any(isinstance(f, _AfterEinops) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterEinops())
