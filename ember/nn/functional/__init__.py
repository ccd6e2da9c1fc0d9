"""ember.nn.functional: operators declared with ``nn=True`` (installed here by _ops/public.py) and the
hand-written functional API, one ``_<family>.py`` module per family, each listing ``__all__``."""
import importlib
import pkgutil

from ..._ops.public import NN_FUNCTIONAL as _GENERATED


def _load():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{__name__}.{m.name}')
        for n in getattr(mod, '__all__', ()):
            globals()[n] = getattr(mod, n)


globals().update(_GENERATED)
_load()
