"""``ember.compile``: capture with guards, a cache of compiled versions, graph breaks.

NOTE [capture and guards]: torch's Dynamo reads a function's bytecode; ember captures by running the
function once on fake tensors under the dispatcher-level tracer (make_fx's, through AOTAutograd's
``trace``), so what it records is what reached the dispatcher, and Python control flow is resolved while
tracing. A graph so captured is only valid while everything the trace depended on is unchanged; those
conditions are its *guards*, checked on every call before the compiled version runs:

* each tensor argument's sizes, strides, dtype, device and ``requires_grad``; each other argument's value
  (an int or a flag the code branched on), or its identity (any other object);
* the grad mode and the autocast state;
* the modules that ran during the trace: their ``training`` flags (``model.eval()`` recompiles);
* the tensors the graph reads from outside (parameters, buffers): their identity is held by the graph, so
  an optimizer updating them in place needs nothing; their sizes, dtype and ``requires_grad`` are guarded.
  A parameter's ``.grad`` (what a compiled ``optimizer.step`` reads) is read from the parameter at each call
  (``GradOf``), since ``zero_grad()`` replaces it.

Sizes that change between calls: when a call differs from a compiled version only in some sizes, those
dimensions are traced again as symbols (NOTE [symbolic sizes]) and the version's guards include the
comparisons made on them, so one version serves every length its guards accept.

The arguments' part of the guards is one tuple, the key of a dict of compiled versions, so a call costs one
tuple build and one dict lookup; the rest is checked on the version found. A call that no version accepts
compiles again (``recompiles`` in the logs says which guard failed); after ``config.cache_size_limit``
versions the function warns and runs eagerly.

Graph breaks: Python that needs a tensor's *value* (``.item()``, ``bool(t)`` in an ``if``, ``.tolist()``,
printing) cannot be captured by tracing on fake tensors. Without bytecode to resume from, ember breaks at
the granularity it has: a module whose forward breaks runs its own code eagerly while each of its child
modules is compiled on its own (recursively), and a plain function runs eagerly; either way the reason is
recorded (``ember._dynamo.explain``) and ``fullgraph=True`` raises ``Unsupported`` naming the user's line.
While tracing, reading even a real tensor's value breaks (``_NoDataReads``): the value would be baked into the
graph with no guard on it.

Side effects: tracing runs the function's Python for real, on fake tensors. State it creates lazily on its
first call (an optimizer's momentum buffers, a module's cached mask) would keep the trace's fake tensors, so
the attributes of the optimizer a bound method belongs to, and of every module of a compiled module, are
copied before the trace (``_Snapshot``); if the trace stored fakes there, they are put back, that one call
runs eagerly to create the state for real, and the next call captures. A function that stores a new tensor
on every call is a graph break. Other Python state the function reads (a global counter) is baked into the
graph unguarded, as ``torch.jit.trace`` does: the one habit of Dynamo's bytecode guards this design lacks.
"""
import functools
import inspect
import threading
import time
from ember._warn import warnings

import ember
from ember.utils import _pytree as pytree

from .. import _logging
from . import config
from . import stance as _stance
from .backends import lookup_backend
from .exc import Unsupported, RecompileLimitWarning, BackendCompilerFailed, ForbiddenCall
from .._functorch.aot_autograd import trace, GradOf
from ember.fx.experimental.symbolic_shapes import graph_signature


def _current(t):
    return t.get() if t.__class__ is GradOf else t

__all__ = ['compile', 'OptimizedModule', 'reset', 'counters', 'CompiledFunction', 'is_dynamo_supported',
           'is_inductor_supported']

counters = {'frames': 0, 'compiles': 0, 'recompiles': 0, 'graph_breaks': 0, 'unique_graphs': 0}
_ALL = []            # every compiled callable, for reset()


def reset():
    """Forget every compiled version (torch._dynamo.reset)."""
    for c in _ALL:
        c.cache.clear()
        c.entries.clear()
        c.broken = None
        c.stance_warmed = False
        c.by_backend.clear()
    for k in counters:
        counters[k] = 0


def _describe_arg(flat_names, i):
    return flat_names[i] if i < len(flat_names) else f'arg[{i}]'


