"""The dispatcher: operators, their kernel tables, and the call path.

Each operator is an `OpOverload` with a kernel table keyed by `DispatchKey`.
A call computes the key set of its tensor arguments, adds the thread-local
include set, removes the exclude set, and runs the kernel of the highest key.
The (key set -> kernel) answer is cached per operator and the cache is cleared
by every registration. Kernels in the table take ``(keyset, *args)`` so a
kernel can redispatch "below" itself: ``op.redispatch(ks & below(key), *args)``.

NOTE [record function] -- how a profiler sees operators at no cost when none is active. The generated
entry point calls the kernel cached for its key set and asks ``resolve`` only on a miss. While an observer
is registered (``add_observer``; ember.profiler is one), ``resolve`` caches for the entry point a wrapper
that reports the call to the observers and then runs the kernel. Redispatches (the Autograd kernel calling
below itself) have a cache of their own (``redispatch_cache``) that never holds wrappers, so one operator
call is one event, as torch records in ``Dispatcher::call`` and not in ``redispatch``, and an operator
called inside another's kernel (a composite's pieces, a formula's operators) is a nested event. Adding or
removing an observer clears the caches, so with none registered the entry points run exactly the
code they ran before profilers existed. The autograd engine reports its nodes to the same observers.

NOTE [fallback order] -- written once, in `OpOverload._lookup`:
  1. the kernel registered for the key itself;
  2. CompositeImplicitAutograd (for any key): a decomposition into other ops;
  3. for a backend key: CompositeExplicitAutograd;
  4. the per-key fallback for all operators (Python modes, Autograd);
  5. keys with nothing registered fall through to the next key below;
  6. nothing left: NotImplementedError naming the operator and the backend.
"""
import threading

import numpy as np

from .codegen import compile_function
from .._core.dispatch_key import (DispatchKey, BACKEND_KEYS, BACKEND_MASK, PYTHON_BIT, below, keyset_names)
from .._core import device as _device_mod
from .schema import parse_schema, TorchSchema


class _Name(str):
    """An operator's qualified name ('aten::add.Tensor'), which torch code also calls: ``op.name()``."""
    __slots__ = ()

    def __call__(self):
        return str(self)
from .torch_function import dispatch_from_entry_point, NOT_HANDLED, public_call

_BACKEND_SET = frozenset(BACKEND_KEYS)
_CIA = DispatchKey.CompositeImplicitAutograd
_TORCH_FUNCTION = DispatchKey.PythonTorchFunction
_CEA = DispatchKey.CompositeExplicitAutograd
_SPARSE = DispatchKey.SparseCPU
_SPARSE_CSR = DispatchKey.SparseCsrCPU
_QUANTIZED = DispatchKey.QuantizedCPU


class _DispatchState(threading.local):
    """Per-thread include/exclude sets (ints). ``keep`` is the complement of the exclude set."""

    def __init__(self):
        self.include = 0
        self.keep = -1


STATE = _DispatchState()
_FALLBACKS = {}          # DispatchKey -> fallback(op, ks, *args)
_OPS = {}                # 'aten::add.Tensor' -> OpOverload
_BY_NAME = {}            # 'aten::add' -> {overload name: OpOverload}  (ember.ops lookups)
_TRACE = []              # active trace printers (see ember.debug.trace_dispatch)
OBSERVERS = []           # active operator observers (ember.profiler): NOTE [record function]


