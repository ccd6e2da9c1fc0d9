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
