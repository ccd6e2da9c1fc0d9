"""Autograd kernels, generated from the derivative formulas in the operator table.

For each differentiable operator one Node class is made (``MulBackward0``)
and one kernel is registered for the Autograd key through ember.library. The
kernel redispatches below Autograd to compute the result, and when an input
requires grad it records a node: one edge per differentiable input, the
arguments the formulas name (and nothing else) saved, and the outputs marked.

A formula's parameter names say what it needs, as in derivatives.yaml:
``grad`` (``grads`` for several outputs), ``result`` (``results``: every
output; ``result1``: only output 1, e.g. the indices of ``max.dim``, as torch's
``result1``), and the operator's own argument names. What is saved decides
where the version-counter check fires (NOTE [version counter]), so a formula
names exactly what torch's saves (tests/test_saved_versions.py). What the formula returns is summed to the
input's shape and cast to its dtype here, once (`_fit`), so formulas never
undo broadcasting themselves.

NOTE [complex gradients]: for a real loss L of a complex tensor z = x + iy, the gradient ember (like torch)
propagates is the conjugate Wirtinger derivative, dL/dx + i dL/dy. The chain rule through w = f(z) is then
grad_z = conj(df/dz) * grad_w + (df/dconj(z)) * conj(grad_w). For an operator that is holomorphic with
real coefficients (sin, exp, mul, matmul, sum, every view, ...) the second term is zero and conj(f'(z)) is
f'(conj(z)), so the formula written for real tensors, evaluated on the conjugates of the saved values, is
the complex formula: the kernel below does that when an input or an output is complex, and a declaration's formulas stay
written once. Operators for which this is not true (abs, angle, sgn, the FFTs, complex(), polar) declare
``complex_formulas=True`` and handle complex tensors in their formulas themselves. A complex gradient
reaching a real input keeps its real part (`_fit`, torch's handle_r_to_c), which is exact because L is real.

An operator torch builds from other operators but ember gives a fused kernel (matmul, einsum) names torch's
composite as ``autograd_composite``: with an input that requires grad it runs first, and where torch's pieces
save other tensors than the formulas name (a copy made by a reshape, or nothing of an input) it returns the
result built from those pieces, which record torch's graph. Where it returns None (the pieces would save the
operands or views of them) the formulas record one node, which saves the same.
"""
import inspect
import re
import types

from .._core.dispatch_key import DispatchKey, AUTOGRAD_BIT, below
from .._core.tensor_impl import TensorImpl
from .._core.dtype import float16, bfloat16
from .node import Node, SavedVariable, gradient_edge, leaf_edge, saved_attrs, _SEQ
from . import anomaly, saved_hooks
from .engine import _task
from .views import check_inplace
from .._core.storage import MetaArray
from .grad_mode import is_grad_enabled as _grad_enabled
from .._dispatch.ops_namespace import aten
from .._dispatch.codegen import compile_function

_BELOW = below(DispatchKey.Autograd)
_SPECIAL = ('grad', 'grads', 'result', 'results', 'result0', 'result1', 'result2', 'result3')
_RESULTS = ('result', 'results', 'result0', 'result1', 'result2', 'result3')


def cast_grad(g, dtype, device):
    """A gradient in the dtype and on the device of the input it is for (the backward of ``to`` and ``copy_``):
    a complex gradient of a real input is its real part, as torch's ``_to_copy_backward`` takes it (no cast
    warning)."""
    if g.dtype.is_complex and not dtype.is_complex:
        g = g.real
    return g.to(dtype).to(device)


def sum_to(g, shape):
    """Sum ``g`` down to ``shape`` (undo broadcasting): the one place ember does this."""
    shape = tuple(shape)
    gs = tuple(g.shape)
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and gs[lead + i] != 1]
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


_HALF = (float16, bfloat16)


def _fit(g, meta):
    if g is None or meta is None:
        return g
    shape, dtype = meta
    if g._a.shape != shape:      # array shapes are tuples: no Size object on this hot path
        g = sum_to(g, shape)
    if g._dtype is not dtype and dtype.category >= 2:
        if g._dtype.category == 3 and dtype.category == 2:
            g = g.real      # NOTE [complex gradients]: a real input keeps the real part
        g = g.to(dtype)
    return g