class OpOverload:
    """One operator overload, e.g. ``ember.ops.aten.add.Tensor``.

    Calling it dispatches; ``decl`` is ember's declaration of the operator
    (meta function, derivative, kernels) when it has one.
    """

    def __init__(self, namespace, schema_text, decl=None, tags=()):
        self.schema = parse_schema(schema_text)
        self.namespace = namespace
        self.name = _Name(f'{namespace}::{self.schema.full_name}')
        self.decl = decl
        self.tags = tags
        self.kernels = {}
        self.cache = {}             # key set -> kernel for the entry point (a recording wrapper while observed)
        self.redispatch_cache = {}  # key set -> kernel for redispatch: never a wrapper (NOTE [record function])
        self.public = None      # the public function (ember.add) that __torch_function__ receives as func
        self.call = _generate_caller(self)
        self._operator_call = None
        self.__name__ = self.schema.name
        self.__qualname__ = self.schema.full_name

    # calling the overload calls its generated entry point directly: a property hands Python the bound
    # function, so ``aten.add.Tensor(x, y)`` costs no extra frame over ``op.call(x, y)``
    __call__ = property(lambda self: self.call)

    @property
    def operator_call(self):
        """The entry point of a Python operator (``Tensor.__add__``): NotImplemented for an operand it cannot take
        (NOTE [operators return NotImplemented]); compiled on first use."""
        if self._operator_call is None:
            self._operator_call = _generate_caller(self, operator=True)
        return self._operator_call

    def call_in_schema_order(self, args):
        """Call with every argument given in schema order, keyword-only ones passed by name (for code that
        rewrites an operator's arguments generically: forward AD's tangent rules, vmap's batching rules)."""
        pos, kw = [], {}
        for a, v in zip(self.schema.arguments, args):
            if a.kwarg_only:
                kw[a.name] = v
            else:
                pos.append(v)
        return self.call(*pos, **kw)

    # torch's OpOverload attributes that __torch_dispatch__ code reads
    @property
    def _schema(self):
        s = self.__dict__.get('_torch_schema')
        if s is None:
            s = self.__dict__['_torch_schema'] = TorchSchema(self.namespace, self.schema)
        return s

    @property
    def overloadpacket(self):
        from . import ops_namespace
        return getattr(ops_namespace.namespace(self.namespace), self.schema.name)

    _overloadpacket = overloadpacket        # the attribute torch's own OpOverload keeps it in

    def __deepcopy__(self, memo):           # an operator is a singleton, as torch's: a copied dict keeps its keys
        return self

    @property
    def _overloadname(self):
        return self.schema.overload or 'default'

    @property
    def _opname(self):
        return self.schema.name

    @property
    def is_view(self):
        r = self._schema.returns
        return bool(r) and r[0].alias_info is not None and not r[0].alias_info.is_write

    def __repr__(self):
        return f'<OpOverload {self.name}>'

    def __str__(self):      # torch's spelling, e.g. aten.mul.Tensor / aten.ones.default
        return f'{self.namespace}.{self.schema.name}.{self.schema.overload or "default"}'

    def __reduce__(self):
        return (lookup_op, (self.name,))

    # --- kernel table -------------------------------------------------------
    def register(self, key, kernel, allow_override=False):
        key = DispatchKey(key)
        if key in self.kernels and not allow_override:
            raise RuntimeError(f"This is not allowed since there's already a kernel registered from python "
                               f"overriding {self.name}'s behavior for {key.name} dispatch key and "
                               f"{self.namespace} namespace.")
        self.kernels[key] = kernel
        self._clear_cache()

    def unregister(self, key):
        self.kernels.pop(DispatchKey(key), None)
        self._clear_cache()

    def _clear_cache(self):
        # an operator's resolution reads its own kernel table and the fallbacks only, so a kernel (un)registered
        # for it invalidates its own cache; a fallback change clears every operator's (clear_caches). Clearing
        # every cache on each of the ~3,000 registrations at import was quadratic (0.2 s of `import ember`).
        self.cache.clear()
        self.redispatch_cache.clear()

    def has_kernel_for(self, key):
        return DispatchKey(key) in self.kernels

    # --- resolution -----------------------------------------------------------
    def resolve(self, ks):
        """The kernel the entry point runs for key set ``ks`` (cached)."""
        kernel, key = self._lookup(ks)
        if _TRACE:
            return _traced(self, ks, key, kernel)
        if OBSERVERS:
            kernel = _observed(self, kernel)
        self.cache[ks] = kernel
        return kernel

    def _lookup(self, ks):
        while ks > 0:
            key = DispatchKey(ks.bit_length() - 1)
            k = self.kernels.get(key)
            if k is not None:
                return k, key
            if key is _TORCH_FUNCTION:      # torch checks __torch_function__ before any operator runs, so a
                fb = _FALLBACKS.get(key)    # composite's handler sees the composite (flatten), not its pieces
                if fb is not None:
                    return (lambda ks_, *args, _fb=fb: _fb(self, ks_, *args)), key
            k = self.kernels.get(_CIA)
            if k is not None:
                return k, _CIA
            if key is _SPARSE or key is _SPARSE_CSR or key is _QUANTIZED:   # CompositeExplicitAutograd kernels
                break                                   # assume strided arrays of real values
            if key in _BACKEND_SET:
                k = self.kernels.get(_CEA)
                if k is not None:
                    return k, _CEA
                break
            fb = _FALLBACKS.get(key)
            if fb is not None:
                return (lambda ks_, *args, _fb=fb: _fb(self, ks_, *args)), key
            ks &= below(key)
        k = self.kernels.get(_CIA)
        if k is not None:       # no tensor at all (an empty Tensor list): a composite still runs, and raises its error
            return k, _CIA
        backend = _backend_name(ks)
        raise NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{backend}' backend. This could be because the "
            f"operator doesn't exist for this backend. '{self.name}' is only available for these backends: "
            f"[{', '.join(k.name for k in self.kernels)}].")

    def redispatch(self, ks, *args):
        """Call the kernel for key set ``ks`` directly (``ks`` already masked below the caller's key)."""
        k = self.redispatch_cache.get(ks)
        if k is None:
            k, key = self._lookup(ks)
            if _TRACE:
                k = _traced(self, ks, key, k)
            else:
                self.redispatch_cache[ks] = k
        return k(ks, *args)


