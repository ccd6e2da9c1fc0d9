"""The operator layer: declarations (registry.py) and the rules every backend shares."""
import importlib
import pkgutil

_SKIP = {'registry', 'adapters', 'public'}


def load_all():
    """Import every declaration module (each declares its operators on import)."""
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name not in _SKIP and not m.name.startswith('_'):
            importlib.import_module(f'{__name__}.{m.name}')
