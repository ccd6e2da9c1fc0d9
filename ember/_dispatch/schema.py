"""Operator schemas in torch's syntax, parsed once at registration.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` becomes a
`FunctionSchema` with `Argument`s; the dispatcher generates each operator's
Python entry point from it (see codegen.py), so binding, defaults and type
checks cost what a plain Python call costs.
"""
import ast
import re


class Argument:
    __slots__ = ('name', 'type', 'default', 'has_default', 'kwarg_only', 'alias', 'is_write')

    def __init__(self, name, type, default, has_default, kwarg_only, alias, is_write):
        self.name, self.type, self.default, self.has_default = name, type, default, has_default
        self.kwarg_only, self.alias, self.is_write = kwarg_only, alias, is_write

    @property
    def base_type(self):
        """``Tensor?`` -> ``Tensor``, ``int[2]`` -> ``int[]``."""
        t = self.type.rstrip('?')
        return re.sub(r'\[\d+\]', '[]', t)

    @property
    def optional(self):
        return self.type.endswith('?')

    def __repr__(self):
        a = f'({self.alias}{"!" if self.is_write else ""})' if self.alias else ''
        d = f'={_show_default(self.default)}' if self.has_default else ''
        return f'{self.type.replace("?", a + "?") if a and self.type.endswith("?") else self.type + a} {self.name}{d}'


class FunctionSchema:
    __slots__ = ('name', 'overload', 'arguments', 'returns', 'text')

    def __init__(self, name, overload, arguments, returns, text):
        self.name, self.overload, self.arguments, self.returns, self.text = name, overload, arguments, returns, text

    @property
    def full_name(self):
        return f'{self.name}.{self.overload}' if self.overload else self.name

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    @property
    def tensor_args(self):
        return [a for a in self.arguments if a.base_type in ('Tensor', 'Tensor[]')]

    def __repr__(self):
        return self.text


_CONSTS = {'True': True, 'False': False, 'None': None, 'contiguous_format': 'contiguous_format',
           'Mean': 1, 'Sum': 2, 'inf': float('inf'), '-inf': float('-inf')}


def _show_default(v):
    return {True: 'True', False: 'False', None: 'None'}.get(v, repr(v)) if not isinstance(v, (int, float)) or isinstance(v, bool) else str(v)


def _parse_default(text, typ):
    text = text.strip()
    if text in _CONSTS:
        return _CONSTS[text]
    if text.startswith('[') and not text.startswith('[]'):
        return tuple(ast.literal_eval(text))
    if text == '[]':
        return ()
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if typ.startswith('int[') and isinstance(v, int):  # int[2] stride=1 means (1, 1)
        n = re.search(r'\[(\d+)\]', typ)
        return (v,) * int(n.group(1)) if n else (v,)
    return v


def _split_top(s, sep=','):
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [p.strip() for p in out]


_ARG = re.compile(r'^(?P<type>[A-Za-z]+(?:\[\d*\])?)(?:\((?P<alias>[a-z]\w*)(?P<w>!)?\))?(?P<opt>\?)?(?P<list>\[\d*\])?(?P<opt2>\?)?'
                  r'\s+(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?$')


def _parse_arg(text, kwarg_only):
    m = _ARG.match(text)
    if not m:
        raise ValueError(f"cannot parse schema argument '{text}'")
    typ = m['type'] + (m['list'] or '') + ('?' if (m['opt'] or m['opt2']) else '')
    has_default = m['default'] is not None
    default = _parse_default(m['default'], typ) if has_default else None
    return Argument(m['name'], typ, default, has_default, kwarg_only, m['alias'], bool(m['w']))


def parse_schema(text):
    """Parse ``name.overload(args) -> returns``.

    >>> s = parse_schema('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor')
    >>> s.name, s.overload, [a.name for a in s.arguments], s.arguments[2].kwarg_only
    ('add', 'Tensor', ['self', 'other', 'alpha'], True)
    """
    m = re.match(r'^\s*([\w:]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$', text, re.S)
    if not m:
        raise ValueError(f"invalid schema: '{text}'")
    name, overload, args_text, ret_text = m.groups()
    args, kwarg_only = [], False
    for part in _split_top(args_text):
        if part == '*':
            kwarg_only = True
            continue
        args.append(_parse_arg(part, kwarg_only))
    names = [a.name for a in args]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate argument names in schema '{text}'")
    ret_text = ret_text.strip()
    if ret_text.startswith('(') and ret_text.endswith(')'):
        returns = tuple(r.split()[0] for r in _split_top(ret_text[1:-1]))
    else:
        returns = (ret_text.split()[0],)
    return FunctionSchema(name, overload or '', args, returns, text.strip())


