"""From an exported aten graph to an ONNX model.

1. ``ember.export.export`` captures the model on fake tensors (in eval mode unless ``training`` says
   otherwise), then ``run_decompositions`` expands every operator that has no ONNX translation at this opset
   but has a decomposition in ``ember._decomp`` (gelu below opset 20, silu, hardswish, ...).
2. Walking the graph in order, each node is either folded or translated. Folded: all its tensor inputs are
   known at export time (parameters, buffers, constants, folded nodes) and it draws no random numbers, so
   ember computes it and the ONNX model holds the result as an initializer (torch's do_constant_folding: an
   attention mask built with ``triu(ones(n, n))`` becomes one constant). Translated: ``_translations.py`` emits
   ONNX nodes for it; an operator with no translation raises UnsupportedOperatorError naming it and the opset.
3. ``dynamic_axes``: the model is exported once more per dynamic axis, that axis one larger. Every integer
   argument that changes between the exports must be ``c * (product of dynamic sizes)``; it becomes a
   ``SymInt``, which the ONNX graph computes from ``Shape`` of the inputs, so that a ``view``, ``expand`` or
   ``zeros`` follows the input's size. A graph whose structure changes with the size (a Python loop over a
   sequence) cannot have that axis dynamic, and export says so.
"""
import math
import operator

import numpy as np

import ember
from ember.export.graph_signature import InputKind
from ember.fx.node import Node, Op
from ember.utils import _pytree as pytree

from ._builder import Builder, Value, SymInt, onnx_dtype
from ._translations import TRANSLATIONS, MIN_OPSET
from .errors import OnnxExporterError, UnsupportedOperatorError

def _onnx_table(opset, custom):
    from ember._decomp import decomposition_table
    have = {op for op, v in MIN_OPSET.items() if v <= opset} | set(custom)
    return {op: fn for op, fn in decomposition_table.items() if op not in have}


def capture(model, args, kwargs, opset, custom, training):
    """The ExportedProgram to translate, decomposed for ONNX."""
    if isinstance(model, ember.export.ExportedProgram):
        ep = model
    else:
        mode = {'EVAL': False, 'TRAINING': True}.get(getattr(training, 'name', str(training)).upper())
        was = model.training
        if mode is not None:
            model.train(mode)
        try:
            ep = ember.export.export(model, args, kwargs)
        finally:
            model.train(was)
    return ep.run_decompositions(_onnx_table(opset, custom))


# --- dynamic axes --------------------------------------------------------------------------------------

def _ints_with_paths(value, path=()):
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        yield path, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _ints_with_paths(v, path + (i,))


def _replace(value, path, new):
    if not path:
        return new
    seq = list(value)
    seq[path[0]] = _replace(seq[path[0]], path[1:], new)
    return type(value)(seq)


def symbolic_sizes(base, variants, dims):
    """``{(node name, argument path): SymInt}`` from the base program and one per dynamic axis, that axis + 1.

    ``dims``: per variant, ``(input name, axis, base size)``."""
    nodes = [list(ep.graph.nodes) for ep in [base] + variants]
    if len({len(ns) for ns in nodes}) != 1 or any(
            [n.target for n in ns] != [n.target for n in nodes[0]] for ns in nodes[1:]):
        changed = next((dims[i] for i, ns in enumerate(nodes[1:]) if [n.target for n in ns] !=
                        [n.target for n in nodes[0]]), dims[0])
        raise OnnxExporterError(
            f'dynamic_axes: the graph changes with the size of axis {changed[1]} of input {changed[0]!r} (Python '
            'control flow or a loop over that dimension, as an RNN unrolled over time steps), so ember cannot export '
            'it as a dynamic axis: export it with that size fixed.')
    syms = {}
    for i, node in enumerate(nodes[0]):
        if node.op != Op.CALL_FUNCTION:
            continue
        base_args = (tuple(node.args), dict(node.kwargs))
        for path, v0 in _ints_with_paths(list(base_args[0]) + [base_args[1].get(k) for k in sorted(base_args[1])]):
            values = [_at(ns[i], path) for ns in nodes[1:]]
            moved = [j for j, v in enumerate(values) if v != v0]
            if not moved:
                continue
            prod0 = math.prod(dims[j][2] for j in moved)
            coeff = v0 // prod0 if prod0 and v0 % prod0 == 0 else None
            ok = coeff is not None and all(
                values[j] == coeff * math.prod(dims[k][2] + (k == j) for k in moved) for j in moved)
            if not ok:
                raise OnnxExporterError(
                    f'dynamic_axes: argument {v0} of {node.target} ({node.name}) depends on the dynamic sizes in a way '
                    'ember cannot express (only a constant times a product of dynamic sizes)')
            syms[(node.name, path)] = SymInt(coeff, [(dims[j][0], dims[j][1]) for j in moved], v0)
    return syms


