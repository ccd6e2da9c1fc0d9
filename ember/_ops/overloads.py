"""Overload groups: one public name over several operator overloads, chosen by the arguments (torch's
python_arg_parser).

``ember.masked_fill(x, mask, 0.5)`` and ``ember.masked_fill(x, mask, t)`` are two operators in torch's table,
``masked_fill.Scalar`` and ``masked_fill.Tensor``; ``ember.max(x)``, ``ember.max(x, 1)`` and ``ember.max(x, y)``
are three. A declaration names the group once::

    overloads('masked_fill', 'masked_fill.Tensor', 'masked_fill.Scalar')

and ``build`` (public.py) installs a chooser generated from the overloads' schemas as ``ember.masked_fill``,
``Tensor.masked_fill`` and, from their in-place variants, ``Tensor.masked_fill_``. The chooser tries the
overloads in the order given and calls the first whose schema the arguments bind to: the count of positional
arguments, the keyword names, and each value's type against the argument's type (a Tensor for ``Tensor``, a
number for ``Scalar``, an int or a list of ints for ``int[]``, ...). ``out=`` goes to the chosen overload's out
variant. Results of an overload whose schema names several returns, ``(Tensor values, Tensor indices)``, come
back as ``ember.return_types.<name>``, as torch's structseqs do. When no overload binds, the error is torch's:
``max() received an invalid combination of arguments - got (...), but expected one of: ...``.
"""
import operator

import numpy as np

from .._core.tensor_impl import TensorImpl
from .._core.dtype import dtype as _dtype, check_cast, _INT as _INTEGRAL, _BOOL
from .registry import BY_OP
from .._dispatch.codegen import compile_function
from .._dispatch.torch_function import has_torch_function, handle_torch_function
from .._dispatch.dispatcher import NUMPY_ALIASES, _param
from ..return_types import _structseq

GROUPS = {}         # public name -> _Group
_NUMPY_NAMES = {alias: name for name, alias in NUMPY_ALIASES.items()}   # NOTE [numpy keyword aliases]


class _Group:
    def __init__(self, name, op_names, method, function, aliases):
        self.name, self.op_names, self.method, self.function = name, op_names, method, function
        self.aliases = aliases

    @property
    def decls(self):
        return [BY_OP[n if '::' in n else f'aten::{n}'] for n in self.op_names]


def overloads(name, *op_names, method=True, function=True, aliases=()):
    """Declare that the public ``name`` (and its ``aliases``) chooses among the operators ``op_names``
    (``'masked_fill.Tensor'``, in the order to try them)."""
    GROUPS[name] = _Group(name, op_names, method, function, aliases)


# --- return types ---------------------------------------------------------------------------------------

def _return_names(schema):
    """``values indices`` from ``-> (Tensor values, Tensor indices)``; None where the returns are not named."""
    text = schema.text.split('->', 1)[1].strip()
    if not text.startswith('(') or text == '()':
        return None
    names = [r.split()[-1] for r in text[1:-1].split(',')]
    return names if all(len(r.split()) == 2 for r in text[1:-1].split(',')) else None


# --- binding -----------------------------------------------------------------------------------------------

_INT = (int, np.integer)
_NUMBER = (int, float, complex, np.number, np.bool_)
_LIST = (list, tuple)


def _is_int(v):
    return isinstance(v, _INT) and not isinstance(v, bool)


_TENSOR_OR_NUMBER = (TensorImpl,) + _NUMBER
_ACCEPTS = {
    'Tensor': lambda v: isinstance(v, TensorImpl),
    'Scalar': lambda v: isinstance(v, _NUMBER),          # bool is an int
    'int': _is_int,
    'SymInt': _is_int,
    'float': lambda v: isinstance(v, _NUMBER) and not isinstance(v, (complex, np.complexfloating)),
    'bool': lambda v: isinstance(v, (bool, np.bool_)),
    'str': lambda v: isinstance(v, str),
    'int[]': lambda v: _is_int(v) or (isinstance(v, _LIST) and all(_is_int(x) for x in v)),
    'SymInt[]': lambda v: _is_int(v) or (isinstance(v, _LIST) and all(_is_int(x) for x in v)),
    'Tensor[]': lambda v: isinstance(v, _LIST) and all(isinstance(x, TensorImpl) for x in v),
    'Scalar[]': lambda v: isinstance(v, _LIST) and all(isinstance(x, _NUMBER) for x in v),
    'ScalarType': lambda v: isinstance(v, _dtype),
}


