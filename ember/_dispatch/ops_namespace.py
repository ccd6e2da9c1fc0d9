"""The operator namespaces behind ``ember.ops`` (``ember.ops.aten.add.Tensor``, as torch.ops), and the one way
ember's own code calls an operator from another: ``aten.<name>.<overload>(...)``.

A namespace and each packet cache what they looked up as plain attributes, so a call through them costs a
couple of attribute reads; ``forget`` drops those caches when a scoped Library removes an operator.
"""

import keyword
import types

from . import dispatcher


_KEYWORDS = frozenset(keyword.kwlist)


class OpOverloadPacket:
    """All overloads of one operator name; calling it calls the default overload."""

    def __init__(self, ns, name):
        self._ns, self._name = ns, name

    def _overloads(self):
        return dispatcher.overloads_of(f'{self._ns}::{self._name}')

    def __getattr__(self, ov):
        if ov.startswith('__'):
            raise AttributeError(ov)
        ops = self._overloads()
        key = '' if ov == 'default' else ov[:-1] if ov[:-1] in _KEYWORDS and ov.endswith('_') else ov  # from_: 'from'
        if key not in ops:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no overload name '{ov}'")
        setattr(self, ov, ops[key])         # cached: the next lookup is a plain attribute (see forget)
        return ops[key]

    def overloads(self):
        return [k or 'default' for k in self._overloads()]

    def __deepcopy__(self, memo):
        return self

    def __call__(self, *args, **kwargs):
        ops = self._overloads()
        if not ops:
            raise NotImplementedError(f"operator {self._ns}::{self._name} does not exist")
        default = ops.get('') or min(ops.values(), key=lambda o: ('out' in o.schema.overload, len(o.schema.overload)))
        return default.call(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self):      # torch's spelling, e.g. aten.mm
        return f'{self._ns}.{self._name}'


class _Namespace(types.ModuleType):
    def __init__(self, ns):
        super().__init__(f'ember.ops.{ns}')
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        if not dispatcher.overloads_of(f'{self._ns}::{name}'):
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")
        packet = OpOverloadPacket(self._ns, name)
        setattr(self, name, packet)         # cached: the next lookup is a plain attribute (see forget)
        return packet


_namespaces = {}


def namespace(ns):
    """The namespace object for ``ns`` (one per name)."""
    space = _namespaces.get(ns)
    if space is None:
        space = _namespaces[ns] = _Namespace(ns)
    return space


def forget(op):
    """Drop the cached packet of an operator a scoped Library has just removed."""
    space = _namespaces.get(op.namespace)
    if space is not None:
        space.__dict__.pop(op.schema.name, None)


aten = namespace('aten')
