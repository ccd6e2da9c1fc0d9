"""torch._higher_order_ops: ``cond`` and ``while_loop``, control flow that takes functions as arguments.

NOTE [control-flow operators] -- In torch these are higher-order operators: under ``torch.compile`` and
``torch.export`` the predicate may be a tensor whose value is unknown while tracing, and the branches (or the
loop's body) are traced into subgraphs of one ``cond``/``while_loop`` node. Run eagerly, they are ordinary
control flow: the predicate is read, and one branch (or the body, until the condition fails) runs on the
operands, recording autograd as any code does. ember has the eager meaning. A trace (``make_fx``, ``export``,
``ember.compile``) sees the branch taken: with a Python bool predicate that is torch's graph too; a tensor
predicate is read, which a trace of fake tensors cannot do (the tracer's data-dependent error), where torch
would record both branches.
"""
from .cond import cond
from .while_loop import while_loop

__all__ = ['cond', 'while_loop']