# NOTE [integer-like arguments]: torch's parser takes more than Python and NumPy ints for an ``int`` or ``SymInt``
# argument. An ``int`` takes a 0-dim integer (not bool) tensor that does not require grad (``x.max(torch.tensor(0))``
# is still the elementwise max: an overload with a Tensor there comes first); a ``SymInt`` takes whatever
# ``__index__`` converts: a one-element integer tensor (``x.topk(torch.tensor(2))``), a user's index type. The
# chooser tries them only when no overload binds the arguments as they are (so the generated fast path and the
# Tensor overloads are untouched), and calls the overload with the converted ints.
def _int_tensor(v):
    return isinstance(v, TensorImpl) and v.ndim == 0 and v._dtype.category == _INTEGRAL and not v.requires_grad


def _indexable(v):
    if isinstance(v, bool) or (isinstance(v, TensorImpl) and v._dtype.category == _BOOL):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


_INT_LIKE = {'int': _int_tensor, 'SymInt': _indexable}


def _loose(arg, strict):
    """``strict`` widened to the integer-like values of ``arg``'s type (NOTE [integer-like arguments])."""
    wider = _INT_LIKE.get(arg.base_type)
    return strict if wider is None else (lambda v: strict(v) or wider(v))


def _checker(arg, numbers):
    """A test of one value against one argument's type. ``numbers``: a Python number may stand for this
    Tensor argument (the entry points wrap it, as torch's wrapped numbers) because no overload of the group
    takes a number at that place."""
    if arg.base_type == 'Tensor' and numbers:
        check = lambda v: isinstance(v, _TENSOR_OR_NUMBER)
    else:
        check = _ACCEPTS.get(arg.base_type)
        if check is None:
            return lambda v: True
    if arg.optional or (arg.has_default and arg.default is None):
        return lambda v: v is None or check(v)
    return check


class _Binder:
    """Whether ``(args, kwargs)`` bind to one schema."""

    def __init__(self, schema, number_places):
        args = schema.arguments
        self.checks = [_checker(a, i not in number_places) for i, a in enumerate(args)]
        self.loose = [_loose(a, c) for a, c in zip(args, self.checks)]
        self.number_places = number_places
        positional = [a for a in args if not a.kwarg_only]
        self.max_pos = len(positional)
        self.min_pos = sum(1 for a in positional if not a.has_default)
        self.by_name = {_param(a.name): i for i, a in enumerate(args)}      # NOTE [input, not self]
        self.required = [(i, _param(a.name)) for i, a in enumerate(args) if not a.has_default]

    def binds(self, args, kwargs, checks):
        """Whether the arguments bind with ``checks`` (``self.checks``, or ``self.loose``)."""
        n = len(args)
        if n > self.max_pos:
            return False
        for check, v in zip(checks, args):
            if not check(v):
                return False
        if not kwargs:
            return n >= self.min_pos
        for k, v in kwargs.items():
            i = self.by_name.get(k)
            if i is None or i < n or not checks[i](v):
                return False
        for i, name in self.required:
            if i >= n and name not in kwargs:
                return False
        return True

    def as_ints(self, args, kwargs):
        """The arguments with each integer-like value converted to the int it stands for."""
        def conv(i, v):
            return v if self.checks[i](v) else operator.index(v)
        return (tuple(conv(i, v) for i, v in enumerate(args)),
                {k: conv(self.by_name[k], v) for k, v in kwargs.items()})


def _bind(cands, args, kwargs):
    """``(candidate, args, kwargs)`` for the first candidate the arguments bind to as they are, else with
    integer-like values for ints (NOTE [integer-like arguments]); None when none binds."""
    for cand in cands:
        if cand[3].binds(args, kwargs, cand[3].checks):
            return cand, args, kwargs
    for cand in cands:
        if cand[3].binds(args, kwargs, cand[3].loose):
            return (cand,) + cand[3].as_ints(args, kwargs)
    return None


def _type_name(v):
    if isinstance(v, TensorImpl):
        return 'Tensor'
    if isinstance(v, _LIST):        # torch's parser names the sequence's type only: (Tensor, list, str)
        return type(v).__name__
    if isinstance(v, bool):
        return 'bool'
    if isinstance(v, _INT):
        return 'int'
    if isinstance(v, (float, np.floating)):
        return 'float'
    return type(v).__name__