def _backend_name(ks):
    if ks >> int(_SPARSE_CSR) & 1:
        return 'SparseCsrCPU'
    if ks >> int(_SPARSE) & 1:
        return 'SparseCPU'
    if ks >> int(_QUANTIZED) & 1:
        return 'QuantizedCPU'
    for k in BACKEND_KEYS:
        if ks >> int(k) & 1:
            try:
                return _device_mod.interface_for_key(k).name.upper() if k != DispatchKey.Meta else 'Meta'
            except KeyError:
                return k.name
    return 'Undefined'


def clear_caches():
    for op in _OPS.values():
        op.cache.clear()
        op.redispatch_cache.clear()


def register_fallback(key, fn):
    """``fn(op, ks, *args)`` runs for every operator that has no kernel for ``key``."""
    _FALLBACKS[DispatchKey(key)] = fn
    clear_caches()


def unregister_fallback(key):
    _FALLBACKS.pop(DispatchKey(key), None)
    clear_caches()


def _traced(op, ks, key, kernel):
    def run(ks_, *args):
        name = getattr(kernel, '__qualname__', repr(kernel))
        for emit in _TRACE:
            emit(f'{op.name:<32} {keyset_names(ks):<44} -> {key.name:<26} {name}')
        return kernel(ks_, *args)
    return run


def add_observer(observer):
    """Report every operator call to ``observer`` until ``remove_observer``: ``observer.op_enter(op, args)``
    before the kernel runs returns a handle, ``observer.op_exit(handle, result)`` after it (``result`` is None
    when the kernel raised); ``range_enter(name)`` / ``range_exit(handle)`` mark other ranges (autograd nodes,
    ``record_function``). NOTE [record function]."""
    OBSERVERS.append(observer)
    _refresh_observers()


def remove_observer(observer):
    if observer in OBSERVERS:
        OBSERVERS.remove(observer)
    _refresh_observers()


class _FanOut:
    """Several observers at once, seen as one."""

    def __init__(self, observers):
        self.observers = observers

    def op_enter(self, op, args):
        return [o.op_enter(op, args) for o in self.observers]

    def op_exit(self, handles, result):
        for o, h in zip(reversed(self.observers), reversed(handles)):
            o.op_exit(h, result)

    def range_enter(self, name, category='cpu_op'):
        return [o.range_enter(name, category) for o in self.observers]

    def range_exit(self, handles):
        for o, h in zip(reversed(self.observers), reversed(handles)):
            o.range_exit(h)


OBSERVER = None         # what the recording wrappers report to: the one observer, or a _FanOut of several


def _refresh_observers():
    global OBSERVER
    OBSERVER = None if not OBSERVERS else OBSERVERS[0] if len(OBSERVERS) == 1 else _FanOut(tuple(OBSERVERS))
    clear_caches()


def _observed(op, kernel):
    def run(ks, *args):
        obs = OBSERVER
        if obs is None:         # the last observer left while another thread held this wrapper
            return kernel(ks, *args)
        h = obs.op_enter(op, args)
        try:
            result = kernel(ks, *args)
        except BaseException:
            obs.op_exit(h, None)
            raise
        obs.op_exit(h, result)
        return result
    run.__qualname__ = getattr(kernel, '__qualname__', repr(kernel))
    return run


