"""Forward-mode AD: the ForwardAD kernels, generated from each operator's forward derivative.

NOTE [forward AD]: a dual tensor carries its tangents in ``_fw``, a dict {dual level: tangent}, and the ForwardAD
dispatch key in its key set. ForwardAD sits above Autograd: for an operator on dual tensors the ForwardAD kernel
computes the primal result below itself (Autograd records it where an input requires grad, so the result has its
history before a formula reads it) and then, for each live dual level among the inputs, the result's tangent from
the operator's forward derivative. A saved output gets its tangent after Autograd saved it, so SavedVariable keeps
a weak reference to it while a level is live (autograd/node.py). The tangent is computed with ember operators, so it is recorded by
Autograd where its inputs require grad (``jacrev`` of ``jvp``) and carries the tangents of other levels (nested
``jvp``); while it is computed, its own level is hidden (``LEVELS.hidden``), so the operators of the formula see
the primals at that level, never their tangents (no perturbation confusion). An operator's forward derivative is
declared with it (``declare(..., forward=...)``, torch's ``result:`` lines in derivatives.yaml):

  a formula  ``lambda self, self_t, result: ...``: parameters name primals, their tangents (``<arg>_t``, None when
             an input has none) and results, as backward formulas name what they save;
  'linear'   the operator is linear in its differentiable inputs jointly (views, sum, cat, gather, fft, padding,
             ...): it is applied to their tangents (zeros where an input has none), other arguments unchanged;
  'multilinear'  linear in each differentiable input separately (mm, matmul, einsum): the sum, over the inputs
             with a tangent, of the operator with that input replaced by its tangent;
  'self_adjoint'  the default of pointwise operators: their Jacobian is diagonal, so the backward formula of each
             input applied to that input's tangent (``grad`` := tangent) is its forward contribution;
  'transpose'  derived from the backward formulas, which are linear in ``grad``: the forward derivative is their
             transpose, obtained by differentiating <formula(u), tangent> with respect to u (the double-vjp trick;
             complex tensors: NOTE [complex transpose]); costlier, so the operators of an MLP or a CNN have formulas of their own;
  'not_implemented'  a tangent reaching the operator raises torch's error.

Views: the tangent of a view is the same view of the tangent (the 'linear' rule), so an in-place change of the
view's tangent reaches the base's. In-place operators compute the functional result with tangents and copy its
tangent into the tensor's (or attach one). Levels: ``enter_dual_level`` pushes a level, ``exit_dual_level``
removes its tangents from every tensor that received one.
"""
import inspect
import threading
import weakref

from .._core.dispatch_key import DispatchKey, FORWARD_AD_BIT, below
from .._core.tensor_impl import TensorImpl
from .._dispatch.ops_namespace import aten
from . import grad_mode

_BELOW = below(DispatchKey.ForwardAD)
RULES = ('linear', 'multilinear', 'self_adjoint', 'transpose', 'not_implemented')


class Level:
    """One dual level. ``index`` is its depth (torch's level number); tangents are keyed by the object, so a level
    that is exited and a later one with the same index never meet."""
    __slots__ = ('index', 'alive', 'tensors', '__weakref__')

    def __init__(self, index):
        self.index, self.alive, self.tensors = index, True, []


class _Levels(threading.local):
    def __init__(self):
        self.stack = []         # live levels, outermost first
        self.hidden = set()     # levels whose tangent is being computed: their tangents are invisible meanwhile


LEVELS = _Levels()


def enter():
    lvl = Level(len(LEVELS.stack))
    LEVELS.stack.append(lvl)
    return lvl


def exit_(lvl):
    if not LEVELS.stack or LEVELS.stack[-1] is not lvl:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    LEVELS.stack.pop()
    lvl.alive = False
    for ref in lvl.tensors:
        t = ref()
        if t is not None and t._fw and lvl in t._fw:
            fw = {k: v for k, v in t._fw.items() if k is not lvl}
            t._fw = fw or None
            if not fw:
                t._keys &= ~FORWARD_AD_BIT
    lvl.tensors = []


def tangent(t, lvl):
    fw = t._fw
    return fw.get(lvl) if fw else None


