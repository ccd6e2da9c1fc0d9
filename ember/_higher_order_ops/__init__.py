"""torch._higher_order_ops: ``cond``, ``while_loop`` and ``map``, control flow that takes functions as arguments.

NOTE [control-flow operators] -- In torch these are higher-order operators: under ``torch.compile`` and
``torch.export`` the predicate may be a tensor whose value is unknown while tracing, and the branches (or the
loop's body) are traced into subgraphs of one ``cond``/``while_loop`` node. Run eagerly, they are ordinary
control flow: the predicate is read, and one branch (or the body, until the condition fails) runs on the
operands, recording autograd as any code does.

``cond`` with a tensor predicate inside a make_fx trace (make_fx, ``export``, ``ember.compile``) is recorded as
torch records it: each branch traced on the operands into a subgraph (``true_graph_0``, ``false_graph_0``,
submodules of the traced module), one node ``ember.ops.higher_order.cond(pred, true_graph_0, false_graph_0,
(operands...))`` whose items are the outputs, the branches checked to return the same shapes and dtypes, and
running the graph runs the branch the predicate picks (PythonKeyTracer.record_cond). ember records no backward
for that node, so where a gradient would flow through the operands the predicate is read instead, as eagerly
(a trace on fake tensors then raises the tracer's data-dependent error, and ``ember.compile`` breaks the graph
there). ``while_loop`` is always read eagerly: a trace sees the iterations run; so is ``map`` (map.py).
"""
from .cond import cond
from .while_loop import while_loop
from .map import map  # noqa: A004  the function shadows the submodule, as in torch

__all__ = ['cond', 'while_loop', 'map']