def _arg_key(x):
    if isinstance(x, ember.Tensor):       # the array's shape and strides: the same facts, no Size objects
        a = x._a
        return (a.shape, a.strides, x._dtype, x._device, x.requires_grad)
    if x is None or x.__class__ in (int, float, bool, str):
        return (x.__class__, x)
    return ('id', id(x))


class _Entry:
    """One compiled version: its guards and how to run it."""

    def __init__(self, key, runtime, traced, modules, guards):
        self.key, self.runtime, self.traced = key, runtime, traced
        self.modules = modules            # (module, training flag at trace)
        self.attr_meta = [(t, _current(t)._a.shape, _current(t)._dtype, _current(t).requires_grad) for t in
                          (traced.attrs.values() if traced is not None else ())
                          if isinstance(t, (ember.Tensor, GradOf))]
        self.guards = guards
        self.single_output = traced is not None and traced.out_spec.num_leaves == 1 and \
            pytree.tree_unflatten([0], traced.out_spec) == 0

    def make_dynamic(self, dims, flat):
        """This version takes any sizes of ``dims`` (``{flat position: dims}``) that its shape guards accept."""
        self.dims = dims
        env = self.traced.shape_env
        self.shape_guard = env.guard_fn()
        # where each symbol's value comes from: (flat position, dim)
        pos = {id(f): i for i, f in enumerate(self._fakes(flat)) if f is not None}
        self.symbol_sources = [(pos[id(sym.how[1])], sym.how[2]) for sym in env.symbols]
        self.pattern = []
        for i, k in enumerate(self.key[0]):
            if i in dims:
                shape = tuple(None if d in dims[i] else n for d, n in enumerate(k[0]))
                self.pattern.append(('dyn', shape, k[2], k[3], k[4]))
            else:
                self.pattern.append(k)

    def _fakes(self, flat):
        nodes = [n for n in self.traced.graph.nodes if n.op == 'placeholder' and not n.name.startswith('tangents')]
        fakes, j = [], 0
        for x in flat:
            if isinstance(x, ember.Tensor):
                fakes.append(nodes[j].meta.get('val'))
                j += 1
            else:
                fakes.append(None)
        return fakes

    def accepts(self, flat, key):
        """Whether the arguments fit this version's pattern (static dims, dtypes...) and shape guards."""
        if key[1:] != self.key[1:] or len(key[0]) != len(self.pattern):
            return False
        for i, (p, k) in enumerate(zip(self.pattern, key[0])):
            if p[0] == 'dyn':
                if len(k) != 5 or k[2:] != p[2:] or len(k[0]) != len(p[1]) or not flat[i].is_contiguous():
                    return False
                if any(a is not None and a != b for a, b in zip(p[1], k[0])):
                    return False
            elif p != k:
                return False
        return self.shape_guard(*[flat[i].shape[d] for i, d in self.symbol_sources])

    def check(self):
        """The guards beyond the key; the first failing one's text, or None."""
        for m, training in self.modules:
            if m.training is not training:
                return f'{type(m).__name__}.training == {training}'
        for t, shape, dtype, rg in self.attr_meta:
            if t.__class__ is GradOf:
                t = t.get()
                if t is None:
                    return 'a parameter\'s .grad read by the graph is None'
            if t._a.shape != shape or t._dtype is not dtype or t.requires_grad is not rg:
                return f'a parameter or buffer of shape {list(shape)} changed shape, dtype or requires_grad'
        return None


def _user_frame(tb):
    from ember.fx.experimental.proxy_tensor import _user_frame as uf
    return uf(tb)


def _break_reason(e):
    from ember.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    from ember.fx.experimental.proxy_tensor import _is_fake_data_access
    frame = _user_frame(e.__traceback__)
    where = f'{frame.filename}:{frame.lineno} ({frame.line})' if frame is not None else 'unknown location'
    if isinstance(e, GuardOnDataDependentSymNode) or _is_fake_data_access(e):
        return f'data-dependent operation at {where}: Python needs a tensor value (item(), bool(), tolist(), ' \
               f'print) that tracing on fake tensors does not have', frame
    return f'{type(e).__name__} while tracing at {where}: {e}', frame