def observed_call(name, fn, *args):
    """``fn(*args)`` reported to the observers as a range called ``name``: the autograd engine's nodes,
    NOTE [record function]."""
    obs = OBSERVER
    if obs is None:
        return fn(*args)
    h = obs.range_enter(name)
    try:
        return fn(*args)
    finally:
        obs.range_exit(h)


def lookup_op(qualname):
    return _OPS[qualname]


def all_ops():
    return dict(_OPS)


def define(namespace, schema_text, decl=None, tags=()):
    op = OpOverload(namespace, schema_text, decl, tags)
    if op.name in _OPS:
        raise RuntimeError(f"Tried to register an operator ({op.schema}) with the same name and overload name "
                           f"multiple times.")
    _OPS[op.name] = op
    _BY_NAME.setdefault(f'{namespace}::{op.schema.name}', {})[op.schema.overload] = op
    return op


def undefine(op):
    _OPS.pop(op.name, None)
    group = _BY_NAME.get(f'{op.namespace}::{op.schema.name}', {})
    group.pop(op.schema.overload, None)
    if not group:
        _BY_NAME.pop(f'{op.namespace}::{op.schema.name}', None)


def overloads_of(qualname):
    """``{overload: OpOverload}`` of ``'ns::name'`` (empty when undefined)."""
    return _BY_NAME.get(qualname, {})


# --- code generation of each operator's entry point ------------------------

# NumPy's complex64 (not a Python complex, as complex128 is) is not taken as a number: torch's parser reads it with
# ``float()``, dropping the imaginary part with NumPy's ComplexWarning (torchio's RandomSpike); ``bad`` does that
_NUMBER = (int, float, complex, bool, np.integer, np.floating, np.bool_)
_INT = (int, np.integer)
from .._core.dtype import PYTHON_TYPES as _PYTHON_TYPES, dtype as _DTYPE  # noqa: E402
from .._core.dtype import ALIASES as _ALIASES, _BY_NAME  # noqa: E402
_DTYPE_NAMES = {**_BY_NAME, **_ALIASES}
_SEQ = (list, tuple)


def _tensor_types():
    from .._core.tensor_impl import TensorImpl
    return TensorImpl


_CHECKS = {  # base type -> expression that is true for a valid value
    'int': 'isinstance({v}, _INT)',
    'SymInt': 'isinstance({v}, _INT)',
    'float': 'isinstance({v}, _NUMBER)',
    'Scalar': 'isinstance({v}, _NUMBER)',
    'bool': 'isinstance({v}, (bool, np.bool_, int))',
    'str': 'isinstance({v}, str)',
    'int[]': '_intlist_ok({v})',
    'SymInt[]': '_intlist_ok({v})',
    'float[]': 'isinstance({v}, (list, tuple, int, float))',
    'bool[]': 'isinstance({v}, (list, tuple))',
    'ScalarType': '{v}.__class__ is _DT',
}


def _intlist_ok(v):
    if isinstance(v, (list, tuple)):
        for e in v:
            if not (isinstance(e, _INT) or (hasattr(e, '__index__') and not isinstance(e, float))):
                return False
        return True
    return isinstance(v, _INT) or hasattr(v, '__index__')


