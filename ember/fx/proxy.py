"""Proxy: the stand-in value that symbolic tracing passes through a program (torch.fx.proxy).

Every operation on a Proxy records a Node instead of computing: Python operators record ``operator.*``
call_function Nodes, attribute access records ``getattr`` (or, when called, a call_method Node), and an ember
function receiving a Proxy records itself through ``__torch_function__`` (NOTE [__torch_function__] in
ember/_dispatch/torch_function.py). Control flow on a Proxy (``bool``, iteration) cannot be recorded and
raises TraceError.
"""
import collections
import copy
import dis
import operator
import os
import sys
import traceback

import ember

from .graph import _is_magic
from .node import Node, Op, map_aggregate

__all__ = ['TraceError', 'TracerBase', 'GraphAppendingTracer', 'Proxy', 'Attribute', 'ParameterProxy', 'Scope',
           'ScopeContextManager']


class TraceError(ValueError):
    """A traced program did something symbolic tracing cannot record (control flow on a traced value)."""


class Scope:
    """The module a Node was recorded in: its path from the root and its type."""

    def __init__(self, module_path, module_type):
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Sets the tracer's current Scope for the duration of a submodule's call."""

    def __init__(self, scope, current_scope):
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
_EMBER_PKG = os.path.join(_EMBER_DIR, 'ember') + os.sep


def _user_stack(traced_func_name):
    """The user code on the stack, from the traced function in, without ember's own frames."""
    frames = [f for f in traceback.extract_stack()
              if not f.filename.startswith(_EMBER_PKG) and not f.filename.startswith('<ember op')]
    for i, f in enumerate(frames):
        if f.name == traced_func_name:
            frames = frames[i:]
            break
    return ''.join(traceback.format_list(frames)).strip()


class TracerBase:
    """What records Nodes: ``create_proxy`` turns (kind, target, args, kwargs) into a Node in ``self.graph``
    and returns its Proxy; ``create_arg`` turns argument values into what a Node may hold."""
    graph = None
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = 'forward'

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        scope = getattr(self, 'scope', None)
        if scope is not None:
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        stack = getattr(self, 'module_stack', None)
        if stack:
            node.meta['nn_module_stack'] = copy.copy(stack)
        if self.record_stack_traces and kind not in (Op.PLACEHOLDER, Op.OUTPUT):
            node.stack_trace = _user_stack(self.traced_func_name)
        return node

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Record a Node for ``target`` applied to ``args``/``kwargs`` (Proxies inside become their Nodes)."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError('create_proxy: args must be a tuple and kwargs a dict')
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """``a`` as a Node argument: Proxies become Nodes, containers are rebuilt, base values stay."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(type(a), '__fx_create_arg__'):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, '_fields'):
                return type(a)(*(self.create_arg(e) for e in a))
            return tuple(self.create_arg(e) for e in a)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)

                def no_node(arg):
                    if isinstance(arg, Node):
                        raise RuntimeError(f'Keys for dictionaries used as an argument cannot contain a Node. '
                                           f'Got key: {k}')
                map_aggregate(k, no_node)
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _base_types()) or a is None or a is ...:
            return a
        raise NotImplementedError(f'argument of type: {type(a)}')

    def to_bool(self, obj):
        """``bool(proxy)``: the value is unknown while tracing."""
        raise TraceError('symbolically traced variables cannot be used as inputs to control flow')

    def iter(self, obj):
        """``iter(proxy)``: the length is unknown while tracing."""
        raise TraceError('Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop '
                         'or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a '
                         'more detailed explanation of what types of control flow can be traced, and check out the '
                         'Proxy docstring for help troubleshooting Proxy iteration errors')

    def keys(self, obj):
        """``proxy.keys()``, which ``**proxy`` calls."""
        return Attribute(obj, 'keys')()


_BASE = []


def _base_types():
    if not _BASE:
        from ember.ops import aten
        _BASE.append((str, int, float, bool, complex, Node, ember.dtype, ember.Tensor, ember.device,
                      type(ember.strided), type(aten.add.Tensor)))
    return _BASE[0]


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made directly on a Graph's Node: operations append Nodes to that graph."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope('', None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


def _is_tensor_method(fn):
    """A Tensor method that is not also the public function of the same name (``Tensor.add`` is ``ember.add``
    for generated operators: those record as functions)."""
    name = getattr(fn, '__name__', None)
    return (isinstance(name, str) and getattr(ember.Tensor, name, None) is fn
            and getattr(ember, name, None) is not fn)


class Proxy:
    """A value being traced: operations on it record Nodes in ``self.tracer.graph``.

    >>> import ember, ember.fx as fx
    >>> g = fx.Graph()
    >>> x = fx.Proxy(g.placeholder('x'))
    >>> y = ember.relu(x) + 1
    >>> y
    Proxy(add)
    >>> [n.op for n in g.nodes]
    ['placeholder', 'call_function', 'call_function']
    """

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f'Proxy({self.node.name})'

    def __getattr__(self, k):
        # protocol probes (__index__, __array__, __deepcopy__ ...) are not tensor attributes: answering them
        # with an Attribute would make every hasattr() true
        if _is_magic(k):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)      # the same Node and tracer: a Proxy names a value
        return new

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy(Op.CALL_METHOD, '__call__', (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` is an UNPACK_SEQUENCE of known length in the caller: unpack into getitem Nodes
        frame = sys._getframe(1)
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == 'UNPACK_SEQUENCE':
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy(Op.CALL_FUNCTION, operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, Proxy):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f'Found multiple different tracers {list(tracers)} while trying to trace operations '
                               f'{orig_method}')
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy(Op.CALL_METHOD, orig_method.__name__, args, kwargs)
        return tracer.create_proxy(Op.CALL_FUNCTION, orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """``proxy.attr``: a getattr Node, made only when the value is used; calling it records a call_method."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy(Op.CALL_FUNCTION, getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy(Op.CALL_METHOD, self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter's Proxy that answers shape queries with the parameter's real shape
    (``Tracer(param_shapes_constant=True)``)."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f'ParameterProxy({self.name})'

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


# --- Python operators record operator.* calls ----------------------------------------------------

_REFLECTABLE = ['add', 'sub', 'mul', 'floordiv', 'truediv', 'mod', 'pow', 'lshift', 'rshift', 'and_', 'or_',
                'xor', 'matmul']
_MAGIC = _REFLECTABLE + ['getitem', 'eq', 'ne', 'lt', 'gt', 'le', 'ge', 'pos', 'neg', 'invert']


def _install_magic():
    for name in _MAGIC:
        def impl(*args, _target=getattr(operator, name)):
            return args[0].tracer.create_proxy(Op.CALL_FUNCTION, _target, args, {})
        impl.__name__ = name
        setattr(Proxy, f'__{name.strip("_")}__', impl)
    for name in _REFLECTABLE:
        def rimpl(self, rhs, _target=getattr(operator, name)):
            return self.tracer.create_proxy(Op.CALL_FUNCTION, _target, (rhs, self), {})
        rimpl.__name__ = f'r{name}'
        setattr(Proxy, f'__r{name.strip("_")}__', rimpl)


_install_magic()
# `x += y` on a Proxy: Python falls back to __add__, which records operator.add, as torch.fx does (a traced
# in-place update becomes a new value); Graph code generation writes operator.iadd & co. as `x += y`.
Proxy.__hash__ = object.__hash__    # __eq__ records a Node, yet Proxies stay usable as dict keys