def _conj(v):
    """The conjugate of a saved value for a complex node (NOTE [complex gradients])."""
    if isinstance(v, TensorImpl):
        return v.conj() if v._dtype.category == 3 else v
    if isinstance(v, complex):
        return v.conjugate()
    if isinstance(v, (list, tuple)):
        return type(v)(_conj(x) for x in v)
    return v


class FormulaNode(Node):
    """A node whose backward is the operator's formulas. Subclasses set ``_formulas``.

    A backward that is itself recorded (create_graph: grad mode on while it runs) uses ``_formulas``,
    written in ember operators so they differentiate again; one that is not uses ``_first_order`` where
    the declaration gives it (fused backward kernels such as ``linear_backward``). This is the one place
    that looks at the grad mode to choose."""
    _fresh_outputs = True     # NOTE [gradient ownership]
    _formulas = ()      # (input name, fn, param names, arity): arity 1, 'list' (a Tensor[] input) or
    #                     the number of inputs of a joint formula (its name is a tuple of input names)
    _first_order = None
    _n_outputs = 1
    _uses_grads = False
    _conj = False       # NOTE [complex gradients]: set on a node whose formulas run on conjugated values
    _list_len = types.MappingProxyType({})     # Tensor[] input name -> its length, where the op has one
    _opmath = False     # a pointwise operator's node: half-precision formulas run in float32 (below)

    def apply(self, grad_outputs):
        # every saved value is unpacked (and its version checked) up front, as torch's generated apply does,
        # whether or not the formula that reads it runs
        saved = self._saved
        if saved:
            saved = {p: v.unpack(self, p) if v.__class__ is SavedVariable else _unpack(v, self, p)
                     for p, v in saved.items()}
            if self._conj:
                saved = {p: _conj(v) for p, v in saved.items()}
        if self._n_outputs == 1:
            grad = grad_outputs[0]
            if grad is None:
                return (None,) * len(self.next_functions)
            grads = None
            if self._opmath and grad._dtype in _HALF:
                # NOTE [half-precision opmath] (cpu/pointwise.py): torch's pointwise backward kernels (sigmoid_backward,
                # ...) compute float16/bfloat16 in float32 and round once; the formula's steps would round each time.
                # The gradients are rounded back to the inputs' dtype by _fit.
                grad = grad.float()
                saved = {p: v.float() if isinstance(v, TensorImpl) and v._dtype in _HALF else v
                         for p, v in saved.items()} if saved else saved
        elif self._uses_grads:
            grads = tuple(g if g is not None else _zeros(m) for g, m in zip(grad_outputs + (None,) * self._n_outputs,
                                                                           self._out_meta))
            grad = grads[0]
        else:       # the formulas read only the first output's gradient: no zeros for the others
            grads = None
            grad = grad_outputs[0] if grad_outputs and grad_outputs[0] is not None else _zeros(self._out_meta[0])
        out, k = [], 0
        nf, in_meta = self.next_functions, self._in_meta
        active = _task.active
        if active is not None:      # autograd.grad: inputs whose nodes neither run nor capture get no gradient
            nf = tuple(e if e[0] in active else (None, 0) for e in nf)      # (NOTE [grad inputs] in engine.py)
        formulas = self._plans if self._first_order is None or _grad_enabled() else self._first_plans
        for name, fn, params, arity, simple in formulas:
            if arity == 1:
                if nf[k][0] is None:        # that input needs no gradient: its formula does not run
                    out.append(None)
                    k += 1
                    continue
                if simple:      # the formula reads grad and saved values only (nearly all of them)
                    g = fn(*[grad if p == 'grad' else saved[p] for p in params])
                else:
                    g = fn(**self._formula_kwargs(params, grad, grads, saved, k, 1, nf))
                m = in_meta[k]
                # _fit, with its nothing-to-do case inline
                if g is not None and m is not None and (g._a.shape != m[0] or g._dtype is not m[1]):
                    g = _fit(g, m)
                out.append(g)
                k += 1
                continue
            n = self._list_len.get(name, 1) if arity == 'list' else arity
            if all(e[0] is None for e in nf[k:k + n]):
                out.extend([None] * n)
                k += n
                continue
            g = fn(**self._formula_kwargs(params, grad, grads, saved, k, n, nf))
            if arity == 'list' or n != 1:
                out.extend(None if x is None else _fit(x, m) for x, m in zip(g, in_meta[k:k + n]))
            else:
                out.append(_fit(g, in_meta[k]))
            k += n
        return tuple(out)

    def _formula_kwargs(self, params, grad, grads, saved, k, n, nf):
        kwargs = {}
        for p in params:
            if p == 'grad':
                kwargs[p] = grad
            elif p == 'grads':
                kwargs[p] = grads
            elif p == 'output_mask':        # which inputs of a joint formula need a gradient
                kwargs[p] = [e[0] is not None for e in nf[k:k + n]]
            else:
                kwargs[p] = saved.get(p)        # None: not saved, no gradient that reads it is wanted (saved_for)
        return kwargs