def attach(t, lvl, tan):
    """Give ``t`` the tangent ``tan`` at ``lvl`` (shape and dtype made to match)."""
    if tuple(tan.shape) != tuple(t.shape):
        tan = tan.expand(tuple(t.shape))
    if tan.dtype != t.dtype:
        tan = tan.to(t.dtype)
    fw = dict(t._fw) if t._fw else {}
    fw[lvl] = tan
    t._fw = fw
    t._keys |= FORWARD_AD_BIT
    lvl.tensors.append(weakref.ref(t))


def _collect(t, found):
    for lvl in t._fw or ():
        if lvl.alive and lvl not in LEVELS.hidden and lvl not in found:
            found.append(lvl)


def visible_levels(args):
    """The live, not hidden levels at which some tensor argument has a tangent (outermost first)."""
    found = []
    for a in args:
        if isinstance(a, TensorImpl):
            if a._keys & FORWARD_AD_BIT:
                _collect(a, found)
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorImpl) and x._keys & FORWARD_AD_BIT:
                    _collect(x, found)
    if len(found) > 1:
        found.sort(key=lambda lvl: lvl.index)
    return found


class _Hide:
    def __init__(self, lvl):
        self.lvl = lvl

    def __enter__(self):
        LEVELS.hidden.add(self.lvl)

    def __exit__(self, *exc):
        LEVELS.hidden.discard(self.lvl)


def _is_float(t):
    return isinstance(t, TensorImpl) and t._dtype.category >= 2


def _zeros_like(x):
    return aten.zeros_like.default(x)


def _diff_names(decl):
    names = []
    for k in decl.derivatives:
        names.extend(k if isinstance(k, tuple) else (k,))
    return names


# --- rules ---------------------------------------------------------------------------------------------------

def _linear_rule(decl):
    op = decl.op
    pos = {a.name: i for i, a in enumerate(op.schema.arguments)}
    diff = [pos[n] for n in _diff_names(decl)]

    def rule(args, out, lvl):
        new = list(args)
        for p in diff:
            a = args[p]
            if isinstance(a, TensorImpl):
                t = tangent(a, lvl)
                new[p] = t if t is not None else _zeros_like(a)
            elif isinstance(a, (int, float, complex)) and not isinstance(a, bool):
                new[p] = 0      # a Python number standing for a tensor (where(c, x, 0.5)) is a constant
            elif isinstance(a, (list, tuple)):
                new[p] = type(a)((tangent(x, lvl) if tangent(x, lvl) is not None else _zeros_like(x))
                                 if isinstance(x, TensorImpl) else x for x in a)
        return op.call_in_schema_order(new)
    return rule


def _multilinear_rule(decl):
    """An operator linear in each differentiable input separately (mm, matmul, einsum): the sum over inputs with a
    tangent of the operator with that one input replaced by its tangent."""
    op = decl.op
    pos = {a.name: i for i, a in enumerate(op.schema.arguments)}
    diff = [pos[n] for n in _diff_names(decl)]

    def rule(args, out, lvl):
        total = None
        for p in diff:
            a = args[p]
            items = list(a) if isinstance(a, (list, tuple)) else [a]
            for j, x in enumerate(items):
                t = tangent(x, lvl) if isinstance(x, TensorImpl) else None
                if t is None:
                    continue
                new = list(args)
                if isinstance(a, (list, tuple)):
                    new[p] = type(a)(t if k == j else y for k, y in enumerate(items))
                else:
                    new[p] = t
                term = op.call_in_schema_order(new)
                total = term if total is None else total + term
        return total
    return rule


def _saved_kwargs(params, names, args, out, grad_like, arg_types):
    from .kernels import _meta_param, _meta_value
    kw = {}
    for p in params:
        if p in grad_like:
            kw[p] = grad_like[p]
        elif p == 'result' or p == 'result0':
            kw[p] = out[0] if isinstance(out, tuple) else out
        elif p == 'results':
            kw[p] = out
        elif p.startswith('result') and p[6:].isdigit():
            kw[p] = out[int(p[6:])]
        elif p in names:
            kw[p] = args[names[p]]
        else:
            suf = _meta_param(p, arg_types)
            kw[p] = _meta_value(args[names[p[:-len(suf)]]], suf)
    return kw


