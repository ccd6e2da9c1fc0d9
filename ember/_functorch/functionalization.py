"""functionalize's machinery: a Python dispatch mode that turns mutations (and, if asked, views) into
out-of-place operators (torch's Functionalize key and FunctionalTensorWrapper).

NOTE [functionalize]: ``FunctionalizeMode`` is a Python dispatch mode, like make_fx's ``ProxyTorchDispatchMode``,
rather than a dispatch key of its own with a wrapper tensor (torch's FunctionalTensorWrapper): the transform changes which
operators run, not what a tensor is, so seeing every operator call once, above Autograd, is all it needs, and it
stacks with the other modes in the order they are entered (``make_fx(functionalize(f))``: functionalize's mode is
the inner one, so the operators it runs instead are the ones make_fx records). The tensors the function handles
stay ordinary tensors; the mode keeps, per handle (by identity), what it currently stands for:

* every handle belongs to a *storage group*: the base it is a view of (itself when it is no view), whose current
  value and generation the group holds, and the chain of view operators that makes the handle from the base;
* a handle's ``value`` is the tensor that holds its current contents. Every operator call gets the values in
  place of the handles. A handle whose group changed since (a generation behind) is first regenerated: the
  chain of views replayed on the base's current value;
* a view operator on a handle returns a new handle in the same group, its chain one longer (under
  ``remove='mutations_and_views'`` the ``*_copy`` operator runs instead of the view, here and in every replay);
* an in-place operator (or an ``out=`` one) runs its functional form on the values (``add_`` -> ``add``,
  ``zero_`` -> ``zero``, ``copy_`` -> ``copy``); the result is scattered back through the handle's chain into a
  new value of the base (``select_scatter`` for ``select``, the inverse view for ``transpose``/``view``/...), the
  group's generation goes up, and the handle is regenerated from it at once, as torch's ``sync`` does;
* at the end the outputs are their handles' values, and every input that was mutated (or a view of which was)
  gets its new value written back with one ``copy_`` (torch's input mutations). Other tensors the function
  reads but did not make (a closure's, a module's buffer) are not written back, as in torch: pass them in.

The operator sequence is torch's (tests/test_func.py compares ``make_fx(functionalize(f))`` graphs with torch's).
What a mode cannot see: a mutated handle's own data is not rewritten in place while the function runs, so Python
reads that bypass the dispatcher (``.item()``, ``print``, ``.tolist()``) on a handle mutated inside the function
see its old contents; operators, the outputs and the inputs' write-back see the new ones.
"""
from .._dispatch.modes import TorchDispatchMode
from .._dispatch.ops_namespace import aten
from .._dispatch.dispatcher import all_ops
from .._core.tensor_impl import TensorImpl
from ..library import Library

# --- the functional operators functionalization runs (torch's *_copy views, copy, zero) ------------------------

_VIEW_COPIES = {   # view overload -> (copy operator's schema, the view it copies)
    'select.int': 'select_copy.int(Tensor self, int dim, SymInt index) -> Tensor',
    'slice.Tensor': 'slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, '
                    'SymInt step=1) -> Tensor',
    'view': 'view_copy(Tensor self, SymInt[] size) -> Tensor',
    'transpose.int': 'transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor',
    'permute': 'permute_copy(Tensor self, int[] dims) -> Tensor',
    'unsqueeze': 'unsqueeze_copy(Tensor self, int dim) -> Tensor',
    'squeeze.dims': 'squeeze_copy.dims(Tensor self, int[] dim) -> Tensor',
    'diagonal': 'diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor',
    'expand': 'expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor',
    'alias': 'alias_copy(Tensor self) -> Tensor',
    'as_strided': 'as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) '
                  '-> Tensor',
    'unfold': 'unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor',
}
_FUNCTIONAL = {   # in-place operators declared without a functional form (zero_ is a composite of fill_)
    'copy_': ('copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor',
              lambda self, src, non_blocking=False: aten.clone.default(self).copy_(src, non_blocking)),
}
_LIB = []