def _generate_caller(op, operator=False):
    """Write the operator's entry point as Python source with the schema's signature.

    The generated function checks argument types, folds the tensor arguments'
    key sets together, applies the thread-local sets and calls the cached kernel:
    the whole per-call cost of dispatch. With ``operator`` it is the entry point of a Python operator
    (NOTE [operators return NotImplemented]).
    """
    s = op.schema
    params, checks, keys, call_args = [], [], [], []
    seen_kwonly = False
    # NOTE [numpy keyword aliases]: torch's argument parser also takes axis= for dim= and keepdims= for
    # keepdim= (x.sum(axis=1, keepdims=True)); an operator with those arguments gets a **_np catch-all, empty
    # on every other call, and a required dim a sentinel default so that axis= can stand in for it
    args = s.arguments
    # a required dim can take a default only where every later positional argument has one (select's
    # (dim, index) cannot: it keeps dim= alone)
    required = [a.name for i, a in enumerate(args) if a.name in NUMPY_ALIASES and not a.has_default
                and all(b.has_default or b.kwarg_only for b in args[i + 1:])]
    aliased = [a.name for a in args if a.name in NUMPY_ALIASES and (a.has_default or a.name in required)]
    # NOTE [input, not self]: the entry point is also the public function (ember.add), where torch's argument
    # parser calls the schema's ``self`` ``input`` (torch.add(input=a, other=b), and its TypeErrors say
    # "argument 'input'"); a method binds it positionally, so the entry point names it ``input`` everywhere. The
    # one place this differs from torch: ``ember.ops.aten.add.Tensor`` shares the entry point, so a keyword call
    # through the ops namespace says input= where torch's says self= (positional calls, the usual ones, are alike)
    every = '(' + ''.join(f'{_param(a.name)}, ' for a in s.arguments) + ')'    # for NOTE [__torch_function__]
    deprecated = op.namespace == 'aten' and s.name.rstrip('_') in DEPRECATED_SCALAR_FIRST and \
        s.overload in ('', 'Tensor')
    allow_numbers = 'pointwise' in op.tags or 'wraps_numbers' in op.tags
    for i, a in enumerate(s.arguments):
        if a.kwarg_only and not seen_kwonly:
            params.append('*_dep' if deprecated else '*')
            seen_kwonly = True
        n = _param(a.name)
        if a.name in required:
            params.append(f'{n}=_MISSING')
        elif a.base_type == 'ScalarType' and isinstance(a.default, str):     # ``ScalarType? dtype=long``: int64
            params.append(f'{n}=_DTYPES[{a.default!r}]')
        else:
            params.append(f'{n}={_default_src(a.default)}' if a.has_default else n)
        call_args.append(n)
        bt, opt = a.base_type, a.optional
        where = f"argument '{n}' (position {i + 1})"
        if bt == 'Tensor':
            pre = f'{n} is None' if opt else None
            if allow_numbers:
                keys.append(f'    if isinstance({n}, _T): ks |= {n}._keys\n'
                            f'    elif not ({pre + " or " if pre else ""}isinstance({n}, _NUMBER)): return _bad({where!r}, "Tensor", {n}, {every})')
            else:
                keys.append(f'    if isinstance({n}, _T): ks |= {n}._keys\n'
                            f'    elif {"not " + pre if pre else "True"}: return _bad({where!r}, "Tensor", {n}, {every})')
        elif bt == 'Tensor[]':
            keys.append(f'    if not isinstance({n}, _SEQ):\n'
                        f'        {"if " + n + " is not None: " if opt else ""}return _bad({where!r}, "tuple of Tensors", {n}, {every})\n'
                        f'    else:\n'
                        f'        for _t in {n}:\n'
                        f'            if isinstance(_t, _T): ks |= _t._keys\n'
                        f'            elif _t is not None: return _bad({where!r}, "tuple of Tensors", {n}, {every})')
        elif bt in _CHECKS:
            cond = _CHECKS[bt].format(v=n)
            if opt:
                cond = f'{n} is None or {cond}'
            checks.append(f'    if not ({cond}): return _bad({where!r}, {a.type!r}, {n}, {every})')
    factory = not s.tensor_args
    dev_arg = next((a.name for a in s.arguments if a.base_type == 'Device'), None)
    body = ['    ks = 0'] + keys + checks
    if deprecated:      # NOTE [deprecated scalar-first overloads]: extra positional values, only on such a call
        positional = ', '.join(_param(a.name) for a in s.arguments if not a.kwarg_only)
        body.insert(0, f'    if _dep: return _deprecated(_op, ({positional},) + _dep)')
    if aliased:
        params.append('**_np')
        names = ', '.join(aliased) + ','
        defaults = '(' + ''.join(f'{"_MISSING" if n in required else _default_src(next(a.default for a in args if a.name == n))}, '
                                 for n in aliased) + ')'
        body[:0] = [f'    if _np: {names} = _np_aliases({s.full_name!r}, _np, {tuple(aliased)!r}, ({names}), {defaults})'] + \
            [f'    if {n} is _MISSING: raise TypeError("{s.full_name}() missing 1 required positional argument: '
             f"'{n}'\")" for n in required]
    if factory or dev_arg:
        body.append(f'    if ks == 0: ks = _device_keys({dev_arg if dev_arg else "None"})')
    elif allow_numbers:     # only Python numbers where tensors go: torch's TypeError, not a backend error
        first = s.tensor_args[0]
        body.append(f'    if ks == 0: return _bad({f"argument {_param(first.name)!r} (position 1)"!r}, "Tensor", '
                    f'{_param(first.name)}, {every})')
    # a foreach operator (NOTE [foreach operators]) takes lists that may span devices: each per-tensor call checks
    if 'cross_device' in op.tags:       # the kernel moves the other tensors: the first one's device decides
        body.append(f'    _b = ks & _BM\n    if _b & (_b - 1): ks = _mixed(ks, {_param(s.tensor_args[0].name)})')
    elif (len(s.tensor_args) > 1 or any(a.base_type == 'Tensor[]' for a in s.arguments)) and 'foreach' not in op.tags:
        body.append(f'    _b = ks & _BM\n    if _b & (_b - 1): ks = _mixed(ks, '
                    f'{", ".join(_param(a.name) for a in s.arguments if a.base_type in ("Tensor", "Tensor[]"))})')
    body += ['    ks = (ks | _S.include) & _S.keep',
             '    _k = _cache.get(ks)',     # '_k': schemas have arguments named k (topk)
             '    if _k is None: _k = _resolve(ks)',
             f'    return _k(ks, {", ".join(call_args)})']
    src = f'def {s.name}({", ".join(params)}):\n' + '\n'.join(body) + '\n'
    g = {'_T': _tensor_types(), '_DT': _DTYPE, '_DTYPES': _DTYPE_NAMES, '_NUMBER': _NUMBER, '_INT': _INT, '_SEQ': _SEQ, '_intlist_ok': _intlist_ok, 'np': np, '_S': STATE,
         '_cache': op.cache, '_resolve': op.resolve, '_device_keys': _device_keys,
         '_bad': _not_implemented(_bad_arg_factory(op)) if operator else _bad_arg_factory(op), '_BM': BACKEND_MASK,
         '_mixed': _mixed_devices,
         '_np_aliases': numpy_aliases, '_MISSING': _MISSING, '_deprecated': deprecated_call, '_op': op}
    fn = compile_function(src, f'<ember op {op.name}>', g, s.name)
    fn.__qualname__ = s.full_name
    fn._op = op
    if aliased or deprecated:   # inspect.signature shows the schema's: no catch-alls, no stand-in default
        import inspect
        sig = inspect.signature(fn)
        fn.__signature__ = sig.replace(parameters=[
            p.replace(default=inspect.Parameter.empty) if p.default is _MISSING else p
            for p in sig.parameters.values()
            if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)])
    return fn


