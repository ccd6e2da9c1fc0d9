"""Running a TorchScript archive's code without executing anything from the file.

NOTE [TorchScript interpreter]: ``ember.jit.load`` never hands the file's source to Python (SECURITY.md: loading
runs no code from the file). It parses each code file with ``ast`` and interprets a small subset of TorchScript,
the one traced modules are written in:

- statements: ``name = expr``, ``a, b = expr``, ``return expr``, a bare call, ``pass``;
- expressions: numbers, strings, None/True/False, ``-number``, tuples and lists, ``value[index]`` on a tuple or
  list, local names, ``self.<attr>`` and ``<module>.<attr>`` (parameters, buffers, submodules, ``training`` and
  the plain values data.pkl gave the object), ``getattr(module, "name")``, ``CONSTANTS.c<i>``;
- calls: ``torch.<op>(...)`` and ``ops.aten.<op>(...)`` (ember's operator of that name, or one of the few torch
  functions in ``_FUNCTIONS``; integer dtype/layout/memory-format arguments become ember's enums as the
  operator's schema says), ``(<module>).<method>(...)`` (the method of the submodule's class in the archive),
  ``annotate(T, v)`` (v), ``int``/``float``/``bool`` of a number or one-element tensor, ``torch.device("...")``.

Anything else raises NotImplementedError naming the construct and its file and line. Names resolve only
from this table and the module objects of the archive: nothing from the file reaches ``eval``, ``import`` or
an arbitrary attribute of an ember object.
"""
import ast
import math
import operator
import textwrap

import ember
from ..compat import _dotted    # ['a', 'b', 'c'] for the expression a.b.c, else None
from ._trace import SCALAR_TYPES, MEMORY_FORMATS, LAYOUTS

_ENUMS = {'ScalarType': lambda i: getattr(ember, SCALAR_TYPES[i]),
          'MemoryFormat': lambda i: getattr(ember, MEMORY_FORMATS[i]),
          'Layout': lambda i: getattr(ember, LAYOUTS[i])}


def _size(t, dim=None):
    return list(t.shape) if dim is None else t.shape[dim]


# torch functions TorchScript code names whose ember counterpart is a function rather than a declared operator
_FUNCTIONS = {name: (lambda name: lambda *a, **k: getattr(ember, name)(*a, **k))(name)
              for name in ('batch_norm', 'instance_norm', 'max_pool1d', 'max_pool2d', 'max_pool3d', 'lstm', 'gru',
                           'rnn_tanh', 'rnn_relu', 'lstm_cell', 'gru_cell', 'rnn_tanh_cell', 'rnn_relu_cell')}


def _upsample(mode, aligned):
    """torch's ``upsample_<mode>(input, output_size, [align_corners,] scale_factors)`` (the ``.vec`` overloads a
    trace of ``F.interpolate`` writes) as ``F.interpolate``."""
    def upsample(input, output_size, *rest):
        align, scales = (rest[0], rest[1]) if aligned else (None, rest[0])
        return ember.nn.functional.interpolate(input, size=output_size, scale_factor=scales, mode=mode,
                                               align_corners=align)
    return upsample


_FUNCTIONS.update({f'upsample_nearest{d}d': _upsample('nearest', False) for d in (1, 2, 3)})
_FUNCTIONS.update({f'_upsample_nearest_exact{d}d': _upsample('nearest-exact', False) for d in (1, 2, 3)})
_FUNCTIONS.update({'upsample_linear1d': _upsample('linear', True), 'upsample_bilinear2d': _upsample('bilinear', True),
                   'upsample_bicubic2d': _upsample('bicubic', True),
                   'upsample_trilinear3d': _upsample('trilinear', True)})
# factory arguments torch's schemas have and ember's do not, dropped where they ask for the only thing ember does
_DEFAULT_ONLY = {'layout': (None, 0), 'pin_memory': (None, False)}
# names TorchScript source uses for float constants (torch writes float('-inf') as -inf)
_FLOAT_NAMES = {'inf': math.inf, 'nan': math.nan}
_FUNCTIONS.update({'device': lambda s: ember.device(s), 'size': _size, 'dim': lambda t: t.dim(),
                   'numel': lambda t: t.numel()})
# the exception classes ``ops.prim.RaiseException(message, class)`` may name; any other is a RuntimeError
_EXCEPTIONS = {f'builtins.{e.__name__}': e for e in (RuntimeError, ValueError, TypeError, IndexError, KeyError,
                                                      AssertionError, NotImplementedError)}


def _raise(message, cls=None):
    raise _EXCEPTIONS.get(cls, RuntimeError)(message)