def _zeros(meta):
    shape, dtype, device = meta
    return aten.zeros.default(shape, dtype=dtype, device=device)


def _unpack(v, node, name):
    if isinstance(v, SavedVariable):
        return v.unpack(node, name)
    if isinstance(v, tuple) and v and isinstance(v[0], SavedVariable):
        return tuple(x.unpack(node, name) for x in v)
    if isinstance(v, list) and v and isinstance(v[0], SavedVariable):
        return [x.unpack(node, name) for x in v]
    return v


def _save(v, is_output=False):
    if isinstance(v, TensorImpl):
        return SavedVariable(v, is_output, saved_hooks.current())
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, TensorImpl) for x in v):
        hooks = saved_hooks.current()
        return type(v)(SavedVariable(x, is_output, hooks) for x in v)
    return v


_META_SUFFIXES = ('_sizes', '_strides', '_offset', '_dtype', '_device', '_numel', '_ndim')


def _meta_param(p, arg_types):
    """``self_sizes`` and friends: metadata of an argument, saved without saving the tensor itself."""
    for suf in _META_SUFFIXES:
        if p.endswith(suf) and arg_types.get(p[:-len(suf)]) in ('Tensor', 'Tensor[]'):
            return suf
    return None


def _meta_value(t, suf):
    if t is None:       # an absent Tensor? argument has no metadata
        return None
    if isinstance(t, (list, tuple)):
        return [_meta_value(x, suf) if isinstance(x, TensorImpl) else None for x in t]
    if suf == '_sizes':
        return tuple(t._a.shape)
    if suf == '_strides':
        return t.stride()
    if suf == '_offset':
        return t.storage_offset()
    if suf == '_dtype':
        return t._dtype
    if suf == '_device':
        return t._device
    if suf == '_numel':
        return int(t._a.size)
    return t._a.ndim


def node_class(decl):
    """The Node subclass for an operator, e.g. ``MulBackward0``."""
    op = decl.op
    arg_types = {a.name: a.base_type for a in op.schema.arguments}
    unknown = set(decl.first_order) - set(decl.derivatives)
    if unknown:
        raise ValueError(f"{op.name}: first_order formulas for {sorted(unknown)} have no derivative formula")
    saved = []
    formulas = _formulas(op, decl.derivatives, arg_types, saved)
    # the same inputs in the same order, a first-order formula where one is given
    fast = _formulas(op, {k: decl.first_order.get(k, fn) for k, fn in decl.derivatives.items()}, arg_types, saved) \
        if decl.first_order else None
    named = decl.grad_name if isinstance(decl.grad_name, str) else None
    cls_name = named or node_name(op.schema.name)
    # what apply loops over: each formula with whether it reads only grad and saved values (called positionally)
    plans = lambda fs: tuple(f + (not any(p in ('grads', 'output_mask') for p in f[2]) and all(
        q.kind is q.POSITIONAL_OR_KEYWORD for q in inspect.signature(f[1]).parameters.values()),) for f in fs)
    attrs = {'_formulas': formulas, '_first_order': fast, '_saved_names': tuple(saved), '_plans': plans(formulas),
             '_saved_attrs': saved_attrs(saved, lambda n: _meta_param(n, arg_types)),     # NOTE [saved attribute names]
             '_first_plans': plans(fast or ()), '_n_outputs': len(op.schema.returns),
             '_uses_grads': any('grads' in f[2] for f in formulas + (fast or ()))}
    cls = type(cls_name, (FormulaNode,), attrs)
    cls._opmath = decl.kind == 'pointwise'
    if callable(decl.grad_name):
        cls._pick = staticmethod(_variants(cls, decl.grad_name))
    return cls