class _NoDataReads:
    """While tracing, reading a tensor's data from Python (``item()``, ``bool()``, ``tolist()``, ``float()``,
    ``numpy()``, printing it) is a graph break even for a real tensor (an optimizer's step count): the value would be baked
    into the graph with no guard on it. Fake tensors raise on their own; the real ones raise here."""
    NAMES = ('item', 'tolist', '__float__', '__int__', '__complex__', '__index__', '__bool__', 'numpy', '__repr__',
             '__str__', '__format__')

    def __enter__(self):
        self.saved = {n: _Tensor.__dict__.get(n) for n in self.NAMES}     # None: inherited (object.__str__)
        tracer = threading.get_ident()

        def refuse(name):
            original = getattr(_Tensor, name)

            def method(self, *a, **k):
                if threading.get_ident() != tracer:       # another thread, not being traced: as usual
                    return original(self, *a, **k)
                from ember.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
                raise GuardOnDataDependentSymNode(f'Tensor.{name}() reads a tensor value while tracing')
            return method
        for n in self.NAMES:
            setattr(_Tensor, n, refuse(n))
        return self

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            if f is None:
                delattr(_Tensor, n)
            else:
                setattr(_Tensor, n, f)


class _Collector:
    """The modules that run while tracing (for their ``training`` guards)."""

    def __init__(self):
        self.modules = {}

    def __enter__(self):
        from ember.nn.modules.module import register_module_forward_pre_hook
        tid = threading.get_ident()

        def hook(m, args):
            if threading.get_ident() == tid:      # modules other threads run meanwhile are not this trace's
                self.modules.setdefault(id(m), m)
        self.h = register_module_forward_pre_hook(hook)
        return self

    def __exit__(self, *exc):
        self.h.remove()


