"""Symbolic tracing: run a module's ``forward`` on Proxies and record what it does (torch.fx.symbolic_trace).

While ``Tracer.trace`` runs, three things are patched and restored afterwards: ``ember.nn.Module.__call__``
(a submodule call becomes ``Tracer.call_module``: a call_module Node for a leaf module, else its forward is
traced through), ``ember.nn.Module.__getattr__`` (a parameter read becomes a get_attr Node), and the global
names of functions registered with ``wrap`` or found in ``autowrap_modules`` (their calls on Proxies
become call_function Nodes instead of running).
"""
import builtins
import collections
import functools
import inspect
import itertools
import math
import types
from ember._warn import warnings

import ember

from ._compatibility import compatibility  # noqa: F401  (torch.fx._symbolic_trace.compatibility, used by PyG)
from types import FunctionType  # noqa: F401,E402  names torch's module has, which tracers copied from it read
from .._C import ScriptObject  # noqa: F401,E402
from .graph import Graph
from .graph_module import GraphModule
from .node import Op
from .proxy import TracerBase, Proxy, ParameterProxy, Scope, ScopeContextManager

__all__ = ['Tracer', 'symbolic_trace', 'wrap', 'PH', 'PHBase', 'is_fx_tracing']

_is_fx_tracing_flag = False


def is_fx_tracing():
    """True while a Tracer is tracing."""
    return _is_fx_tracing_flag


class PHBase:
    """The placeholder marker for ``concrete_args``: a value given as PH stays an input of the graph."""

    def __repr__(self):
        return 'PH'


PH = PHBase()


def _assert_is_none(value, msg):
    assert value is None, msg


class _IdentityDict:
    """A dict keyed by object identity (Tensors compare elementwise, so they cannot be ordinary keys)."""

    def __init__(self):
        self._d = {}

    def get(self, k, default=None):
        e = self._d.get(id(k))
        return e[1] if e is not None else default

    def __setitem__(self, k, v):
        self._d[id(k)] = (k, v)

    def __getitem__(self, k):
        return self._d[id(k)][1]

    def __contains__(self, k):
        return id(k) in self._d

    def __len__(self):
        return len(self._d)

    def items(self):
        return [(k, v) for k, v in self._d.values()]


# --- patching of globals and classes while tracing ---------------------------------------------------

_wrapped_fns_to_patch = {}      # (id(globals), name) -> globals of a module that called wrap(name)
# Module's own __call__ and __getattr__, read before any trace patches them (torch's names: tracers that copy torch's
# Tracer.trace, PyG's among them, call these inside their patched wrappers)
_orig_module_call = ember.nn.Module.__call__
_orig_module_getattr = ember.nn.Module.__getattr__


class _Patcher:
    """Swaps attributes for the duration of a trace and puts everything back on exit."""

    def __init__(self):
        self.patches_made = []
        self.visited = set()

    def patch(self, frame_dict, name, new_fn):
        if name not in frame_dict and hasattr(builtins, name):
            orig = _MISSING
        elif getattr(frame_dict[name], '__fx_already_patched', False):
            return
        else:
            orig = frame_dict[name]
        new_fn.__fx_already_patched = True
        self.patches_made.append((frame_dict, name, orig))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        """Patch ``cls.name`` until the patcher exits. ``deduplicate`` is torch's argument (PyG passes False to
        patch Module and then Aggregation); torch's check of it reads a name its class mangles, so every call
        patches there, and here."""
        self.patches_made.append((cls, name, cls.__dict__.get(name, _MISSING)))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        if id(thing) in self.visited:
            return False
        self.visited.add(id(thing))
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches_made:
            where, name, orig = self.patches_made.pop()
            if isinstance(where, dict):
                if orig is _MISSING:
                    del where[name]
                else:
                    where[name] = orig
            elif orig is _MISSING:
                delattr(where, name)
            else:
                setattr(where, name, orig)
        self.visited.clear()


_MISSING = object()


def _find_proxy(*objects):
    found = []

    def look(a):
        if isinstance(a, Proxy) and not found:
            found.append(a)
    for o in objects:
        _walk(o, look)
    return found[0] if found else None


def _walk(a, fn):
    if isinstance(a, (tuple, list)):
        for e in a:
            _walk(e, fn)
    elif isinstance(a, dict):
        for e in a.values():
            _walk(e, fn)
    else:
        fn(a)


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            out = proxy.tracer.create_proxy(Op.CALL_FUNCTION, orig_fn, args, kwargs)
            out.node.meta['is_wrapped'] = True
            return out
        return orig_fn(*args, **kwargs)
    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
        if name not in frame_dict and hasattr(builtins, name):
            orig = getattr(builtins, name)
        else:
            orig = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig))


