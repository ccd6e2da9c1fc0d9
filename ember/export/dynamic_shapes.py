"""torch.export.dynamic_shapes: which input sizes an exported program takes as symbols, and the checks that the
traced code keeps them symbolic.

NOTE [dynamic export]: ``export(mod, args, dynamic_shapes=...)`` names, per input tensor, dimensions that may
vary: a ``Dim('batch', min=, max=)`` (one symbol per name, shared by every dimension that names it), a derived
``2*batch + 1``, ``Dim.AUTO`` (a symbol that may specialise or narrow silently), ``Dim.DYNAMIC`` (a symbol that
must stay one). The module is traced once on fake tensors whose named sizes are symbols (NOTE [symbolic
sizes]); then two checks decide whether the graph holds for the whole declared range:

1. every comparison the traced code made on sizes is a guard in the ShapeEnv; each is evaluated at sample
   sizes across the declared range (each symbol moved alone, the others at their example values). A guard that
   only the example size keeps (``s0 == 16``) *specialised* the dimension; one that fails elsewhere in the range
   (``s0 <= 32`` for ``max=64``) narrows it; ``s0 == s1`` ties two dims. Each is a ``UserError`` (torch's
   ``CONSTRAINT_VIOLATION``) naming the dim, the guard and a suggested fix; for ``Dim.AUTO`` the dim becomes
   static or its range narrows instead;
2. a size that left the symbolic world through ``int()`` or NumPy is a constant in the graph and no guard saw
   it, so the module is traced a second time with every symbol at another value in its range and the two
   graphs are compared node by node (as ``ember.compile`` does, NOTE [capture and guards]); a difference is
   the same specialisation error, naming the first node that differs.

The program's ``range_constraints`` maps each symbol (and each derived expression) to its ``ValueRanges``;
``ep.module()`` checks its inputs against them and against the static sizes before running (``AssertionError:
Guard failed: x.size()[0] <= 64``, as torch's unlifted module).
"""
import operator
import re

import ember
from ember.utils import _pytree as pytree
from ember.utils._sympy.numbers import int_oo
from ember.utils._sympy.value_ranges import ValueRanges
from ember._dynamo.exc import UserError, UserErrorType
from ember.fx.experimental.symbolic_shapes import ConstraintViolationError, SymInt, pretty, graph_signature

__all__ = ['Dim', 'ShapesCollection', 'dims']


class _DimHint:
    def __init__(self, kind):
        self.type = kind

    def __repr__(self):
        return f'DimHint({self.type})'


class _Tie(_DimHint):
    """AUTO/DYNAMIC dims the traced code found equal (``x + y``): one symbol for all of them, as torch merges
    them (made by the export loop, never by users)."""


class Dim:
    """A named dimension for ``dynamic_shapes`` (torch.export.Dim): ``Dim('batch', min=2, max=64)``. Every
    dimension that names it shares one symbol. ``2*batch``, ``batch + 1``: derived dimensions.
    ``Dim.AUTO``/``Dim.DYNAMIC``/``Dim.STATIC``: an unnamed symbol that may specialise / one that must not / a
    static size (NOTE [dynamic export]).

    >>> batch = Dim('batch', max=64)
    >>> batch, 2 * batch + 1, batch.min, batch.max
    (Dim('batch', min=0, max=64), 2*batch + 1, 0, 64)
    """
    AUTO = _DimHint('AUTO')
    DYNAMIC = _DimHint('DYNAMIC')
    STATIC = _DimHint('STATIC')

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise UserError(UserErrorType.INVALID_INPUT, f'Dim name must be a valid identifier, got {name!r}')
        lo = 0 if min is None else min
        hi = int_oo if max is None or max == float('inf') else max
        if not (isinstance(lo, int) and lo >= 0 and (hi is int_oo or isinstance(hi, int) and hi >= lo)):
            raise UserError(UserErrorType.INVALID_INPUT, f"Cannot create Dim with inconsistent min={min}, max={max}")
        self.__name__, self.min, self.max = name, lo, hi

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min != 2:
            parts.append(f'min={self.min}')
        if self.max is not int_oo:
            parts.append(f'max={self.max}')
        return f"Dim({', '.join(parts)})"

    def _derive(self, a, b):
        return _DerivedDim(self, a, b)

    def __add__(self, other):
        return self._derive(1, _int(other, '+'))

    __radd__ = __add__

    def __sub__(self, other):
        return self._derive(1, -_int(other, '-'))

    def __mul__(self, other):
        return self._derive(_int(other, '*'), 0)

    __rmul__ = __mul__


