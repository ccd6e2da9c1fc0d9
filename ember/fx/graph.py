"""Graph: the intermediate representation of torch.fx, a list of Nodes in execution order.

A Graph owns its Nodes (a doubly linked list behind a sentinel), the namespace that keeps their names unique
and Python identifiers, and the code generator that writes the graph as a Python ``forward`` function
(``python_code``), which GraphModule compiles. ``lint`` checks the invariants every pass must keep.
"""
import builtins
import copy
import inspect
import keyword
import math
import operator
import re
from ember._warn import warnings
from ember.compat import imported_as

from .node import Node, Op, map_arg, _get_qualified_name, _ember_name, _type_repr

__all__ = ['Graph', 'PythonCode', 'CodeGen']


# --- names --------------------------------------------------------------------------------------

_ILLEGAL_CHARS = re.compile('[^0-9a-zA-Z_]+')
_NAME_SUFFIX = re.compile(r'(.*)_(\d+)$')
_CAMEL = re.compile(r'(?<=[a-z])([A-Z])')


def _snake_case(s):
    """``'fooBar'`` → ``'foo_bar'``, as node names are derived from targets."""
    return _CAMEL.sub(r'_\1', s).lower()


def _is_magic(x):
    return x.startswith('__') and x.endswith('__')


class _CustomBuiltin:
    def __init__(self, import_str, obj):
        self.import_str = import_str
        self.obj = obj


def _custom_builtins():
    """Names every generated forward may use without importing them, with how to import them."""
    import ember
    return {'inf': _CustomBuiltin('from math import inf', math.inf),
            'nan': _CustomBuiltin('from math import nan', math.nan),
            'NoneType': _CustomBuiltin('NoneType = type(None)', type(None)),
            imported_as(): _CustomBuiltin(f'import {imported_as()}', ember),
            'device': _CustomBuiltin('from ember import device', ember.device)}


class _Namespace:
    """Unique, legal Python names for nodes and the globals of generated code: illegal characters become
    ``_``, a taken name gets the next ``_<n>`` suffix, keywords and builtins are avoided."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}
        self._builtins = _custom_builtins()

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _ILLEGAL_CHARS.sub('_', candidate)
        if not candidate:
            candidate = '_unnamed'
        if candidate[0].isdigit():
            candidate = f'_{candidate}'
        m = _NAME_SUFFIX.match(candidate)
        if m is None:
            base, num = candidate, None
        else:
            base, num = m.group(1), int(m.group(2))
            candidate = f'{base}_{num}'
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f'{base}_{num}'
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _is_illegal_name(self, name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name in self._builtins:
            return obj is not self._builtins[name].obj
        return False

    def copy(self):
        ns = copy.copy(self)
        ns._obj_to_name = dict(self._obj_to_name)
        ns._used_names = set(self._used_names)
        ns._base_count = dict(self._base_count)
        return ns


# --- the node list ------------------------------------------------------------------------------

class _NodeList:
    """``graph.nodes``: iterating survives erasing the current node (an erased node keeps its links)."""

    def __init__(self, graph, direction='_next'):
        self._graph = graph
        self._dir = direction

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._dir)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._dir)

    def __reversed__(self):
        return iter(_NodeList(self._graph, '_prev' if self._dir == '_next' else '_next'))

    def __repr__(self):
        return repr(list(self))


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


# --- code generation ----------------------------------------------------------------------------

class PythonCode:
    """What ``Graph.python_code`` returns: the source, the globals it needs, and which generated line
    belongs to which node (``_lineno_map``: line number → node name)."""

    def __init__(self, src, globals, _lineno_map=None):
        self.src = src
        self.globals = globals
        self._lineno_map = _lineno_map or {}


# operator functions written as Python syntax in generated code
_MAGIC = {'add': '{} + {}', 'sub': '{} - {}', 'mul': '{} * {}', 'floordiv': '{} // {}', 'truediv': '{} / {}',
          'mod': '{} % {}', 'pow': '{} ** {}', 'lshift': '{} << {}', 'rshift': '{} >> {}', 'and_': '{} & {}',
          'or_': '{} | {}', 'xor': '{} ^ {}', 'getitem': '{}[{}]', 'matmul': '{} @ {}', 'eq': '{} == {}',
          'ne': '{} != {}', 'lt': '{} < {}', 'gt': '{} > {}', 'le': '{} <= {}', 'ge': '{} >= {}',
          'pos': '+{}', 'neg': '-{}', 'invert': '~{}'}
_INPLACE = {'iadd': '{} += {}', 'iand': '{} &= {}', 'ifloordiv': '{} //= {}', 'ilshift': '{} <<= {}',
            'imod': '{} %= {}', 'imul': '{} *= {}', 'imatmul': '{} @= {}', 'ior': '{} |= {}',
            'ipow': '{} **= {}', 'irshift': '{} >>= {}', 'isub': '{} -= {}', 'itruediv': '{} /= {}',
            'ixor': '{} ^= {}', 'setitem': '{}[{}] = {}'}


def _typing_generics():
    import typing
    return {list: typing.List, dict: typing.Dict, set: typing.Set, frozenset: typing.FrozenSet, tuple: typing.Tuple,
            type: typing.Type}


_TYPING_GENERICS = _typing_generics()


def _format_target(base, target):
    r = base
    for atom in target.split('.'):
        r = f'{r}.{atom}' if atom.isidentifier() and not keyword.iskeyword(atom) else f'getattr({r}, "{atom}")'
    return r


def _stack_summary(stack_trace):
    """``# File: path:line in fn, code: ...`` for the innermost frame of a recorded stack trace."""
    m = None
    for m in re.finditer(r'File "(.+)", line (\d+), in (\S+)\n\s*(.*)', stack_trace):
        pass
    if m is None:
        return None
    return f'# File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: {m.group(4).strip()}'