def node_name(op_name):
    """torch's node class name for an operator: ``log1p`` -> ``Log1PBackward0``, ``max_pool2d_with_indices`` ->
    ``MaxPool2DWithIndicesBackward0`` (each word capitalised, and a letter after a digit too)."""
    camel = ''.join(w.capitalize() for w in op_name.strip('_').split('_'))
    return re.sub(r'(?<=[0-9])[a-z]', lambda m: m.group().upper(), camel) + 'Backward0'


def _variants(cls, choose):
    """NOTE [node names by arguments]: where one ember operator stands for several torch overloads or composites,
    torch's node class depends on the call: ``sum(x)`` records SumBackward0 and ``sum(x, 1)`` SumBackward1 (the
    overload's index in derivatives.yaml); matmul records MmBackward0, MvBackward0, ... by the operands' ranks.
    ``choose`` (the declaration's ``grad_name``) gets the operator's arguments and names the class; each name is a
    subclass of the operator's node class, made once, so ``type(t.grad_fn).__name__``, its repr and ``name()`` are
    torch's. The autograd kernel calls this when it records a node, for these operators only."""
    made = {}

    def pick(*args):
        name = choose(*args)
        sub = made.get(name)
        if sub is None:
            sub = made[name] = type(name, (cls,), {'__module__': cls.__module__})
        return sub
    return pick


def _formulas(op, derivatives, arg_types, saved):
    """(input name, fn, param names, arity) per formula; the values they read are added to ``saved``."""
    formulas = []
    for name, fn in derivatives.items():
        for n in (name if isinstance(name, tuple) else (name,)):
            if n not in arg_types:
                raise ValueError(f"{op.name}: derivative for unknown argument '{n}'")
        params = tuple(inspect.signature(fn).parameters)
        for p in params:
            if _meta_param(p, arg_types):
                if p not in saved:
                    saved.append(p)
                continue
            if p not in _SPECIAL and p not in arg_types and not (p == 'output_mask' and isinstance(name, tuple)):
                raise ValueError(f"{op.name}: formula for '{name}' names unknown value '{p}'")
            if p not in saved and p not in ('grad', 'grads', 'output_mask'):
                saved.append(p)
        arity = len(name) if isinstance(name, tuple) else 'list' if arg_types[name] == 'Tensor[]' else 1
        formulas.append((name, fn, params, arity))
    return tuple(formulas)


