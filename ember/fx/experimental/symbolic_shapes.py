"""Symbolic sizes: ``SymInt``, ``ShapeEnv`` and guards (torch.fx.experimental.symbolic_shapes).

NOTE [symbolic sizes]: a graph traced on fake tensors of shape ``(16, 64)`` records ``view(x, [1024, 8])``
with the ``1024`` computed in Python from the example's sizes, so the graph is only valid for that shape.
To trace once for every sequence length, a dimension of a fake input is given a *symbolic* size: a
``SymInt``, an ``int`` subclass that has the example's value (its *hint*), so every meta function, every
shape check and the user's own arithmetic run unchanged, and that also records how it was computed:

* a symbol ``s0`` stands for ``x.size(1)`` of an input; arithmetic on SymInts (``B * T``, ``C // nh``,
  ``T - 1``) makes new SymInts whose ``expr`` says how (``(s0*16)``);
* a comparison (``T <= block_size``, a broadcast check ``a == 1``) returns a plain bool, decided by the
  hints, and is recorded in the ``ShapeEnv`` as a *guard*: the graph is valid only for sizes that decide
  every recorded comparison the same way. Guards are compiled into one Python function of the symbols;
* when a SymInt reaches an operator as an argument (``view(x, [B*T, C])``), make_fx's tracer records how
  to compute it as graph nodes: ``sym_size(x, 1)`` for a symbol, ``operator.mul`` for a product, so the
  graph computes sizes at run time from its inputs, as torch's symbolic graphs do (``sym_size_int``).

A SymInt that passes through code that converts it to a plain ``int`` (NumPy, ``int()``) loses its
expression: the graph then holds a constant. Whoever relies on a symbolic graph checks for that by tracing
a second time at another size and comparing the graphs (``ember.compile`` does, NOTE [capture and guards]).
"""
import operator