def _autowrap_check(patcher, frame_dict, function_ids):
    """Patch the functions of ``frame_dict`` (a module's globals) whose ids are in ``function_ids``."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith('_') and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


def wrap(fn_or_name):
    """Call at module level: calls of this function (by its global name in that module) are recorded as
    call_function Nodes instead of being traced through.

    >>> def my_len(x):          # doctest: +SKIP
    ...     return len(x)
    >>> ember.fx.wrap('my_len')  # doctest: +SKIP
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
        if name == '<lambda>':
            raise AssertionError('Cannot wrap a lambda: wrap needs the name it is called by')
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError('wrap must be called with the name of a global function or the function itself')
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != '<module>':
        raise NotImplementedError('wrap must be called at the top level of a module')
    _wrapped_fns_to_patch[(id(frame.f_globals), name)] = frame.f_globals
    return fn_or_name


def _patch_function(fn, nargs):
    """``fn`` with its ``*args``/``**kwargs`` turned into ordinary positional parameters, so that each can be
    given one Proxy."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    new_code = co.replace(co_flags=flags, co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, None, fn.__closure__)


class Tracer(TracerBase):
    """Records a module's forward (or a function) as a Graph. Subclass it to change what is a leaf module
    (``is_leaf_module``), how values become Node arguments (``create_arg``) or Nodes (``create_node``,
    ``create_proxy``), what submodule calls and attribute reads record (``call_module``, ``getattr``).

    >>> import ember, ember.fx as fx
    >>> g = fx.Tracer().trace(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU()))
    >>> [(n.op, n.target) for n in g.nodes][1:3]
    [('call_module', '0'), ('call_module', '1')]
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {
            id(value) for name, value in itertools.chain(*[m.__dict__.items() for m in autowrap_modules])
            if not name.startswith('_') and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ''
        self.scope = Scope('', None)
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self.node_name_to_scope = {}

    # --- what becomes a Node argument -------------------------------------------------------
    def create_arg(self, a):
        """Parameters, buffers and submodules of the root become get_attr Nodes; other tensors become
        attributes ``_tensor_constant<n>`` of the root, read by get_attr Nodes."""
        if isinstance(a, ember.nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node(Op.GET_ATTR, n, (), {})
            raise NameError('parameter is not a member of this module')
        if isinstance(a, ember.Tensor):
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node(Op.GET_ATTR, n, (), {})
        elif isinstance(a, ember.nn.Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node(Op.GET_ATTR, n, (), {})
        if isinstance(a, tuple) and hasattr(a, '_fields'):
            args = tuple(self.create_arg(e) for e in a)
            return self.create_node(Op.CALL_FUNCTION, a.__class__, args, {})
        if isinstance(a, ember.Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                i = 0
                while hasattr(self.root, f'_{type(a).__name__.lower()}_constant{i}'):
                    i += 1
                qualname = f'_{type(a).__name__.lower()}_constant{i}'
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node(Op.GET_ATTR, qualname, (), {})
        return super().create_arg(a)

    # --- modules ------------------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """ember.nn's own modules (except Sequential) are leaves: called, not traced through."""
        return (m.__module__.startswith(('ember.nn', 'ember.ao.nn', 'torch.nn', 'torch.ao.nn'))   # torch's names
                and not isinstance(m, ember.nn.Sequential))                                    # under ember run

    def path_of_module(self, mod):
        """The qualified name of ``mod`` inside the root module."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError('module is not installed as a submodule')
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError('module is not installed as a submodule')

    def call_module(self, m, forward, args, kwargs):
        """A submodule call: a call_module Node for a leaf, else trace ``forward`` through."""
        qualname = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(qualname, type(m))) as scope:
            self.module_stack[scope.module_path] = (qualname, scope.module_type)
            if not self.is_leaf_module(m, qualname):
                result = forward(*args, **kwargs)
            else:
                result = self.create_proxy(Op.CALL_MODULE, qualname, args, kwargs)
            self.module_stack.popitem()
        return result

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A module attribute read while tracing: a parameter of the root becomes (once per name) a get_attr
        Proxy; anything else is returned as it is."""
        def proxy_for(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        kwargs = {}
                        # a subclass's create_proxy may not take the keyword (torchvision's NodePathTracer):
                        # torch passes it only where the signature has it
                        if 'proxy_factory_fn' in inspect.signature(self.create_proxy).parameters:
                            kwargs['proxy_factory_fn'] = (None if not self.param_shapes_constant
                                                          else lambda node: ParameterProxy(self, node, n, attr_val))
                        parameter_proxy_cache[n] = self.create_proxy(Op.GET_ATTR, n, (), {}, **kwargs)
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, ember.nn.Parameter):
            p = proxy_for(self.root.named_parameters())
            if p is not None:
                return p
        if self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            p = proxy_for(self.root.named_buffers())
            if p is not None:
                return p
        return attr_val

    # --- inputs -------------------------------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The placeholder Proxies (and concrete values) ``root_fn`` is called with; ``*args``/``**kwargs``
        get one placeholder each."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total = co.co_argcount + co.co_kwonlyargcount
        names = iter(co.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total == 0:
                raise RuntimeError('``self`` argument cannot be part of *args expansion!')
            skip = 1
            next(names)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names) for _ in range(skip, total)]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(arg_names):
                raise RuntimeError(f'Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} '
                                   f'concrete arguments')
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(n, concrete_args, sig, fn) for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder('*' + next(names), concrete_args, sig, fn))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder('**' + next(names), concrete_args, sig, fn))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn):
        if concrete_args is not None and name in concrete_args:
            count = [0]

            def replace_ph(x):
                count[0] += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy(Op.PLACEHOLDER, f'{name}_{count[0]}', default, {})
                if isinstance(x, PHBase):
                    return out
                if type(x) in (bool, int, float, str, complex):
                    ember._assert(out == x, f'{name} has been specialized to have value {x} but got another value')
                elif x is None:
                    self.create_proxy(Op.CALL_FUNCTION, _assert_is_none,
                                      (out, f'{name} has been specialized to have value None but got another '
                                            f'value'), {})
                else:
                    warnings.warn(f'Was not able to add assertion to guarantee correct input {name} to specialized '
                                  f'function. It is up to the user to make sure that your inputs match the inputs '
                                  f'you specialized the function with.')
                return x
            return _tree_map(replace_ph, concrete_args[name])
        if name[0] == '*':
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy(Op.PLACEHOLDER, name, default, {},
                                 type_expr=fn.__annotations__.get(name, None))

    # --- the trace ----------------------------------------------------------------------------
    def trace(self, root, concrete_args=None):
        """Trace ``root`` (a Module or a function) and return the Graph. ``concrete_args`` fixes some
        inputs to values (for control flow on them); ``PH`` keeps one an input."""
        global _is_fx_tracing_flag
        old_flag, _is_fx_tracing_flag = _is_fx_tracing_flag, True
        try:
            if isinstance(root, ember.nn.Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = ember.nn.Module()
                fn = root
            self.graph = Graph(tracer_cls=type(self))
            self.tensor_attrs = _IdentityDict()
            self._collect_tensor_attrs(self.root, [])
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, ember.nn.Module), concrete_args)
            self._trace_with_patches(fn, args, fn_globals)
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph

    def _collect_tensor_attrs(self, m, prefix):
        for k, v in list(m.__dict__.items()) + list(m._buffers.items()):
            if isinstance(v, ember.Tensor):
                self.tensor_attrs[v] = '.'.join(prefix + [k])
        for k, c in m.named_children():
            self._collect_tensor_attrs(c, prefix + [k])

    def _trace_with_patches(self, fn, args, fn_globals):
        orig_getattr = ember.nn.Module.__getattr__
        orig_call = ember.nn.Module.__call__
        parameter_proxy_cache = {}
        tracer = self

        @functools.wraps(orig_getattr)
        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        with _Patcher() as patcher:
            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)
                _autowrap_check(patcher, getattr(getattr(mod, 'forward', mod), '__globals__', {}),
                                tracer._autowrap_function_ids)
                return tracer.call_module(mod, forward, args, kwargs)

            patcher.patch_method(ember.nn.Module, '__getattr__', module_getattr_wrapper)
            patcher.patch_method(ember.nn.Module, '__call__', module_call_wrapper)
            _patch_wrapped_functions(patcher)
            _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
            result = fn(*args)
            self.create_node(Op.OUTPUT, 'output', (self.create_arg(result),), {},
                             type_expr=getattr(fn, '__annotations__', {}).get('return', None))


def _tree_map(fn, tree):
    if isinstance(tree, (list, tuple)):
        return type(tree)(_tree_map(fn, e) for e in tree)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (an ember.nn.Module or a function) into a GraphModule.

    >>> import ember, ember.fx as fx
    >>> def f(x, y):
    ...     return ember.relu(x) + y
    >>> print(fx.symbolic_trace(f).code.strip())
    def forward(self, x, y):
        relu = ember.relu(x);  x = None
        add = relu + y;  relu = y = None
        return add
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, ember.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
