"""Code generation: an aten graph becomes one Python function over NumPy arrays.

NOTE [array code generation]: eager ember pays, per operator call, for the dispatcher (key set, cache), the
meta function (shapes, dtypes, errors), autograd recording and wrapping the result in a Tensor: about 20 µs of
Python around kernels that often take a few µs. A captured graph already knows all of that: the fake
tensors of the trace (``node.meta['val']``) carry every shape and dtype, the errors were raised while
tracing, and autograd is handled outside the graph (AOTAutograd). So each node becomes one line calling the
backend's array kernel itself (the ``array_fn`` the CPU backend registered for the operator, the same
function eager ember runs), with what the adapter would do at run time decided here once:

* pointwise operators: inputs are cast to the computation dtype only where the trace says they differ, and
  the kernel writes into a planned buffer (``out=``) when it can (NOTE [buffer planning]);
* generic operators: arguments unwrapped as the adapter unwraps them (``dtype=`` resolved by the meta function
  at compile time), results checked against the traced dtype;
* views: NumPy's own view functions (``reshape``, ``transpose``, ``broadcast_to``, indexing), which share
  memory as ember's views do, so in-place operators later in the graph write where eager ember writes;
* in-place operators: the functional kernel, then ``np.copyto`` into the target (what the in-place
  adapter does);
* anything else (random operators with a Generator, complex views, user operators without an array kernel)
  falls back to the operator itself, called through the dispatcher on tensors wrapped around the arrays,
  under ``no_grad``: slower, never wrong. ``fallback_ops`` lists them, and ``output_code`` shows them as
  ``_eager(...)`` calls.

The result is readable Python, what ``EMBER_LOGS=output_code`` prints::

    def call(arg0_1, arg1_1, arg2_1):
        t = arg1_1.T
        addmm = _k_addmm(arg2_1, arg0_1, t, 1, 1)
        relu = _k_relu(addmm, out=_buf0)
        ...
"""
import operator

import numpy as np

from .._core.dispatch_key import DispatchKey
from .._core.tensor_impl import TensorImpl, adopt
from .._core import device as _devmod
from .._ops.adapters import accepts_out, _int_scalar, _half_scalar, _HALVES, float32_scalar
from .._dispatch.dispatcher import OpOverload
from .._higher_order_ops.cond import HigherOrderOperator
from .._backends.cpu._fp import quiet as _quiet
from ..fx.experimental.symbolic_shapes import sym_size
from . import buffers as _buffers
from . import fusion as _fusion
from .fusion import BLOCK
from .._backends.cpu._parallel import parallel_for as _parallel_for

__all__ = ['generate', 'CompiledGraph']

_CPU = DispatchKey.CPU


class CompiledGraph:
    """A generated array program: ``run(arrays) -> list of arrays``; ``source`` is its code."""

    def __init__(self, fn, source, fallback_ops, nbuffers):
        self.fn, self.source, self.fallback_ops, self.nbuffers = fn, source, fallback_ops, nbuffers

    def __call__(self, *arrays):
        return self.fn(*arrays)


def _val(a):
    """A node argument's traced value (fake tensor for a Node)."""
    if hasattr(a, 'meta') and hasattr(a, 'op'):
        return a.meta.get('val')
    if isinstance(a, (list, tuple)):
        return type(a)(_val(e) for e in a)
    return a


def _bind(op, args, kwargs):
    """Arguments in schema order, defaults filled in."""
    out = []
    for i, a in enumerate(op.schema.arguments):
        if i < len(args) and not a.kwarg_only:
            out.append(args[i])
        elif a.name in kwargs:
            out.append(kwargs[a.name])
        else:
            out.append(a.default)
    return out


def _is_node(a):
    return hasattr(a, 'op') and hasattr(a, 'users')


def _raw(fn):
    """The kernel inside the CPU backend's floating-point-quiet wrapper (``_fp.quiet``): generated code runs
    the whole graph in one quiet region instead of entering one per operator."""
    return getattr(fn, '__wrapped__', fn)


def _default_generator():
    from .. import random
    return random.default_generator