def _param(name):
    """The entry point's parameter for a schema argument (NOTE [input, not self])."""
    return 'input' if name == 'self' else name


NUMPY_ALIASES = {'dim': 'axis', 'keepdim': 'keepdims'}     # NOTE [numpy keyword aliases]

# NOTE [deprecated scalar-first overloads]: torch still accepts the old argument orders of its deprecated.yaml, where
# the scale comes first as a plain number: ``a.add_(2.0, b)``, ``a.addcmul_(0.5, b, c)``, ``torch.addmm(0.5, M, 2.0,
# A, B)``, with a warning. The entry points of these operators take the extra positional values in ``*_dep`` (empty
# on every ordinary call: one truth test) and hand such a call to ``deprecated_call``, which reorders it.
DEPRECATED_SCALAR_FIRST = {'add': 'alpha', 'sub': 'alpha', 'addcmul': 'value', 'addcdiv': 'value', 'addmm': 'beta',
                           'addmv': 'beta', 'addr': 'beta', 'addbmm': 'beta', 'baddbmm': 'beta'}
_DEPRECATED_WARNED = []        # torch warns once per process, for the first such call whatever its operator


def deprecated_call(op, values):
    """A call in a deprecated scalar-first order (NOTE [deprecated scalar-first overloads]), reordered."""
    name = op.schema.name
    base = name.rstrip('_')
    number = lambda v: isinstance(v, _NUMBER)
    new = [a for a in op.schema.arguments if not a.kwarg_only][1:]
    if DEPRECATED_SCALAR_FIRST[base] in ('alpha', 'value'):       # (self, scale, *tensors)
        if len(values) != len(new) + 2 or not number(values[1]):
            raise TypeError(f"{name}() takes {len(new) + 1} positional arguments but {len(values)} were given")
        self, scale, rest = values[0], values[1], values[2:]
        kw = {DEPRECATED_SCALAR_FIRST[base]: scale}
        old = f"{name}(Number {DEPRECATED_SCALAR_FIRST[base]}, " + ', '.join(f'Tensor {a.name}' for a in new) + ')'
    else:       # (beta, self, [alpha,] m1, m2) as a function, (self, beta, [alpha,] m1, m2) as a method
        v = list(values)
        self = v.pop(1) if number(v[0]) else v.pop(0)
        beta = v.pop(0)
        alpha = v.pop(0) if len(v) == 3 and number(v[0]) else 1
        if len(v) != 2 or not number(beta) or not number(alpha):
            raise TypeError(f"{name}() received an invalid combination of arguments")
        rest, kw = v, {'beta': beta, 'alpha': alpha}
        old = f"{name}(Number beta, Number alpha, " + ', '.join(f'Tensor {a.name}' for a in new) + ')'
    if not _DEPRECATED_WARNED:
        _DEPRECATED_WARNED.append(name)
        from .._warn import warnings
        now = f"{name}(" + ', '.join(f'Tensor {a.name}' for a in new) + ', *, ' + \
            ', '.join(f'Number {a.name} = 1' for a in op.schema.arguments if a.kwarg_only) + ')'
        warnings.warn(f"This overload of {name} is deprecated:\n\t{old}\nConsider using one of the following "
                      f"signatures instead:\n\t{now}", UserWarning)
    return op.call(self, *rest, **kw)