def _int(x, op):
    if not isinstance(x, int) or isinstance(x, bool):
        raise NotImplementedError(f'Attempted to derive a dimension with {op} {x!r}: only integer constants are '
                                  'supported (2*dim, dim + 1)')
    return x


class _DerivedDim:
    """``a*root + b`` for a Dim ``root`` (torch's _DerivedDim)."""

    def __init__(self, root, a, b):
        if a <= 0:
            raise NotImplementedError('a derived dimension needs a positive factor')
        self.root, self.a, self.b = root, a, b
        self.__name__ = _poly_text(root.__name__, a, b)
        self.min = a * root.min + b
        self.max = int_oo if root.max is int_oo else a * root.max + b

    def _derive(self, a, b):
        return _DerivedDim(self.root, self.a * a, self.b * a + b)

    __add__, __radd__, __sub__, __mul__, __rmul__ = (Dim.__add__, Dim.__radd__, Dim.__sub__, Dim.__mul__,
                                                     Dim.__rmul__)

    def __repr__(self):
        return self.__name__


def _poly_text(name, a, b):
    text = name if a == 1 else f'{a}*{name}'
    return text if not b else f'{text} + {b}' if b > 0 else f'{text} - {-b}'


def dims(*names, min=None, max=None):
    """Several Dims with the same range: ``batch, seq = dims('batch', 'seq', max=64)``."""
    return tuple(Dim(n, min=min, max=max) for n in names)


class ShapesCollection:
    """``dynamic_shapes`` given per example tensor (torch.export.ShapesCollection): ``sc[x] = {0: Dim('n')}``,
    then ``export(m, (x, y), dynamic_shapes=sc)``; tensors not named are static."""

    def __init__(self):
        self._shapes = {}          # id(tensor) -> (tensor, spec)

    def __setitem__(self, t, shape):
        if not isinstance(t, ember.Tensor):
            raise ValueError(f'Cannot assign shape to non-tensor type {type(t)}')
        self._shapes[id(t)] = (t, shape)

    def __getitem__(self, t):
        return self._shapes[id(t)][1]

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None):
        """The specs as a tree shaped like ``(args, kwargs)`` (what ``export`` reads)."""
        def spec(x):
            hit = self._shapes.get(id(x)) if isinstance(x, ember.Tensor) else None
            return _Leaf(hit[1] if hit is not None and hit[0] is x else None)
        return pytree.tree_map(spec, (tuple(args), dict(kwargs or {})))


class _Leaf:
    """A per-tensor spec held as a pytree leaf (a dict or tuple spec is itself a container)."""

    def __init__(self, spec):
        self.spec = spec


# --- reading dynamic_shapes ---------------------------------------------------------------------------------

def leaf_specs(names, args, kwargs, dynamic_shapes):
    """One ``{dim: spec}`` (or None) per leaf of ``(args, kwargs)`` in pytree order, from any of torch's forms."""
    if dynamic_shapes is None:
        return None
    if isinstance(dynamic_shapes, ShapesCollection):
        tree = dynamic_shapes.dynamic_shapes(None, args, kwargs)
    else:
        tops = list(zip(names, args)) + list(kwargs.items())
        if isinstance(dynamic_shapes, dict):
            keys = [k for k, _ in tops]
            if set(dynamic_shapes) != set(keys):
                raise UserError(UserErrorType.INVALID_INPUT,
                                f'When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg '
                                f'names {keys} of `inputs`, but here they are {list(dynamic_shapes)}. Alternatively, '
                                'you could also ignore arg names entirely and specify `dynamic_shapes` as a '
                                'list/tuple matching `inputs`.')
            specs = [dynamic_shapes[k] for k in keys]
        elif isinstance(dynamic_shapes, (tuple, list)):
            if len(dynamic_shapes) != len(tops):
                raise UserError(UserErrorType.INVALID_INPUT,
                                f'When `dynamic_shapes` is specified as a list/tuple, it must match `inputs` '
                                f'({len(tops)} of them), but it has {len(dynamic_shapes)} entries.')
            specs = list(dynamic_shapes)
        else:
            raise UserError(UserErrorType.INVALID_INPUT, 'dynamic_shapes must be a dict, a tuple/list or a '
                            f'ShapesCollection, got {type(dynamic_shapes).__name__}')
        leaves = [_spec_tree(v, s, n) for (n, v), s in zip(tops, specs)]
        k = len(args)
        tree = (tuple(leaves[:k]), dict(zip(list(kwargs), leaves[k:])))
    return [leaf.spec for leaf in pytree.tree_leaves(tree)]