def _signature_line(schema, has_out):
    parts, star = [], False
    for a in schema.arguments:
        if a.kwarg_only and not star:
            parts.append('*')
            star = True
        t = {'Scalar': 'Number', 'SymInt': 'int', 'SymInt[]': 'tuple of ints', 'int[]': 'tuple of ints',
             'Tensor[]': 'tuple of Tensors'}.get(a.base_type, a.base_type)
        name = _param(a.name)
        parts.append(f'{t} {name}' + (' = None' if a.has_default and a.default is None else ''))
    if has_out:
        if not star:
            parts.append('*')
        parts.append('Tensor out' if len(schema.returns) == 1 else 'tuple of Tensors out')
    return ' * (' + ', '.join(parts) + ')'


def _invalid(name, cands, args, kwargs):
    got = [_type_name(v) for v in args] + [f'{k}={_type_name(v)}' for k, v in kwargs.items()]
    lines = '\n'.join(_signature_line(c[2], c[1] is not None) for c in cands)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but "
                     f"expected one of:\n{lines}")


def _number_places(ops):
    """Argument positions where some overload of the group takes a number (Scalar, int, float): there a Python
    number must not be taken for a Tensor, so that ``masked_fill(x, m, 0.5)`` reaches ``masked_fill.Scalar``."""
    return {i for op in ops for i, a in enumerate(op.schema.arguments)
            if a.base_type in ('Scalar', 'int', 'SymInt', 'float')}


def _candidates(group_name, ops, out_ops):
    cands = []
    places = _number_places(ops)
    for op, out_op in zip(ops, out_ops):
        names = _return_names(op.schema)
        rt = _structseq(group_name, names) if names and len(names) > 1 else None
        out_names = None
        if out_op is not None and len(op.schema.returns) > 1:
            out_names = [a.name for a in out_op.schema.arguments[-len(op.schema.returns):]]
        cands.append((op.call, None if out_op is None else out_op.call, op.schema, _Binder(op.schema, places), rt,
                      out_names))
    return cands


_INLINE = {            # an argument type's test written inline in the generated fast path
    'Tensor': 'isinstance({v}, _T)', 'Scalar': 'isinstance({v}, _NUMBER)',
    'int': '(isinstance({v}, _INT) and {v}.__class__ is not bool)',
    'SymInt': '(isinstance({v}, _INT) and {v}.__class__ is not bool)', 'str': 'isinstance({v}, str)',
}


def _fast_path(cands):
    """Source lines that pick an overload for a call with positional arguments only, testing each argument
    inline (``isinstance(args[1], _T)``); anything else goes to the general binding loop."""
    lines = []
    for c, (call, out_call, schema, binder, rt, out_names) in enumerate(cands):
        for n in range(binder.min_pos, binder.max_pos + 1):
            tests = [f'n == {n}']
            for i, a in enumerate(schema.arguments[:n]):
                v = f'args[{i}]'
                if a.base_type == 'Tensor' and i not in binder.number_places:
                    t = f'isinstance({v}, _TN)'
                elif a.base_type in _INLINE:
                    t = _INLINE[a.base_type].format(v=v)
                else:
                    t = f'_checks{c}[{i}]({v})'
                if a.optional or (a.has_default and a.default is None):
                    t = f'({v} is None or {t})'
                tests.append(t)
            ret = f'_call{c}(*args)' if rt is None else f'_rt{c}(*_call{c}(*args))'
            lines.append(f'        if {" and ".join(tests)}:\n            return {ret}')
    return lines


