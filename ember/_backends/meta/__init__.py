"""The Meta backend: every declared operator's meta function, and no data.

Registering ``None`` for the Meta key tells ember.library to build the kernel
from the operator's meta function; view operators need nothing more (their
meta function already gives sizes, strides and offset).
"""
from ...library import Library
from ..._ops.registry import BY_OP

_lib = Library('aten', 'IMPL')


def register_all():
    for qual, decl in BY_OP.items():
        if decl.meta is not None and decl.explicit is None and decl.composite is None:
            _lib.impl(qual, None, 'Meta')