def _formulas_of(decl):
    from .kernels import _formulas
    arg_types = {a.name: a.base_type for a in decl.op.schema.arguments}
    return _formulas(decl.op, decl.derivatives, arg_types, []), arg_types


def _self_adjoint_rule(decl):
    formulas, arg_types = _formulas_of(decl)
    names = {a.name: i for i, a in enumerate(decl.op.schema.arguments)}
    if any(isinstance(f[0], tuple) or f[3] != 1 for f in formulas):
        return _transpose_rule(decl)

    def rule(args, out, lvl):
        total = None
        for name, fn, params, _ in formulas:
            x = args[names[name]]
            t = tangent(x, lvl) if isinstance(x, TensorImpl) else None
            if t is None:
                continue
            term = fn(**_saved_kwargs(params, names, args, out, {'grad': t}, arg_types))
            total = term if total is None else total + term
        return total if total is not None else _zeros_like(out)
    return rule


def _transpose_rule(decl):
    """The forward derivative as the transpose of the (linear in grad) backward formulas: for cotangent
    placeholders u, jvp = d/du sum_i <formula_i(u), t_i>.

    NOTE [complex transpose]: with complex tensors the backward formulas compute torch's vjp, the adjoint of the
    operator's real differential dF for the real inner product <a, b> = Re(sum(conj(a) * b)) (NOTE [complex
    gradients]: for a holomorphic F, vjp(u) = conj(F'(z)) * u, the real formula evaluated on the conjugates of the
    saved values). The jvp dF(t) is then the adjoint of the vjp: L(u) = Re(sum(conj(vjp(u)) * t)) = Re(sum(conj(u)
    * dF(t))), a real function of u whose gradient in torch's convention (dL/dRe u + i dL/dIm u) is dF(t). So the
    formulas run as the autograd kernel runs them (on conjugated saved values unless the operator sets
    ``complex_formulas``), each term is the real part of conj(vjp) * t, and ``grad`` of the sum is the tangent:
    right for holomorphic operators and for those that are only real-differentiable (norms, var, abs) alike. With
    real tensors the conjugations and the real part are identities and are skipped."""
    from .kernels import _fit, _conj
    formulas, arg_types = _formulas_of(decl)
    names = {a.name: i for i, a in enumerate(decl.op.schema.arguments)}
    multi = len(decl.op.schema.returns) > 1
    conj_formulas = not decl.complex_formulas
    _GRADS = ('grad', 'grads', 'output_mask')

    def rule(args, out, lvl):
        from . import grad as _grad
        outs = out if multi else (out,)
        cplx = any(isinstance(x, TensorImpl) and x._dtype.category == 3 for x in _flat(args) + list(outs))
        with grad_mode.enable_grad():
            us = [_zeros_like(o).requires_grad_() if _is_float(o) else None for o in outs]
            grads = tuple(u if u is not None else _zeros_like(o) for u, o in zip(us, outs))
            record = False
            total = None
            for name, fn, params, arity in formulas:
                ins = name if isinstance(name, tuple) else (name,)
                xs = []
                for n in ins:
                    v = args[names[n]]
                    xs.extend(v if isinstance(v, (list, tuple)) else [v])
                ts = [tangent(x, lvl) if isinstance(x, TensorImpl) and x.numel() else None for x in xs]
                if all(t is None for t in ts):
                    continue
                extra = {'grad': grads[0], 'grads': grads, 'output_mask': [t is not None for t in ts]}
                kw = _saved_kwargs(params, names, args, out, extra, arg_types)
                if cplx and conj_formulas:      # NOTE [complex transpose]: as the autograd kernel runs them
                    kw = {k: (v if k in _GRADS else _conj(v)) for k, v in kw.items()}
                g = fn(**kw)
                gs = g if (isinstance(name, tuple) or arity == 'list') else (g,)
                for gi, x, t in zip(gs, xs, ts):
                    if gi is None or t is None:
                        continue
                    record = record or t.requires_grad or x.requires_grad
                    gi = _fit(gi, (tuple(x.shape), x.dtype))
                    if gi._dtype.category == 3:
                        term = (gi.conj() * t).real.sum()
                    else:
                        term = (gi * t).sum()
                    total = term if total is None else total + term
            live = [u for u in us if u is not None]
            if total is None or not total.requires_grad:
                res = [None] * len(live)
            else:
                res = list(_grad(total, live, allow_unused=True, create_graph=record))
        it = iter(res)
        tans = tuple((next(it) if u is not None else None) for u in us)
        tans = tuple(t if t is not None or not _is_float(o) else _zeros_like(o) for t, o in zip(tans, outs))
        return tans if multi else tans[0]
    return rule