def make_chooser(name, ops, out_ops=None, public_name=None):
    """The public function for a group: pick the first overload the arguments bind to and call it. The
    function is generated (ember.debug.source shows it): a fast path for positional-only calls, then the
    general binding against each schema."""
    shown = public_name or name
    cands = _candidates(name, ops, out_ops or [None] * len(ops))

    def general(args, kwargs, out):
        if not _NUMPY_NAMES.keys().isdisjoint(kwargs):       # NOTE [numpy keyword aliases]
            kwargs = {_NUMPY_NAMES.get(k, k): v for k, v in kwargs.items()}
        bound = _bind(cands, args, kwargs)
        if bound is not None:
            (call, out_call, schema, binder, rt, out_names), args, kwargs = bound
            if out is None:
                r = call(*args, **kwargs)
            elif out_call is None:
                r = write_out(out, call(*args, **kwargs))
            elif out_names is not None:
                r = out_call(*args, **kwargs, **dict(zip(out_names, out)))
            else:
                r = out_call(*args, out=out, **kwargs)
            return r if rt is None else rt(*r)
        given = list(args) + list(kwargs.values()) + ([] if out is None else [out])
        if has_torch_function(given):       # NOTE [__torch_function__]: e.g. an fx Proxy in a Tensor's place
            extra = {} if out is None else {'out': out}
            return handle_torch_function(public[0], given, *args, **kwargs, **extra)
        raise _invalid(shown, cands, args, kwargs)
    public = []
    src = [f'def {shown}(*args, out=None, **kwargs):', '    if out is None and not kwargs:', '        n = len(args)']
    src += _fast_path(cands) + ['    return _general(args, kwargs, out)']
    g = {'_general': general, '_T': TensorImpl, '_TN': _TENSOR_OR_NUMBER, '_NUMBER': _NUMBER, '_INT': _INT}
    for c, cand in enumerate(cands):
        g[f'_call{c}'], g[f'_checks{c}'], g[f'_rt{c}'] = cand[0], cand[3].checks, cand[4]
    chooser = compile_function('\n'.join(src) + '\n', f'<ember overloads {shown}>', g, shown)
    chooser.__qualname__ = shown
    public.append(chooser)
    chooser.__doc__ = f"{shown}: one of\n" + '\n'.join(f'    {c[2]}' for c in cands) + \
        f"\n\nchosen by the arguments' types (see ember/_ops/overloads.py). See torch.{shown}."
    chooser._overloads = [c[2] for c in cands]
    chooser._public = public        # what __torch_function__ receives: the namespace's builtin (public._as_builtins)
    return chooser


def write_out(out, res):
    """``out=`` for an overload without an out variant (a composite): check the cast, resize as torch does
    (aten._resize_output_), copy each result."""
    from .._dispatch.ops_namespace import aten
    outs = out if isinstance(out, _LIST) else (out,)
    ress = res if isinstance(res, tuple) else (res,)
    for o, r in zip(outs, ress):
        check_cast(r.dtype, o.dtype)
        aten._resize_output_.default(o, r.shape, o.device).copy_(r)
    return tuple(outs) if isinstance(res, tuple) else outs[0]


def returns_written_list(op):
    """A foreach operator that writes its first argument, a Tensor list, and returns nothing (``_foreach_add_.Scalar(
    Tensor(a!)[] self, Scalar scalar) -> ()``): its public function returns that list, as torch's generated
    Python bindings do (``torch._foreach_add_(ts, 1) is ts``), while the operator itself returns None. (The fused
    optimizer steps, ``_fused_adam_(Tensor(a!)[] self, ...) -> ()``, return None in both, as torch's.)"""
    schema = op.schema
    first = schema.arguments[0] if schema.arguments else None
    return 'foreach' in op.tags and not schema.returns and first is not None and first.base_type == 'Tensor[]' \
        and first.is_write


def returning_written_list(fn):
    def written_list(self, *args, **kwargs):
        fn(self, *args, **kwargs)
        return self
    written_list.__wrapped__ = fn
    written_list.__doc__ = fn.__doc__
    written_list._overloads = getattr(fn, '_overloads', None)
    return written_list


def install(Tensor, functions):
    """Install every declared group: the function, the method, and the in-place method where the overloads
    have in-place variants."""
    for name, g in GROUPS.items():
        decls = g.decls
        inplace = [d.inplace_op for d in decls if d.inplace_op is not None]
        for public in (name,) + tuple(g.aliases):
            fn = make_chooser(name, [d.op for d in decls], [d.out_op for d in decls], public_name=public)
            fn.__module__ = 'ember'
            if all(returns_written_list(d.op) for d in decls):
                fn = returning_written_list(fn)
                fn.__name__ = fn.__qualname__ = public
                fn.__module__ = 'ember'
            if g.function:
                functions[public] = fn
                if public == name:      # what __torch_function__ receives as func (NOTE [__torch_function__])
                    for d in decls:
                        if d.op.public is None:
                            d.op.public = fn
            if g.method:
                setattr(Tensor, public, fn)
            if inplace:
                ip = make_chooser(name, inplace, public_name=f'{public}_')
                setattr(Tensor, f'{public}_', ip)
                if g.function:
                    functions[f'{public}_'] = ip