def _fix(r, np_dtype):
    """A generic kernel's result as the adapter leaves it: an array of the traced dtype."""
    if r.__class__ is not np.ndarray:
        r = np.asarray(r)
    if r.dtype != np_dtype:
        r = r.astype(np_dtype)
    return r


def _eager(op, args, kwargs):
    """Run ``op`` through the dispatcher on tensors wrapped around the arrays (the fallback)."""
    from .. import autograd
    cpu = _devmod.canonical('cpu')

    def wrap(a):
        if isinstance(a, np.ndarray):
            return adopt(a, cpu)
        if isinstance(a, (list, tuple)):
            return type(a)(wrap(e) for e in a)
        return a

    def unwrap(r):
        if isinstance(r, TensorImpl):
            return r._a
        if isinstance(r, (list, tuple)):
            return tuple(unwrap(e) for e in r)
        return r
    with autograd.grad_mode.no_grad():
        return unwrap(op(*wrap(args), **{k: wrap(v) for k, v in kwargs.items()}))


# --- views as NumPy views -------------------------------------------------------------------
def _expand(a, sizes):
    """``expand``: -1 keeps a dimension's size; new leading dimensions are broadcast."""
    lead = len(sizes) - a.ndim
    shape = tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return np.broadcast_to(a, shape)


def _squeeze(a, dims):
    dims = tuple(d for d in dims if a.shape[d] == 1)
    return a.squeeze(dims) if dims else a


_SYM_OPS = {operator.add: '+', operator.sub: '-', operator.mul: '*', operator.floordiv: '//', operator.mod: '%'}