__all__ = ['GuardOnDataDependentSymNode', 'ConstraintViolationError', 'SymInt', 'SymFloat', 'SymBool', 'ShapeEnv',
           'sym_size',
           'sym_size_int', 'is_symbolic', 'hint', 'pretty']


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow on a value that tracing on fake tensors cannot know (``if x.sum() > 0:``)."""


class ConstraintViolationError(RuntimeError):
    """An example input that contradicts the sizes ``dynamic_shapes`` declares (``ember.export``)."""


def sym_size_int(t, dim):
    """``t.size(dim)``: the graph node that reads a symbolic size at run time (torch's ``aten.sym_size.int``;
    its nodes are named ``sym_size_int`` as torch's are)."""
    return t.shape[dim]


sym_size = sym_size_int          # the name the compiler stack imports


def is_symbolic(x):
    return isinstance(x, SymInt)


def hint(x):
    """The example value of a size (a plain int)."""
    return int.__int__(x) if isinstance(x, SymInt) else x


_CMP = {'==': operator.eq, '!=': operator.ne, '<': operator.lt, '<=': operator.le, '>': operator.gt,
        '>=': operator.ge}


class ShapeEnv:
    """The symbols of one trace (which input dimension each stands for) and the guards recorded on them."""

    def __init__(self, **settings):
        # torch's settings (assume_static_by_default, specialize_zero_one, duck_shape, ...) are kept, not read:
        # which dimensions get symbols is decided by the one who asks (FakeTensorMode.from_tensor)
        self.settings = settings
        self.symbols = []           # SymInts; each one's ``how`` is ('size', fake tensor, dim)
        self.guards = []            # (expr source, result) with the result each must keep
        self._seen = set()
        self._duck = {}             # example value -> its symbol, for duck sizing

    def create_symbol(self, value, source, dim, duck=False):
        """A new symbol for size ``dim`` of ``source`` (a fake tensor; set later if None). ``duck``: sizes with
        equal example values share one symbol (torch's duck sizing, what make_fx's symbolic mode does)."""
        if duck and int(value) in self._duck:
            return self._duck[int(value)]
        sym = SymInt(int(value), {(f's{len(self.symbols)}',): 1}, self, ('size', source, dim))
        self.symbols.append(sym)
        if duck:
            self._duck[int(value)] = sym
        return sym

    def input_size(self, poly, value):
        """An input's size that is an expression of symbols (export's derived dims, ``2*batch``): a SymInt read
        from the input itself (its ``how`` set by the fake tensor that has it)."""
        return SymInt(int(value), dict(poly), self, ('size', None, None))

    def record(self, src, result):
        if src not in self._seen:
            self._seen.add(src)
            self.guards.append((src, bool(result)))

    def guard_source(self):
        """Python source of ``guard(s0, s1, ...) -> bool``."""
        names = [s.expr for s in self.symbols]
        conds = [(src if ok else f'not ({src})') for src, ok in self.guards]
        return f'def guard({", ".join(names)}):\n    return {" and ".join(conds) or "True"}\n'

    def guard_fn(self):
        g = {}
        exec(compile(self.guard_source(), '<ember shape guards>', 'exec'), g)
        return g['guard']

    def guard_fns(self):
        """``[(text, fn)]``, one per guard: ``fn(s0, s1, ...)`` says whether those sizes keep it."""
        names = ', '.join(s.expr for s in self.symbols)
        out = []
        for text in self.describe():
            g = {}
            exec(compile(f'def guard({names}):\n    return {text}\n', '<ember shape guard>', 'exec'), g)
            out.append((text, g['guard']))
        return out

    def describe(self):
        return [(src if ok else f'not ({src})') for src, ok in self.guards]


# NOTE [symbolic sizes], canonical forms: an expression is kept as a polynomial over atoms (the symbols, and
# opaque terms such as ``(s0+1)//2``), a dict {sorted tuple of atoms: coefficient}, so ``4*s0*8`` and
# ``s0*32`` are one expression and ``(8*s0*4)//4 == 8*s0`` is decided without a guard.
def _poly(x):
    return x.poly if isinstance(x, SymInt) else ({(): int(x)} if int(x) else {})


def _add(p, q, sign=1):
    r = dict(p)
    for m, c in q.items():
        v = r.get(m, 0) + sign * c
        if v:
            r[m] = v
        else:
            r.pop(m, None)
    return r


def _mul(p, q):
    r = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = tuple(sorted(m1 + m2))
            v = r.get(m, 0) + c1 * c2
            if v:
                r[m] = v
            else:
                r.pop(m, None)
    return r


def _src(p):
    if not p:
        return '0'
    terms = []
    for m, c in sorted(p.items(), key=lambda mc: (len(mc[0]), mc[0])):
        if not m:
            terms.append(repr(c))
        else:
            body = '*'.join(m)
            terms.append(body if c == 1 else f'{c}*{body}')
    return terms[0] if len(terms) == 1 else '(' + ' + '.join(terms) + ')'


def pretty(x):
    """An expression as torch prints one (``s0``, ``2*s0 + 1``, ``s0*s1``); a plain int as itself."""
    if not isinstance(x, SymInt):
        return str(int(x))
    return _pretty(x.poly)


def _pretty(p):
    terms = sorted(p.items(), key=lambda mc: (not mc[0], mc[0]))
    out = ''
    for m, c in terms:
        body = '*'.join(m) if m else str(abs(c))
        if m and abs(c) != 1:
            body = f'{abs(c)}*{body}'
        if not out:
            out = ('-' if c < 0 else '') + body
        else:
            out += (' - ' if c < 0 else ' + ') + body
    return out or '0'


def _const(p):
    """The value of a constant polynomial, or None."""
    if not p:
        return 0
    if len(p) == 1 and () in p:
        return p[()]
    return None


def _expr(x):
    return x.expr if isinstance(x, SymInt) else repr(int(x))


def _make(value, poly, env, how):
    c = _const(poly)
    if c is not None:
        return c                      # the expression no longer depends on a symbol: a plain int
    return SymInt(value, poly, env, how)


def _divide(p, d):
    if d and all(c % d == 0 for c in p.values()):
        return {m: c // d for m, c in p.items()}
    return None


def _operand(p):
    """An expression as an operand of ``//`` or ``%``: parenthesised unless it is one name or a non-negative
    number, since ``a//-1*b`` would read as ``(a//-1)*b``."""
    text = _src(p)
    return text if text.isidentifier() or text.isdigit() or (text.startswith('(') and _closes_at_end(text)) \
        else f'({text})'


def _closes_at_end(text):
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == '('
        depth -= ch == ')'
        if depth == 0:
            return i == len(text) - 1
    return False


def _arith(sym_op, py_op):
    def combine(a, b):
        pa, pb = _poly(a), _poly(b)
        if sym_op == '+':
            return _add(pa, pb)
        if sym_op == '-':
            return _add(pa, pb, -1)
        if sym_op == '*':
            return _mul(pa, pb)
        cb = _const(pb)
        if sym_op == '//' and cb is not None:
            q = _divide(pa, cb)
            if q is not None:
                return q
        if sym_op == '%' and cb is not None and _divide(pa, cb) is not None:
            return {}
        return {(f'({_operand(pa)}{sym_op}{_operand(pb)})',): 1}      # an opaque atom

    def fn(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            if not isinstance(other, (int, float)):
                return NotImplemented       # a Tensor's reflected operator takes the size as a symbolic scalar
            return py_op(int.__int__(self), other)
        if not isinstance(other, SymInt) and ((sym_op in ('*', '//') and other == 1) or
                                              (sym_op in ('+', '-') and other == 0)):
            return self                 # x*1, x+0: x itself
        v = py_op(int.__int__(self), int.__int__(other) if isinstance(other, SymInt) else other)
        return _make(v, combine(self, other), self.env, (py_op, self, other))

    def rfn(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            return py_op(other, int.__int__(self))
        if (sym_op == '*' and other == 1) or (sym_op == '+' and other == 0):
            return self
        v = py_op(other, int.__int__(self))
        return _make(v, combine(other, self), self.env, (py_op, other, self))
    return fn, rfn


def _compare(sym_op):
    py = _CMP[sym_op]

    def fn(self, other):
        if not isinstance(other, int):
            return NotImplemented if not isinstance(other, float) else py(int.__int__(self), other)
        diff = _const(_add(self.poly, _poly(other), -1))
        if diff is not None:
            return py(diff, 0)        # decided by the expressions alone: no guard
        r = py(int.__int__(self), int.__int__(other) if isinstance(other, SymInt) else other)
        self.env.record(f'{self.expr} {sym_op} {_expr(other)}', r)
        return r
    return fn


class SymInt(int):
    """A size that is an ``int`` (its hint) and remembers how it is computed from input sizes (NOTE [symbolic
    sizes])."""

    def __new__(cls, value, poly, env, how):
        o = int.__new__(cls, value)
        o.poly, o.env, o.how = poly, env, how
        o.expr = _src(poly)
        return o

    __add__, __radd__ = _arith('+', operator.add)
    __sub__, __rsub__ = _arith('-', operator.sub)
    __mul__, __rmul__ = _arith('*', operator.mul)
    __floordiv__, __rfloordiv__ = _arith('//', operator.floordiv)
    __mod__, __rmod__ = _arith('%', operator.mod)
    __eq__ = _compare('==')
    __ne__ = _compare('!=')
    __lt__ = _compare('<')
    __le__ = _compare('<=')
    __gt__ = _compare('>')
    __ge__ = _compare('>=')

    def __neg__(self):
        return SymInt(-int.__int__(self), {m: -c for m, c in self.poly.items()}, self.env, (operator.neg, self))

    def __bool__(self):
        r = int.__int__(self) != 0
        self.env.record(f'{self.expr} != 0', r)
        return r

    def __hash__(self):
        return int.__hash__(self)

    def __repr__(self):
        return int.__repr__(self)

    def __reduce__(self):             # pickles (deepcopy of a graph's meta) as the plain value
        return (int, (int.__int__(self),))

    def __truediv__(self, other):
        return int.__int__(self) / other

    def __rtruediv__(self, other):
        return other / int.__int__(self)


class SymFloat:
    """torch.SymFloat: a symbolic float. ember's symbolic values are sizes, integers (NOTE [symbolic sizes]), so
    nothing makes one; code that tests ``isinstance(x, SymFloat)`` gets torch's answer for every real number."""


class SymBool:
    """torch.SymBool: a symbolic truth value. A comparison of ember's SymInts is a plain bool, recorded as a guard
    (NOTE [symbolic sizes]), so nothing makes one; ``isinstance(True, SymBool)`` is False, as in torch."""


def graph_signature(graph):
    """A graph as comparable data: the opcode, target and arguments of each node (nodes by position, constants as
    they are). Two traces of one program at different sizes compare equal exactly when no constant in them
    depends on a size, the check that a symbolic graph lost no symbol (NOTE [symbolic sizes]): ember.compile and
    ember.export both make it."""
    index, out = {}, []

    def arg(a):
        if hasattr(a, 'op') and hasattr(a, 'users'):
            return ('node', index[a])
        if isinstance(a, (list, tuple)):
            return tuple(arg(e) for e in a)
        if isinstance(a, dict):
            return tuple((k, arg(v)) for k, v in a.items())
        return a
    for i, n in enumerate(graph.nodes):
        index[n] = i
        out.append((n.op, str(n.target), arg(n.args), arg(n.kwargs)))
    return out