class CompiledFunction:
    """``ember.compile(fn)``: calls ``fn`` through its cache of compiled versions (NOTE [capture and guards])."""
    _ember_compiled = True          # Module.__getstate__ leaves a compiled forward out of a pickle

    def __init__(self, fn, backend, fullgraph, dynamic, mode, owner=None):
        self.fn = fn
        self.backend = lookup_backend(backend)
        self.fullgraph, self.dynamic, self.mode = fullgraph, dynamic, mode
        self.owner = owner             # the module, when compiling a module's call
        self.cache = {}                # key -> [entries]
        self.entries = []
        self.broken = None             # a graph break that made this callable eager for good
        self.children = None
        self.break_reasons = []
        self.dynamic_entries = []      # versions traced with symbolic sizes (NOTE [symbolic sizes])
        self.calls = 0                 # eager warm-up calls made (config.warmup_calls)
        self.warmed_up = False         # a call ran eagerly because its trace created state
        self.auto_dynamic = {}         # flat argument position -> dims that changed size between calls
        self.stance_warmed = False     # the 'eager_then_compile' stance's eager first call was made
        self.by_backend = {}           # id(backend) -> this function compiled with set_stance's force_backend
        self.forced_backend = None     # the backend forced on this one (NOTE [compiler stance])
        _ALL.append(self)
        functools.update_wrapper(self, fn)

    # --- the call ---------------------------------------------------------------------------------
    def _key(self, flat):
        return (tuple(_arg_key(x) for x in flat), ember.is_grad_enabled(), ember.is_autocast_enabled('cpu'))

    def __call__(self, *args, **kwargs):
        if not _enabled[0]:
            return self.fn(*args, **kwargs)
        if not _stance.plain[0]:
            return self._call_in_stance(_stance.current(), args, kwargs)
        return self._call(args, kwargs, None)

    def _call_in_stance(self, stance, args, kwargs):
        """A call under a stance other than the default one (NOTE [compiler stance])."""
        s = stance.stance
        if s == 'force_eager':
            return self.fn(*args, **kwargs)
        if s in ('eager_then_compile', 'aot_eager_then_compile') and not self.stance_warmed:
            self.stance_warmed = True
            return self.fn(*args, **kwargs)
        if stance.backend is not None and self.forced_backend is None:
            other = self.by_backend.get(id(stance.backend))
            if other is None:
                other = self.by_backend[id(stance.backend)] = CompiledFunction(
                    self.fn, stance.backend, self.fullgraph, self.dynamic, self.mode, owner=self.owner)
                other.forced_backend = stance.backend
            return other._call(args, kwargs, stance)
        return self._call(args, kwargs, stance)

    def _refuse_compile(self, stance, failed, key, args, kwargs):
        """Under 'eager_on_recompile' the call that would compile runs eagerly; under 'fail_on_recompile' it
        raises, with torch's words and the failed guard."""
        if stance.stance == 'eager_on_recompile':
            return self.fn(*args, **kwargs)
        code = getattr(self.fn, '__code__', None)
        message = (f"Detected recompile when torch.compile stance is 'fail_on_recompile'. filename: "
                   f"'{getattr(code, 'co_filename', '?')}', function name: '{getattr(code, 'co_name', self._name())}', "
                   f"line number: {getattr(code, 'co_firstlineno', '?')}")
        if self.entries:
            message += f"\n    triggered by the following guard failure(s):\n    - {failed or self._why(key)}"
        raise RuntimeError(message)

    def _call(self, args, kwargs, stance):
        if self.calls < config.warmup_calls:
            self.calls += 1
            return self.fn(*args, **kwargs)
        if not kwargs and all(a.__class__ is _Tensor for a in args):
            flat, spec = args, None          # the common case: tensors only, no pytree walk
        else:
            flat, spec = pytree.tree_flatten((args, kwargs))
        key = self._key(flat)
        bucket = self.cache.get(key)
        entry = None
        failed = None
        if bucket is not None:
            for e in bucket:
                failed = None if stance is not None and stance.skip_guard_eval_unsafe else e.check()
                if failed is None:
                    entry = e
                    break
        if entry is None and self.dynamic_entries:
            entry = self._find_dynamic(flat, key)
        if entry is None:
            if self.broken is not None:
                return self._run_broken(args, kwargs)
            if len(self.entries) >= config.cache_size_limit:
                if not getattr(self, '_limit_warned', False):
                    self._limit_warned = True
                    warnings.warn(f'ember.compile: {self._name()} hit config.cache_size_limit '
                                  f'({config.cache_size_limit}); running it eagerly from now on. Last reason: '
                                  f'{failed or self._why(key)}', RecompileLimitWarning, stacklevel=2)
                return self.fn(*args, **kwargs)
            if stance is not None and stance.stance in ('eager_on_recompile', 'fail_on_recompile'):
                return self._refuse_compile(stance, failed, key, args, kwargs)
            if spec is None:
                flat, spec = pytree.tree_flatten((args, kwargs))
            entry = self._compile(flat, spec, key, failed, self._dynamic_dims(flat, key))
            if entry is _WARM_UP:
                return self.fn(*args, **kwargs)
            if entry is None:
                return self._run_broken(args, kwargs)
        tensors = flat if spec is None else [x for x in flat if isinstance(x, ember.Tensor)]
        outs = entry.runtime(tensors)
        if entry.single_output:
            return outs[0]
        return pytree.tree_unflatten(outs, entry.traced.out_spec)

    def _name(self):
        return getattr(self.fn, '__qualname__', None) or type(self.fn).__name__

    def _why(self, key):
        """Which guard of the most recent version the key fails, in words (for ``recompiles``)."""
        if not self.entries:
            return 'first call'
        old = self.entries[-1].key
        if old[1] != key[1]:
            return f'grad mode changed: is_grad_enabled() == {old[1]}'
        if old[2] != key[2]:
            return 'autocast state changed'
        names = self.entries[-1].arg_names
        for i, (a, b) in enumerate(zip(old[0], key[0])):
            if a != b:
                n = _describe_arg(names, i)
                if len(a) == 5 and len(b) == 5:
                    for what, j in (('size', 0), ('stride', 1), ('dtype', 2), ('device', 3), ('requires_grad', 4)):
                        if a[j] != b[j]:
                            old_v, new_v = (_elements(a[1], a[2]), _elements(b[1], b[2])) if j == 1 else (a[j], b[j])
                            return f'tensor {n} {what} mismatch: expected {old_v!r}, actual {new_v!r}'
                return f'{n} changed: expected {a[-1]!r}, actual {b[-1]!r}'
        if len(old[0]) != len(key[0]):
            return f'number of arguments changed: {len(old[0])} -> {len(key[0])}'
        return 'a guard failed'

    # --- compiling ---------------------------------------------------------------------------------
    # --- dynamic sizes ---------------------------------------------------------------------------------
    def _dynamic_dims(self, flat, key):
        """Which dimensions to trace as symbols: all of them with ``dynamic=True``; with ``dynamic=None``
        (automatic, as torch), those ``mark_dynamic`` named and those whose size changed since a version was
        compiled for otherwise equal arguments. Sizes 0 and 1 stay static (they change broadcasting)."""
        if self.dynamic is False:
            return {}
        if self.dynamic is None:
            for e in self.entries:
                old = e.key
                if old[1:] != key[1:] or len(old[0]) != len(key[0]):
                    continue
                changed = {}
                for i, (a, b) in enumerate(zip(old[0], key[0])):
                    if a == b:
                        continue
                    if len(a) != 5 or len(b) != 5 or a[2:] != b[2:] or len(a[0]) != len(b[0]):
                        changed = None
                        break
                    changed[i] = {d for d, (m, n) in enumerate(zip(a[0], b[0])) if m != n}
                if changed:
                    for i, dims in changed.items():
                        self.auto_dynamic.setdefault(i, set()).update(dims)
        out = {}
        for i, x in enumerate(flat):
            if not isinstance(x, ember.Tensor) or not x.is_contiguous():
                continue
            if self.dynamic is True:
                dims = set(range(x.dim()))
            else:
                dims = set(self.auto_dynamic.get(i, ())) | set(getattr(x, '_dynamo_dynamic_indices', ()))
            dims = {d for d in dims if x.shape[d] >= 2}
            if dims:
                out[i] = tuple(sorted(dims))
        return out

    def _find_dynamic(self, flat, key):
        for e in self.dynamic_entries:
            if e.accepts(flat, key) and e.check() is None:
                return e
        return None

    def _verify_dynamic(self, flat, spec, dyn, want_grad, traced):
        """Trace a second time with every symbolic dimension one size larger or smaller (on meta tensors)
        and compare the graphs: equal graphs mean every size-dependent value is computed by the graph
        (NOTE [symbolic sizes]); a constant that differs was computed from a plain int somewhere, and the
        symbolic version would be wrong at other sizes. Returns None or the reason it is not valid."""
        probe = list(flat)
        for i, dims in dyn.items():
            t = flat[i]
            shape = list(t.shape)
            for d in dims:
                shape[d] = shape[d] - 1 if shape[d] > 2 else shape[d] + 1
            probe[i] = ember.empty(shape, dtype=t.dtype, device='meta').requires_grad_(t.requires_grad)
        try:
            with _NoDataReads():
                other = trace(self.fn, probe, spec, want_grad, dyn, grad_mode_nodes=not self.backend.wants_joint)
        except Exception as e:        # the function rejects the probe size: keep the static version
            return f'tracing at another size failed ({type(e).__name__}: {e})'
        a, b = graph_signature(traced.graph), graph_signature(other.graph)
        if a != b:
            for x, y in zip(a, b):
                if x != y:
                    return f'the graph differs at another size: {x} vs {y}'
            return 'the graph differs at another size'
        return None

    def _compile(self, flat, spec, key, failed, dynamic=None):
        counters['frames'] += 1
        if self.entries:
            counters['recompiles'] += 1
            _logging.log('recompiles', f'Recompiling function {self._name()}\n    triggered by: '
                                       f'{failed or self._why(key)}')
        t0 = time.perf_counter()
        want_grad = ember.is_grad_enabled() and self.backend.wants_joint
        try:
            _tracing.on = True
            snapshot = _Snapshot(getattr(self.fn, '__self__', None), self.owner)
            with _Collector() as col, _NoDataReads():
                traced = trace(self.fn, flat, spec, want_grad, dynamic or None,
                               grad_mode_nodes=not self.backend.wants_joint)
            if dynamic:
                why_not = self._verify_dynamic(flat, spec, dynamic, want_grad, traced)
                if why_not is not None:
                    _logging.log('recompiles', f'{self._name()}: sizes stay static: {why_not}')
                    dynamic = None
                    with _Collector() as col, _NoDataReads():
                        traced = trace(self.fn, flat, spec, want_grad, grad_mode_nodes=not self.backend.wants_joint)
        except ForbiddenCall:
            _tracing.on = False
            raise
        except Exception as e:
            _tracing.on = False
            reason, frame = _break_reason(e)
            counters['graph_breaks'] += 1
            self.break_reasons.append(reason)
            _logging.log('graph_breaks', f'Graph break in {self._name()}: {reason}')
            if self.fullgraph:
                raise Unsupported(f'ember.compile(fullgraph=True) could not capture {self._name()} as one graph: '
                                  f'{reason}') from e
            self.broken = reason
            return None
        _tracing.on = False
        leak = _leaked_fake(self.fn, col.modules.values())
        if leak is not None and snapshot.restore_if_fake() and _leaked_fake(self.fn, col.modules.values()) is None:
            if not self.warmed_up:
                # state made lazily by this very call (an optimizer's first step, a cached mask): it was put back
                # as it was; this call runs eagerly and makes the state for real, and the next call captures
                self.warmed_up = True
                _logging.log('graph_breaks', f'{self._name()}: the trace created state ({leak}); running this '
                                             'call eagerly first')
                return _WARM_UP
            # it stores a new tensor on every call: a side effect a traced graph cannot replay
            reason = f'the function stores a tensor it computes in {leak} on every call'
            counters['graph_breaks'] += 1
            self.break_reasons.append(reason)
            if self.fullgraph:
                raise Unsupported(f'ember.compile(fullgraph=True) could not capture {self._name()}: {reason}')
            self.broken = reason
            return None
        if leak is not None:
            raise Unsupported(f'ember.compile: while tracing {self._name()} on fake tensors, a tensor made by the trace '
                              f'was stored in {leak}, state that outlives the call. Capture by tracing cannot '
                              'write real state that way; call the function once before compiling it (or raise '
                              'ember._dynamo.config.warmup_calls) so that the state exists, or leave it '
                              'uncompiled.')
        modules = [(m, m.training) for m in col.modules.values()]
        example = [x for x in flat if isinstance(x, ember.Tensor)]
        _logging.log('graph_code', f'TRACED GRAPH ({self._name()})\n{_graph_code(traced)}')
        try:
            runtime = self.backend.build(traced, example)
        except Exception as e:
            if config.suppress_errors:
                warnings.warn(f'ember.compile: backend {self.backend.name} failed ({e}); running eagerly')
                self.broken = f'backend failed: {e}'
                return None
            raise BackendCompilerFailed(f'backend={self.backend.name!r} raised:\n{type(e).__name__}: {e}') from e
        guards = _guard_texts(self, key, modules, traced)
        entry = _Entry(key, runtime, traced, modules, guards)
        entry.arg_names = _flat_names(self.fn, spec, flat)
        entry.compile_time = time.perf_counter() - t0
        if dynamic:
            entry.make_dynamic(dynamic, flat)
            entry.guards += [f'sizes: {g}' for g in traced.shape_env.describe()]
            self.dynamic_entries.append(entry)
        else:
            self.cache.setdefault(key, []).append(entry)
        self.entries.append(entry)
        counters['compiles'] += 1
        counters['unique_graphs'] += 1 + (runtime.backward_graph is not None)
        _logging.log('guards', 'GUARDS:\n' + '\n'.join('  ' + g for g in guards))
        if _logging.enabled('aot_graphs') and runtime.backward_graph is not None:
            _logging.log('aot_graphs', f'FORWARD GRAPH\n{runtime.forward_graph.python_code("self").src}\n'
                                       f'BACKWARD GRAPH\n{runtime.backward_graph.python_code("self").src}')
        if _logging.enabled('output_code'):
            _logging.log('output_code', _output_code(runtime))
        return entry

    def _run_broken(self, args, kwargs):
        """After a graph break: a module runs its own code eagerly with its children compiled; a function
        runs eagerly."""
        owner = self.owner
        if owner is None or not owner._modules:
            return self.fn(*args, **kwargs)
        if self.children is None:
            self.children = {name: CompiledFunction(type(m).forward.__get__(m), self.backend, False, self.dynamic,
                                                    self.mode, owner=m) for name, m in owner.named_children()}
        saved = []
        try:
            for name, m in owner.named_children():
                saved.append((m, m.__dict__.get('forward')))
                m.__dict__['forward'] = _ChildForward(self.children[name], m)
            return self.fn(*args, **kwargs)
        finally:
            for m, f in saved:
                if f is None:
                    m.__dict__.pop('forward', None)
                else:
                    m.__dict__['forward'] = f


