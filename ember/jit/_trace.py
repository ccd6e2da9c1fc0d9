"""What ``ember.jit.trace`` records, and the TorchScript source it writes for it.

NOTE [TorchScript from a trace]: ``trace`` runs the function once on the example inputs under make_fx's dispatch
mode at the pre-dispatch level (NOTE [make_fx]; real tensors, as torch's tracer runs them): a graph of
``aten`` operators whose control flow, Python numbers and shapes are those of that run, as in torch's trace.
Tensors the graph reads that are no input are matched by identity to the module's parameters and buffers (read
as ``self.fc1.weight``) or else kept as constants (``CONSTANTS.c0``, written to ``constants.pkl``). Each node
becomes one TorchScript statement ``name = ops.aten.<op>(args)``: torch's own compiler (``torch.jit.load``)
parses and type-checks it and picks the overload from the argument types, so only values TorchScript can spell
appear in arguments (numbers, strings, None, lists, dtypes as their ScalarType number, devices). torch's trace
keeps one ``forward`` per submodule; this one is flat: the top class has the forward, submodules' classes
declare their attributes only.
"""
import json
import keyword
import math
import operator

import ember
from ember.fx.experimental.proxy_tensor import dispatch_trace
from ember.fx.node import Op

# c10's ScalarType, MemoryFormat and Layout numbers: how TorchScript source spells these enum arguments
SCALAR_TYPES = ['uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64', 'complex32',
                'complex64', 'complex128', 'bool', 'qint8', 'quint8', 'qint32', 'bfloat16']
MEMORY_FORMATS = ['contiguous_format', 'preserve_format', 'channels_last', 'channels_last_3d']
LAYOUTS = ['strided', 'sparse_coo', 'sparse_csr', 'sparse_csc', 'sparse_bsr', 'sparse_bsc', '_mkldnn']
_ENUM_NAMES = {'ScalarType': SCALAR_TYPES, 'MemoryFormat': MEMORY_FORMATS, 'Layout': LAYOUTS}
# names the generated code uses itself, never given to a value
_RESERVED = {'self', 'torch', 'ops', 'CONSTANTS', 'annotate', 'getattr', 'List', 'Tuple', 'Optional', 'Tensor',
             'int', 'float', 'bool', 'str', 'NoneType', 'Module', 'Device', 'math', 'inf', 'nan'}


class Capture:
    """One trace: the graph, the forward's argument names, the module it read state from (None for a function),
    and per ``get_attr`` target the tensor it read. ``error`` says why there is no graph (the trace still ran)."""

    def __init__(self, graph=None, attrs=None, root=None, error=None):
        self.graph, self.attrs, self.root, self.error = graph, attrs or {}, root, error


def _cpu_only_decompositions():
    """ember's recurrent layers step through torch's fused cell operators (``_thnn_fused_lstm_cell``), which torch
    runs on CUDA only: a trace records them in their pieces, so torch.jit.load can run the file on a CPU."""
    from ember._decomp import get_decompositions
    aten = ember.ops.aten
    return get_decompositions([aten._thnn_fused_lstm_cell, aten._thnn_fused_gru_cell])


def capture(func, args, names, root):
    """Run ``func(*args)`` once under make_fx's tracer (pre-dispatch, real tensors) and keep its graph."""
    try:
        tracer = dispatch_trace(func, list(args), _cpu_only_decompositions(), None, placeholder_names=names)
    except NotImplementedError as e:
        return Capture(root=root, error=str(e))
    return Capture(tracer.graph, tracer.attrs, root)


def _identifier(name, taken):
    name = ''.join(c if c.isalnum() or c == '_' else '_' for c in str(name)) or '_'
    if name[0].isdigit():
        name = '_' + name
    while keyword.iskeyword(name) or name in _RESERVED or name in taken:
        name += '_'
    taken.add(name)
    return name


def _attr_path(base, fqn):
    """``self.fc1.weight``; ``getattr(self, "0")`` for a part that is no identifier (a Sequential's index)."""
    for part in fqn.split('.'):
        base = f'{base}.{part}' if part.isidentifier() and not keyword.iskeyword(part) else \
            f'getattr({base}, {json.dumps(part)})'
    return base


def _state_paths(root):
    """id(tensor) -> the module attribute path it is read through."""
    if root is None:
        return {}
    paths = {}
    state = list(root.named_parameters(remove_duplicate=False)) + list(root.named_buffers(remove_duplicate=False))
    for fqn, t in state:
        paths.setdefault(id(t), _attr_path('self', fqn))
    return paths