def _at(node, path):
    args = list(node.args) + [node.kwargs.get(k) for k in sorted(node.kwargs)]
    v = args[path[0]]
    for p in path[1:]:
        v = v[p]
    return v


def _with_syms(node, syms):
    args, kwargs = list(node.args), dict(node.kwargs)
    keys = sorted(kwargs)
    for (name, path), s in syms.items():
        if name != node.name:
            continue
        if path[0] < len(args):
            args[path[0]] = _replace(args[path[0]], path[1:], s)
        else:
            k = keys[path[0] - len(args)]
            kwargs[k] = _replace(kwargs[k], path[1:], s)
    return args, kwargs


# --- translation ---------------------------------------------------------------------------------------

def _is_random(op):
    return 'nondeterministic_seeded' in getattr(op, 'tags', ())      # draws from a Generator (registry.py)


def _array(t):
    t = t.detach()
    if t.dtype == ember.bfloat16:
        t = t.float()
    return np.ascontiguousarray(t.numpy())


def translate(ep, opset, input_names=None, output_names=None, syms=None, dynamic_dims=None, custom=None,
              export_params=True, keep_initializers_as_inputs=False, do_constant_folding=True):
    """The ONNX ModelProto of an (already decomposed) ExportedProgram."""
    import onnx
    from onnx import helper, numpy_helper
    b = Builder(opset)
    syms, custom = syms or {}, custom or {}
    real, vals, inputs, state_names = {}, {}, [], {}
    placeholders = [n for n in ep.graph.nodes if n.op == Op.PLACEHOLDER]
    reserved = {n.name for n in ep.graph.nodes if n.op == Op.CALL_FUNCTION}
    b._names.update(reserved)           # the ONNX values of nodes take the nodes' names (_rename_last)
    user_index = 0
    for ph, spec in zip(placeholders, ep.graph_signature.input_specs):
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            real[ph] = ep.state_dict.get(spec.target, ep.constants.get(spec.target))
            state_names[ph] = spec.target
            continue
        val = ph.meta.get('val')
        if not isinstance(val, ember.Tensor):
            real[ph] = val          # a Python value the graph was specialised to
            continue
        name = input_names[user_index] if input_names and user_index < len(input_names) else ph.target
        user_index += 1
        b.claim(name)
        vals[ph] = Value(name, val.shape, val.dtype)
        inputs.append(vals[ph])

    def materialize(node):
        """A value known at export time, as an initializer."""
        if node not in vals:
            t = real[node]
            if not isinstance(t, ember.Tensor):
                raise OnnxExporterError(f'cannot use the Python value {t!r} of {node.name} as an ONNX tensor')
            name = b.initializer(b.claim(state_names.get(node, node.name)), _array(t))
            vals[node] = Value(name, t.shape, t.dtype)
        return vals[node]

    def as_value(a):
        if isinstance(a, Node):
            if a in real:
                return materialize(a)
            v = vals[a]
            if v is None:
                raise OnnxExporterError(f'{a.name} ({a.args[0].target} output {a.args[1]}) has no ONNX equivalent')
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(as_value(e) for e in a)
        return a

    for node in ep.graph.nodes:
        if node.op != Op.CALL_FUNCTION:
            continue
        if node.target is operator.getitem:
            parent, idx = node.args
            if parent in real:
                real[node] = real[parent][idx]
            else:
                vals[node] = vals[parent][idx]
            continue
        args, kwargs = _with_syms(node, syms)
        tensor_inputs = [a for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, Node)]
        has_sym = any(isinstance(a, SymInt) for a in pytree.tree_leaves((args, kwargs)))
        if do_constant_folding and not has_sym and all(a in real for a in tensor_inputs) \
                and not _is_random(node.target):
            with ember.no_grad():
                real[node] = node.target(*pytree.tree_map(lambda a: real[a] if isinstance(a, Node) else a, args),
                                         **pytree.tree_map(lambda a: real[a] if isinstance(a, Node) else a, kwargs))
            continue
        fn = custom.get(node.target) or TRANSLATIONS.get(node.target)
        opname = f'aten::{node.target.__name__}' + (f'.{node.target.schema.overload}'
                                                    if node.target.schema.overload else '')
        if fn is None or (node.target not in custom and MIN_OPSET[node.target] > opset):
            raise UnsupportedOperatorError(opname, opset, MIN_OPSET.get(node.target) if fn is not None else None,
                                           _where(node))
        out = node.meta.get('val')
        result = fn(b, out, *[as_value(a) for a in args], **{k: as_value(v) for k, v in kwargs.items()})
        if result is NotImplemented:
            raise UnsupportedOperatorError(opname, opset, None, 'Not with these arguments: ' + _where(node))
        if isinstance(result, (list, tuple)):
            vals[node] = [None if r is None else Value(r, o.shape, o.dtype) for r, o in zip(result, out)]
        else:
            vals[node] = Value(_rename_last(b, result, node.name, reserved), out.shape, out.dtype)

    output = next(n for n in ep.graph.nodes if n.op == Op.OUTPUT)
    outs = []
    for i, a in enumerate(pytree.tree_leaves(output.args[0])):
        if not isinstance(a, Node):
            raise OnnxExporterError(f'output {i} of the model is the Python value {a!r}: ONNX outputs are tensors')
        v = as_value(a)
        name = output_names[i] if output_names and i < len(output_names) else a.name
        if v.name != name or v in inputs or v.name in b.initializers:
            if name in reserved:            # a getitem's name, which no value took
                reserved.discard(name)
            else:
                name = b.claim(name)
            producer = next((n for n in b.nodes if v.name in n.output), None)
            read = any(v.name in n.input for n in b.nodes) or v.name in [o.name for o in outs]
            if producer is not None and not read:        # rename the value where it is made
                producer.output[list(producer.output).index(v.name)] = name
            else:
                name = b.op('Identity', [v.name], name=[name])
        outs.append(Value(name, v.shape, v.dtype))

    dynamic_dims = dynamic_dims or {}

    def value_info(v, key):
        dims = [dynamic_dims.get(key + (i,), s) for i, s in enumerate(v.shape)]
        return helper.make_tensor_value_info(v.name, onnx_dtype(v.dtype), dims)
    used = {i for n in b.nodes for i in n.input} | {o.name for o in outs}
    inits = [numpy_helper.from_array(arr, name) for name, arr in b.initializers.items() if name in used]
    graph_inputs = [value_info(v, (v.name,)) for v in inputs]
    if not export_params or keep_initializers_as_inputs:
        graph_inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits
                         if t.name not in {c for c in b._consts.values()}]
        if not export_params:
            inits = [t for t in inits if t.name in {c for c in b._consts.values()}]
    graph_outputs = [value_info(v, ('out', i)) for i, v in enumerate(outs)]
    graph = helper.make_graph(b.nodes, 'main_graph', graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                              producer_name='ember', producer_version=ember.__version__)
    model.ir_version = min(model.ir_version, 10)       # onnxruntime reads IR versions up to 10
    onnx.checker.check_model(model)
    return model


def _rename_last(b, result, name, reserved):
    """Give the ONNX value the fx node's (reserved) name when the node just emitted made it: nothing reads it yet."""
    last = b.nodes[-1] if b.nodes else None
    if last is None or result not in last.output or name not in reserved:
        return result
    reserved.discard(name)
    last.output[list(last.output).index(result)] = name
    return name


def _where(node):
    trace = node.stack_trace
    if not trace:
        return f'(node {node.name})'
    last = [ln.strip() for ln in trace.strip().split('\n') if ln.strip()]
    return f'(node {node.name}, from {last[-2] if len(last) > 1 else last[-1]}: {last[-1]})'