class _ChildForward:
    """A child module's ``forward`` while its parent runs eagerly after a graph break: the child's compiled
    forward. The instance attribute is taken away while the child runs, so the child's own trace (or its
    eager run) finds the class's forward."""

    def __init__(self, compiled, module):
        self.compiled, self.module = compiled, module

    def __call__(self, *args, **kwargs):
        m = self.module
        mine = m.__dict__.pop('forward')
        try:
            return self.compiled(*args, **kwargs)
        finally:
            m.__dict__['forward'] = mine


def _flat_names(fn, spec, flat):
    """A name per flat argument for messages: the parameter it came from (``x``), or ``args[i]``."""
    try:
        params = [p for p in inspect.signature(fn).parameters]
    except (TypeError, ValueError):
        params = []
    args, kwargs = pytree.tree_unflatten(list(range(len(flat))), spec)
    out = [f'arg[{i}]' for i in range(len(flat))]
    for i, a in enumerate(args):
        base = params[i] if i < len(params) and params[i] not in ('args', 'kwargs') else f'args[{i}]'
        for leaf in pytree.tree_leaves(a):
            out[leaf] = base
    for k, v in kwargs.items():
        for leaf in pytree.tree_leaves(v):
            out[leaf] = k
    return out


_WARM_UP = object()