def autograd_kernel(decl):
    """The Autograd-key kernel for a functional operator with derivative formulas."""
    op = decl.op
    cls = node_class(decl)
    names = [a.name for a in op.schema.arguments]
    pos = {n: i for i, n in enumerate(names)}
    diff = [(pos[n], f[3] == 'list') for f in cls._formulas for n in (f[0] if isinstance(f[0], tuple) else (f[0],))]
    arg_types = {a.name: a.base_type for a in op.schema.arguments}
    # an input is saved only when a formula that reads it will run (one of that formula's inputs requires
    # grad), as torch's should_compute_output: an in-place change of an input that no running formula reads
    # is allowed. Outputs (result, result1, ...) are saved whenever a formula reading them belongs to a
    # tensor argument, required grad or not, as torch saves them (but not for a Python-number operand, which
    # is torch's Scalar overload: pow(x, 2) saves no result).
    users = {}
    for f in cls._formulas + (cls._first_order or ()):
        for p in f[2]:
            users.setdefault(p, set()).update(pos[n] for n in (f[0] if isinstance(f[0], tuple) else (f[0],)))
    for p, inputs in decl.saved_for.items():     # a joint formula's value needed by some of its inputs only
        users[p] = {pos[n] for n in inputs}
    # users as bit masks of argument positions: the per-call test is one AND of small ints
    mask = lambda ps: sum(1 << q for q in set(ps))
    saved_args = [(n, pos[n], mask(users.get(n, ()))) for n in cls._saved_names if n not in _RESULTS and n in pos]
    meta_args = [(n, pos[n[:-len(_meta_param(n, arg_types))]], _meta_param(n, arg_types))
                 for n in cls._saved_names if n not in pos and _meta_param(n, arg_types)]
    result_users = mask(set().union(*(users.get(n, ()) for n in ('result', 'results'))))
    wants_result = 'result' in cls._saved_names or 'results' in cls._saved_names
    single_results = [(n, int(n[6:]), mask(users[n])) for n in cls._saved_names
                      if n[:6] == 'result' and n[6:].isdigit()]
    redispatch = op.redispatch
    multi = cls._n_outputs > 1
    is_view = decl.kind == 'view'
    conj_formulas = not decl.complex_formulas
    out_diff = getattr(decl, 'output_differentiability', None) or (True,) * cls._n_outputs
    graph = decl.autograd_composite
    shape_graph = decl.torch_graph
    pick = getattr(cls, '_pick', None)

    if graph is None and not multi and not is_view and not any(is_list for _, is_list in diff):
        # generated at the operator's first call with autograd, not at import: 233 kernels compiled up front
        # cost `import ember` 35-50 ms, and most programs call a few dozen operators
        def materialize():
            real = _generated_kernel(op, cls, diff, saved_args, meta_args, result_users if wants_result else 0,
                                     single_results, out_diff[0], conj_formulas, arg_types, shape_graph)
            if op.kernels.get(DispatchKey.Autograd) is lazy:
                op.register(DispatchKey.Autograd, real, allow_override=True)     # clears this op's caches
            return real

        def lazy(ks, *args):
            return materialize()(ks, *args)
        lazy.__qualname__ = f'autograd::{op.schema.full_name}'
        lazy.node_class = cls
        lazy.materialize = materialize
        return lazy

    def kernel(ks, *args):
        if graph is not None:       # torch's pieces where they save other tensors than the formulas name
            out = graph(*args)
            if out is not None:
                return out
        out = redispatch(ks & _BELOW, *args)
        edges, in_meta, list_len, req, present, cplx = [], [], {}, 0, 0, False
        for p, is_list in diff:
            x = args[p]
            items = x if is_list else (x,)
            if is_list:
                list_len[names[p]] = len(x)
            for t in items:
                if isinstance(t, TensorImpl):
                    d = t._dtype
                    in_meta.append((t._a.shape, d))
                    if d.category == 3:
                        cplx = True
                    present |= 1 << p
                    if t._keys & AUTOGRAD_BIT:
                        edges.append(gradient_edge(t))
                        req |= 1 << p
                        continue
                else:
                    in_meta.append(None)
                edges.append((None, 0))
        if not req:
            return out
        node = cls() if pick is None else pick(*args)()
        node.next_functions = tuple(edges)
        node._in_meta = in_meta
        node._list_len = list_len
        node._saved = {n: _save(args[i]) for n, i, u in saved_args if req & u}
        for n, i, suf in meta_args:
            v = args[i]     # a Tensor[] argument saves a list: one entry per tensor
            node._saved[n] = [_meta_value(x, suf) if x is not None else None for x in v] if isinstance(v, (list, tuple)) else _meta_value(v, suf)
        outs = out if multi else (out,)
        if multi:
            node._out_meta = [(o._a.shape, o._dtype, o._device) for o in outs]
        for i, o in enumerate(outs):
            if isinstance(o, TensorImpl) and o._dtype.category >= 2 and out_diff[i]:
                o._grad_fn = node
                o._output_nr = i
                o._keys |= AUTOGRAD_BIT
        if conj_formulas and (cplx or (isinstance(outs[0], TensorImpl) and outs[0]._dtype.category == 3)):
            node._conj = True       # NOTE [complex gradients]
        if is_view and out._base is not None:     # NOTE [view history] in views.py
            out._hist = out._base._hist
        if wants_result and present & result_users:
            if multi:
                node._saved['results'] = tuple(_save(o, True) for o in outs)
                node._saved['result'] = node._saved['results'][0]
            else:
                node._saved['result'] = _save(out, True)
        for n, i, u in single_results:       # only that output: torch's result1
            if present & u:
                node._saved[n] = _save(outs[i], True)
        if shape_graph is not None:     # torch's nodes around this one (OpDecl.torch_graph)
            top = shape_graph(node, *args)
            for o in outs:
                if isinstance(o, TensorImpl) and o._grad_fn is node:
                    o._grad_fn = top
            node = top
        if anomaly._enabled:
            anomaly.record(node)
        return out
    kernel.__qualname__ = f'autograd::{op.schema.full_name}'
    kernel.node_class = cls
    return kernel


