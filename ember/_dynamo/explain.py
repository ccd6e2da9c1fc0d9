"""``ember._dynamo.explain(fn)(*args)``: what capture made of a call (torch._dynamo.explain).

It compiles ``fn`` afresh with the ``'eager'`` backend, runs it once on the arguments and reports the graphs
captured (the module and each child compiled after a graph break count separately), the graph breaks with
their reasons and the user's line, the operators per graph and the guards.
"""

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