def _formula_rule(decl, fn):
    params = tuple(inspect.signature(fn).parameters)
    arg_types = {a.name: a.base_type for a in decl.op.schema.arguments}
    names = {a.name: i for i, a in enumerate(decl.op.schema.arguments)}
    for p in params:
        base = p[:-2] if p.endswith('_t') else p
        if base not in names and not p.startswith('result'):
            raise ValueError(f"{decl.op.name}: forward formula names unknown value '{p}'")

    def rule(args, out, lvl):
        grad_like = {}
        for p in params:
            if p.endswith('_t') and p[:-2] in names:
                v = args[names[p[:-2]]]
                if isinstance(v, (list, tuple)):
                    grad_like[p] = [tangent(x, lvl) if isinstance(x, TensorImpl) else None for x in v]
                else:
                    grad_like[p] = tangent(v, lvl) if isinstance(v, TensorImpl) else None
        return fn(**_saved_kwargs(params, names, args, out, grad_like, arg_types))
    return rule


def _flat(args):
    out = []
    for a in args:
        out.extend(a if isinstance(a, (list, tuple)) else (a,))
    return out


def _not_implemented(decl):
    def rule(args, out, lvl):
        raise not_implemented_error(decl.op)
    return rule


def not_implemented_error(op):
    return NotImplementedError(f"Trying to use forward AD with {op.schema.name} that does not support it because it "
                               f"has not been implemented yet. (ember: give its declaration a forward= derivative, "
                               f"NOTE [forward AD])")


def rule_name(decl):
    """The forward rule an operator uses: its ``forward=`` or its kind's default; None when it has none."""
    f = decl.forward
    if f is not None:
        return f if isinstance(f, str) else 'formula'
    if not decl.derivatives:
        return None
    if decl.kind == 'pointwise':
        return 'self_adjoint'
    if decl.kind == 'view':
        return 'linear'
    return None


def make_rule(decl):
    name = rule_name(decl)
    if name is None:
        return None
    if name == 'formula':
        return _formula_rule(decl, decl.forward)
    if name not in RULES:
        raise ValueError(f"{decl.op.name}: unknown forward rule {name!r}")
    return {'linear': _linear_rule, 'multilinear': _multilinear_rule, 'self_adjoint': _self_adjoint_rule, 'transpose': _transpose_rule,
            'not_implemented': _not_implemented}[name](decl)


# --- kernels -------------------------------------------------------------------------------------------------

def _attach_outputs(out, tans, lvl, out_diff):
    if isinstance(out, TensorImpl):
        if tans is not None and _is_float(out):
            attach(out, lvl, tans)
        return
    if isinstance(out, (list, tuple)):
        if isinstance(tans, TensorImpl):
            tans = (tans,)
        for i, (o, t) in enumerate(zip(out, tans or ())):
            if t is not None and _is_float(o) and (out_diff is None or i >= len(out_diff) or out_diff[i]):
                attach(o, lvl, t)


def forward_kernel(decl, rule):
    """The ForwardAD kernel of a functional operator."""
    op = decl.op
    redispatch = op.redispatch
    out_diff = decl.output_differentiability

    def kernel(ks, *args):
        out = redispatch(ks & _BELOW, *args)
        for lvl in visible_levels(args):
            with _Hide(lvl):
                tans = rule(args, out, lvl)
            _attach_outputs(out, tans, lvl, out_diff)
        return out
    kernel.__qualname__ = f'forward_ad::{op.schema.full_name}'
    return kernel


