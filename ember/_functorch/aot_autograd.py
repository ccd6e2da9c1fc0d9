"""AOTAutograd: trace a function's forward and backward ahead of time, split them, run them as one
``autograd.Function`` (torch._functorch.aot_autograd).

NOTE [AOTAutograd]: eager autograd records a node per operator while the forward runs and walks them
during ``backward()``. A compiler wants both passes as graphs it can optimise, so:

1. **Capture** (``trace``): the function runs once on fake tensors (FakeTensorMode: shapes and dtypes, no
   data) under make_fx's recording mode. Tensor arguments become placeholders; tensors the function reads
   from elsewhere (a module's parameters and buffers) become ``get_attr`` nodes that hold the real tensor,
   so each call reads its current value. When gradients are wanted, the trace goes on through
   ``ember.autograd.grad(outputs, inputs, tangents)``: the engine's derivative formulas are operator
   calls, so they are recorded too, and the graph becomes the *joint* graph
   ``(primals, tangents) -> (outputs, gradients)``.
2. **Partition** (``partition``): every node that depends on a tangent belongs to the backward; the rest
   is the forward. The forward values the backward reads are *saved*: the forward graph returns them after
   the outputs, the backward graph takes them as placeholders before the tangents. A saved value that a
   cheap pointwise operator makes from other saved values or inputs is recomputed in the backward instead
   of saved (torch's default partitioner's rule), which keeps fewer activations alive.
3. **Run** (``CompiledFunction``): an ``autograd.Function`` whose forward runs the forward graph and keeps
   the saved values, and whose backward runs the backward graph. To the rest of ember it is one node, so
   ``loss.backward()``, hooks on parameters (their ``AccumulateGrad`` nodes are the Function's inputs'),
   ``clip_grad_norm_`` and optimizers work unchanged.

How each graph runs is the backend's choice: ``'aot_eager'`` runs them through the dispatcher as fx
GraphModules; ``'inductor'`` generates array code for them (ember._inductor).
"""
import operator

import ember
from ember.utils import _pytree as pytree
from ember.fx.graph import Graph
from ember.fx.experimental.proxy_tensor import PythonKeyTracer
from ember._subclasses.fake_tensor import FakeTensorMode
from ember.fx.experimental.symbolic_shapes import ShapeEnv

import numpy as np

from .._dispatch.dispatcher import OpOverload
from .._core.dispatch_key import DispatchKey

__all__ = ['trace', 'partition', 'Traced', 'CompiledFunction', 'build_runtime']


class GradOf:
    """A graph constant that is a parameter's ``.grad``: read from the parameter at each call, since
    ``zero_grad()`` (set_to_none) and ``backward()`` replace the gradient tensor between calls (what an
    optimizer's compiled ``step`` reads)."""
    __slots__ = ('param',)

    def __init__(self, param):
        self.param = param

    def get(self):
        return self.param.grad

    requires_grad = False


def _grad_sources(attrs):
    """Replace each constant that is the ``.grad`` of another constant by a GradOf."""
    by_grad = {}
    for t in attrs.values():
        g = t.grad if isinstance(t, ember.Tensor) and t.requires_grad and t.is_leaf else None
        if g is not None:
            by_grad[id(g)] = t
    for name, t in list(attrs.items()):
        p = by_grad.get(id(t))
        if p is not None:
            attrs[name] = GradOf(p)


def _saves_self(decl):
    from ember.autograd.kernels import node_class
    return 'self' in node_class(decl)._saved_names