class _Snapshot:
    """The state a trace may create lazily, copied before the trace to be put back if the trace stored fake
    tensors in it: the attributes of the object a bound method belongs to (an optimizer: its ``state``,
    ``param_groups``, two levels deep) and of every module of the compiled module's tree (a mask a forward
    builds on its first call and keeps, as the word_language_model Transformer's ``src_mask``)."""

    def __init__(self, obj, owner=None):
        self.objs = []
        if obj is not None and not isinstance(obj, ember.nn.Module):
            self.objs.append(obj)
        mod = owner if owner is not None else obj if isinstance(obj, ember.nn.Module) else None
        if mod is not None:
            self.objs.extend(mod.modules())
        self.saved = [(o, {k: self._copy(v) for k, v in vars(o).items()}) for o in self.objs]

    @staticmethod
    def _copy(v):
        if isinstance(v, dict):
            c = v.copy()
            for k, x in v.items():
                if isinstance(x, dict):
                    c[k] = x.copy()
            return (v, c)
        return (v, None)

    def restore_if_fake(self):
        dirty = [(o, saved) for o, saved in self.saved if _fake_in(vars(o))]
        for o, saved in dirty:
            d = vars(o)
            for k in list(d):
                if k not in saved:
                    del d[k]
            for k, (orig, copy) in saved.items():
                d[k] = orig
                if copy is not None:
                    orig.clear()
                    orig.update(copy)
        return bool(dirty) and not any(_fake_in(vars(o)) for o, _ in dirty)