def _composite(fn):
    """One Tensor-level body for the keys an operator defined here needs: it is made of ember operators, so the
    backends, autograd and forward AD come from theirs."""
    return fn


def _define():
    """Define the operators above in the aten namespace, once (torch declares them in native_functions.yaml)."""
    if _LIB:
        return
    lib = Library('aten', 'FRAGMENT')
    ops = all_ops()
    bodies = {}
    for view, schema in _VIEW_COPIES.items():
        name = view.split('.')[0]
        ov = view.split('.')[1] if '.' in view else 'default'
        vop = getattr(getattr(aten, name), ov)
        bodies[schema] = (lambda vop: lambda self, *a: aten.clone.default(
            vop(self, *a), memory_format='contiguous_format'))(vop)
    for schema, fn in _FUNCTIONAL.values():
        bodies[schema] = fn
    for schema, fn in bodies.items():
        qual = 'aten::' + schema.split('(')[0]
        if qual in ops:
            continue
        full = lib.define(schema)
        for key in ('CompositeExplicitAutograd', 'Autograd', 'ForwardAD', 'FuncTorchBatched'):
            lib.impl(full, fn, key)
    _LIB.append(lib)


_define()


def _op(full_name):
    name, _, ov = full_name.partition('.')
    return getattr(getattr(aten, name), ov or 'default')


# --- inverses of the views: how a new value of a view goes back into its base --------------------------------

def _inverse(name, base, new, args, view_fn):
    """The new value of ``base`` once its view ``name(base, *args)`` holds ``new``."""
    if name == 'select.int':
        return aten.select_scatter.default(base, new, *args)
    if name == 'slice.Tensor':
        return aten.slice_scatter.default(base, new, *args)
    if name == 'diagonal':
        return aten.diagonal_scatter.default(base, new, *args)
    if name == 'alias':
        return new
    if name in ('view', 'squeeze.dims', 'unsqueeze'):
        return view_fn('view', new, [tuple(base.shape)])
    if name == 'transpose.int':
        return view_fn('transpose.int', new, list(args))
    if name == 'permute':
        dims = [d % base.dim() for d in args[0]] if base.dim() else []
        return view_fn('permute', new, [[dims.index(i) for i in range(len(dims))]])
    raise NotImplementedError(f"functionalize: mutating a view made by {name} (expand, as_strided, unfold: views "
                              f"that may repeat their base's elements) is not supported")


def _schema_order(func, args, kwargs):
    """Positional and keyword arguments as the schema's full list, defaults filled in."""
    out = list(args)
    for a in func.schema.arguments[len(args):]:
        out.append(kwargs[a.name] if a.name in kwargs else a.default)
    return out


class _Group:
    """The base of a set of views: its current value, and how many times it was written."""
    __slots__ = ('base', 'value', 'gen', 'created')

    def __init__(self, base, created):
        self.base, self.value, self.gen, self.created = base, base, 0, created


class _Handle:
    """A tensor the function holds: its group, the views that make it from the group's base, its current value
    and the group's generation that value reflects. As in torch, a base that catches up with its group's value
    (nothing to replay) keeps its generation, and a view inherits the generation of the tensor it is taken from:
    a view taken from a mutated base is replayed from the base once more at its first use, which is why torch's
    graphs (and so ember's) show such views twice."""
    __slots__ = ('tensor', 'group', 'chain', 'value', 'gen')

    def __init__(self, tensor, group, chain, value):
        self.tensor, self.group, self.chain, self.value, self.gen = tensor, group, chain, value, group.gen