class _Emitter:
    def __init__(self, graph, attrs, plan):
        self.float32_result = False     # set by _unwrap_args: NOTE [half-precision scalars]
        self.graph = graph
        self.attrs = attrs            # get_attr target -> tensor
        self.plan = plan              # node -> buffer slot (NOTE [buffer planning])
        self.g = {'_np': np, '_fix': _fix, '_eager': _eager, '_gen': _default_generator, 'operator': operator,
                  '_expand': _expand, '_squeeze': _squeeze}
        self.lines = []
        self.fallback_ops = []
        self._consts = {}
        self.functions = []           # generated helper functions (fused kernels)

    def const(self, value, stem):
        key = (stem, id(value))
        name = self._consts.get(key)
        if name is None:
            name = f'_{stem}{len(self._consts)}'
            self._consts[key] = name
            self.g[name] = value
        return name

    def expr(self, a):
        """Source for a node argument: a Node's variable, literals, or a global holding the value."""
        if _is_node(a):
            return a.name
        if isinstance(a, (list, tuple)):
            inner = ', '.join(self.expr(e) for e in a)
            return f'[{inner}]' if isinstance(a, list) else f'({inner}{"," if len(a) == 1 else ""})'
        if a is None or isinstance(a, (bool, str)) or (type(a) is int):
            return repr(a)
        if type(a) is float and np.isfinite(a):
            return repr(a)
        return self.const(a, 'c')

    def kernel_name(self, op, fn):
        return self.const(_raw(fn), 'k_' + op.schema.name.strip('_'))

    # --- one node -----------------------------------------------------------------------
    def emit(self, node):
        if node.op == 'get_attr':
            t = self.attrs[node.target]
            if hasattr(t, 'param') and hasattr(t, 'get'):        # a parameter's .grad, read at each call
                self.lines.append(f'{node.name} = {self.const(t.param, "attr")}.grad._a')
            elif isinstance(t, TensorImpl):
                self.lines.append(f'{node.name} = {self.const(t, "attr")}._a')
            else:                               # a subgraph a higher-order operator runs (torch.cond's branches)
                self.lines.append(f'{node.name} = {self.const(t, "graph")}')
        elif node.op == 'call_function':
            if node.target is operator.getitem:
                self.lines.append(f'{node.name} = {self.expr(node.args[0])}[{node.args[1]!r}]')
            elif node.target is sym_size:         # a symbolic size, read at run time (NOTE [symbolic sizes])
                self.lines.append(f'{node.name} = {self.expr(node.args[0])}.shape[{node.args[1]!r}]')
            elif node.target in _SYM_OPS:
                a, b = (self.expr(x) for x in node.args)
                self.lines.append(f'{node.name} = {a} {_SYM_OPS[node.target]} {b}')
            elif node.target is operator.neg:
                self.lines.append(f'{node.name} = -{self.expr(node.args[0])}')
            elif isinstance(node.target, OpOverload):
                self.lines.append(f'{node.name} = {self.lower(node)}')
            elif isinstance(node.target, HigherOrderOperator):      # run eagerly, its subgraphs as they are
                self.lines.append(f'{node.name} = {self.fallback(node, node.target)}')
            else:
                raise NotImplementedError(f'cannot generate code for {node.target}')
        elif node.op == 'output':
            outs = node.args[0]
            flat = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            self.lines.append(f'return [{", ".join(self.expr(o) for o in flat)}]')
        elif node.op != 'placeholder':
            raise NotImplementedError(f'cannot generate code for a {node.op} node')

    def lower(self, node):
        op = _fusion.target(node)
        decl = op.decl
        k = op.kernels.get(_CPU)
        fn = getattr(k, 'array_fn', None)
        if decl is not None and op is decl.op:
            bound = _bind(op, node.args, node.kwargs)
            if decl.kind == 'view':
                src = self.view(op.schema.name, _val(bound[0]), bound)
                if src is not None:
                    return src
            elif fn is not None and decl.kind == 'pointwise':
                return self.pointwise(node, op, decl, fn, bound)
            elif fn is not None and decl.meta is not None and decl.kind == 'generic':
                return self.generic(node, op, decl, fn, bound)
        elif decl is not None and op is decl.inplace_op:
            fk = decl.op.kernels.get(_CPU)
            ffn = getattr(fk, 'array_fn', None)
            if ffn is not None and decl.kind in ('pointwise', 'generic') and decl.meta is not None:
                bound = _bind(decl.op, node.args, node.kwargs)
                r = (self.pointwise(node, decl.op, decl, ffn, bound, inplace=True) if decl.kind == 'pointwise'
                     else self.generic(node, decl.op, decl, ffn, bound))
                return f'_np.copyto({self.expr(bound[0])}, {r}, casting="unsafe") or {self.expr(bound[0])}'
        return self.fallback(node, op)

    def view(self, name, sv, bound):
        """A view operator as the NumPy view that shares memory the same way, from the operator's arguments
        (so symbolic sizes work), or None."""
        x = self.expr(bound[0])
        n = sv.dim()
        e = self.expr

        def dim(d):
            return d + n if isinstance(d, int) and d < 0 else d
        if name in ('view', '_unsafe_view', 'reshape'):
            return f'{x}.reshape({e(list(bound[1]))})'
        if name in ('alias', 'detach', 'lift_fresh'):
            return x
        if name == 't':
            return f'{x}.T'
        if name in ('transpose', 'swapaxes', 'swapdims'):
            return f'{x}.swapaxes({dim(bound[1])}, {dim(bound[2])})'
        if name == 'permute':
            return f'{x}.transpose({tuple(dim(d) for d in bound[1])!r})'
        if name == 'expand':
            return f'_expand({x}, {e(list(bound[1]))})'
        if name == 'unsqueeze':
            d = bound[1] + n + 1 if bound[1] < 0 else bound[1]
            return f'_np.expand_dims({x}, {d})'
        if name == 'squeeze':
            dims = bound[1] if len(bound) > 1 else None
            if dims is None:
                return f'_squeeze({x}, {tuple(range(n))!r})'
            dims = (dims,) if isinstance(dims, int) else tuple(dims)
            return f'_squeeze({x}, {tuple(dim(d) for d in dims)!r})'
        if name == 'select':
            return f'{x}[{", ".join([":"] * dim(bound[1]) + [e(bound[2])])}]'
        if name == 'slice':
            d, start, end, step = dim(bound[1]), bound[2], bound[3], bound[4]
            part = f'{"" if start is None else e(start)}:{"" if end is None else e(end)}:{e(step)}'
            return f'{x}[{", ".join([":"] * d + [part])}]'
        return None

    def fused(self, group, index):
        """One group of NOTE [blocked fusion] as a generated function; returns the line that calls it."""
        root = group[-1]
        inside = set(group)
        ext = []
        for n in group:
            for a in n.all_input_nodes:
                if a not in inside and a not in ext:
                    ext.append(a)
        v = root.meta['val']
        numel = 1
        for d in v.shape:
            numel *= d
        name = f'_fused{index}'
        slot = self.plan.get(root)
        params = [a.name for a in ext]
        lines = [f'def {name}({", ".join(params + ["out"])}):',
                 f'    if out is None: out = _np.empty({tuple(v.shape)!r}, {self.const(v.dtype.np, "dt")})',
                 '    _o = out.reshape(-1)']
        flat = []
        for a in ext:
            av = a.meta['val']
            if av.dim() > 0 and _fusion._is_broadcast_scalar(av):
                lines.append(f'    {a.name} = {a.name}.reshape(-1)[:1].reshape(())')    # one value, broadcast
            elif av.dim() > 0:
                lines.append(f'    _f_{a.name} = {a.name}.reshape(-1)')
                flat.append(a)
        lines.append('    def _block(_lo, _hi):')
        lines.append(f'        for _i in range(_lo * {BLOCK}, min(_hi * {BLOCK}, {numel}), {BLOCK}):')
        body = []
        for a in flat:
            body.append(f'{a.name} = _f_{a.name}[_i:_i + {BLOCK}]')
        saved_plan = self.plan
        self.plan = {}                 # no planned buffers inside a block
        try:
            for n in group:
                body.append(f'{n.name} = {self.lower(n)}')
        finally:
            self.plan = saved_plan
        body.append(f'_o[_i:_i + {BLOCK}] = {root.name}')
        lines += ['            ' + b for b in body]
        nblocks = -(-numel // BLOCK)
        lines.append(f'    _parallel_for({nblocks}, _block, 2)' if nblocks > 1 else '    _block(0, 1)')
        lines.append('    return out')
        self.functions.append('\n'.join(lines))
        return f'{root.name} = {name}({", ".join(params + [slot or "None"])})'

    def fallback(self, node, op):
        self.fallback_ops.append(str(op))
        args = ', '.join(self.expr(a) for a in node.args)
        kwargs = '{' + ', '.join(f'{k!r}: {self.expr(v)}' for k, v in node.kwargs.items()) + '}'
        return f'_eager({self.const(op, "op")}, ({args}{"," if len(node.args) == 1 else ""}), {kwargs})'

    def _unwrap_args(self, op, bound, cd=None, dtype_np=None):
        parts = []
        for a, v in zip(op.schema.arguments, bound):
            bt = a.base_type
            if bt == 'Tensor':
                e = self.expr(v)
                if _is_node(v) and cd is not None and v.meta['val'].dtype is not cd:
                    e = f'{e}.astype({self.const(cd.np, "dt")})'
                elif not _is_node(v) and v is not None and cd is not None and type(v) is int and cd.category <= 1:
                    e = self.expr(_int_scalar(v, cd))
                elif not _is_node(v) and v is not None and cd in _HALVES:    # NOTE [half-precision scalars]
                    e = self.expr(_half_scalar(v, cd, float32_scalar(op, a.name)))
                    self.float32_result = self.float32_result or float32_scalar(op, a.name)
                parts.append(e)
            elif bt == 'Generator':
                parts.append(f'({self.expr(v)} if {self.expr(v)} is not None else _gen())._rng' if v is not None
                             else '_gen()._rng')
            elif bt == 'ScalarType' and a.name == 'dtype' and dtype_np is not None:
                parts.append(self.const(dtype_np, 'dt'))
            else:
                parts.append(self.expr(v))
        return parts

    def pointwise(self, node, op, decl, fn, bound, inplace=False):
        vals = [_val(v) for v in bound]
        shape, od, cd = decl.meta(*vals)
        self.float32_result = False     # a float16/bfloat16 kernel given a float32 number returns float32
        args = self._unwrap_args(op, bound, cd)
        kname = self.kernel_name(op, fn)
        slot = None if inplace else self.plan.get(node)
        if slot is not None and od is cd and accepts_out(fn):
            return f'{kname}({", ".join(args)}, out={slot})'
        call = f'{kname}({", ".join(args)})'
        if tuple(shape) == () or od is not cd or self.float32_result:
            return f'_fix({call}, {self.const(od.np, "dt")})'
        return call

    def generic(self, node, op, decl, fn, bound):
        vals = [_val(v) for v in bound]
        m = decl.meta(*vals)
        dtype_np = m[1].np if isinstance(m, tuple) and len(m) > 1 and hasattr(m[1], 'np') else None
        args = self._unwrap_args(op, bound, None, dtype_np)
        call = f'{self.kernel_name(op, fn)}({", ".join(args)})'
        if isinstance(m, list):         # several outputs: fix each defined one
            fixes = ', '.join('None' if mm is None else f'_fix(_r[{i}], {self.const(mm[1].np, "dt")})'
                              for i, mm in enumerate(m))
            return f'(lambda _r: ({fixes},))({call})'
        return f'_fix({call}, {self.const(m[1].np, "dt")})'


def generate(graph, attrs, name='call', plan_buffers=True, take_list=False, fuse=True):
    """Generate the array function of ``graph`` (fx Graph whose nodes carry fake values in ``meta['val']``);
    ``attrs``: get_attr target -> tensor. Returns a CompiledGraph.

    Each value is deleted after its last use, as eager autograd frees what a node saved once it has run; with
    ``take_list`` the function takes its arguments as one list and empties it, so even its inputs (the saved
    activations, for a backward graph) are freed as soon as the graph is done with each one.
    """
    groups = _fusion.fusion_groups(graph) if fuse else []
    fused_inside = {n for g in groups for n in g[:-1]}
    moved = {n: g[-1] for g in groups for n in g[:-1]}
    plan = _buffers.plan(graph, skip=fused_inside, moved=moved) if plan_buffers else _buffers.Plan()
    em = _Emitter(graph, attrs, plan.slots)
    em.g['_parallel_for'] = _parallel_for
    group_at = {g[-1]: (g, i) for i, g in enumerate(groups)}
    nodes = list(graph.nodes)
    out_node = nodes[-1]
    outputs = set(out_node.all_input_nodes)
    # a value dies after its last use where that use really runs: a fused node runs where its group's result
    # stands, so its reads count there
    position = {n: i for i, n in enumerate(nodes)}
    for n, root in moved.items():
        position[n] = position[root]
    last = {}
    for n in nodes:
        runs_at = moved.get(n, n)
        for a in n.all_input_nodes:
            if a not in last or position[runs_at] >= position[last[a]]:
                last[a] = runs_at
    fused_names = {n.name for n in fused_inside}
    dying = {}
    for n in nodes:
        if n.op == 'output' or n in outputs:
            continue
        dying.setdefault(last.get(n, n), []).append(n.name)
    for node in nodes:
        if node in fused_inside:
            continue                   # computed inside its group's kernel
        if node in group_at:
            em.lines.append(em.fused(*group_at[node]))
        else:
            em.emit(node)
        if node.op != 'output' and dying.get(node):
            names = [d for d in dying[node] if d not in fused_names]
            if names:
                em.lines.append(f'del {", ".join(names)}')
    params = [n.name for n in nodes if n.op == 'placeholder']
    if take_list:
        header = [f'def {name}(args):']
        if params:
            header.append(f'    {", ".join(params)}, = args')
        header.append('    args.clear()')
    else:
        header = [f'def {name}({", ".join(params)}):']
    if plan.count:
        header.append(f'    {", ".join(plan.names)}, = _bufs.get()')
    body = header + ['    ' + line for line in em.lines]
    source = ''.join(f + '\n\n' for f in em.functions) + '\n'.join(body) + '\n'
    em.g['_bufs'] = plan.allocator()
    from .._dispatch.codegen import compile_function
    fn = _quiet(compile_function(source, f'<ember compiled {name}>', em.g, name))
    return CompiledGraph(fn, source, em.fallback_ops, plan.count)