class _Tracer(PythonKeyTracer):
    """make_fx's tracer, with a tensor read from outside the function and its fake twin one node (the
    autograd formulas see the twin, the function's code the real tensor)."""

    def node_of(self, t):
        node = self._nodes.get(t)
        if node is None and self.fake_mode is not None and t.device.type != 'meta':
            twin = self.fake_mode.from_tensor(t)
            node = self._nodes.get(twin)
            if node is None:
                node = super().node_of(t)
                self._nodes[twin] = node
            else:
                self._nodes[t] = node
        return node if node is not None else super().node_of(t)


    grad_mode = None        # the grad mode the graph runs in so far, when it records changes (NOTE below)

    def dispatch(self, func, args, kwargs):
        if self.grad_mode is not None and ember.is_grad_enabled() != self.grad_mode:
            self.set_grad_mode_node()
        return self._dispatch(func, args, kwargs)

    def set_grad_mode_node(self):
        """NOTE [grad mode in captured graphs]: a graph that is replayed through the dispatcher (the 'eager'
        backend, a callable backend) runs under the grad mode of its caller; where the traced function changed the
        mode (an optimizer's ``@no_grad`` step, a ``with no_grad():`` block), the graph calls
        ``ember._C._set_grad_enabled`` before the next operator, as torch's captured graphs do."""
        from ember._C import _set_grad_enabled
        self.grad_mode = ember.is_grad_enabled()
        self.graph.create_node('call_function', _set_grad_enabled, (self.grad_mode,))

    def _dispatch(self, func, args, kwargs):
        """An in-place operator on an intermediate value that is not a view is recorded as its out-of-place
        form: the generated code then never overwrites an array whose old value the backward may still read
        (autograd saved it), which is what functionalisation guarantees; the tensor's node is the new value from
        then on, as for any in-place operator. In-place operators on inputs, parameters, buffers and views stay
        in place, so those writes happen (BatchNorm's running statistics, a slice assignment)."""
        decl = getattr(func, 'decl', None)
        if decl is None or func is not decl.inplace_op or not args or not isinstance(args[0], ember.Tensor) \
                or args[0]._base is not None:
            return super().dispatch(func, args, kwargs)
        node = self._nodes.get(args[0])
        while node is not None and node.op == 'call_function' and getattr(node.target, 'decl', None) is not None \
                and node.target is node.target.decl.inplace_op:
            node = node.args[0]          # an earlier in-place write kept in place: whose memory it wrote
        if node is None or node.op != 'call_function':
            if args[0].requires_grad and ember.is_grad_enabled() and _saves_self(decl):
                raise RuntimeError(f'{func}: an in-place operator on an input or a view whose old value autograd '
                                   'saves cannot be captured (the generated code would overwrite it)')
            return super().dispatch(func, args, kwargs)
        out = super().dispatch(func, args, kwargs)
        made = self._nodes.get(out)
        if made is not None and made.target is func:
            made.target = decl.op
        return out


class Traced:
    """What capture produced: the graph, the tensors its get_attr nodes read, and the bookkeeping to call it.

    ``graph``: ``(inputs..., tangents...) -> (outputs..., gradients...)`` (no tangents, no gradients when
    ``joint`` is False); ``n_inputs`` tensor placeholders; ``diff_inputs``: which of them (by position) and
    which attrs (by name) the gradients are for; ``out_spec`` rebuilds the function's output structure from
    the flat outputs; ``out_diff``: which outputs are differentiable; ``out_meta``: (shape, dtype) per output.
    """

    def __init__(self, graph, attrs, n_inputs, out_spec, out_is_tensor, out_diff, out_meta, joint,
                 diff_inputs, diff_attrs, n_tangents):
        self.graph, self.attrs, self.n_inputs = graph, attrs, n_inputs
        self.out_spec, self.out_is_tensor, self.out_diff, self.out_meta = out_spec, out_is_tensor, out_diff, out_meta
        self.joint, self.diff_inputs, self.diff_attrs, self.n_tangents = joint, diff_inputs, diff_attrs, n_tangents

    @property
    def n_outputs(self):
        return len(self.out_is_tensor)

    def ops(self):
        return [n.target for n in self.graph.nodes if n.op == 'call_function' and isinstance(n.target, OpOverload)]