class FunctionalizeMode(TorchDispatchMode):
    """The mode functionalize runs its function under (NOTE [functionalize])."""

    sees_composites = True      # the fused operators functionalize as their pieces do

    def __init__(self, remove='mutations'):
        _define()
        self.views = remove == 'mutations_and_views'
        self.handles = {}       # id(tensor) -> _Handle; the handle keeps its tensor alive, so ids stay unique
        self.groups = []

    # --- handles -----------------------------------------------------------------------------------------
    def handle(self, t, created=True):
        """The handle of ``t``; a tensor seen for the first time is a base of its own (``created=False``: an
        input, written back at the end if mutated)."""
        h = self.handles.get(id(t))
        if h is None:
            g = _Group(t, created)
            self.groups.append(g)
            h = self.handles[id(t)] = _Handle(t, g, (), t)
        return h

    def view_fn(self, name, x, args):
        """A view operator, or its ``*_copy`` when views are removed (``args``: the rest of the schema's
        arguments, in its order)."""
        op = _op(_VIEW_COPIES[name].split('(')[0]) if self.views else _op(name)
        return op.call_in_schema_order([x] + list(args)) if hasattr(op, 'call_in_schema_order') else op(x, *args)

    def sync(self, h):
        if h.gen != h.group.gen:
            v = h.group.value
            for name, args in h.chain:
                v = self.view_fn(name, v, args)
            h.value = v
            if h.chain:     # torch's: a base's generation stays (see _Handle), so a view of it replays once more
                h.gen = h.group.gen
        return h.value

    def value(self, a):
        """What an argument stands for now: a tensor in no view or mutation (most of them) is itself, and gets no
        handle, so the mode keeps alive only the tensors that views and mutations involve."""
        if isinstance(a, TensorImpl):
            h = self.handles.get(id(a))
            return a if h is None else self.sync(h)
        if isinstance(a, (list, tuple)) and any(isinstance(x, TensorImpl) for x in a):
            return type(a)(self.value(x) for x in a)
        return a

    def commit(self, h, new):
        """``h`` now holds ``new``: scatter it into its base through the chain, then regenerate ``h``."""
        g = h.group

        def scatter(base, chain, new):
            if not chain:
                return new
            name, args = chain[0]
            inner = scatter(self.view_fn(name, base, args), chain[1:], new) if len(chain) > 1 else new
            return _inverse(name, base, inner, args, self.view_fn)
        g.value = scatter(g.value, h.chain, new)
        g.gen += 1
        self.sync(h)

    # --- the mode ----------------------------------------------------------------------------------------
    def __ember_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.schema.full_name
        decl = func.decl
        tags = func.tags
        if 'out' in tags and 'out' in kwargs:
            out = kwargs['out']
            res = decl.op(*self.value(list(args)), **{k: self.value(v) for k, v in kwargs.items() if k != 'out'})
            for o, r in zip(out if isinstance(out, (list, tuple)) else (out,), res if isinstance(res, tuple) else (res,)):
                self.commit(self.handle(o), r)
            return out
        vargs = self.value(list(args))
        vkw = {k: self.value(v) for k, v in kwargs.items()}
        if name in _VIEW_COPIES and isinstance(args[0], TensorImpl):
            src = self.handle(args[0])
            self.sync(src)
            rest = _schema_order(func, vargs, vkw)[1:]
            out = self.view_fn(name, vargs[0], rest)
            h = self.handles[id(out)] = _Handle(out, src.group, src.chain + ((name, rest),), out)
            h.gen = src.gen
            return out
        base = name.split('.')[0]
        if base in _FUNCTIONAL or 'inplace' in tags:
            functional = _op(_FUNCTIONAL[base][0].split('(')[0]) if base in _FUNCTIONAL else decl.op
            new = functional(*vargs, **vkw)
            self.commit(self.handle(args[0]), new)
            return args[0]
        return func(*vargs, **vkw)

    def finish(self, outputs):
        """The outputs' values (a flat list); every mutated base the function did not make written back with
        ``copy_``."""
        res = [self.value(o) for o in outputs]
        for g in self.groups:
            if g.gen and not g.created:
                aten.copy_.default(g.base, g.value)
        return res
