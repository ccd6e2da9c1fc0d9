"""``ember.ops.<namespace>.<name>[.<overload>]``: every registered operator, as torch.ops.

>>> import ember
>>> ember.ops.aten.add.Tensor(ember.ones(2), ember.ones(2))
tensor([2., 2.])
"""
import types

from ._dispatch import dispatcher


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
        key = '' if ov == 'default' else ov
        if key not in ops:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no overload name '{ov}'")
        return ops[key]

    def overloads(self):
        return [k or 'default' for k in self._overloads()]

    def __call__(self, *args, **kwargs):
        ops = self._overloads()
        if not ops:
            raise NotImplementedError(f"operator {self._ns}::{self._name} does not exist")
        default = ops.get('') or min(ops.values(), key=lambda o: ('out' in o.schema.overload, len(o.schema.overload)))
        return default.call(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"


class _Namespace(types.ModuleType):
    def __init__(self, ns):
        super().__init__(f'ember.ops.{ns}')
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        if not dispatcher.overloads_of(f'{self._ns}::{name}'):
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute '{name}'")
        return OpOverloadPacket(self._ns, name)


_namespaces = {}


def __getattr__(ns):
    if ns.startswith('__'):
        raise AttributeError(ns)
    if ns not in _namespaces:
        _namespaces[ns] = _Namespace(ns)
    return _namespaces[ns]


def _forget(op):
    """Called when a scoped Library removes an operator (packets look ops up on each call)."""
