"""OpInfo records, one module per operator family; importing the package loads them all into OPS."""
import importlib
import pkgutil

from .core import OPS, OpInfo, S, Arg, op  # noqa: F401

for _m in pkgutil.iter_modules(__path__):
    if _m.name != 'core':
        importlib.import_module(f'{__name__}.{_m.name}')
