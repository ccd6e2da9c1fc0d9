"""Hand-written public functions that are not single operators: overload choosers (``ember.max``
picks max / max.dim / maximum), Python-value wrappers, and Tensor methods with torch's flexible
signatures. One module per family; each lists its public names in ``__all__`` and may attach
methods to ``ember.Tensor``. Loaded after the generated operator functions, so they can refine them.
"""
import importlib
import pkgutil

__all__ = []
for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _mod = importlib.import_module(f'{__name__}.{_m.name}')
    for _n in getattr(_mod, '__all__', ()):
        globals()[_n] = getattr(_mod, _n)
        __all__.append(_n)
