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
        # torch's names for it: dispatch modes key their tables by ``func.overloadpacket.__name__``
        self.__name__ = self.__qualname__ = name
        self._qualified_op_name = f'{ns}::{name}'

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


class HigherOrderOperator:
    """An operator that takes functions as arguments (torch._ops.HigherOrderOperator): ``ember.ops.higher_order.
    <name>``, what a traced graph's node calls (``cond``, ``out_dtype``). Called, it runs its eager meaning:
    ``fn``, or the kernel a subclass registers with ``py_impl`` (torch's way: ``@op.py_impl(DispatchKey.
    CompositeExplicitAutograd)``). Creating one makes it ``ember.ops.higher_order.<name>``, as torch does."""
    namespace = 'higher_order'

    def __init__(self, name, fn=None, *, cacheable=False):
        self.__name__ = self._name = name
        self._fn = fn
        self._cacheable = cacheable
        self.py_kernels = {}
        setattr(namespace(self.namespace), name, self)

    def name(self):
        return self._name

    def cacheable(self):
        return self._cacheable

    def py_impl(self, key):
        """Register the decorated function as this operator's kernel for ``key``; the CompositeExplicitAutograd
        (or CPU) one is its eager meaning."""
        def register(fn):
            self.py_kernels[key] = fn
            if self._fn is None or str(key).rsplit('.', 1)[-1] in ('CompositeExplicitAutograd', 'CPU'):
                self._fn = fn
            return fn
        return register

    def __call__(self, *args, **kwargs):
        if self._fn is None:
            raise NotImplementedError(f"higher order operator {self._name} has no eager kernel (py_impl one)")
        return self._fn(*args, **kwargs)

    def __str__(self):
        return self._name

    def __repr__(self):
        return f'<HigherOrderOperator {self.namespace}.{self._name}>'

    def __reduce__(self):           # a pickled graph names the operator, which is one object per process
        return (getattr, (namespace(self.namespace), self._name))


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
