"""ember.library: register operators and kernels from Python, as torch.library.

ember's own backends use exactly these calls (ARCHITECTURE rule 8), so a user
can add an operator, a kernel for a new device, or a fallback for every
operator the same way ember does. Backend kernels take arrays and return
arrays; kernels for other keys (Autograd, CompositeImplicitAutograd, ...) take
tensors.

>>> import ember, numpy as np
>>> with ember.library.Library('demo', 'DEF') as lib:
...     _ = lib.define('twice(Tensor x) -> Tensor')
...     lib.impl('twice', lambda x: x * 2, 'CPU')
...     ember.ops.demo.twice(ember.tensor([1., 2.]))
tensor([2., 4.])
"""
from ._core.dispatch_key import DispatchKey, BACKEND_KEYS
from ._dispatch import dispatcher
from ._ops import adapters

_BACKENDS = frozenset(BACKEND_KEYS)


def _key(k):
    if isinstance(k, DispatchKey):
        return k
    aliases = {'CompositeImplicit': 'CompositeImplicitAutograd', 'Default': 'CompositeExplicitAutograd',
               'Autograd': 'Autograd', 'AutogradCPU': 'Autograd', 'AutogradCUDA': 'Autograd'}
    try:
        return DispatchKey[aliases.get(k, k)]
    except KeyError:
        raise ValueError(f"unknown dispatch key '{k}'; expected one of {[d.name for d in DispatchKey]}") from None


class Library:
    """A set of registrations in one namespace; ``kind`` is 'DEF', 'FRAGMENT' or 'IMPL'.

    Used as a context manager (or with ``_destroy()``), it undoes every
    registration it made, which keeps tests from leaking kernels.
    """

    def __init__(self, ns, kind='DEF'):
        if kind not in ('DEF', 'FRAGMENT', 'IMPL'):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns, self.kind = ns, kind
        self._defs, self._impls, self._fallbacks = [], [], []

    def define(self, schema, alias_analysis='', *, tags=(), meta=None):
        """Define ``schema`` in this namespace; ``meta`` optionally gives its shape rule."""
        if self.kind == 'IMPL':
            raise RuntimeError("define() is not allowed on an IMPL library")
        if meta is not None:        # a declaration of its own, so Meta and the generated kernels find the shape rule
            from ._ops.registry import OpDecl
            op = OpDecl(schema, meta=meta, tags=tags, ns=self.ns, method=False, function=False).op
        else:
            op = dispatcher.define(self.ns, schema, decl=None, tags=tuple(tags))
        self._defs.append(op)
        return op.schema.full_name

    def impl(self, name, fn=None, dispatch_key='CompositeImplicitAutograd', *, with_keyset=False):
        """Register ``fn`` for ``name`` at ``dispatch_key``; usable as a decorator when ``fn`` is omitted.

        For a backend key, ``fn`` takes arrays and returns arrays (on Meta, ``fn=None``
        means "use the operator's meta function"). For other keys ``fn`` takes tensors;
        ``with_keyset=True`` passes the dispatch key set first so ``fn`` can redispatch.
        """
        if fn is None and _key(dispatch_key) != DispatchKey.Meta:
            return lambda f: (self.impl(name, f, dispatch_key, with_keyset=with_keyset), f)[1]
        op = self._find(name)
        key = _key(dispatch_key)
        if key == DispatchKey.SparseCPU or (key in _BACKENDS and 'sparse' in op.tags):
            from ._ops.sparse import sparse_kernel      # COOArrays in or out (NOTE [sparse COO layout])
            kernel = sparse_kernel(op, fn)
        elif key in _BACKENDS:
            kernel = adapters.functional_kernel(op, fn, key)
        elif with_keyset:
            kernel = fn
        else:
            kernel = lambda ks, *args: fn(*args)
            kernel.__qualname__ = getattr(fn, '__qualname__', repr(fn))
        self._register(op, key, kernel)
        decl = op.decl
        if key in _BACKENDS and decl is not None and op is getattr(decl, 'op', None):
            if decl.inplace_op is not None:
                self._register(decl.inplace_op, key, adapters.inplace_kernel(decl, kernel))
            if decl.out_op is not None:
                self._register(decl.out_op, key, adapters.out_kernel(decl, kernel))
        return fn

    def fallback(self, fn, dispatch_key, *, with_keyset=False):
        """``fn(op, *args)`` (or ``fn(op, keyset, *args)``) runs for every op lacking a kernel for the key."""
        key = _key(dispatch_key)
        fb = fn if with_keyset else (lambda op, ks, *args: fn(op, *args))
        dispatcher.register_fallback(key, fb)
        self._fallbacks.append(key)

    def _register(self, op, key, kernel):
        op.register(key, kernel)
        self._impls.append((op, key))

    def _find(self, name):
        qual = name if '::' in name else f'{self.ns}::{name}'
        ops = dispatcher.all_ops()
        if qual in ops:
            return ops[qual]
        cands = [o for q, o in ops.items() if q.split('.')[0] == qual]
        if not cands:
            raise RuntimeError(f"operator {qual} does not exist; define it first")
        return min(cands, key=lambda o: len(o.schema.overload))   # the default overload

    def _destroy(self):
        for op, key in reversed(self._impls):
            op.unregister(key)
        for key in self._fallbacks:
            dispatcher.unregister_fallback(key)
        for op in self._defs:
            dispatcher.undefine(op)
            from . import ops as _ops_ns
            _ops_ns._forget(op)
        self._defs, self._impls, self._fallbacks = [], [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._destroy()


def impl(qualname, dispatch_key, *, lib=None):
    """Decorator form: ``@ember.library.impl('mylib::op', 'CPU')``."""
    ns = qualname.split('::')[0]
    lib = lib or Library(ns, 'FRAGMENT')
    return lambda fn: lib.impl(qualname, fn, dispatch_key)


def register_device(name, allocator=None, to_host=None, from_host=None, xp=None, key='PrivateUse1'):
    """Register a new device type (PrivateUse1-style) so ``ember.device(name)`` and ``tensor.to(name)`` work."""
    import numpy as np
    from ._core import device as dev
    iface = dev.DeviceInterface(name, _key(key), allocator, xp or np, to_host, from_host)
    return dev.register_device(iface)