# NOTE [generated autograd kernels]: the Autograd kernel above is generic: it loops over a table of the
# differentiable inputs, of what to save and of the outputs, which costs about 3 µs of Python per call on a small
# add. For the common shape of operator (one output, no Tensor[] input, not a view, no autograd composite: 233
# of ~275 differentiable operators; a torch_graph is one more call) the same steps are generated as straight-line
# code per operator, with the argument positions, bit masks and saved names written in
# (``ember.debug.source(ember.ops.aten.mul.Tensor)`` prints it). Nothing is decided differently: an input is saved only when a formula reading it will run, an
# output whenever one reads it, metadata (``self_sizes``) in place of the tensor, in the same order as the
# generic kernel, so the version-counter checks fire in the same places (tests/test_saved_versions.py).
_NO_EDGE = (None, 0)
# schema types whose values are never tensors: saved as they are, without the isinstance tests of _save
_PLAIN_TYPES = frozenset(('int', 'bool', 'float', 'str', 'SymInt', 'Scalar',  # (the parser made a 0-d tensor a number)
                          'int[]', 'SymInt[]', 'bool[]', 'ScalarType',
                          'Device', 'MemoryFormat', 'Generator', 'float[]', 'Layout'))


def _generated_kernel(op, cls, diff, saved_args, meta_args, result_users, single_results, out_diff, conj, arg_types,
                      shape_graph=None):
    n_args = len(op.schema.arguments)
    params = ', '.join(f'a{i}' for i in range(n_args))
    pick = getattr(cls, '_pick', None)
    need_present = bool(result_users) or bool(single_results)
    L = [f'def kernel(ks, {params}):',
         '    ks &= _BELOW',
         '    _k = _rcache.get(ks)         # the kernel below Autograd, from the redispatch cache',
         f'    out = _k(ks, {params}) if _k is not None else _redispatch(ks, {params})',
         '    req = 0',
         '    cplx = False']
    if need_present:
        L.append('    present = 0')
    edges, metas = [], []
    for j, (p, _) in enumerate(diff):
        a, bit = f'a{p}', 1 << p
        L += [f'    if isinstance({a}, _TI):        # input {op.schema.arguments[p].name!r}',
              f'        d = {a}._dtype',
              f'        m{j} = ({a}._a.shape, d)',
              '        if d.category == 3:',
              '            cplx = True']
        if need_present:
            L.append(f'        present |= {bit}')
        L += [f'        if {a}._keys & _AG:',
              f'            req |= {bit}',
              f'            fn = {a}._grad_fn',
              f'            if fn is None:',
              f'                e{j} = _leaf_edge({a}) if {a}._requires_grad else _gradient_edge({a})',
              f'            else:',
              f'                e{j} = (fn, {a}._output_nr) if {a}._base is None else _gradient_edge({a})',
              '        else:',
              f'            e{j} = _NO_EDGE',
              '    else:',
              f'        m{j} = None',
              f'        e{j} = _NO_EDGE']
        edges.append(f'e{j}')
        metas.append(f'm{j}')
    L += ['    if not req:',
          '        return out',
          f'    node = _new({"_cls" if pick is None else f"_pick({params})"})',
          '    node._seq = _next_seq()       # Node.__init__, inline',
          f'    node.next_functions = ({", ".join(edges)},)',
          f'    node._in_meta = ({", ".join(metas)},)',
          '    node._saved = saved = {}']
    for n, i, u in saved_args:
        val = f'a{i}' if arg_types.get(op.schema.arguments[i].name) in _PLAIN_TYPES else f'_save(a{i})'
        L.append(f'    if req & {u}:' if u else '    if False:')
        L.append(f'        saved[{n!r}] = {val}')
    for n, i, suf in meta_args:
        L.append(f'    saved[{n!r}] = _meta_value(a{i}, {suf!r})')
    L.append('    if isinstance(out, _TI) and out._dtype.category >= 2:' if out_diff else '    if False:')
    L += ['        out._grad_fn = node',
          '        out._output_nr = 0',
          '        out._keys |= _AG']
    if conj:
        L += ['    if cplx or (isinstance(out, _TI) and out._dtype.category == 3):',
              '        node._conj = True       # NOTE [complex gradients]']
    if result_users:
        L += [f'    if present & {result_users}:',
              "        saved['result'] = _save(out, True)"]
    for n, i, u in single_results:
        L += [f'    if present & {u}:',
              f'        saved[{n!r}] = _save(out, True)']
    if shape_graph is not None:
        L += ['    top = _shape_graph(node, %s)     # torch\'s nodes around this one (OpDecl.torch_graph)' % params,
              '    if isinstance(out, _TI) and out._grad_fn is node:',
              '        out._grad_fn = top',
              '    node = top']
    L += ['    if _anomaly._enabled:',
          '        _anomaly.record(node)',
          '    return out']
    g = {'_redispatch': op.redispatch, '_rcache': op.redispatch_cache, '_new': object.__new__,
         '_next_seq': _SEQ.__next__, '_BELOW': _BELOW, '_TI': TensorImpl, '_AG': AUTOGRAD_BIT, '_leaf_edge': leaf_edge,
         '_gradient_edge': gradient_edge,
         '_NO_EDGE': _NO_EDGE, '_cls': cls, '_pick': pick, '_save': _save, '_meta_value': _meta_value, '_anomaly': anomaly,
         '_shape_graph': shape_graph}
    kernel = compile_function('\n'.join(L) + '\n', f'<ember autograd {op.name}>', g, 'kernel')
    kernel.__qualname__ = f'autograd::{op.schema.full_name}'
    kernel.node_class = cls
    return kernel


