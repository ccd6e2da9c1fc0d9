"""The CPU backend: NumPy kernels, registered through the public ember.library API.

Each kernel module holds a ``KERNELS`` table, operator name -> array function.
Kernel modules import NumPy (and SciPy where it is the standard) and nothing of
ember's (tests/test_layering.py checks it).
"""
import importlib
import pkgutil

from ...library import Library

_lib = Library('aten', 'IMPL')


def register_all():
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{__name__}.{m.name}')
        for name, fn in getattr(mod, 'KERNELS', {}).items():
            _lib.impl(name, fn, 'CPU')