_PRIMS = {'NumToTensor': lambda v: ember.tensor(v), 'RaiseException': _raise}
# ``torch.eq(int, int)`` and friends: TorchScript's integer overloads, computed on the numbers
_NUMBER_OPS = {'eq': operator.eq, 'ne': operator.ne, 'lt': operator.lt, 'le': operator.le, 'gt': operator.gt,
               'ge': operator.ge, 'add': operator.add, 'sub': operator.sub, 'mul': operator.mul,
               'floordiv': operator.floordiv}


def _on_numbers(name, tensor_op):
    fn = _NUMBER_OPS[name]

    def call(*args, **kwargs):
        if not kwargs and len(args) == 2 and all(type(a) in (int, float, bool) for a in args):
            return fn(*args)
        return tensor_op(*args, **kwargs)
    return call
_BUILTINS = {'int': int, 'float': float, 'bool': bool}


class _Unsupported(NotImplementedError):
    pass


def _unsupported(what, where, node):
    return _Unsupported(f"ember.jit.load: {what} at {where}:{getattr(node, 'lineno', '?')} is not supported; ember "
                        f"interprets only the TorchScript subset traced modules are written in (NOTE [TorchScript "
                        f"interpreter])")


def _fits(a, v, numbers_as_tensors):
    """Whether the value ``v`` may bind to the schema argument ``a`` (TorchScript's overload choice, by kind);
    ``numbers_as_tensors``: a Python number binds to a Tensor too (ember declares ``add.Tensor``, torch also
    ``add.Scalar``, and its operators take wrapped numbers)."""
    if v is None:
        return a.optional or a.type.startswith('Tensor?')
    t = a.type.rstrip('?')
    if t.endswith(']'):
        return isinstance(v, (list, tuple)) or (type(v) is int and t[-2].isdigit())      # int[2] takes an int
    kind = a.base_type
    if kind == 'Tensor':
        return isinstance(v, ember.Tensor) or numbers_as_tensors and type(v) in (bool, int, float, complex)
    if kind in ('int', 'SymInt'):
        return type(v) is int
    if kind in ('float', 'SymFloat'):
        return type(v) in (int, float)
    if kind == 'bool':
        return type(v) is bool
    if kind == 'Scalar':
        return type(v) in (bool, int, float, complex) or isinstance(v, ember.Tensor) and v.dim() == 0
    if kind in _ENUMS:
        return type(v) is int
    if kind == 'str':
        return isinstance(v, str)
    return True


def _bind(schema, args, kwargs, numbers_as_tensors):
    """Whether ``args``/``kwargs`` fit ``schema``: counts, names, defaults and kinds."""
    params = schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional) or any(k not in {a.name for a in params} for k in kwargs):
        return False
    for i, a in enumerate(params):
        if i < len(args) and not a.kwarg_only:
            if a.name in kwargs or not _fits(a, args[i], numbers_as_tensors):
                return False
        elif a.name in kwargs:
            if not _fits(a, kwargs[a.name], numbers_as_tensors):
                return False
        elif not a.has_default:
            return False
    return True


class _Operator:
    """``torch.<name>`` / ``ops.aten.<name>``: the first of ember's overloads the arguments fit, as TorchScript
    chooses among its schemas, with integer dtype/layout/memory-format arguments made ember's enums."""

    def __init__(self, packet):
        self.overloads = [getattr(packet, name) for name in packet.overloads()]
        self.name = packet.__name__ if hasattr(packet, '__name__') else str(packet)

    def __call__(self, *args, **kwargs):
        extra = {k for k, v in kwargs.items() if k in _DEFAULT_ONLY and any(v is d for d in _DEFAULT_ONLY[k])}
        op = next((op for lenient in (False, True) for op in self.overloads
                   if _bind(op.schema, args, _without(kwargs, extra, op.schema), lenient)), None)
        if op is not None:
            kwargs = _without(kwargs, extra, op.schema)
        if op is None:
            shown = ', '.join([type(a).__name__ for a in args] + [f'{k}={type(v).__name__}' for k, v in kwargs.items()])
            raise RuntimeError(f"Arguments for call are not valid: no schema of {self.name} takes ({shown}); it has "
                               + '; '.join(str(o.schema) for o in self.overloads))
        kinds = {a.name: a.base_type for a in op.schema.arguments if a.base_type in _ENUMS}
        names = [a.name for a in op.schema.arguments]
        args = [_ENUMS[kinds[n]](v) if n in kinds and type(v) is int else v for n, v in zip(names, args)]
        kwargs = {n: _ENUMS[kinds[n]](v) if n in kinds and type(v) is int else v for n, v in kwargs.items()}
        return op(*args, **kwargs)