def inplace_autograd_kernel(decl):
    """``x.add_(y)`` with autograd: compute ``add`` with history, write it into ``x``, rebase ``x``'s history."""
    from .._ops import adapters
    needs_self = 'self' in node_class(decl)._saved_names
    functional = decl.op.call
    npos = sum(1 for a in decl.op.schema.arguments if not a.kwarg_only) - 1
    kwnames = [a.name for a in decl.op.schema.arguments if a.kwarg_only]
    overlap_ok = 'overlap_ok' in decl.tags
    iterator = decl.kind == 'pointwise'     # NOTE [memory overlap] in _ops/adapters.py

    def kernel(ks, self, *args):
        check_inplace(self)
        if not overlap_ok:
            adapters.check_no_internal_overlap(self)
        if iterator:        # NOTE [memory overlap] in _ops/adapters.py
            vc = self._vc
            for t in args:
                if isinstance(t, TensorImpl) and t._vc is vc:
                    adapters.check_no_partial_overlap(self, (t,))
        # the old value of self is saved for the other inputs' formulas even when self needs no grad
        src = self.clone() if needs_self else self
        if needs_self and src._a.__class__ is MetaArray and src._a.strides == self._a.strides:
            # a meta clone has no data to keep apart: it takes self's array descriptor, so a recording mode
            # (make_fx, TensorDataMap) knows the saved clone as the value self had before the operator
            src._a = self._a
        tmp = functional(src, *args[:npos], **dict(zip(kwnames, args[npos:]))) if kwnames else functional(src, *args)
        adapters.check_inplace_shape(self._a.shape, tmp._a.shape)
        adapters.check_cast(tmp._dtype, self._dtype)
        adapters.write_into(self, tmp._a)
        if tmp._grad_fn is not None:
            rebase_history(self, tmp)
        return self
    kernel.__qualname__ = f'autograd::{decl.inplace_op.schema.full_name}'
    return kernel