def copy_tangents(dst, src, levels=None):
    """After ``dst`` was overwritten in place with ``src``'s values: ``dst``'s tangents become ``src``'s (copied
    into the tangent ``dst`` already has, so views of it see the change, as torch's in-place forward AD)."""
    for lvl in (levels if levels is not None else visible_levels((src, dst))):
        t = tangent(src, lvl)
        old = tangent(dst, lvl)
        if t is None:
            t = _zeros_like(dst)
        if old is None and dst._base is not None:
            old = _view_of_base_tangent(dst, lvl)
        with _Hide(lvl):
            if old is not None and not old._a.strides.count(0):
                old.copy_(t)
            else:
                attach(dst, lvl, t.clone())


def _view_of_base_tangent(view, lvl):
    """Writing a tangent into a view of a tensor: the base gets a tangent (zeros where it had none), and the view's
    tangent is the same view of it, so the write reaches the base as torch's does."""
    from .forward_ad import _like_layout
    base = view._base
    with _Hide(lvl):
        bt = tangent(base, lvl)
        if bt is None:
            bt = _like_layout(_zeros_like(base), base)
            attach(base, lvl, bt)
        vt = aten.as_strided.default(bt, tuple(view.shape), view.stride(), view.storage_offset())
    attach(view, lvl, vt)
    return vt


def _inplace_fallback(op, ks, args):
    decl = op.decl
    levels = visible_levels(args)
    functional = decl.op
    tmp = functional.call_in_schema_order(args)
    out = op.redispatch(ks & _BELOW, *args)
    copy_tangents(args[0], tmp, levels)
    return out


def fallback(op, ks, *args):
    """Operators with no ForwardAD kernel: in-place variants of operators with a forward derivative run their
    functional form; others compute below ForwardAD, and a tangent reaching a differentiable one raises torch's
    error."""
    levels = visible_levels(args)
    if not levels:
        return op.redispatch(ks & _BELOW, *args)
    decl = op.decl
    if decl is not None and 'inplace' in op.tags and decl.op.kernels.get(DispatchKey.ForwardAD) is not None:
        return _inplace_fallback(op, ks, args)
    out = op.redispatch(ks & _BELOW, *args)
    if decl is not None and not decl.differentiable:
        return out
    outs = out if isinstance(out, (list, tuple)) else (out,)
    if any(_is_float(o) for o in outs):
        if 'out' in op.tags:
            raise RuntimeError(f"{decl.name}(): functions with out=... arguments don't support automatic "
                               f"differentiation, but one of the arguments has a forward gradient.")
        raise not_implemented_error(op)
    return out


def _copy_kernel(op):
    def kernel(ks, self, src, non_blocking=False):
        levels = visible_levels((self, src))
        out = op.redispatch(ks & _BELOW, self, src, non_blocking)
        if levels:
            copy_tangents(self, src, levels)
        return out
    return kernel


def _view_kernel(op):
    def kernel(ks, self):
        out = op.redispatch(ks & _BELOW, self)
        for lvl in visible_levels((self,)):
            with _Hide(lvl):
                t = op.call(tangent(self, lvl))
            if out is self:     # real() of a real tensor is the tensor itself: it keeps its tangent
                continue
            attach(out, lvl, t)
        return out
    return kernel


def _no_tangent_kernel(op):
    def kernel(ks, *args):
        return op.redispatch(ks & _BELOW, *args)
    return kernel


def register_all(lib):
    from .._ops.registry import BY_OP
    from .._dispatch.dispatcher import lookup_op
    lib.fallback(fallback, 'ForwardAD', with_keyset=True)
    for decl in set(BY_OP.values()):
        if decl.composite is not None:
            continue
        rule = make_rule(decl)
        if rule is not None:
            lib.impl(decl.op.name, forward_kernel(decl, rule), 'ForwardAD', with_keyset=True)
    op = lookup_op('aten::copy_')
    op.register(DispatchKey.ForwardAD, _copy_kernel(op), allow_override=True)
    for name in ('aten::real', 'aten::imag', 'aten::view_as_real', 'aten::view_as_complex'):
        op = lookup_op(name)       # composites of Python views (NOTE [complex views]): the same view of the tangent
        op.register(DispatchKey.ForwardAD, _view_kernel(op), allow_override=True)
    for name in ('aten::detach',):      # detach drops tangents as it drops history (torch's)
        op = lookup_op(name)
        op.register(DispatchKey.ForwardAD, _no_tangent_kernel(op), allow_override=True)