def _without(kwargs, extra, schema):
    """``kwargs`` less the arguments of ``extra`` that ``schema`` does not take."""
    if not extra:
        return kwargs
    names = {a.name for a in schema.arguments}
    return {k: v for k, v in kwargs.items() if k not in extra or k in names}


def _operator(path, where, node):
    """The callable a dotted name of TorchScript code stands for (``torch.linear``, ``ops.aten.linear``)."""
    head, name = path[:-1], path[-1]
    if head in (['torch'], ['ops', 'aten']):
        packet = getattr(ember.ops.aten, name, None) if not name.startswith('__') else None
        if packet is not None and hasattr(packet, 'overloads'):
            return _on_numbers(name, _Operator(packet)) if name in _NUMBER_OPS else _Operator(packet)
        if head == ['torch'] and name in _FUNCTIONS:
            return _FUNCTIONS[name]
    if head == ['ops', 'prim'] and name in _PRIMS:
        return _PRIMS[name]
    raise _unsupported(f"the operator {'.'.join(path)} (ember has none of that name)", where, node)


def _is_annotation(item):
    """``__annotations__["0"] = T``: an attribute's type declaration, nothing to run."""
    return (isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Subscript)
            and isinstance(item.targets[0].value, ast.Name) and item.targets[0].value.id == '__annotations__')


class Method:
    """One ``def`` of a class in the archive, run by ``Interpreter``."""

    def __init__(self, fn, where, source):
        self.fn, self.where = fn, where
        self.code = textwrap.dedent(ast.get_source_segment(source, fn, padded=True) or '')
        args = fn.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or not args.args:
            raise _unsupported(f"the signature of {fn.name}", where, fn)
        self.params = [a.arg for a in args.args[1:]]
        if args.defaults:
            raise _unsupported(f"default arguments of {fn.name}", where, fn)