def rebase_history(self, tmp):
    """Make ``self`` (just overwritten in place with ``tmp``'s values) carry ``tmp``'s history.
    A view's base is rebased too (torch's CopySlices), see views.py."""
    if self._base is not None and (self._base._keys & AUTOGRAD_BIT or tmp._grad_fn is not None):
        from .views import copy_slices
        copy_slices(self, tmp)
        return
    self._grad_fn = tmp._grad_fn
    self._output_nr = tmp._output_nr
    self._keys |= AUTOGRAD_BIT
    self._hist = self._hist + 1     # views made earlier are stale now
    if self._views is not None:     # or had none (NOTE [view history] in views.py)
        from .views import adopt_views
        adopt_views(self)


def out_autograd_kernel(decl):
    def kernel(ks, *args):
        if any(isinstance(a, TensorImpl) and a._keys & AUTOGRAD_BIT for a in args):
            raise RuntimeError(f"{decl.name}(): functions with out=... arguments don't support automatic "
                               f"differentiation, but one of the arguments requires grad.")
        return decl.out_op.redispatch(ks & _BELOW, *args)
    return kernel


class NotImplementedNode(Node):
    _fresh_outputs = True     # NOTE [gradient ownership]
    def __init__(self, opname):
        super().__init__()
        self.opname = opname

    def apply(self, grads):
        raise NotImplementedError(f"the derivative for '{self.opname}' is not implemented.")


def autograd_fallback(op, ks, *args):
    """Operators with no formula: compute below Autograd; floating outputs of a differentiable op get
    a node that raises if backward reaches it (torch's "derivative ... is not implemented")."""
    out = op.redispatch(ks & _BELOW, *args)
    decl = op.decl
    if decl is not None and not decl.differentiable:
        return out
    req = [a for a in args if isinstance(a, TensorImpl) and a._keys & AUTOGRAD_BIT]
    if not req:
        return out
    node = NotImplementedNode(op.name)
    node.next_functions = tuple(gradient_edge(a) for a in req)
    for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
        if isinstance(o, TensorImpl) and o._dtype.category >= 2:
            o._grad_fn, o._output_nr = node, i
            o._keys |= AUTOGRAD_BIT
    return out


def register_all():
    from ..library import Library
    from .._ops.registry import BY_OP
    lib = Library('aten', 'IMPL')
    lib.fallback(autograd_fallback, 'Autograd', with_keyset=True)
    for decl in set(BY_OP.values()):
        if decl.composite is not None and decl.out_op is not None:
            # a composite's out= variant (outer, kron, addr): torch's runs its pieces' out= kernels, whose autograd
            # kernels refuse an argument that requires grad; the composite's out kernel computes, then writes
            lib.impl(decl.out_op.name, out_autograd_kernel(decl), 'Autograd', with_keyset=True)
        if not decl.derivatives or decl.composite is not None:
            continue
        lib.impl(decl.op.name, autograd_kernel(decl), 'Autograd', with_keyset=True)
        if decl.inplace_op is not None:
            lib.impl(decl.inplace_op.name, inplace_autograd_kernel(decl), 'Autograd', with_keyset=True)
        if decl.out_op is not None:
            lib.impl(decl.out_op.name, out_autograd_kernel(decl), 'Autograd', with_keyset=True)
    from . import views, forward
    views.register(lib)
    forward.register_all(lib)       # NOTE [forward AD]: the ForwardAD kernels, from the same table
    return lib
