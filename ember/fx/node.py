"""Node: one operation of a Graph (torch.fx.Node).

A Node has an opcode (``op``), a ``target`` (the function, method name, module path or attribute path it
runs), ``args``/``kwargs`` in which other Nodes stand for their values, and the set of Nodes that use it
(``users``). A Graph keeps its Nodes in a doubly linked list through ``_prev``/``_next``; a sentinel root
Node closes the ring. Arguments are stored immutable (immutable_list/immutable_dict) so that every change
goes through ``args``/``kwargs``/``update_arg``, which keep the use lists right.
"""
import builtins
import operator
import types

from .immutable_collections import immutable_dict, immutable_list

__all__ = ['Node', 'map_arg', 'map_aggregate', 'has_side_effect', 'Argument', 'Target']


class Op:
    """The six opcodes of a Node (torch keeps them as these strings; ``node.op == Op.CALL_FUNCTION``)."""
    PLACEHOLDER = 'placeholder'
    GET_ATTR = 'get_attr'
    CALL_FUNCTION = 'call_function'
    CALL_METHOD = 'call_method'
    CALL_MODULE = 'call_module'
    OUTPUT = 'output'
    ROOT = 'root'           # the sentinel closing a Graph's node list; never seen in a graph's nodes
    ALL = (PLACEHOLDER, GET_ATTR, CALL_FUNCTION, CALL_METHOD, CALL_MODULE, OUTPUT, ROOT)


Argument = object   # a Node, a base value, or a tuple/list/dict/slice of Arguments
Target = object     # a callable for call_function, else a str

# functions whose nodes dead-code elimination keeps although nothing uses their value
_side_effectful_functions = {operator.setitem}


def has_side_effect(fn):
    """Mark ``fn`` so that ``Graph.eliminate_dead_code`` keeps its call_function nodes (torch.fx.node)."""
    _side_effectful_functions.add(fn)
    return fn