class Interpreter:
    """Evaluates methods of one archive's classes on the modules built from it."""

    def __init__(self, archive):
        self.archive = archive
        self.classes = {}       # qualified name -> (where, {attribute declarations}, {method name: Method})

    # --- classes ------------------------------------------------------------------------------------------
    def class_of(self, qualified):
        hit = self.classes.get(qualified)
        if hit is None:
            where, source = self.archive.source_of(qualified)
            short = qualified.rpartition('.')[2]
            tree = ast.parse(source, filename=where)
            cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == short), None)
            if cls is None:
                raise RuntimeError(f"torch.jit.load: {where} declares no class {short}")
            decls, methods = {}, {}
            for item in cls.body:
                if isinstance(item, ast.FunctionDef):
                    methods[item.name] = Method(item, where, source)
                elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    decls[item.targets[0].id] = ast.literal_eval(item.value)     # __parameters__ = ["weight", ]
                elif not (isinstance(item, (ast.AnnAssign, ast.Pass, ast.Expr)) or _is_annotation(item)):
                    raise _unsupported(f"a {type(item).__name__} in class {short}", where, item)
            hit = self.classes[qualified] = (where, decls, methods)
        return hit

    # --- running -------------------------------------------------------------------------------------------
    def call(self, module, name, args, kwargs):
        where, _, methods = self.class_of(module._qualified_name)
        method = methods.get(name)
        if method is None:
            raise RuntimeError(f"{module.original_name} (from {where}) has no method {name}: ember writes the forward "
                               f"of the traced module only, on its top class")
        if len(args) > len(method.params) or set(kwargs) - set(method.params[len(args):]):
            raise RuntimeError(f"{name}() expected at most {len(method.params)} argument(s) "
                               f"{method.params}, got {len(args)} and {sorted(kwargs)}")
        env = dict(zip(method.params, args), **kwargs)
        missing = [p for p in method.params if p not in env]
        if missing:
            raise RuntimeError(f"{name}() is missing value for argument '{missing[0]}'")
        env['self'] = module
        for stmt in method.fn.body:
            if isinstance(stmt, ast.Return):
                return None if stmt.value is None else self.expr(stmt.value, env, method.where)
            self.statement(stmt, env, method.where)
        return None

    def statement(self, stmt, env, where):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            value, target = self.expr(stmt.value, env, where), stmt.targets[0]
            if isinstance(target, ast.Name):
                env[target.id] = value
            elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                values = tuple(value)
                if len(values) != len(target.elts):
                    raise RuntimeError(f"{where}:{stmt.lineno}: {len(target.elts)} names for {len(values)} values")
                env.update(zip([e.id for e in target.elts], values))
            else:
                raise _unsupported(f"assigning to a {type(target).__name__}", where, stmt)
        elif isinstance(stmt, ast.Expr):
            self.expr(stmt.value, env, where)
        elif isinstance(stmt, ast.If):          # TorchScript's if (a traced file's size checks raise in one)
            test = self.expr(stmt.test, env, where)
            if type(test) is not bool:
                raise _unsupported(f"an if on a {type(test).__name__}", where, stmt)
            for inner in (stmt.body if test else stmt.orelse):
                if isinstance(inner, ast.Return):
                    raise _unsupported("return inside an if", where, inner)
                self.statement(inner, env, where)
        elif not isinstance(stmt, ast.Pass):
            raise _unsupported(f"the statement {type(stmt).__name__}", where, stmt)

    def expr(self, node, env, where):
        kind = type(node).__name__
        handler = getattr(self, '_' + kind, None)
        if handler is None:
            raise _unsupported(f"the expression {kind} ({ast.unparse(node)})", where, node)
        return handler(node, env, where)

    def _Constant(self, node, env, where):
        return node.value

    def _Name(self, node, env, where):
        if node.id not in env:
            if node.id in _FLOAT_NAMES:
                return _FLOAT_NAMES[node.id]
            raise _unsupported(f"the name {node.id}", where, node)
        return env[node.id]

    def _Dict(self, node, env, where):
        if any(k is None for k in node.keys):
            raise _unsupported("** in a dict", where, node)
        return {self.expr(k, env, where): self.expr(v, env, where) for k, v in zip(node.keys, node.values)}

    def _UnaryOp(self, node, env, where):
        value = self.expr(node.operand, env, where)
        if isinstance(node.op, (ast.USub, ast.UAdd)) and type(value) in (int, float):
            return -value if isinstance(node.op, ast.USub) else value
        raise _unsupported(f"the operator {type(node.op).__name__} on {type(value).__name__}", where, node)

    def _List(self, node, env, where):
        return [self.expr(e, env, where) for e in node.elts]

    def _Tuple(self, node, env, where):
        return tuple(self.expr(e, env, where) for e in node.elts)

    def _Subscript(self, node, env, where):
        value, index = self.expr(node.value, env, where), self.expr(node.slice, env, where)
        if isinstance(value, (tuple, list)) and type(index) is int:
            return value[index]
        raise _unsupported(f"indexing a {type(value).__name__} with a {type(index).__name__}", where, node)

    def _Attribute(self, node, env, where):
        path = _dotted(node)
        if path is not None and path[0] == 'CONSTANTS' and 'CONSTANTS' not in env and len(path) == 2:
            index = path[1][1:]
            if path[1].startswith('c') and index.isdigit() and int(index) < len(self.archive.constants):
                return self.archive.constants[int(index)]
            raise RuntimeError(f"{where}:{node.lineno}: constants.pkl has no {path[1]}")
        return self.attribute(self.expr(node.value, env, where), node.attr, where, node)

    def attribute(self, obj, name, where, node):
        if isinstance(obj, ember.nn.Module) and hasattr(obj, '_script_attributes'):
            if name in obj._script_attributes:
                return getattr(obj, name)
            raise RuntimeError(f"{where}:{node.lineno}: module {obj.original_name} has no attribute {name}")
        raise _unsupported(f"reading .{name} of a {type(obj).__name__}", where, node)

    def _Call(self, node, env, where):
        func = node.func
        if isinstance(func, ast.Name) and func.id == 'annotate' and 'annotate' not in env:
            if len(node.args) != 2 or node.keywords:
                raise _unsupported("annotate() without (type, value)", where, node)
            return self.expr(node.args[1], env, where)       # the type is TorchScript's, nothing to evaluate
        args = [self.expr(a, env, where) for a in node.args]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise _unsupported("*args or **kwargs in a call", where, node)
        kwargs = {k.arg: self.expr(k.value, env, where) for k in node.keywords}
        path = _dotted(func)
        if isinstance(func, ast.Name) and func.id not in env:
            return self.builtin(func.id, node, args, kwargs, where)
        if path is not None and path[0] in ('torch', 'ops') and path[0] not in env:
            return _operator(path, where, node)(*args, **kwargs)
        if isinstance(func, ast.Attribute):
            obj = self.expr(func.value, env, where)
            if isinstance(obj, ember.nn.Module) and hasattr(obj, '_script_attributes'):
                return self.call(obj, func.attr, args, kwargs)
        raise _unsupported(f"the call {ast.unparse(func)}(...)", where, node)

    def builtin(self, name, node, args, kwargs, where):
        if name == 'getattr' and len(args) == 2 and isinstance(args[1], str) and not kwargs:
            return self.attribute(args[0], args[1], where, node)
        if name in _BUILTINS and len(args) == 1 and not kwargs:
            value = args[0]
            return _BUILTINS[name](value.item() if isinstance(value, ember.Tensor) else value)
        raise _unsupported(f"the call {name}(...)", where, node)