# --- torch's view of a schema (``op._schema``): what __torch_dispatch__ code reads -------------------------------

class AliasInfo:
    """torch._C._AliasInfo: ``Tensor(a!)`` is alias set {'a'}, written."""
    __slots__ = ('before_set', 'after_set', 'is_write')

    def __init__(self, alias, is_write):
        self.before_set = self.after_set = {alias}
        self.is_write = is_write


class _Type:
    """An argument's type as torch prints it (``Tensor``, ``Optional[List[int]]``)."""
    __slots__ = ('text',)
    _NAMES = {'Scalar': 'number', 'ScalarType': 'int', 'Layout': 'int', 'MemoryFormat': 'int', 'SymInt': 'int',
              'SymFloat': 'float', 'Dimname': 'str'}

    def __init__(self, ember_type):
        t = ember_type.rstrip('?')
        base = re.sub(r'\[\d*\]$', '', t)
        text = self._NAMES.get(base, base)
        if t != base:
            text = f'List[{text}]'
        self.text = f'Optional[{text}]' if ember_type.endswith('?') else text

    def __str__(self):
        return self.text

    __repr__ = __str__

    def __eq__(self, other):
        return str(other) == self.text

    def __hash__(self):
        return hash(self.text)


class SchemaArgument:
    """torch._C.Argument: one argument or return of a schema."""
    __slots__ = ('name', 'type', 'default_value', 'kwarg_only', 'alias_info', '_has_default', 'is_out')

    def __init__(self, name, type, default_value, has_default, kwarg_only, alias_info, is_out=False):
        self.name, self.type, self.default_value, self._has_default = name, _Type(type), default_value, has_default
        self.kwarg_only, self.alias_info, self.is_out = kwarg_only, alias_info, is_out

    def has_default_value(self):
        return self._has_default

    @property
    def is_write(self):
        return self.alias_info is not None and self.alias_info.is_write

    def __repr__(self):
        return f'{self.type} {self.name}'


_RET = re.compile(r'^(?P<type>[A-Za-z]+)(?:\((?P<alias>[a-z]\w*)(?P<w>!)?\))?(?P<list>\[\d*\])?(?P<opt>\?)?$')


class TorchSchema:
    """torch._C.FunctionSchema's attributes over ember's parsed schema: ``name`` ('aten::add'), ``overload_name``,
    ``arguments``, ``returns`` (with their alias information), ``is_mutable``."""

    def __init__(self, namespace, schema):
        self.name = f'{namespace}::{schema.name}'
        self.overload_name = schema.overload
        self.arguments = [SchemaArgument(a.name, a.type, list(a.default) if isinstance(a.default, tuple) else a.default,
                                         a.has_default, a.kwarg_only,
                                         AliasInfo(a.alias, a.is_write) if a.alias else None,
                                         is_out=a.kwarg_only and a.is_write)
                          for a in schema.arguments]
        names = _return_names(schema.text)
        self.returns = []
        for i, r in enumerate(schema.returns):
            m = _RET.match(r)
            typ = (m['type'] + (m['list'] or '') + (m['opt'] or '')) if m else r
            alias = AliasInfo(m['alias'], bool(m['w'])) if m and m['alias'] else None
            self.returns.append(SchemaArgument(names[i] if names else '', typ, None, False, False, alias))
        self._text = f'{namespace}::{schema.text}'
        self.is_mutable = schema.is_mutable

    def __str__(self):
        return self._text

    __repr__ = __str__


def _return_names(text):
    ret = text.split('->', 1)[1].strip()
    if not (ret.startswith('(') and ret.endswith(')')):
        return None
    parts = _split_top(ret[1:-1])
    return [p.split()[1] if len(p.split()) == 2 else '' for p in parts]