def trace(fn, flat_args, in_spec, want_grad, dynamic=None, grad_mode_nodes=False):
    """Capture ``fn(*args, **kwargs)`` (``flat_args``/``in_spec``: the pytree of ``(args, kwargs)``) on fake
    tensors; with ``want_grad``, through the backward too (NOTE [AOTAutograd]). ``dynamic``: ``{position in
    flat_args: dims}`` whose sizes are traced as symbols (NOTE [symbolic sizes]); ``Traced.shape_env`` then
    holds the guards on them. ``grad_mode_nodes``: trace under the caller's grad mode and record the function's
    changes of it (NOTE [grad mode in captured graphs]), for a graph that is not differentiated ahead of time.
    Errors the function raises on fake tensors (data-dependent Python control flow, above all) propagate to the
    caller."""
    # no decomposition table: ember's fused primitives (linear, matmul and their backward kernels) stay whole,
    # as eager ember runs them (make_fx decomposes them to show torch's graphs)
    shape_env = ShapeEnv() if dynamic else None
    tracer = _Tracer({}, FakeTensorMode(shape_env=shape_env))
    graph = tracer.graph
    inputs = []
    n_inputs = 0
    for i, a in enumerate(flat_args):
        if isinstance(a, ember.Tensor):
            if dynamic and dynamic.get(i):
                tracer.fake_mode.from_tensor(a, dynamic[i])     # the placeholder's fake gets symbolic sizes
            inputs.append(tracer.placeholder(f'arg{n_inputs}_1', a))
            n_inputs += 1
        else:
            inputs.append(a)
    start = ember.is_grad_enabled() if grad_mode_nodes else want_grad
    if grad_mode_nodes:
        tracer.grad_mode = start
    with ember.autograd.set_grad_enabled(start):
        with tracer.modes():
            args, kwargs = pytree.tree_unflatten(inputs, in_spec)
            out = fn(*args, **kwargs)
        if grad_mode_nodes and ember.is_grad_enabled() != tracer.grad_mode:    # the mode the function returns in
            tracer.set_grad_mode_node()
        flat_out, out_spec = pytree.tree_flatten(out)
        out_is_tensor = [isinstance(o, ember.Tensor) for o in flat_out]
        out_diff = [isinstance(o, ember.Tensor) and o.requires_grad and o.dtype.is_floating_point
                    for o in flat_out]
        out_meta = [(tuple(o.shape), o.dtype) if isinstance(o, ember.Tensor) else None for o in flat_out]
        diff_inputs = [i for i, x in enumerate(a for a in inputs if isinstance(a, ember.Tensor))
                       if x.requires_grad]
        in_tensors = [a for a in inputs if isinstance(a, ember.Tensor)]
        diff_attrs = [name for name, t in tracer.attrs.items() if isinstance(t, ember.Tensor) and t.requires_grad]
        joint = want_grad and any(out_diff) and (diff_inputs or diff_attrs)
        grads = []
        n_tangents = 0
        if joint:
            diff_outs = [o for o, d in zip(flat_out, out_diff) if d]
            first_op = next(n for n in graph.nodes if n.op != 'placeholder')
            tangents = []
            for i, o in enumerate(diff_outs):
                t = ember.empty(tuple(o.shape), dtype=o.dtype, device='meta')
                with graph.inserting_before(first_op):
                    tangents.append(tracer.placeholder(f'tangents_{i + 1}', t))
            n_tangents = len(tangents)
            wrt = [in_tensors[i] for i in diff_inputs] + \
                  [tracer.fake_mode.from_tensor(tracer.attrs[n]) for n in diff_attrs]
            with tracer.modes():
                grads = list(ember.autograd.grad(diff_outs, wrt, tangents, allow_unused=True))
        else:
            diff_inputs, diff_attrs = [], []
    tracer.output(list(flat_out) + grads)
    attrs = dict(tracer.attrs)
    _grad_sources(attrs)
    traced = Traced(graph, attrs, n_inputs, out_spec, out_is_tensor, out_diff, out_meta, bool(joint),
                    diff_inputs, diff_attrs, n_tangents)
    traced.shape_env = shape_env
    return traced


# --- partitioning ---------------------------------------------------------------------------------
def _is_cheap_pointwise(node):
    """Worth recomputing rather than saving: a pointwise operator whose CPU kernel is a single NumPy ufunc
    (add, mul, relu's maximum...), one pass over memory. GELU, erf and the like are pointwise too but take
    ~20 passes in ember, more than keeping their result costs."""
    t = node.target
    if not (node.op == 'call_function' and isinstance(t, OpOverload) and t.decl is not None
            and t is t.decl.op and t.decl.kind == 'pointwise' and 'nondeterministic_seeded' not in t.tags):
        return False
    fn = getattr(t.kernels.get(DispatchKey.CPU), 'array_fn', None)
    return isinstance(getattr(fn, '__wrapped__', fn), np.ufunc)