def map_arg(a, fn):
    """Apply ``fn`` to every Node in the nested argument structure ``a``."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of the nested tuples, lists, dicts and slices in ``a``; lists and dicts come
    back immutable, tuples (named tuples too) keep their type."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if type(a) is tuple or not hasattr(a, '_fields') else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


class Node:
    """One operation in a Graph. ``node.args``/``node.kwargs`` hold other Nodes where values flow in.

    >>> import ember, ember.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder('x')
    >>> r = g.call_function(ember.relu, (x,))
    >>> r.op, r.target is ember.relu, r.args, list(x.users)
    ('call_function', True, (x,), [relu])
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in Op.ALL:
            raise ValueError(f"Node op must be one of {Op.ALL[:-1]}, got {op!r}")
        if op == Op.CALL_FUNCTION and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a Callable is expected")
        if op in (Op.PLACEHOLDER, Op.GET_ATTR, Op.CALL_METHOD, Op.CALL_MODULE) and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._sort_key = 0
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # --- the linked list -------------------------------------------------------------------
    @property
    def next(self):
        """The Node after this one in its graph (the root sentinel after the last)."""
        return self._next

    @property
    def prev(self):
        """The Node before this one in its graph."""
        return self._prev

    def prepend(self, x):
        """Move (or insert) Node ``x`` to just before this one."""
        if self is x:
            raise AssertionError("Cannot prepend self")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x
        self.graph._assign_sort_key(x)

    def append(self, x):
        """Move (or insert) Node ``x`` to just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    def __lt__(self, other):
        return self._sort_key < other._sort_key

    def __gt__(self, other):
        return self._sort_key > other._sort_key

    def __le__(self, other):
        return self is other or self < other

    def __ge__(self, other):
        return self is other or self > other

    # --- arguments and uses ----------------------------------------------------------------
    @property
    def args(self):
        """The positional arguments: a tuple in which Nodes stand for the values they compute."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments, a dict in which Nodes stand for values."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """Every Node in ``args`` and ``kwargs``, each once, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """Set ``args[idx]`` to ``arg``."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Set ``kwargs[key]`` to ``arg``."""
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for n in self._input_nodes:
            n.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(tuple(new_args), _freeze)
        self._kwargs = map_aggregate(dict(new_kwargs), _freeze)
        map_arg(self._args, self._input_nodes.setdefault)
        map_arg(self._kwargs, self._input_nodes.setdefault)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def replace_all_uses_with(self, replace_with, delete_user_cb=None, *, propagate_meta=False):
        """Make every user of this Node use ``replace_with`` instead (those ``delete_user_cb`` accepts when
        given); returns the users changed. ``propagate_meta`` copies this Node's meta to ``replace_with``."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError('Called node.replace_all_uses_with(replace_with, propagate_meta=True), but '
                                     'replace_with already has .meta keys')
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Use ``new_input`` wherever this Node's arguments use ``old_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # --- properties that live in meta ------------------------------------------------------
    @property
    def stack_trace(self):
        """The user code that created this Node, when the tracer recorded it (``Tracer.record_stack_traces``)."""
        return self.meta.get('stack_trace')

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta['stack_trace'] = trace

    def is_impure(self):
        """True when removing this Node, though unused, could change what the program does."""
        if self.op in (Op.PLACEHOLDER, Op.OUTPUT):
            return True
        if self.op == Op.CALL_FUNCTION:
            if self.target in _side_effectful_functions:
                return True
            schema = getattr(self.target, 'schema', None)       # an aten operator that writes an argument (add_)
            return bool(getattr(schema, 'is_mutable', False))
        if self.op == Op.CALL_MODULE and self.graph.owning_module is not None:
            return getattr(self.graph.owning_module.get_submodule(self.target), '_is_impure', False)
        return False

    # --- printing --------------------------------------------------------------------------
    def __repr__(self):
        return self.name

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """This Node as a line of the graph printout, e.g. ``%relu : [num_users=1] = call_function[...](...)``;
        the output Node prints as ``return ...``. With ``placeholder_names`` (a list), a placeholder appends
        its name there and returns None."""
        if self.op == Op.PLACEHOLDER:
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            default = f'(default={self.args[0]})' if self.args else ''
            return f'%{self.name} : {_type_prefix(self.type)}[num_users={len(self.users)}] = ' \
                   f'placeholder[target={self.target}]{default}'
        if self.op == Op.OUTPUT:
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f' -> {_type_repr(self.type)}'
            return f'return {self.args[0]}'
        if self.op == Op.GET_ATTR:
            return f'%{self.name} : {_type_prefix(self.type)}[num_users={len(self.users)}] = ' \
                   f'get_attr[target={self.target}]'
        return f'%{self.name} : {_type_prefix(self.type)}[num_users={len(self.users)}] = ' \
               f'{self.op}[target={_pretty_target(self.target)}](args = {_format_arg(self.args)}, ' \
               f'kwargs = {_format_arg(self.kwargs)})'


def _freeze(a):
    return a


def _type_prefix(t):
    return f'{_type_repr(t)} ' if t is not None else ''


def _type_repr(t):
    if isinstance(t, type):
        if t.__module__ == 'builtins':
            return t.__qualname__
        return _get_qualified_name(t)
    return repr(t)


def _format_arg(a):
    if isinstance(a, Node):
        return f'%{a.name}'
    if isinstance(a, tuple) and not hasattr(a, '_fields'):
        inner = ', '.join(_format_arg(e) for e in a)
        return f'({inner},)' if len(a) == 1 else f'({inner})'
    if isinstance(a, list):
        return '[' + ', '.join(_format_arg(e) for e in a) + ']'
    if isinstance(a, dict):
        return '{' + ', '.join(f'{k}: {_format_arg(v)}' for k, v in a.items()) + '}'
    return str(a)


def _pretty_target(target):
    if isinstance(target, str):
        return target
    name = _get_qualified_name(target)
    return 'operator.' + name[len('_operator.'):] if name.startswith('_operator.') else name


# --- qualified names: how generated code and printouts name a target -----------------------------

_EMBER_NAMESPACES = ('ember', 'ember.nn.functional', 'ember.linalg', 'ember.special', 'ember.fft', 'ember.sparse')


def _ember_name(obj):
    """``'ember.relu'`` / ``'ember.nn.functional.relu'`` when ``obj`` is reachable under that public name."""
    import sys
    name = getattr(obj, '__name__', None)
    if not isinstance(name, str):
        return None
    module = getattr(obj, '__module__', None) or ''
    candidates = []
    if module.split('.')[0] == 'ember':
        parts = module.split('.')
        while parts and any(p.startswith('_') for p in parts):
            parts.pop()
        while parts:
            candidates.append('.'.join(parts))
            parts.pop()
    if module.split('.')[0] == 'ember':
        candidates.append(module)       # a private module's function (ember.fx._symbolic_trace._assert_is_none)
    for c in candidates[:-1] + list(_EMBER_NAMESPACES) + candidates[-1:]:
        m = sys.modules.get(c)
        if m is not None and getattr(m, name, None) is obj:
            return _shown(f'{c}.{name}')
    tensor = getattr(sys.modules.get('ember'), 'Tensor', None)
    if tensor is not None and getattr(tensor, name, None) is obj:
        return _shown(f'ember.Tensor.{name}')
    return None


def _shown(qualified):
    """``ember.relu`` as the program knows it: ``torch.relu`` under ``ember run``, where ``torch`` is ember; the
    generated code's global of that name is the ember module (graph._custom_builtins)."""
    from ember.compat import imported_as
    return imported_as() + qualified[len('ember'):]


def _get_qualified_name(func):
    """The dotted name a printout gives ``func``: ``operator.add``, ``builtins.getattr``, ``ember.relu``,
    ``ember.ops.aten.add.Tensor``, ``__main__.my_function``."""
    if getattr(builtins, getattr(func, '__name__', ''), None) is func:
        return f'builtins.{func.__name__}'
    if type(func).__name__ == 'OpOverload' and hasattr(func, 'schema'):
        return _shown(f'ember.ops.{func}')
    if type(func).__name__ == 'HigherOrderOperator':
        return _shown(f'ember.ops.{func.namespace}.{func.name()}')
    name = _ember_name(func)
    if name is not None:
        return name
    if isinstance(func, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return f'{func.__objclass__.__module__}.{func.__objclass__.__qualname__}.{func.__name__}'
    module = getattr(func, '__module__', None) or ''
    qual = getattr(func, '__name__', None) or repr(func)
    return f'{module}.{qual}' if module else qual