class _Emitter:
    """Writes one statement per graph node (NOTE [TorchScript from a trace])."""

    def __init__(self, cap):
        self.cap = cap
        self.names, self.taken = {}, set()
        self.state = _state_paths(cap.root)
        self.constants, self.constant_ids = [], {}
        self.lines = []

    def value(self, v, arg=None):
        """TorchScript source for an argument value; ``arg`` is the schema argument it binds to, if known."""
        if isinstance(v, ember.fx.Node):
            return self.names[v]
        enum = _ENUM_NAMES.get(getattr(arg, 'base_type', None))
        if isinstance(v, str) and enum is not None and v in enum:       # memory_format='contiguous_format'
            return str(enum.index(v))
        if v is None or isinstance(v, (bool, int, str)):
            return json.dumps(v) if isinstance(v, str) else repr(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else f'float("{v}")'
        if isinstance(v, ember.dtype):
            return str(SCALAR_TYPES.index(v.name))
        if isinstance(v, ember.memory_format):
            return str(MEMORY_FORMATS.index(str(v).split('.')[-1]))
        if isinstance(v, ember.layout):
            return str(LAYOUTS.index(str(v).split('.')[-1]))
        if isinstance(v, ember.device):
            return f'torch.device({json.dumps(str(v))})'
        if isinstance(v, (list, tuple)):
            items = '[' + ', '.join(self.value(e) for e in v) + ']'
            elem = _list_element_type(arg)
            if elem is not None and (not v or 'Optional' in elem):
                return f'annotate(List[{elem}], {items})'
            return items
        raise NotImplementedError(f"torch.jit.save: a traced argument of type {type(v).__name__} ({v!r}) has no "
                                  f"TorchScript spelling in ember's writer")

    def node(self, n):
        if n.op == Op.PLACEHOLDER:
            self.names[n] = _identifier(n.target, self.taken)
        elif n.op == Op.GET_ATTR:
            self.names[n] = self.tensor_read(self.cap.attrs[n.target])
        elif n.op == Op.CALL_FUNCTION and not n.users and n.target is operator.getitem:
            return      # an output of a multi-output operator nothing reads
        elif n.op == Op.CALL_FUNCTION:
            self.names[n] = name = _identifier(n.name, self.taken)
            self.lines.append(f'{name} = {self.call(n)}')
        elif n.op == Op.OUTPUT:
            self.lines.append(f'return {self.output(n.args[0])}')
        else:
            raise NotImplementedError(f"torch.jit.save: graph node {n.format_node()} ({n.op})")

    def tensor_read(self, t):
        path = self.state.get(id(t))
        if path is not None:
            return path
        if id(t) not in self.constant_ids:
            self.constant_ids[id(t)] = len(self.constants)
            self.constants.append(t)
        return f'CONSTANTS.c{self.constant_ids[id(t)]}'

    def call(self, n):
        if n.target is operator.getitem:
            return f'{self.value(n.args[0])}[{self.value(n.args[1])}]'
        schema = getattr(n.target, 'schema', None)
        if schema is None or getattr(n.target, 'namespace', None) != 'aten':
            raise NotImplementedError(f"torch.jit.save: the traced call {n.format_node()} is no aten operator")
        by_name = {a.name: a for a in schema.arguments}
        args = [self.value(v, a) for v, a in zip(n.args, schema.arguments)]
        args += [f'{k}={self.value(v, by_name.get(k))}' for k, v in n.kwargs.items()]
        return f'ops.aten.{schema.name}({", ".join(args)})'

    def output(self, out):
        if isinstance(out, (tuple, list)):
            return '(' + ''.join(f'{self.output(o)}, ' for o in out) + ')'
        if isinstance(out, dict) and all(isinstance(k, str) for k in out):     # torch's trace, strict=False
            return '{' + ', '.join(f'{json.dumps(k)}: {self.output(v)}' for k, v in out.items()) + '}'
        if not isinstance(out, ember.fx.Node):
            raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from "
                               f"traced functions (got {type(out).__name__})")
        return self.names[out]


def _list_element_type(arg):
    if arg is None or not arg.type.rstrip('?').endswith(']'):
        return None
    base = arg.type.rstrip('?').rsplit('[', 1)[0]
    optional = base.endswith('?')
    base = {'SymInt': 'int', 'Scalar': 'float'}.get(base.rstrip('?'), base.rstrip('?'))
    return f'Optional[{base}]' if optional else base


def _output_type(out):
    if isinstance(out, (tuple, list)):
        return 'Tuple[' + ', '.join(_output_type(o) for o in out) + ']'
    if isinstance(out, dict):
        types = {_output_type(v) for v in out.values()}
        return f'Dict[str, {types.pop() if len(types) == 1 else "Any"}]'
    return 'Tensor'


def forward_source(cap, self_type, indent='  '):
    """``(source of def forward, constants)`` for a Capture: the method torch's ``.code`` shows."""
    if cap.error is not None:
        raise NotImplementedError(f"this trace has no TorchScript graph: {cap.error}")
    em = _Emitter(cap)
    for n in cap.graph.nodes:
        em.node(n)
    inputs = [n for n in cap.graph.nodes if n.op == Op.PLACEHOLDER]
    params = [em.names[n] for n in inputs]
    out = next(n for n in cap.graph.nodes if n.op == Op.OUTPUT).args[0]
    head = f'def forward(self: {self_type}' + ''.join(f',\n{indent}{indent}{p}: Tensor' for p in params)
    body = ''.join(f'{indent}{line}\n' for line in _size_guards(inputs, em) + em.lines)
    return f'{head}) -> {_output_type(out)}:\n{body}', em.constants


def _size_guards(inputs, em):
    """NOTE [TorchScript size guards]: the graph was recorded on real tensors, so every size it computed with (a
    flatten's view, an arange over the sequence) is a number in the code, where torch's tracer records
    ``aten::size`` for sizes read from an input. Run on inputs of other sizes, such a file would compute with the
    trace's numbers: an error at best, other values at worst. So the code first compares each input's sizes with
    the trace's and raises (``ops.prim.RaiseException``, as torch's scripted code raises; torch.jit.load and
    ember.jit.load both run it) on any other shape: the file is as general as the example, no more."""
    lines = []
    for n in inputs:
        meta = n.meta.get('tensor_meta')
        if meta is None:
            continue
        name, shape = em.names[n], [int(d) for d in meta.shape]
        message = (f"{name}: this file was traced (ember.jit.trace) on inputs of sizes {shape} and takes those sizes "
                   f"only")
        checks = [f'torch.ne(torch.dim({name}), {len(shape)})'] + \
            [f'torch.ne(torch.size({name}, {d}), {size})' for d, size in enumerate(shape)]
        for check in checks:
            lines += [f'if {check}:', f'  ops.prim.RaiseException("{message}", "builtins.RuntimeError")', 'else:',
                      '  pass']
    return lines