def _spec_tree(value, spec, path):
    """``value``'s structure with each leaf replaced by a _Leaf holding its spec."""
    if isinstance(value, ember.Tensor):
        if spec is None or isinstance(spec, dict):
            return _Leaf(spec)
        if isinstance(spec, (tuple, list)):
            if len(spec) != value.dim():
                raise UserError(UserErrorType.INVALID_INPUT,
                                f'Expected dynamic shape spec {spec!r} at `{path}` to have the same length as the '
                                f'actual tensor shape {list(value.shape)} (expected {value.dim()}, got {len(spec)})')
            return _Leaf(dict(enumerate(spec)))
        raise UserError(UserErrorType.INVALID_INPUT, f'Unexpected dynamic shape {spec!r} at `{path}` for a tensor: '
                        'use a dict {dim: Dim} or a tuple with one entry per dimension')
    if isinstance(value, (list, tuple)) and not hasattr(value, '_fields'):
        subs = spec if spec is not None else [None] * len(value)
        if not isinstance(subs, (list, tuple)) or len(subs) != len(value):
            raise UserError(UserErrorType.INVALID_INPUT, f'the dynamic shape spec at `{path}` must be a list/tuple '
                            f'of {len(value)} entries, like the input')
        return type(value)(_spec_tree(v, s, f'{path}[{i}]') for i, (v, s) in enumerate(zip(value, subs)))
    if isinstance(value, dict):
        subs = spec if spec is not None else {}
        return {k: _spec_tree(v, subs.get(k), f'{path}[{k!r}]') for k, v in value.items()}
    return _Leaf(None)


# --- symbols for the named dims ------------------------------------------------------------------------------

class Symbol(str):
    """A key of ``range_constraints``: a symbol (``s0``) or a derived expression (``2*s0 + 1``), printed bare as
    torch prints its sympy expressions."""
    __repr__ = str.__str__


class DynamicSpec:
    """The symbols one export created: per root symbol its name, Dim kind, declared range and the input sizes that
    read it; built by ``make_fakes``."""

    def __init__(self, env):
        self.env = env
        self.roots = {}          # symbol name -> {'dim': name for messages, 'kind', 'lo', 'hi', 'sources', 'sym'}
        self.derived = {}        # pretty expr -> (root name, a, b)
        self.by_dim_name = {}    # Dim.__name__ -> symbol name
        self.fakes = {}          # id(user tensor) -> its fake twin with symbolic sizes
        self.ties = {}           # id(_Tie) -> its symbol

    def root_of(self, spec, value, source, user_min):
        """The root symbol for ``spec`` (a Dim, or AUTO/DYNAMIC: a fresh one); creates it the first time."""
        if isinstance(spec, _DimHint):
            if isinstance(spec, _Tie) and id(spec) in self.ties:
                return self.ties[id(spec)]
            sym = self.env.create_symbol(value, None, None)
            kind = spec.type.lower()
            self.roots[sym.expr] = dict(dim=source, kind=kind, lo=2, hi=int_oo, sources=[], sym=sym, at=[])
            if isinstance(spec, _Tie):
                self.ties[id(spec)] = sym
            return sym
        name = spec.__name__
        if name in self.by_dim_name:
            entry = self.roots[self.by_dim_name[name]]
            if (entry['lo'], entry['hi']) != (spec.min, spec.max):
                raise UserError(UserErrorType.INVALID_INPUT,
                                f'Found different definitions {entry["spec"]!r} and {spec!r} for the same symbolic '
                                f'dimension {spec!r}!')
            if int.__int__(entry['sym']) != value:
                raise ConstraintViolationError(
                    f'The values of {name} = {source} and {entry["sources"][0]} must always be equal: the example '
                    f'inputs give {value} and {int(entry["sym"])}.' if entry['sources'] else
                    f'{name} = {source} is {value}, but another dimension derived from {name} needs {int(entry["sym"])}')
            return entry['sym']
        lo = max(spec.min, 2)
        if not (lo <= value and (spec.max is int_oo or value <= spec.max)):
            if value in (0, 1) and spec.min <= value:
                raise _violation([name], [_specialized(name, value)], [f'{name} = {value}'])
            raise ConstraintViolationError(f'{value} not in range [{lo}, {spec.max}]')
        sym = self.env.create_symbol(value, None, None)
        self.roots[sym.expr] = dict(dim=name, kind='dim', lo=spec.min, hi=spec.max, sources=[], sym=sym, spec=spec, at=[])
        self.by_dim_name[name] = sym.expr
        return sym


