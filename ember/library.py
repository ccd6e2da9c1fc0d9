"""ember.library: register operators and kernels from Python, as torch.library.

ember's own backends use exactly these calls (ARCHITECTURE rule 8), so a user
can add an operator, a kernel for a new device, or a fallback for every
operator the same way ember does. Backend kernels take arrays and return
arrays; kernels for other keys (Autograd, CompositeImplicitAutograd, ...) take
tensors.

>>> import ember, numpy as np
>>> with ember.library.Library('demo', 'DEF') as lib:
...     _ = lib.define('twice(Tensor x) -> Tensor')
...     _ = lib.impl('twice', lambda x: x * 2, 'CPU')
...     ember.ops.demo.twice(ember.tensor([1., 2.]))
tensor([2., 4.])

NOTE [kernel signatures]: a kernel is called with the operator's schema arguments, in schema order,
positionally: ``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)`` calls ``kernel(self, other,
alpha)``. For a backend key (CPU, PrivateUse1, ...) each Tensor arrives as its array (NumPy's, or the device's
array type) and the kernel returns a new array (a tuple of them for several outputs); for any other key
(CompositeImplicitAutograd, Autograd, ...) it takes and returns Tensors. torch's tutorials write device
kernels on Tensors, and a learner copying one would get arrays in and hand a Tensor back. ember refuses that
rather than accepting it: which form a function expects cannot be known before it runs (only what it
returns can be seen), a Tensor-level kernel for a device would run ember operators on that same device
from inside its own kernel, and the array boundary is the layer rule a learner is here to see (ARCHITECTURE
rule 2). So the mistake is reported where it is made, naming the operator, the key, the kernel and the
signature it must have: at ``impl()`` when the function cannot take the schema's arguments, at the
first call when it returns a Tensor or anything but an array (or, at a Tensor key, an array), or calls a
Tensor method on an array (a note on the AttributeError), or returns a result of the wrong size for the
operator's meta function. The checks run only when something already failed (the generated adapter's
``except`` clause) or once at registration, so correct kernels pay nothing.
"""
import numpy as np

from ._core.dispatch_key import DispatchKey, BACKEND_KEYS
from ._core.tensor_impl import TensorImpl
from ._dispatch import dispatcher
from ._ops import adapters

_BACKENDS = frozenset(BACKEND_KEYS)
_SPARSE_KEYS = frozenset((DispatchKey.SparseCPU, DispatchKey.SparseCsrCPU))


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
        if fn is not None:
            check_signature(op, fn, key, with_keyset)
        if key is DispatchKey.QuantizedCPU or (key in _BACKENDS and 'quantized' in op.tags):
            from ._ops.quantized import quantized_kernel    # QArrays in or out (NOTE [quantized tensors])
            kernel = quantized_kernel(op, fn)
        elif key in _SPARSE_KEYS or (key in _BACKENDS and 'sparse' in op.tags):
            from ._ops.sparse import sparse_kernel      # COO or compressed arrays in or out (NOTE [sparse COO layout])
            kernel = sparse_kernel(op, fn, key)
        elif key in _BACKENDS:
            kernel = adapters.functional_kernel(op, fn, key)
        elif with_keyset:
            kernel = fn
        else:
            kernel = _tensor_kernel(op, fn, key)
        self._register(op, key, kernel)
        decl = op.decl
        if key in _SPARSE_KEYS and decl is not None and op is getattr(decl, 'op', None) and \
                decl.inplace_op is not None:
            self._register(decl.inplace_op, key, adapters.sparse_inplace_kernel(decl, kernel))
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

    def _register(self, op, key, kernel, allow_override=False):
        op.register(key, kernel, allow_override)
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


# --- NOTE [kernel signatures]: the checks -------------------------------------------------------------

def kernel_signature(op, fn, key):
    """``('my_add(self, other, alpha)', 'numpy.ndarray')``: how ``fn`` is called for ``op`` at ``key``, and what
    a Tensor argument is there."""
    names = [a.name for a in op.schema.arguments]
    name = getattr(fn, '__name__', None) or 'kernel'
    if key not in _BACKENDS:
        return f"{name}({', '.join(names)})", 'Tensor'
    from ._core import device as _device
    try:
        xp = _device.interface_for_key(key).xp
    except (KeyError, AttributeError):
        xp = np
    return f"{name}({', '.join(names)})", f'{getattr(xp, "__name__", "array")}.ndarray'


