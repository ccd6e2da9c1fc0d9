"""``ember._dynamo.explain(fn)(*args)``: what capture made of a call (torch._dynamo.explain).

It compiles ``fn`` afresh with the ``'eager'`` backend, runs it once on the arguments and reports the graphs
captured (the module and each child compiled after a graph break count separately), the graph breaks with
their reasons and the user's line, the operators per graph and the guards.

NOTE [explain's graphs around a break]: torch's Dynamo resumes capture after a graph break, so a function
that reads a tensor's value in an ``if`` makes two graphs, the operators before the read and those after.
ember's capture cannot resume (NOTE [capture and guards]: a broken function runs eagerly), so for a plain
function that broke, explain records the call on the real arguments (make_fx, ``'real'``) while noting where
Python read a tensor's value, and cuts that graph there: one graph per stretch of operators between reads,
each read value an output of its graph, as torch's ``lt`` is. These are the graphs torch would report for
the path this call took; ``ember.compile`` itself still runs such a function eagerly.
"""
import threading

from .eval_frame import OptimizedModule, compile as _compile

__all__ = ['explain', 'ExplainOutput']


class ExplainOutput:
    def __init__(self, graphs, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph,
                 out_guards, compile_times):
        self.graphs, self.graph_count, self.graph_break_count = graphs, graph_count, graph_break_count
        self.break_reasons, self.op_count, self.ops_per_graph = break_reasons, op_count, ops_per_graph
        self.out_guards, self.compile_times = out_guards, compile_times

    def __str__(self):
        lines = [f'Graph Count: {self.graph_count}', f'Graph Break Count: {self.graph_break_count}',
                 f'Op Count: {self.op_count}', 'Break Reasons:']
        for i, r in enumerate(self.break_reasons, 1):
            lines.append(f'  Break Reason {i}:\n    Reason: {r}')
        lines.append('Ops per Graph:')
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f'  Ops {i}:')
            lines += [f'    {o}' for o in ops]
        lines.append('Out Guards:')
        for i, g in enumerate(self.out_guards, 1):
            lines.append(f'  Guard {i}:\n    {g}')
        lines.append(f'Compile Time (seconds): {", ".join(f"{t:.4f}" for t in self.compile_times)}')
        return '\n'.join(lines)

    __repr__ = __str__


def _walk(cf, out):
    out.append(cf)
    for c in (cf.children or {}).values():
        _walk(c, out)
    return out


def explain(f, *extra_args, **extra_kwargs):
    if extra_args or extra_kwargs:
        raise TypeError('explain(f, *args) is gone in torch; call explain(f)(*args, **kwargs)')

    def inner(*args, **kwargs):
        compiled = _compile(f, backend='eager')
        cf = compiled.__dict__['_compiled'] if isinstance(compiled, OptimizedModule) else compiled
        cf.calls = 1 << 30          # no eager warm-up call: explain captures the call it is given
        compiled(*args, **kwargs)
        graphs, ops, guards, reasons, times = [], [], [], [], []
        if cf.broken is not None and not cf.children and cf.owner is None:
            graphs = _graphs_around_breaks(f, args, kwargs)
            ops = [[n.target for n in g.graph.nodes if n.op == 'call_function'] for g in graphs]
        for c in _walk(cf, []):
            reasons += c.break_reasons
            for e in c.entries:
                graphs.append(e.traced.graph)
                ops.append([str(o) for o in e.traced.ops()])
                guards += e.guards
                times.append(e.compile_time)
        return ExplainOutput(graphs, len(graphs), len(reasons), reasons, sum(len(o) for o in ops), ops, guards,
                             times)
    return inner


_READS = ('__bool__', 'item', 'tolist', '__float__', '__int__', '__index__')


class _ReadMarks:
    """While recording, each Python read of a tensor's value (in this thread) marks a cut: how many nodes the
    graph had, and the node of the tensor read."""

    def __init__(self):
        import ember
        self.cls, self.marks, self.tid = ember.Tensor, [], threading.get_ident()

    def __enter__(self):
        from ember.fx.experimental.proxy_tensor import get_proxy_mode
        self.saved = {n: self.cls.__dict__.get(n) for n in _READS}
        marks, tid = self.marks, self.tid

        def marking(original):
            def method(t, *a, **k):
                mode = get_proxy_mode()
                if mode is not None and threading.get_ident() == tid:
                    node = mode.tracer._nodes.get(t)
                    marks.append((len(mode.tracer.graph.nodes), node))
                return original(t, *a, **k)
            return method
        for n in _READS:
            setattr(self.cls, n, marking(getattr(self.cls, n)))
        return self

    def __exit__(self, *exc):
        for n, fn in self.saved.items():
            if fn is None:
                delattr(self.cls, n)
            else:
                setattr(self.cls, n, fn)


def _graphs_around_breaks(f, args, kwargs):
    """NOTE [explain's graphs around a break]: the call recorded on the real arguments, cut at each read."""
    from ember.fx.experimental.proxy_tensor import make_fx
    from ember.fx.passes.split_module import split_module
    with _ReadMarks() as reads:
        gm = make_fx(lambda a, k: f(*a, **k))(args, kwargs)
    cuts = [n for n, _ in reads.marks]
    position = {node: i for i, node in enumerate(gm.graph.nodes)}
    calls = [n for n in gm.graph.nodes if n.op == 'call_function']
    if not calls:
        return []
    read_nodes = [node for _, node in reads.marks if node is not None]
    out = [n for n in gm.graph.nodes if n.op == 'output'][0]
    out.args = ((out.args[0], *read_nodes),)      # a value read is an output of its graph
    parts = {n: sum(1 for c in cuts if c <= position[n]) for n in calls}
    split = split_module(gm, gm, lambda n: parts[n])
    return [m for name, m in split.named_children() if name.startswith('submod_')]
