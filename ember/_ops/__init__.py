"""The operator layer: declarations (registry.py) and the rules every backend shares.

Under ``ember run`` this package is ``torch._ops``, whose public names are the operator objects' classes; they
live in the dispatcher and are named here, as torch names them: ``OpOverload`` (``ember.ops.aten.add.Tensor``),
``OpOverloadPacket`` (``ember.ops.aten.add``), ``HigherOrderOperator`` (``ember.ops.higher_order.cond``).

>>> import ember
>>> from ember._ops import OpOverload, OpOverloadPacket
>>> isinstance(ember.ops.aten.add.Tensor, OpOverload), isinstance(ember.ops.aten.add, OpOverloadPacket)
(True, True)
"""
import importlib
import pkgutil

from .._dispatch.dispatcher import OpOverload  # noqa: F401
from .._dispatch.ops_namespace import OpOverloadPacket, HigherOrderOperator  # noqa: F401

_SKIP = {'registry', 'adapters', 'public'}


def load_all():
    """Import every declaration module (each declares its operators on import)."""
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name not in _SKIP and not m.name.startswith('_'):
            importlib.import_module(f'{__name__}.{m.name}')