def make_fakes(fake_mode, flat_user, specs, names):
    """Fake twins of the user's tensors with the sizes ``specs`` names as symbols (registered with ``fake_mode``
    so the trace uses them). Returns the DynamicSpec."""
    dyn = DynamicSpec(fake_mode.shape_env)
    pending = []      # roots first seen through a derived dim: (root SymInt, derived SymInt, a, b)
    for leaf, (t, spec, name) in enumerate(zip(flat_user, specs, names)):
        if not isinstance(t, ember.Tensor) or not spec:
            continue
        sizes = {}
        for d, s in spec.items():
            if not isinstance(d, int) or not -t.dim() <= d < t.dim():
                raise UserError(UserErrorType.INVALID_INPUT, f'dynamic_shapes names dimension {d} of `{name}`, '
                                f'which has {t.dim()} dimensions (shape {list(t.shape)})')
            d %= t.dim()
            n, source = int(t.shape[d]), f"L['{name}'].size()[{d}]"
            if s is None or s is Dim.STATIC:
                continue
            if isinstance(s, int) and not isinstance(s, bool):
                if s != n:
                    raise ConstraintViolationError(f'Static shape constraint of {s} does not match input size of '
                                                   f'{n}, for {source}')
                continue
            if isinstance(s, _DimHint):
                if n in (0, 1):
                    if s.type == 'DYNAMIC':
                        raise _violation([source], [_specialized(source, n)], [])
                    continue
                sym = dyn.root_of(s, n, source, None)
            elif isinstance(s, Dim):
                sym = dyn.root_of(s, n, source, None)
            elif isinstance(s, _DerivedDim):
                root_value, rem = divmod(n - s.b, s.a)
                if rem or root_value < 0:
                    raise ConstraintViolationError(f'Expected input {source} = {n} to be of the form {s!r}, where '
                                                   f'{s.root.__name__} is an integer')
                root = dyn.root_of(s.root, root_value, source, None)
                poly = {(root.expr,): s.a, **({(): s.b} if s.b else {})}
                derived = fake_mode.shape_env.input_size(poly, n)
                dyn.derived[pretty(derived)] = (root.expr, s.a, s.b)
                pending.append((root, derived, s.a, s.b))
                sizes[d] = derived
                continue
            else:
                raise UserError(UserErrorType.INVALID_INPUT, f'Unexpected dynamic shape {s!r} for dimension {d} of '
                                f'`{name}`: use a Dim, Dim.AUTO/DYNAMIC/STATIC, an int or None')
            dyn.roots[sym.expr]['sources'].append(source)
            dyn.roots[sym.expr]['at'].append((leaf, d))
            sizes[d] = sym
        if sizes:
            dyn.fakes[id(t)] = fake_mode.from_tensor(t, sizes)
    bind_roots_from_derived(pending)
    return dyn


