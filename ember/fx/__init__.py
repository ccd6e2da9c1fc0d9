"""ember.fx: capture a program as a graph, edit it, and run it again as Python (torch.fx).

``symbolic_trace(module)`` runs ``forward`` on Proxies and records a Graph of Nodes (placeholder, get_attr,
call_function, call_method, call_module, output); ``GraphModule`` turns a Graph back into a Module with
generated Python code; ``Interpreter``/``Transformer`` run or rewrite a graph node by node. Everything here
is built on ember's public API; ember functions record themselves through ``__torch_function__``.

>>> import ember, ember.fx as fx
>>> class M(ember.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.linear = ember.nn.Linear(4, 4)
...     def forward(self, x):
...         return ember.relu(self.linear(x)).sum(dim=1)
>>> gm = fx.symbolic_trace(M())
>>> print(gm.graph)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %linear : [num_users=1] = call_module[target=linear](args = (%x,), kwargs = {})
    %relu : [num_users=1] = call_function[target=ember.relu](args = (%linear,), kwargs = {})
    %sum_1 : [num_users=1] = call_method[target=sum](args = (%relu,), kwargs = {dim: 1})
    return sum_1
"""
from .graph import Graph, CodeGen
from .graph_module import GraphModule
from .node import Node, map_arg, has_side_effect
from .proxy import Proxy, Attribute, TraceError  # noqa: F401
from ._symbolic_trace import symbolic_trace, Tracer, wrap, PH
from .interpreter import Interpreter, Transformer
from .subgraph_rewriter import replace_pattern
from . import annotate, immutable_collections, passes, subgraph_rewriter  # noqa: F401

__all__ = ['symbolic_trace', 'Tracer', 'wrap', 'Graph', 'GraphModule', 'Node', 'Proxy', 'Attribute', 'Interpreter',
           'Transformer', 'replace_pattern', 'map_arg', 'has_side_effect', 'CodeGen', 'PH']