class CodeGen:
    """Writes a Graph as the Python source of ``forward`` (torch.fx.graph.CodeGen)."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        if not free_vars or free_vars[0] != 'self':
            free_vars.insert(0, 'self')
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args):
        return f'return {output_args!r}'

    def _gen_python_code(self, nodes, root_module, namespace, *, verbose=False):
        free_vars, body, globals_, wrapped_fns = [], [], {}, {}
        return_annotation = ['']
        statement_of = {}        # index in body → node name, for the line map

        def add_global(name_hint, obj):
            if name_hint in namespace._builtins and namespace._builtins[name_hint].obj is obj:
                globals_[name_hint] = obj
                return name_hint
            qualified = _ember_name(obj)
            if qualified is not None or type(obj).__name__ == 'OpOverload' and hasattr(obj, 'schema') \
                    or type(obj).__name__ == 'HigherOrderOperator':
                return qualified or _get_qualified_name(obj)     # reachable from the `ember` global
            name = namespace.create_name(name_hint, obj)
            if name in globals_ and globals_[name] is not obj:
                raise RuntimeError(f'global {name} names two objects')
            globals_[name] = obj
            return name

        for name, b in namespace._builtins.items():
            add_global(name, b.obj)

        def type_repr(t):
            if isinstance(t, type):
                if t.__module__ == 'builtins':
                    return t.__qualname__
                return _ember_name(t) or add_global(_get_qualified_name(t), t)
            origin, args = getattr(t, '__origin__', None), getattr(t, '__args__', None)
            if origin is not None and args is not None:     # typing.List[int]: typing_List[int], as torch writes it
                generic = _TYPING_GENERICS.get(origin, origin)
                name = add_global(f'typing.{getattr(generic, "_name", None) or generic.__name__}', generic)
                return f"{name}[{', '.join(type_repr(a) for a in args)}]"
            return add_global(_type_repr(t), t)

        def get_repr(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple) and hasattr(a, '_fields'):
                return f'{add_global(_get_qualified_name(type(a)), type(a))}{tuple(a)!r}'
            if type(a).__name__ == 'OpOverload' and hasattr(a, 'schema'):
                return _get_qualified_name(a)
            if callable(a) and isinstance(getattr(a, '__name__', None), str):
                if getattr(builtins, a.__name__, None) is a:
                    return a.__name__
                return add_global(_get_qualified_name(a), a)
            return repr(a)

        def format_args(args, kwargs):
            parts = [get_repr(a) for a in args] + [f'{k} = {get_repr(v)}' for k, v in kwargs.items()]
            return ', '.join(parts)

        # the last use of every value, so that the generated code frees it right after (`;  x = None`)
        last_use, last_uses_of = {}, {}
        for node in reversed(nodes):
            for i in node._input_nodes:
                if i not in last_use:
                    last_use[i] = node
                    last_uses_of.setdefault(node, []).append(i)

        prev_trace = [None]

        def stack_comment(node):
            if node.op in (Op.PLACEHOLDER, Op.OUTPUT):
                return
            trace = node.stack_trace
            if trace:
                if trace != prev_trace[0]:
                    prev_trace[0] = trace
                    summary = _stack_summary(trace)
                    if summary:
                        body.append(f'\n{summary}\n')
            elif prev_trace[0] != '':
                prev_trace[0] = ''
                body.append('\n# No stacktrace found for following nodes\n')

        def emit(node):
            ann = '' if node.type is None else f' : {type_repr(node.type)}'
            name = node.name
            if node.op == Op.PLACEHOLDER:
                default = f' = {get_repr(node.args[0])}' if node.args else ''
                free_vars.append(f'{node.target}{ann}{default}')
                raw = node.target.replace('*', '')
                if raw != name:
                    body.append(f'{name} = {raw}\n')
                return
            statement_of[len(body)] = name
            if node.op == Op.CALL_METHOD:
                body.append(f'{name}{ann} = {_format_target(get_repr(node.args[0]), node.target)}'
                            f'({format_args(node.args[1:], node.kwargs)})')
            elif node.op == Op.CALL_FUNCTION:
                t = node.target
                fname = getattr(t, '__name__', '')
                if getattr(t, '__module__', None) == '_operator' and getattr(operator, fname, None) is t \
                        and not node.kwargs:
                    if fname in _MAGIC and len(node.args) == _MAGIC[fname].count('{}'):
                        body.append(f'{name}{ann} = {_MAGIC[fname].format(*(get_repr(a) for a in node.args))}')
                        return
                    if fname in _INPLACE and len(node.args) == _INPLACE[fname].count('{}'):
                        body.append(f'{_INPLACE[fname].format(*(get_repr(a) for a in node.args))};  '
                                    f'{name}{ann} = {get_repr(node.args[0])}')
                        return
                gname = fname if getattr(builtins, fname, None) is t else add_global(_get_qualified_name(t), t)
                if t is getattr and len(node.args) == 2 and isinstance(node.args[1], str) \
                        and node.args[1].isidentifier() and not keyword.iskeyword(node.args[1]) and not node.kwargs:
                    body.append(f'{name}{ann} = {_format_target(get_repr(node.args[0]), node.args[1])}')
                    return
                body.append(f'{name}{ann} = {gname}({format_args(node.args, node.kwargs)})')
                if node.meta.get('is_wrapped', False):
                    wrapped_fns.setdefault(gname)
            elif node.op == Op.CALL_MODULE:
                body.append(f'{name}{ann} = {_format_target(root_module, node.target)}'
                            f'({format_args(node.args, node.kwargs)})')
            elif node.op == Op.GET_ATTR:
                body.append(f'{name}{ann} = {_format_target(root_module, node.target)}')
            elif node.op == Op.OUTPUT:
                if node.type is not None:
                    return_annotation[0] = f' -> {type_repr(node.type)}'
                body.append(self.generate_output(map_arg(node.args[0], lambda n: n)))
            else:
                raise NotImplementedError(f'node: {node.op} {node.target}')

        def free_dead_values(user):
            if user.op == Op.PLACEHOLDER:
                return
            if user.op == Op.OUTPUT:
                body.append('\n')
                return
            dead = list(last_uses_of.get(user, []))
            if not user.users:
                dead.append(user)
            body.append(f";  {' = '.join([n.name for n in dead] + ['None'])}\n" if dead else '\n')

        for node in nodes:
            if verbose:
                stack_comment(node)
            emit(node)
            free_dead_values(node)

        if not body:
            body.append('pass\n')
        wrap_stmts = '\n'.join(f'{imported_as()}.fx._symbolic_trace.wrap("{n}")' for n in wrapped_fns)
        prologue = self.gen_fn_def(free_vars, return_annotation[0])

        # line numbers: the statements after the prologue, with leading blank lines stripped as the code is
        joined = ''.join(body)
        stripped = len(joined) - len(joined.lstrip('\n'))
        code = '\n'.join('    ' + line for line in joined.lstrip('\n').split('\n'))
        head = f'\n{wrap_stmts}\n\n{prologue}\n'
        fn_code = head + code
        first_line = head.count('\n') + 1
        lineno_map, newlines = {}, 0
        for i, piece in enumerate(body):
            if i in statement_of:
                lineno_map[first_line + newlines - min(stripped, newlines)] = statement_of[i]
            newlines += piece.count('\n')
        return PythonCode(fn_code, globals_, lineno_map)


# --- the graph ----------------------------------------------------------------------------------

_SORT_STEP = 1 << 20


class Graph:
    """Nodes in execution order, with the methods that build, edit, check and print them.

    >>> import ember, ember.fx as fx
    >>> g = fx.Graph()
    >>> x = g.placeholder('x')
    >>> y = g.call_function(ember.relu, (x,))
    >>> _ = g.output(y)
    >>> print(g)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %relu : [num_users=1] = call_function[target=ember.relu](args = (%x,), kwargs = {})
        return relu
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, '', Op.ROOT, '', (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The Nodes in order; ``reversed(graph.nodes)`` walks backwards; erasing while iterating is safe."""
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The Nodes with opcode ``op`` (and ``target`` when given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def _assign_sort_key(self, x):
        p, n = x._prev, x._next
        lo = p._sort_key if p is not self._root else None
        hi = n._sort_key if n is not self._root else None
        if lo is None and hi is None:
            x._sort_key = 0
        elif hi is None:
            x._sort_key = lo + _SORT_STEP
        elif lo is None:
            x._sort_key = hi - _SORT_STEP
        elif hi - lo > 1:
            x._sort_key = (lo + hi) // 2
        else:                   # no room left between the neighbours: renumber the whole list
            for i, node in enumerate(self._all_nodes()):
                node._sort_key = i * _SORT_STEP

    def _all_nodes(self):
        cur = self._root._next
        while cur is not self._root:
            yield cur
            cur = cur._next

    # --- building -------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Insert a new Node at the insert point (the end, or set by ``inserting_before/after``)."""
        if op not in Op.ALL or op == Op.ROOT:
            raise AssertionError(f'{op!r} is not a valid opcode')
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError('args must be a tuple')
        if not isinstance(kwargs, dict):
            raise AssertionError('kwargs must be a dict')
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def process_inputs(self, *args):
        return args

    def process_outputs(self, out):
        return out

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """A graph input named ``name`` (a default value makes it optional in the generated forward)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node(Op.PLACEHOLDER, name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """A Node that fetches ``qualified_name`` (a parameter, buffer or attribute path) from the module."""
        if self.owning_module is not None and not _has_attr_path(self.owning_module, qualified_name):
            warnings.warn('Attempted to insert a get_attr Node with no underlying reference in the owning '
                          'GraphModule! Call GraphModule.add_submodule to add the necessary submodule, '
                          'GraphModule.add_parameter to add the necessary Parameter, or '
                          'nn.Module.register_buffer to add the necessary buffer', stacklevel=2)
        return self.create_node(Op.GET_ATTR, qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """A Node that calls the submodule at path ``module_name``."""
        if self.owning_module is not None and not _has_attr_path(self.owning_module, module_name):
            warnings.warn('Attempted to insert a call_module Node with no underlying reference in the owning '
                          'GraphModule! Call GraphModule.add_submodule to add the necessary submodule', stacklevel=2)
        return self.create_node(Op.CALL_MODULE, module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """A Node that calls method ``method_name`` of ``args[0]``."""
        return self.create_node(Op.CALL_METHOD, method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        """A Node that calls ``the_function``."""
        return self.create_node(Op.CALL_FUNCTION, the_function, args, kwargs, name=name, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """The Node that returns ``result`` (a Node or a structure of Nodes) from the graph."""
        return self.create_node(Op.OUTPUT, 'output', args=(result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) in this graph, its argument Nodes mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every Node of ``g`` into this graph; ``val_map`` maps ``g``'s Nodes to values here (filled in
        as it goes; Nodes already in it are not copied). Returns the value ``g`` outputs, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == Op.OUTPUT:
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = {} if memo is None else memo
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if out is not None:
            value, old_output = out
            new_output = g.output(value, type_expr=getattr(old_output, 'type', None))
            new_output.meta = copy.copy(old_output.meta)
        return g

    def inserting_before(self, n=None):
        """``with graph.inserting_before(n):`` new Nodes go just before ``n`` (the start when None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError('Node to insert before is not in graph.')
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """``with graph.inserting_after(n):`` new Nodes go just after ``n`` (the end when None); as in torch,
        each goes right after ``n``, so several come out in reverse order of creation."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError('Node to insert after is not in graph.')
        return _InsertPoint(self, n.append)

    # --- editing --------------------------------------------------------------------------
    def erase_node(self, to_erase):
        """Remove a Node that nothing uses any more."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f'Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in '
                               f'the graph: {to_erase.users}!')
        if to_erase.graph is not self:
            raise RuntimeError(f'Attempting to remove {to_erase} from wrong graph!')
        if to_erase._erased:
            warnings.warn(f'erase_node({to_erase}) on an already erased node')
            return
        p, n = to_erase._prev, to_erase._next      # the erased node keeps its links: iteration goes on
        p._next, n._prev = n, p
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def eliminate_dead_code(self, is_impure_node=None):
        """Erase every Node whose value nobody uses and that has no side effect (``Node.is_impure``, or
        ``is_impure_node(node)`` when given); returns whether anything changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def _target_to_str(self, target):
        if callable(target) and not isinstance(target, str):
            op = getattr(target, '__name__', None) or type(target).__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    # --- checking and printing ------------------------------------------------------------
    def lint(self):
        """Check the invariants: each Node belongs to this graph, arguments are defined before use, names are
        unique, use lists agree with arguments, and (with an owning module) targets exist."""
        seen_names, seen_values = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f'Node {node} does not belong to this Graph!')
            if node.op not in Op.ALL or node.op == Op.ROOT:
                raise RuntimeError(f'Node {node} had unknown opcode {node.op}!')
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                                       f"used as an argument! If you are copying nodes from another graph, make "
                                       f"sure to use ``arg_transform`` on node_copy() to remap values\n{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       f"Please check that Nodes in the graph are topologically ordered\n{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' uses '{arg}' but is not among its users")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"Node '{user}' is listed as a user of '{node}' but does not use it")
            if node.name in seen_names:
                raise RuntimeError(f'Node redefined name {node.name}!')
            seen_names.add(node.name)
            seen_values.add(node)
        if self.owning_module is not None:
            self._lint_targets()

    def _lint_targets(self):
        import ember
        for node in self.nodes:
            if node.op not in (Op.GET_ATTR, Op.CALL_MODULE):
                continue
            if not isinstance(node.target, str):
                raise RuntimeError(f'Node {node} target {node.target} has type {type(node.target)} but a str is '
                                   f'expected')
            obj, seen = self.owning_module, []
            for atom in node.target.split('.'):
                if not hasattr(obj, atom):
                    raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} "
                                       f"of {'.'.join(seen) or 'root'}")
                obj = getattr(obj, atom)
                seen.append(atom)
            if node.op == Op.CALL_MODULE and not isinstance(obj, ember.nn.Module):
                raise RuntimeError(f"Node {node} target {node.target} {atom} of {'.'.join(seen[:-1]) or 'root'} "
                                   f"does not reference an nn.Module")

    def __str__(self):
        return '\n'.join(['graph():'] + ['    ' + node.format_node() for node in self.nodes])

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs); needs the ``tabulate`` package."""
        try:
            from tabulate import tabulate
        except ImportError:
            print('`print_tabular` relies on the library `tabulate`, which could not be found on this machine. '
                  'Run `pip install tabulate` to install the library.')
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=['opcode', 'name', 'target', 'args', 'kwargs']))

    def python_code(self, root_module, *, verbose=False, include_stride=False, include_device=False,
                    colored=False, expanded_def=False):
        """The graph as the Python source of ``forward`` (``root_module`` names the module in that code,
        ``'self'``), with the globals it needs: a ``PythonCode``. ``verbose`` adds the recorded stack traces
        as comments."""
        return self._codegen._gen_python_code(list(self.nodes), root_module, self._graph_namespace.copy(),
                                              verbose=verbose)

    def on_generate_code(self, make_transformer):
        raise NotImplementedError('ember.fx.Graph.on_generate_code is not implemented')


def _has_attr_path(mod, path):
    for atom in path.split('.'):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True