def bind_roots_from_derived(pending):
    """A root symbol that no input has as a size is computed from one that is ``a*root + b``:
    ``(size - b) // a``; ``pending``: (root, derived SymInt, a, b)."""
    for root, derived, a, b in pending:
        if root.how[1] is None:
            x = derived - b if b else derived
            root.how = (operator.floordiv, x, a) if a != 1 else x.how


def _specialized(name, value):
    return (f"You marked {name} as dynamic but your code specialized it to be a constant ({value}). If you're "
            "using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace it "
            "with either Dim.STATIC or Dim.AUTO.")


def _violation(names, lines, fixes):
    msg = f'Constraints violated ({", ".join(dict.fromkeys(names))})!\n' + ''.join(f'  - {x}\n' for x in lines)
    if fixes:
        msg += 'Suggested fixes:\n' + ''.join(f'  {f}\n' for f in dict.fromkeys(fixes))
    return UserError(UserErrorType.CONSTRAINT_VIOLATION, msg.rstrip('\n'))


# --- check 1: the guards against the declared ranges -----------------------------------------------------------

def _candidates(lo, hi, value):
    lo = max(lo, 2)
    top = (1 << 20) if hi is int_oo else hi
    pts = {lo, lo + 1, value - 1, value + 1, value + 7, 2 * value, 3 * value + 1, top - 1, top, 17, 31, 97, 1021}
    pts |= {1 << k for k in range(1, 21)}
    return sorted(p for p in pts if lo <= p <= top and p != value)


def _to_sources(text, dyn):
    for sym_name, entry in dyn.roots.items():
        text = re.sub(rf'\b{sym_name}\b', _src0(entry), text)
    return text


def check_guards(dyn):
    """Check 1 of NOTE [dynamic export]. Raises the UserError for Dims (and DYNAMIC ones that specialised);
    narrows the ranges of AUTO/DYNAMIC symbols the guards bound; returns the AUTO symbols to make static and the
    pairs of symbols to trace as one (an AUTO/DYNAMIC one found equal to another)."""
    env = dyn.env
    guards = env.guard_fns()
    names = [s.expr for s in env.symbols]
    hints = [int.__int__(s) for s in env.symbols]

    def holds(i, v):
        vals = list(hints)
        vals[i] = v
        return [text for text, fn in guards if not _safe(fn, vals)]

    lines, fixes, who, make_static, seen, ties = [], [], [], [], set(), []
    for i, sym_name in enumerate(names):
        entry = dyn.roots.get(sym_name)
        if entry is None:
            continue
        failing = {}
        cands = _candidates(entry['lo'], entry['hi'], hints[i])
        for c in cands:
            for text in holds(i, c):
                failing.setdefault(text, []).append(c)
        if not failing:
            continue
        # the guard that fails most widely says most (the one that pins the size, if one does)
        text, where = max(failing.items(), key=lambda kv: len(kv[1]))
        label = entry['dim']
        named = label if label == _src0(entry) else f'{label} = {_src0(entry)}'
        lo, hi = _valid_interval(lambda v: not holds(i, v), hints[i], entry['lo'], entry['hi'])
        m = re.fullmatch(r'(s\d+) == (s\d+)', text)
        if m and all(g in dyn.roots for g in m.groups()):
            first, later = sorted(m.groups(), key=names.index)
            a, b = dyn.roots[first], dyn.roots[later]
            if a['kind'] != 'dim' or b['kind'] != 'dim':        # AUTO/DYNAMIC: one symbol for both, as torch
                ties.append((first, later))
                continue
            if text in seen:
                continue
            seen.add(text)
            who.append(b['dim'])
            lines.append(f'The values of {b["dim"]} = {_src0(b)} and {a["dim"]} = {_src0(a)} must '
                         'always be equal.')
            fixes.append(f'{b["dim"]} = {a["dim"]}')
            continue
        if entry['kind'] != 'dim' and not (len(where) == len(cands) or lo == hi):
            entry['lo'], entry['hi'] = lo, hi           # AUTO and DYNAMIC narrow silently, as torch
            continue
        if entry['kind'] == 'auto':
            make_static.append(sym_name)
            continue
        if text in seen:
            continue
        seen.add(text)
        who.append(label)
        if len(where) == len(cands):
            lines.append(_specialized(label, hints[i]))
            if entry['kind'] == 'dim':
                fixes.append(f'{label} = {hints[i]}')
            continue
        lines.append(f'Not all values of {named} in the specified range {_range_text(label, entry["lo"], entry["hi"])} '
                     f'satisfy the generated guard {_to_sources(text, dyn)}')
        if entry['kind'] != 'dim':
            continue
        if lo == hi:
            fixes.append(f'{label} = {hints[i]}')
        elif all(holds(i, v) == [] for v in cands if lo <= v <= hi):
            bounds = ([f'min={lo}'] if lo > max(entry['lo'], 2) else []) + \
                     ([f'max={hi}'] if hi is not int_oo else [])
            fixes.append(f"{label} = Dim({', '.join([repr(label)] + bounds)})")
    if lines:
        raise _violation(who, lines, fixes)
    return make_static, ties