def partition(traced):
    """Split a joint graph into ``(forward graph, backward graph, number of saved values)``
    (NOTE [AOTAutograd]). The forward graph returns ``outputs + saved``; the backward graph takes
    ``saved + tangents`` and returns one gradient (or None) per differentiable input."""
    graph = traced.graph
    nodes = list(graph.nodes)
    out_node = nodes[-1]
    flat = list(out_node.args[0])
    outs, grads = flat[:traced.n_outputs], flat[traced.n_outputs:]
    tangent_nodes = [n for n in nodes if n.op == 'placeholder' and n.name.startswith('tangents_')]
    tangent_set = set(tangent_nodes)

    def ancestors(roots, stop=()):
        seen, stack = set(), [r for r in roots if hasattr(r, 'op')]
        while stack:
            n = stack.pop()
            if n in seen or n in stop:
                continue
            seen.add(n)
            stack.extend(n.all_input_nodes)
        return seen
    # the forward: what the outputs need, the inputs, and mutations (BatchNorm's running statistics) with
    # what they need; every other node that leads to a gradient runs in the backward (the cos of sin's
    # backward, a weight's transpose), from values the forward saves
    roots = list(outs) + [n for n in nodes if n.op in ('placeholder', 'get_attr') and n not in tangent_set]
    roots += [n for n in nodes if n.op == 'call_function' and getattr(n.target, 'schema', None) is not None
              and n.target.schema.is_mutable]
    fwd_set = ancestors(roots)
    # a multi-output operator's items go with it (the backward is handed tensors, never a tuple)
    fwd_set |= {n for n in nodes if n.target is operator.getitem and n.args[0] in fwd_set}
    if fwd_set & tangent_set:
        raise RuntimeError('AOTAutograd: a forward output or mutation depends on a tangent')
    needed = ancestors(grads)
    fwd_nodes = [n for n in nodes if n in fwd_set]
    bwd_set = {n for n in needed if n not in fwd_set} | tangent_set

    def saved_set():
        s, seen = [], set()
        for n in nodes:
            if n in bwd_set:
                for a in n.all_input_nodes:
                    if a in fwd_set and a not in bwd_set and a not in seen:
                        seen.add(a)
                        s.append(a)
        for g in grads:
            if hasattr(g, 'op') and g in fwd_set and g not in bwd_set and g not in seen:
                seen.add(g)
                s.append(g)
        return s
    # recompute cheap pointwise values in the backward instead of saving them, when their inputs are saved
    # anyway (or are inputs): fewer activations kept alive between the passes
    changed = True
    while changed:
        changed = False
        saved = saved_set()
        sset = set(saved)
        for n in saved:
            if _is_cheap_pointwise(n) and n not in outs and all(
                    a in sset or a.op in ('placeholder', 'get_attr') for a in n.all_input_nodes):
                bwd_set.add(n)
                changed = True
    bwd_nodes = [n for n in nodes if n in bwd_set]
    saved = saved_set()

    fg = Graph()
    env = {}
    for n in fwd_nodes:
        env[n] = fg.node_copy(n, lambda a: env[a])
    fwd_out = [env[o] if hasattr(o, 'op') else o for o in outs] + [env[s] for s in saved]
    fg.output(fwd_out)
    fg.eliminate_dead_code()

    bg = Graph()
    benv = {}
    for s in saved:
        p = bg.placeholder(s.name)
        p.meta = dict(s.meta)
        benv[s] = p
    for t in tangent_nodes:
        p = bg.placeholder(t.name)
        p.meta = dict(t.meta)
        benv[t] = p
    for n in bwd_nodes:
        if n not in benv:
            benv[n] = bg.node_copy(n, lambda a: benv[a])
    bg.output([benv[g] if hasattr(g, 'op') else g for g in grads])
    bg.eliminate_dead_code()
    return fg, bg, len(saved)


