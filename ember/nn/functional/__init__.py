"""ember.nn.functional: operators declared with ``nn=True`` (installed here by _ops/public.py) and the
hand-written functional API, one ``_<family>.py`` module per family, each listing ``__all__``. The
hand-written functions are wrapped here, once, to honour ``__torch_function__`` as torch's do (the generated
ones check in the dispatcher; NOTE [__torch_function__] in ember/_dispatch/torch_function.py)."""
import importlib
import pkgutil
import types

from ..._ops.public import NN_FUNCTIONAL as _GENERATED
from ...overrides import public_function as _public_function


def _load():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{__name__}.{m.name}')
        for n in getattr(mod, '__all__', ()):
            fn = getattr(mod, n)
            if isinstance(fn, types.FunctionType) and fn is not _GENERATED.get(n) and not hasattr(fn, '_op'):
                fn = _public_function(fn)
            globals()[n] = fn


globals().update(_GENERATED)
_load()