def apply_ties(dyn, specs, ties):
    """Rewrite ``specs`` so that each tied pair of symbols is one: an AUTO/DYNAMIC dim takes the other's Dim, or
    both take one shared _Tie (DYNAMIC if either was)."""
    for first, later in ties:
        a, b = dyn.roots[first], dyn.roots[later]
        if a['kind'] == 'dim' or b['kind'] == 'dim':
            shared = (a if a['kind'] == 'dim' else b)['spec']
        else:
            shared = _Tie('DYNAMIC' if 'dynamic' in (a['kind'], b['kind']) else 'AUTO')
        for leaf, d in a['at'] + b['at']:
            specs[leaf][d] = shared


def _src0(entry):
    return entry['sources'][0] if entry['sources'] else entry['dim']


def _safe(fn, vals):
    try:
        return fn(*vals)
    except ZeroDivisionError:
        return False


def _valid_interval(ok, value, lo, hi):
    """The widest [a, b] around ``value`` inside [lo, hi] where ``ok`` holds, by doubling steps then bisection
    (exact for guards monotone in the size, as bounds are); ``lo`` itself when the low end reaches it."""
    def edge(direction, limit):
        good, step = value, 1
        while True:
            nxt = good + direction * step
            if direction < 0:
                nxt = max(nxt, limit)
            elif limit is not int_oo:
                nxt = min(nxt, limit)
            elif nxt > (1 << 40):
                return int_oo
            if nxt == good:
                return good
            if ok(nxt):
                good, step = nxt, step * 2
                continue
            bad = nxt
            while abs(bad - good) > 1:
                mid = (good + bad) // 2
                good, bad = (mid, bad) if ok(mid) else (good, mid)
            return good
    low = edge(-1, max(lo, 2))
    return (lo if low <= max(lo, 2) else low), edge(1, hi)


def _range_text(name, lo, hi):
    if hi is int_oo:
        return f'{name} >= {lo}'
    return f'{name} <= {hi}' if lo <= 2 else f'{lo} <= {name} <= {hi}'


# --- check 2: a second trace at other sizes ----------------------------------------------------------------------

def probe_values(dyn):
    """A value per root symbol, other than the example's, inside its range, keeping every guard."""
    env = dyn.env
    guards = env.guard_fns()
    hints = [int.__int__(s) for s in env.symbols]
    out = {}
    for i, s in enumerate(env.symbols):
        entry = dyn.roots.get(s.expr)
        if entry is None:
            continue
        for c in sorted(_candidates(entry['lo'], entry['hi'], hints[i]), key=lambda c: abs(c - hints[i])):
            vals = list(hints)
            vals[i] = c
            if all(_safe(fn, vals) for _, fn in guards):
                out[s.expr] = c
                break
    return out


def probe_inputs(flat_user, dyn, values):
    """The user's inputs as meta tensors with each symbolic size evaluated at ``values`` (symbol name -> int)."""
    fakes = dyn.fakes
    out = []
    for t in flat_user:
        f = fakes.get(id(t))
        if f is None:
            out.append(t)
            continue
        shape = [_evaluate(n, values) for n in f.shape]
        p = ember.empty(shape, dtype=t.dtype, device='meta')
        out.append(p.requires_grad_(t.requires_grad) if t.requires_grad else p)
    return out