_MISSING = type('_Missing', (), {'__repr__': lambda self: '<missing>'})()


def numpy_aliases(name, extra, names, values, defaults):
    """The values of ``names`` after the NumPy-style keywords in ``extra`` (``axis``, ``keepdims``) stand in
    for them; any other keyword, or an alias beside its own name given a value other than its default, is the
    TypeError Python would raise."""
    values = list(values)
    for k, v in extra.items():
        own = next((n for n in names if NUMPY_ALIASES[n] == k), None)
        if own is None:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        i = names.index(own)
        if not (values[i] is defaults[i] or values[i] == defaults[i]):
            raise TypeError(f"{name}() got multiple values for argument '{own}'")
        values[i] = v
    return tuple(values)


def _default_src(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        if isinstance(v, float) and (v != v or v in (float('inf'), float('-inf'))):
            return f'float({str(v)!r})'
        return repr(v)
    if isinstance(v, tuple):
        return repr(v)
    raise ValueError(f'unsupported default {v!r}')


# NOTE [operators return NotImplemented]: ``a + b``, ``a < b``, ``a += b`` with an operand the operator cannot take
# return NotImplemented rather than raising, as torch's Tensor operators do (TypeError_to_NotImplemented_), so
# Python asks the other operand (``b.__radd__``: a tuple-like container of tensors, a number type of a library's
# own) and raises its own "unsupported operand type(s)" when that has no answer either. The operators' entry
# points are compiled a second time for this (``OpOverload.operator_call``) with an argument-error path that turns
# the TypeError into NotImplemented; a valid call runs the same code as the function's.
def _not_implemented(bad):
    def operator_bad(*args, **kwargs):
        try:
            return bad(*args, **kwargs)
        except TypeError:
            return NotImplemented
    return operator_bad


# the functions torch's argument parser lets take a Python number where their first Tensor goes
# (python_arg_parser.cpp's should_allow_numbers_as_tensors)
_NUMBERS_AS_TENSORS = frozenset({'add', 'sub', 'mul', 'div', 'true_divide', 'floor_divide',
                                 'copy_'})     # and Tensor.copy_'s binding, whose source may be a number (t.copy_(5))


def _bad_arg_factory(op):
    def bad(where, expected, value, values=()):
        """A non-Tensor where a Tensor goes (or a wrong type elsewhere): a Tensor-like argument's
        ``__torch_function__`` answers (NOTE [__torch_function__]), else torch's TypeError."""
        result = dispatch_from_entry_point(op, values)
        if result is not NOT_HANDLED:
            return result
        if ((expected.rstrip('?') in ('Scalar', 'float') or (expected.rstrip('?') in ('int', 'SymInt')
                                                             and not value._dtype.is_floating_point))
                if isinstance(value, _tensor_types()) and value._a.ndim == 0 and values else False):
            # torch's parser takes a 0-d tensor for a Scalar (``torch.full(size, t.max())``) or a float
            # (``allclose(a, b, atol=tol_tensor)``), and a 0-d integer one for an int (``x.narrow(0, start_tensor,
            # 2)``): its value is the number
            return _call_with(op, values, value, value.item())
        if (expected == 'Tensor' and values and isinstance(value, (int, float, complex))
                and op.schema.name in _NUMBERS_AS_TENSORS):
            # torch's parser lets these take a number where a Tensor goes (``torch.div(8, 4, rounding_mode='trunc')``,
            # ``t.copy_(5)``): a 0-d tensor of it, int64 / the default float dtype
            from .._creation import tensor
            return _call_with(op, values, value, tensor(value))
        if isinstance(value, np.complexfloating) and expected.rstrip('?') in ('Scalar', 'float', 'Tensor') and values:
            from .._warn import warn     # NumPy's warning, at the user's line
            warn("Casting complex values to real discards the imaginary part",
                 getattr(np, "exceptions", np).ComplexWarning)        # (np.ComplexWarning before NumPy 1.25)
            return _call_with(op, values, value, float(value.real))
        if expected.rstrip('?') == 'ScalarType' and value in _PYTHON_TYPES and values:     # dtype=int: int64, ...
            return _call_with(op, values, value, _PYTHON_TYPES[value])
        if expected in ('int[]', 'SymInt[]') or expected.startswith('int['):
            raise int_list_error(op.schema.name, where, value, lambda e: isinstance(e, _INT))
        shown = {'Scalar': 'Number', 'ScalarType': 'torch.dtype', 'ScalarType?': 'torch.dtype'}.get(expected, expected)
        raise TypeError(f"{op.schema.name}(): {where} must be {shown}, not {type(value).__name__}")
    return bad


def _call_with(op, values, value, new):
    """Call ``op`` again with the argument ``value`` (of the call's ``values``) read as torch's parser reads it."""
    i = next(i for i, v in enumerate(values) if v is value)
    args, kwargs = public_call(op, values[:i] + (new,) + values[i + 1:])
    return op.call(*args, **kwargs)


def int_list_error(fname, where, value, is_int):
    """torch's parser's TypeError for an ``int[]`` argument ``value`` (``where``: "argument 'size' (position 1)"):
    one value that is no sequence; a sequence whose first element is no int (the list fails at once); or one whose
    later element is not (torch took it as a list of ints and fails unpacking it)."""
    if not isinstance(value, (list, tuple)):
        return TypeError(f"{fname}(): {where} must be tuple of ints, not {type(value).__name__}")
    k, bad = next(((k, e) for k, e in enumerate(value) if not is_int(e)), (0, value))
    if k:
        name = where.split("'")[1] if "'" in where else where
        return TypeError(f"{fname}(): argument '{name}' failed to unpack the object at pos {k + 1} with error "
                         f"\"type must be tuple of ints,but got {type(bad).__name__}\"")
    return TypeError(f"{fname}(): {where} must be tuple of ints, but found element of type {type(bad).__name__} "
                     f"at pos 0")


def _mixed_devices(ks, *tensor_args):
    """Tensors on several devices: only 0-dim CPU tensors may join another device (as torch allows).

    With a Python mode on, the modes see the call first and may resolve the mix (FakeTensorMode moves every
    tensor to Meta); whatever reaches the kernels below them comes back here with the modes off."""
    if STATE.include & PYTHON_BIT:
        return ks
    from .._core.tensor_impl import TensorImpl
    ts = []
    for a in tensor_args:
        ts.extend(a if isinstance(a, (list, tuple)) else [a])
    ts = [t for t in ts if isinstance(t, TensorImpl)]
    devs = {t._device for t in ts if not (t._device.type == 'cpu' and t._a.ndim == 0)}
    if len(devs) > 1:
        a, b = sorted(devs, key=str)[:2]
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {a} and {b}!")
    keep = next(iter(devs))._iface.keyset if devs else ts[0]._device._iface.keyset
    return (ks & ~BACKEND_MASK) | keep


def _device_keys(dev):
    """Key set for factory functions: the device argument picks the backend (BackendSelect)."""
    if dev is None:
        return _device_mod.current_default_keyset()
    if isinstance(dev, _device_mod.device):
        return dev._iface.keyset
    return _device_mod.device(dev)._iface.keyset