def _fake_in(v, depth=0):
    """Whether a meta (fake) tensor sits in ``v``, looking three containers deep (an optimizer's ``vars`` ->
    ``state`` -> a parameter's dict -> its buffers)."""
    if isinstance(v, ember.Tensor):
        return v.device.type == 'meta'
    if depth < 3 and isinstance(v, dict):
        return any(_fake_in(x, depth + 1) for x in v.values())
    if depth < 3 and isinstance(v, (list, tuple)):
        return any(_fake_in(x, depth + 1) for x in v)
    return False


def _leaked_fake(fn, modules):
    """Where a fake tensor made while tracing was stored in lasting state, or None: the modules that ran (their
    buffers, parameters and attributes) and the object a bound method belongs to (an optimizer's ``state``)."""
    owners = [(type(m).__name__, m) for m in modules]
    obj = getattr(fn, '__self__', None)
    if obj is not None:
        owners.append((type(obj).__name__, obj))
    for name, o in owners:
        d = getattr(o, '__dict__', {})
        for k, v in d.items():
            if k in ('_parameters', '_buffers'):
                for kk, t in v.items():
                    if _fake_in(t):
                        return f'{name}.{kk}'
            elif k != '_modules' and _fake_in(v):
                return f'{name}.{k}'
            elif k == 'state' and isinstance(v, dict) and any(_fake_in(x) for x in v.values()):
                return f'{name}.state'
    return None