# --- running -----------------------------------------------------------------------------------
class CompiledFunction(ember.autograd.Function):
    """One autograd node for a compiled forward/backward pair (NOTE [AOTAutograd])."""

    @staticmethod
    def forward(ctx, rt, *tensors):
        outs, saved = rt.run_forward(tensors)
        ctx.rt = rt
        ctx.saved = saved
        ctx.out_shapes = [tuple(o.shape) if o is not None and hasattr(o, 'shape') else None for o in outs]
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, rt.traced.out_diff) if not d and o is not None])
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outs):
        rt = ctx.rt
        if ember.is_grad_enabled():          # the engine runs a create_graph backward with grad mode on
            raise RuntimeError("ember.compile's AOTAutograd backends do not support double backward "
                               "(create_graph=True): the backward graph runs on arrays, outside autograd, as "
                               "torch.compile's does not support it either. Compile with backend='eager' "
                               "(autograd records the captured forward graph as it records eager code).")
        from ember.autograd.engine import retaining_graph
        if retaining_graph():                # retain_graph=True: a later backward needs them again
            saved = list(ctx.saved) if ctx.saved is not None else None
        else:
            saved, ctx.saved = ctx.saved, None       # freed one by one as the backward graph runs
        if saved is None:
            raise RuntimeError('Trying to backward through the graph a second time (or directly access saved '
                               'tensors after they have already been freed). Saved intermediate values of the '
                               'graph are freed when you call .backward() or autograd.grad(). Specify '
                               'retain_graph=True if you need to backward through the graph a second time or if '
                               'you need to access saved tensors after calling backward.')
        tangents = []
        for g, d, m, shape in zip(grad_outs, rt.traced.out_diff, rt.traced.out_meta, ctx.out_shapes):
            if d:
                tangents.append(g if g is not None else ember.zeros(shape, dtype=m[1]))
        grads = rt.run_backward(saved, tangents)      # takes over the list: it frees each value after use
        return (None,) + tuple(grads)


def build_runtime(traced, compile_graph):
    """The object that runs ``traced``: ``compile_graph(graph, attrs, name, kind)`` turns a graph into a
    callable taking and returning tensors (``kind``: 'forward', 'backward' or 'inference')."""
    if traced.joint:
        return _TrainingRuntime(traced, compile_graph)
    return _InferenceRuntime(traced, compile_graph)


class _InferenceRuntime:
    def __init__(self, traced, compile_graph):
        self.traced = traced
        self.forward_graph = traced.graph
        self.backward_graph = None
        self.fn = compile_graph(traced.graph, traced.attrs, 'forward', 'inference')

    def __call__(self, tensors):
        return self.fn(tensors)


class _TrainingRuntime:
    def __init__(self, traced, compile_graph):
        self.traced = traced
        fg, bg, self.n_saved = partition(traced)
        self.forward_graph, self.backward_graph = fg, bg
        self.fwd = compile_graph(fg, traced.attrs, 'forward', 'forward')
        self.bwd = compile_graph(bg, traced.attrs, 'backward', 'backward')
        self.diff_attr_tensors = [traced.attrs[n] for n in traced.diff_attrs]
        self.n_out = traced.n_outputs

    def run_forward(self, tensors):
        r = self.fwd(tensors[:self.traced.n_inputs])
        return r[:self.n_out], r[self.n_out:]

    def run_backward(self, saved, tangents):
        args = saved
        args.extend(tangents)
        del saved, tangents
        grads = self.bwd(args)
        n_in = self.traced.n_inputs
        full = [None] * (n_in + len(self.diff_attr_tensors))
        for k, i in enumerate(self.traced.diff_inputs):
            full[i] = grads[k]
        for k in range(len(self.diff_attr_tensors)):
            full[n_in + k] = grads[len(self.traced.diff_inputs) + k]
        return full

    def __call__(self, tensors):
        outs = CompiledFunction.apply(self, *tensors, *self.diff_attr_tensors)
        return list(outs)