def _positional_range(fn):
    """(fewest, most) positional arguments ``fn`` accepts (most is None for ``*args``), or None if unknown."""
    f, bound = (fn.__func__, 1) if hasattr(fn, '__func__') and hasattr(fn, '__self__') else (fn, 0)
    code = getattr(f, '__code__', None)
    if code is None:
        return None                      # a builtin, a ufunc, a callable object: not checked
    n = code.co_argcount - bound
    required = n - len(f.__defaults__ or ())
    kw_required = [k for k in code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
                   if k not in (f.__kwdefaults__ or {})]
    if kw_required:
        return (float('inf'), None)      # a required keyword-only parameter: no positional call can satisfy it
    return max(required, 0), (None if code.co_flags & 0x04 else n)     # 0x04: CO_VARARGS


def check_signature(op, fn, key, with_keyset=False):
    """At ``impl()``: refuse a kernel that cannot take ``op``'s schema arguments positionally."""
    rng = _positional_range(fn)
    if rng is None:
        return
    n = len(op.schema.arguments) + (1 if with_keyset and key not in _BACKENDS else 0)
    lo, hi = rng
    if lo <= n and (hi is None or n <= hi):
        return
    import inspect
    try:
        theirs = f'{getattr(fn, "__name__", "kernel")}{inspect.signature(fn)}'
    except (TypeError, ValueError):
        theirs = repr(fn)
    sig, array = kernel_signature(op, fn, key)
    if with_keyset and key not in _BACKENDS:
        sig = sig.replace('(', '(keyset, ', 1) if op.schema.arguments else sig.replace('()', '(keyset)')
    if key in _BACKENDS:
        form = (f"with {array} for each Tensor argument and the other arguments as Python values, and returns a "
                f"new {array}")
    else:
        form = "with Tensors, and returns Tensors"
    raise TypeError(f"a kernel for {op.name} at {key.name} is called with the operator's {n} argument{'s' * (n != 1)} in schema "
                    f"order, {sig}, {form}; {theirs} cannot take them. Schema: {op.schema.text} "
                    f"(NOTE [kernel signatures] in ember/library.py)")


def _tensor_kernel(op, fn, key):
    """A kernel for a Tensor-level key: refuses an array result at once instead of handing it to the caller."""
    def kernel(ks, *args):
        r = fn(*args)
        if r.__class__ is np.ndarray or (r.__class__ in (tuple, list) and any(isinstance(x, np.ndarray) for x in r)):
            sig, _ = kernel_signature(op, fn, key)
            raise TypeError(f"the {key.name} kernel {getattr(fn, '__qualname__', sig)} registered for {op.name} "
                            f"returned a NumPy array, but kernels for {key.name} take and return Tensors (it is "
                            f"called as {sig}); array kernels are registered for a backend key such as 'CPU' or "
                            f"'PrivateUse1' (NOTE [kernel signatures] in ember/library.py)")
        return r
    kernel.__qualname__ = getattr(fn, '__qualname__', repr(fn))
    return kernel


def impl(qualname, types, func=None, *, lib=None):
    """``impl('mylib::op', 'CPU', fn)``, or as a decorator. A dispatch key (``'CPU'``, ``'Meta'``,
    ``'CompositeImplicitAutograd'``) registers as ``Library.impl`` does, arrays in and out at a backend key
    (NOTE [kernel signatures]); a device type (``'cpu'``, ``'cuda'``) registers a kernel on Tensors, as
    ``register_kernel`` and torch do."""
    if func is None:
        return lambda fn: (impl(qualname, types, fn, lib=lib), fn)[1]
    ns = qualname.split('::')[0]
    lib = lib or Library(ns, 'FRAGMENT')
    for t in (types,) if isinstance(types, str) else types:
        try:
            _key(t)
        except ValueError:
            register_kernel(qualname, t, func, lib=lib)
        else:
            lib.impl(qualname, func, t)
    return func


def register_device(name, allocator=None, to_host=None, from_host=None, xp=None, key='PrivateUse1'):
    """Register a new device type (PrivateUse1-style) so ``ember.device(name)`` and ``tensor.to(name)`` work."""
    import numpy as np
    from ._core import device as dev
    iface = dev.DeviceInterface(name, _key(key), allocator, xp or np, to_host, from_host)
    return dev.register_device(iface)


from ._custom_ops import (CustomOpDef, OpCheckError, custom_op, define, infer_schema, opcheck,  # noqa: E402
                          register_autograd, register_fake, register_kernel)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """The name ``register_fake`` had before torch 2.4 (torch keeps it as an alias): register ``func`` as the
    fake (Meta) kernel of ``qualname``."""
    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + (func is not None))
