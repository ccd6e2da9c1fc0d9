"""Public functions written in Python rather than declared operators (torch's torch/functional.py and the
Python half of torch/_tensor.py): varargs forms (``meshgrid(a, b)``), Python-value results (``unique``
returning a tuple, ``nonzero(as_tuple=True)``), torch's aliases, indexing (``Tensor.__getitem__``), and
signatures no schema expresses (``var(x, unbiased)``, ``normal(mean, std, size)``). Each calls operators
through ``ember.ops.aten`` only (tests/test_layering.py). Where torch's signature is several operator overloads
chosen by type, that is an overload group declared with the operators (ember/_ops/overloads.py), not code here.
One module per family; each lists its public names in ``__all__`` and may attach methods to ``ember.Tensor``.
Loaded after the generated operator functions.
"""
import importlib
import pkgutil

__all__ = []
for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _mod = importlib.import_module(f'{__name__}.{_m.name}')
    for _n in getattr(_mod, '__all__', ()):
        globals()[_n] = getattr(_mod, _n)
        __all__.append(_n)