def _evaluate(n, values):
    if not isinstance(n, SymInt):
        return int(n)
    total = 0
    for atoms, c in n.poly.items():
        term = c
        for a in atoms:
            term *= values.get(a, 0) if a in values else int(_root_hint(n.env, a))
        total += term
    return total


def _root_hint(env, name):
    return next(int.__int__(s) for s in env.symbols if s.expr == name)


def first_difference(g1, g2):
    a, b = graph_signature(g1), graph_signature(g2)
    if a == b:
        return None
    nodes = list(g1.nodes)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f'node {nodes[i].name} ({x[1]}) has arguments {x[2]} at the example size and {y[2]} at the other'
    return 'the graphs have different lengths'


def specialization_error(dyn, sym_name, why):
    entry = dyn.roots[sym_name]
    label = entry['dim']
    value = int.__int__(entry['sym'])
    line = (_specialized(label, value) + f' (ember traced the module again with {label} = {why[0]}: {why[1]}; a '
            'size converted to a Python int, by int() or NumPy, is a constant in the graph)')
    return _violation([label], [line], [f'{label} = {value}'] if entry['kind'] == 'dim' else [])


# --- range constraints and run-time checks -----------------------------------------------------------------------

def range_constraints(dyn, static=()):
    out = {}
    for sym_name, entry in dyn.roots.items():
        if sym_name in static:
            continue
        for expr, (root, a, b) in dyn.derived.items():
            if root == sym_name:
                hi = int_oo if entry['hi'] is int_oo else a * entry['hi'] + b
                out[Symbol(expr)] = ValueRanges(a * entry['lo'] + b, hi)
        out[Symbol(sym_name)] = ValueRanges(entry['lo'], entry['hi'])
    return out


class GuardsFn(ember.nn.Module):
    """What ``ep.module()`` calls first (torch's ``_guards_fn``): checks the user's tensors against the exported
    sizes: static sizes equal, symbolic ones in their range and consistent with each other."""

    def __init__(self, names, shapes, ranges):
        super().__init__()
        self.names, self.shapes = names, shapes       # per user leaf: None or [int | {atoms: coeff}]
        self.ranges = {str(k): (v.lower, v.upper) for k, v in ranges.items()}

    def forward(self, *leaves):
        bound = {}                 # symbol name -> (value, source text)
        for name, shape, x in zip(self.names, self.shapes, leaves):
            if shape is None or not isinstance(x, ember.Tensor):
                continue
            if x.dim() != len(shape):
                raise AssertionError(f'Guard failed: {name}.dim() == {len(shape)}')
            for d, want in enumerate(shape):
                self._check(f'{name}.size()[{d}]', int(x.shape[d]), want, bound)

    def _check(self, src, n, want, bound):
        if isinstance(want, int):
            if n != want:
                raise AssertionError(f'Guard failed: {src} == {want}')
            return
        (root,) = {a for atoms in want for a in atoms}
        a, b = want.get((root,), 0), want.get((), 0)
        if root in bound:
            v, where = bound[root]
            if n != a * v + b:
                where = where if a == 1 or ' ' not in where else f'({where})'
                raise AssertionError(f'Guard failed: {src} == {_poly_text(where, a, b)}')
            return
        v, rem = divmod(n - b, a)
        if rem:
            raise AssertionError(f'Guard failed: ({src} - {b}) % {a} == 0')
        lo, hi = self.ranges.get(root, (0, int_oo))
        if v < lo:
            raise AssertionError(f'Guard failed: {src} >= {a * lo + b}')
        if hi is not int_oo and v > hi:
            raise AssertionError(f'Guard failed: {src} <= {a * hi + b}')
        bound[root] = (v, _poly_text(src, 1, -b) if a == 1 else f'({_poly_text(src, 1, -b)}) // {a}')


def input_shapes(vals):
    """Per user input's fake value: its sizes as ints and ``{atoms: coeff}`` polynomials (None for non-tensors)."""
    out = []
    for v in vals:
        if not isinstance(v, ember.Tensor):
            out.append(None)
            continue
        out.append([dict(n.poly) if isinstance(n, SymInt) else int(n) for n in v.shape])
    return out
