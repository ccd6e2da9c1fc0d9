"""ExportedProgram: a module captured as one graph of aten operators, with the state it reads.

The graph (``graph_module``) is functional in the module's state: parameters, buffers and lifted constants
are placeholders, named and described by ``graph_signature``; their values are ``state_dict`` (parameters,
persistent buffers) and ``constants`` (non-persistent buffers, lifted tensors). ``module()`` puts the state
back as attributes and gives a runnable module with the original forward's signature.
"""
import collections
import re

import ember
from ember.fx.node import Op
from ember.fx.experimental.symbolic_shapes import SymInt, pretty

from .graph_signature import OutputSpec, TensorArgument

__all__ = ['ExportedProgram']

CallSpec = collections.namedtuple('CallSpec', ['in_spec', 'out_spec'])

_DTYPE_ABBR = {'float32': 'f32', 'float64': 'f64', 'float16': 'f16', 'bfloat16': 'bf16', 'int64': 'i64',
               'int32': 'i32', 'int16': 'i16', 'int8': 'i8', 'uint8': 'u8', 'bool': 'b8', 'complex64': 'c64',
               'complex128': 'c128'}


def _annotation(val):
    if isinstance(val, ember.Tensor):
        dtype = val.dtype.name
        return f'"{_DTYPE_ABBR.get(dtype, dtype)}[{", ".join(pretty(n) for n in val.shape)}]"'
    if isinstance(val, SymInt):
        return f'"Sym({pretty(val)})"'
    return None


class ExportedProgram:
    """What ``ember.export.export`` returns (torch.export.ExportedProgram)."""

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints, constants=None,
                 example_inputs=None, *, in_spec=None, out_spec=None, forward_arg_names=()):
        from ember.fx import GraphModule
        self._graph_module = GraphModule(root, graph)
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._constants = constants or {}
        self._example_inputs = example_inputs
        self.call_spec = CallSpec(in_spec, out_spec)
        self._forward_arg_names = list(forward_arg_names)

    graph_module = property(lambda self: self._graph_module)
    graph = property(lambda self: self._graph_module.graph)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    range_constraints = property(lambda self: self._range_constraints)
    example_inputs = property(lambda self: self._example_inputs)
    dialect = 'ATEN'

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self):
        for fqn in self.graph_signature.parameters:
            yield fqn, self.state_dict[fqn]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for fqn in self.graph_signature.buffers:
            yield fqn, self.state_dict.get(fqn, self.constants.get(fqn))

    def module(self):
        """A runnable module: the graph with its state as attributes, called like the original forward."""
        from ._trace import unlift
        return unlift(self)

    def __call__(self, *args, **kwargs):
        raise RuntimeError('Unable to call ExportedProgram directly. You should use `exported_program.module()` '
                           'instead.')

    def run_decompositions(self, decomp_table=None):
        """A new ExportedProgram whose graph has the operators in ``decomp_table`` decomposed (by default ember's
        core aten decompositions, and torch's definitions of linear and matmul): the graph is traced again on
        fake tensors, node by node, keeping each node's stack trace."""
        from ember._decomp import core_aten_decompositions, torch_composite_decompositions
        from ember._subclasses.fake_tensor import FakeTensorMode
        from ember.fx.experimental.proxy_tensor import PythonKeyTracer
        if decomp_table is None:
            decomp_table = {**torch_composite_decompositions(), **core_aten_decompositions()}
        placeholders = [n for n in self.graph.nodes if n.op == Op.PLACEHOLDER]
        tracer = PythonKeyTracer(decomp_table, FakeTensorMode())
        replay = _NodeInterpreter(self.graph_module, tracer)
        tracer.trace(replay.run, [n.meta.get('val') for n in placeholders],
                     placeholder_names=[n.target for n in placeholders])
        graph = tracer.graph
        graph.eliminate_dead_code()
        output = next(n for n in graph.nodes if n.op == Op.OUTPUT)
        specs = [OutputSpec(s.kind, TensorArgument(a.name) if isinstance(a, ember.fx.Node) else s.arg, s.target)
                 for s, a in zip(self.graph_signature.output_specs, output.args[0])]
        signature = type(self.graph_signature)(list(self.graph_signature.input_specs), specs)
        return ExportedProgram(ember.nn.Module(), graph, signature, self.state_dict, self.range_constraints,
                               self.constants, self.example_inputs, in_spec=self.call_spec.in_spec,
                               out_spec=self.call_spec.out_spec, forward_arg_names=self._forward_arg_names)

    # --- printing -------------------------------------------------------------------------------------
    def _readable_code(self):
        graph = self.graph
        src = graph.python_code('self', verbose=True).src
        notes = {n.name: _annotation(n.meta.get('val')) for n in graph.nodes}
        targets = {n.target: notes[n.name] for n in graph.nodes if n.op == Op.PLACEHOLDER}

        def params(m):
            parts = []
            for p in m.group(1).split(', '):
                ann = targets.get(p)
                parts.append(f'{p}: {ann}' if ann else p)
            return f'def forward({", ".join(parts)}):'
        src = re.sub(r'def forward\((.*)\):', params, src, count=1)

        def assign(m):
            ann = notes.get(m.group(2))
            return f'{m.group(1)}{m.group(2)}: {ann} = ' if ann else m.group(0)
        src = re.sub(r'^(\s+)([A-Za-z_][A-Za-z0-9_]*) = (?![A-Za-z_][A-Za-z0-9_]*$)', assign, src, flags=re.M)
        return src.strip('\n')

    def __str__(self):
        code = self._readable_code()
        body = '\n'.join('        ' + line if line.strip() else '' for line in code.split('\n'))
        signature = '\n'.join('    ' + line for line in str(self.graph_signature).split('\n'))
        return (f'ExportedProgram:\n    class GraphModule(torch.nn.Module):\n{body}\n\n'
                f'Graph signature: \n{signature}\n\nRange constraints: {self.range_constraints}\n')

    __repr__ = __str__


class _NodeInterpreter(ember.fx.Interpreter):
    """Replays a graph under a tracer, giving each recorded node the stack trace of the node it comes from."""

    def __init__(self, module, tracer):
        super().__init__(module)
        self.tracer = tracer

    def run_node(self, n):
        self.tracer.stack_trace = n.stack_trace
        try:
            return super().run_node(n)
        finally:
            self.tracer.stack_trace = None