def _elements(byte_strides, dtype):
    return [st // dtype.itemsize for st in byte_strides]


def _guard_texts(cf, key, modules, traced):
    g = [f'is_grad_enabled() == {key[1]}', f"is_autocast_enabled('cpu') == {key[2]}"]
    for i, k in enumerate(key[0]):
        if len(k) == 5:
            g.append(f'arg {i}: Tensor size={list(k[0])} stride={_elements(k[1], k[2])} dtype={k[2]} device={k[3]} '
                     f'requires_grad={k[4]}')
        elif k[0] == 'id':
            g.append(f'arg {i}: the same object (id {k[1]})')
        else:
            g.append(f'arg {i} == {k[1]!r}')
    for m, training in modules:
        g.append(f'{type(m).__name__} (id {id(m)}).training == {training}')
    for name, t in traced.attrs.items():
        if isinstance(t, GradOf):
            g.append(f'{name}: the .grad of a parameter of size {list(t.param.shape)}, read at each call, not None')
        elif isinstance(t, ember.Tensor):
            g.append(f'{name}: the same tensor, size={list(t.shape)} dtype={t.dtype} requires_grad={t.requires_grad}')
    return g


def _graph_code(traced):
    return traced.graph.python_code('self').src


def _output_code(runtime):
    parts = []
    for what in ('fn', 'fwd', 'bwd'):
        r = getattr(runtime, what, None)
        code = getattr(r, 'code', None)
        if code is not None:
            parts.append(f'# {what}\n{code}')
    return '\n'.join(parts)


_enabled = [True]
_Tensor = ember.Tensor


class _TracingFlag(threading.local):
    on = False          # this thread is tracing a function for ember.compile (ember.compiler.is_compiling)


_tracing = _TracingFlag()


class OptimizedModule(ember.nn.Module):
    """What ``ember.compile(module)`` returns: calls go through the compiled ``module.__call__``;
    parameters, ``state_dict`` and attributes are the original module's (``_orig_mod``)."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__['_compiled'] = compiled

    def __call__(self, *args, **kwargs):
        return self.__dict__['_compiled'](*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self.__dict__['_compiled'](*args, **kwargs)

    def __getattr__(self, name):
        if name == '_orig_mod':
            return self._modules['_orig_mod']
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules['_orig_mod'], name)

    def __reduce__(self):           # pickles as the original module, compiled afresh when loaded (as torch's)
        cf = self.__dict__['_compiled']
        return (_rebuild_optimized, (self._modules['_orig_mod'], cf.backend.name, cf.fullgraph, cf.dynamic, cf.mode))

    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._orig_mod.load_state_dict(*args, **kwargs)


def _rebuild_optimized(mod, backend, fullgraph, dynamic, mode):
    return compile(mod, backend=backend if backend in ('eager', 'aot_eager', 'inductor') else 'inductor',
                   fullgraph=fullgraph, dynamic=dynamic, mode=mode)


def _patch_once():
    """What torch.compile's first use changes for the whole process (torch's TorchPatcher.patch): it turns the
    distributions' argument validation off, so that a program that builds a distribution with invalid arguments
    after compiling anything gets no ValueError under torch; ember's compile does the same."""
    if not _PATCHED:
        _PATCHED.append(True)
        ember.distributions.Distribution.set_default_validate_args(False)


_PATCHED = []


def compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor', mode=None, options=None,
            disable=False):
    """Compile a function or module (torch.compile's signature); see NOTE [capture and guards].

    Returns a callable with the same behaviour as ``model``: on each call, the compiled version whose guards
    accept the arguments runs (compiling one if none does). Usable as a decorator, with or without
    arguments.
    """
    if mode is not None and mode not in ('default', 'reduce-overhead', 'max-autotune', 'max-autotune-no-cudagraphs'):
        raise RuntimeError(f'Unrecognized mode={mode}, should be one of: default, reduce-overhead, max-autotune, '
                           'max-autotune-no-cudagraphs')
    if mode is not None and options is not None:
        raise RuntimeError('Either mode or options can be specified, but both can\'t be specified at the same '
                           'time.')
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable or getattr(model, '_torchdynamo_disable', False):
        return model
    lookup_backend(backend)           # an unknown backend fails here, not at the first call
    _patch_once()
    if isinstance(model, ember.nn.Module):
        cf = CompiledFunction(model._call_impl, backend, fullgraph, dynamic, mode, owner=model)
        return OptimizedModule(model, cf)
    if not callable(model):
        raise RuntimeError(f'ember.compile expects a callable or a Module, got {type(model).__name__}')
    return CompiledFunction(model, backend, fullgraph, dynamic, mode)


def is_dynamo_supported():
    """True: ember's capture runs wherever ember runs (torch checks its Python version and platform)."""
    return True


def is_inductor_supported():
    """True: ember's code generator writes Python for the CPU backend, which every platform has."""
    return True
