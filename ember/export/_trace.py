"""How ``ember.export.export`` captures a module: its state and the user's inputs become one flat list of
placeholders, traced on fake tensors by make_fx's machinery (NOTE [make_fx]) at the pre-dispatch level.

The function traced is ``flat_fn(*params, *buffers, *user_leaves)``: it puts the fake twins of the parameters
and buffers in the module's place for the duration of the call (and back afterwards, also on error), rebuilds
``(args, kwargs)`` from the user's leaves and calls the module. Tensors the forward reads that are neither
(a tensor literal, a global) come out of the tracer as constants and are lifted to ``c_lifted_tensor_<i>``
placeholders, as torch lifts them.
"""
import contextlib
import inspect
import operator

import ember
from ember.utils import _pytree as pytree
from ember._subclasses.fake_tensor import FakeTensorMode
from ember.fx.experimental.proxy_tensor import dispatch_trace
from ember.fx.node import Op

from .graph_signature import (InputKind, OutputKind, InputSpec, OutputSpec, TensorArgument, ConstantArgument,
                              ExportGraphSignature)


def _module_state(mod):
    """``[(fqn, tensor)]`` of the parameters and ``[(fqn, tensor, persistent)]`` of the buffers, each tensor once."""
    params = list(mod.named_parameters())
    buffers = []
    for fqn, t in mod.named_buffers():
        owner, _, name = fqn.rpartition('.')
        sub = mod.get_submodule(owner) if owner else mod
        buffers.append((fqn, t, name not in sub._non_persistent_buffers_set))
    return params, buffers


@contextlib.contextmanager
def _swapped_state(mod, replacement):
    """Within the block, every parameter/buffer slot holding a key of ``replacement`` (by identity) holds its value."""
    undo = []
    modules = [sub for _, sub in mod.named_modules(remove_duplicate=False)]
    before = [dict(vars(sub)) for sub in modules]
    try:
        for sub in modules:
            for slots in (sub._parameters, sub._buffers):
                for name, t in list(slots.items()):
                    if t is not None and id(t) in replacement:
                        undo.append((slots, name, t))
                        slots[name] = replacement[id(t)]
        yield
    finally:
        for slots, name, t in reversed(undo):
            slots[name] = t
        # a forward that caches a tensor on the module (a mask) cached a fake one: put back what was there
        for sub, old in zip(modules, before):
            for name, value in list(vars(sub).items()):
                if isinstance(value, ember.Tensor) and value.device.type == 'meta' and old.get(name) is not value:
                    if name in old:
                        object.__setattr__(sub, name, old[name])
                    else:
                        object.__delattr__(sub, name)


def _positional_names(mod, n):
    """Names of the forward's first ``n`` positional arguments (``<varargs>_<i>`` past the named ones)."""
    try:
        params = list(inspect.signature(mod.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), 'args')
    return [positional[i] if i < len(positional) else f'{varargs}_{i - len(positional)}' for i in range(n)]


def _user_input_names(mod, args, kwargs):
    """One name per leaf of ``(args, kwargs)``: the forward's parameter names (``x``, ``hidden_0``...)."""
    names = []
    tops = list(zip(_positional_names(mod, len(args)), args)) + list(kwargs.items())
    for name, value in tops:
        leaves = pytree.tree_leaves(value)
        if len(leaves) == 1 and not isinstance(value, (list, tuple, dict)):
            names.append(name)
        else:
            names.extend(f'{name}_{i}' for i in range(len(leaves)))
    return names


def _fqn_name(prefix, fqn):
    return prefix + fqn.replace('.', '_')


def trace_module(mod, args, kwargs, fake_mode=None):
    """The pieces of an ExportedProgram: (graph, signature, state_dict, constants, in_spec, out_spec)."""
    params, buffers = _module_state(mod)
    flat_user, in_spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
    state = [t for _, t in params] + [t for _, t, _ in buffers]
    n_state = len(state)
    out_spec = []

    def flat_fn(*flat):
        replacement = {id(orig): fake for orig, fake in zip(state, flat[:n_state])}
        with _swapped_state(mod, replacement):
            a, k = pytree.tree_unflatten(list(flat[n_state:]), in_spec)
            out = mod(*a, **k)
        leaves, spec = pytree.tree_flatten(out)
        out_spec.append(spec)
        return tuple(leaves)

    names = ([_fqn_name('p_', fqn) for fqn, _ in params] + [_fqn_name('b_', fqn) for fqn, _, _ in buffers]
             + _user_input_names(mod, args, kwargs))
    tracer = dispatch_trace(flat_fn, state + flat_user, {}, fake_mode or FakeTensorMode(), record_stack_traces=True,
                            placeholder_names=names)
    graph = tracer.graph
    placeholders = [n for n in graph.nodes if n.op == Op.PLACEHOLDER]

    input_specs = [InputSpec(InputKind.PARAMETER, TensorArgument(ph.target), fqn)
                   for ph, (fqn, _) in zip(placeholders, params)]
    input_specs += [InputSpec(InputKind.BUFFER, TensorArgument(ph.target), fqn, persistent)
                    for ph, (fqn, _, persistent) in zip(placeholders[len(params):], buffers)]
    constants = {fqn: t for fqn, t, persistent in buffers if not persistent}
    state_dict = dict([(fqn, t) for fqn, t in params] + [(fqn, t) for fqn, t, p in buffers if p])

    # lift the tensors the forward read from elsewhere: c_lifted_tensor_<i> placeholders after the buffers
    first_user = placeholders[n_state] if len(placeholders) > n_state else None
    lifted = []
    for i, node in enumerate([n for n in graph.nodes if n.op == Op.GET_ATTR]):
        target = f'lifted_tensor_{i}'
        insert = graph.inserting_before(first_user) if first_user is not None else \
            graph.inserting_after(placeholders[-1] if placeholders else None)
        with insert:
            ph = graph.placeholder(f'c_{target}')
        ph.meta = dict(node.meta)
        node.replace_all_uses_with(ph)
        graph.erase_node(node)
        constants[target] = tracer.attrs[node.target]
        lifted.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.target), target))
    input_specs += lifted
    for ph, value in zip(placeholders[n_state:], flat_user):
        arg = TensorArgument(ph.target) if isinstance(value, ember.Tensor) else ConstantArgument(ph.target, value)
        input_specs.append(InputSpec(InputKind.USER_INPUT, arg, None))

    output = next(n for n in graph.nodes if n.op == Op.OUTPUT)
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, _output_arg(a), None) for a in output.args[0]]
    graph.lint()
    return graph, ExportGraphSignature(input_specs, output_specs), state_dict, constants, in_spec, out_spec[0]


def _output_arg(a):
    if isinstance(a, ember.fx.Node):
        return TensorArgument(a.target if a.op == Op.PLACEHOLDER else a.name)
    return ConstantArgument('', a)


def unlift(ep):
    """The graph with the module's state read through ``get_attr`` again and the user's (args, kwargs) as the
    forward's own parameters: what ``ExportedProgram.module()`` runs."""
    from ember.fx import Graph, GraphModule
    src = ep.graph
    g = Graph()
    args_spec, kwargs_spec = ep.call_spec.in_spec.children()
    names = ep._forward_arg_names
    # one placeholder per top-level argument; getitem Nodes take the leaves out of nested ones
    leaves = []
    tops = list(zip(names[:args_spec.num_children], args_spec.children())) + \
        list(zip(kwargs_spec.context or [], kwargs_spec.children()))
    for name, spec in tops:
        ph = g.placeholder(name)
        leaves.extend(_leaf_nodes(g, ph, spec))
    guards = _guards_fn(ep)
    if guards is not None:
        g.call_module('_guards_fn', tuple(leaves))
    env, user = {}, iter(leaves)
    state_kinds = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    src_placeholders = [n for n in src.nodes if n.op == Op.PLACEHOLDER]
    for node, spec in zip(src_placeholders, ep.graph_signature.input_specs):
        if spec.kind in state_kinds:
            env[node] = g.get_attr(spec.target)
        else:
            env[node] = next(user)
    out = None
    for node in src.nodes:
        if node.op == Op.PLACEHOLDER:
            continue
        if node.op == Op.OUTPUT:
            out = ember.fx.map_arg(node.args[0], lambda n: env[n])
            continue
        env[node] = g.node_copy(node, lambda n: env[n])
    g.output(pytree.tree_unflatten(list(out), ep.call_spec.out_spec))
    root = ember.nn.Module()
    transient = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind in state_kinds:
            value = ep.state_dict.get(spec.target, ep.constants.get(spec.target))
            _install(root, spec.target, value)
            if spec.persistent is False or spec.kind == InputKind.CONSTANT_TENSOR:
                transient.append(spec.target)
    if guards is not None:
        root.add_module('_guards_fn', guards)
    gm = GraphModule(root, g)
    for target in transient:       # GraphModule registers every copied tensor as a persistent buffer
        owner, _, name = target.rpartition('.')
        (gm.get_submodule(owner) if owner else gm)._non_persistent_buffers_set.add(name)
    return gm


def _leaf_nodes(g, node, spec):
    if spec.is_leaf():
        return [node]
    keys = spec.context if spec.type in (dict,) else range(spec.num_children)
    out = []
    for key, child in zip(keys, spec.children()):
        out.extend(_leaf_nodes(g, g.call_function(operator.getitem, (node, key)), child))
    return out


def _install(root, target, value):
    *path, name = target.split('.')
    mod = root
    for atom in path:
        if not hasattr(mod, atom):
            mod.add_module(atom, ember.nn.Module())
        mod = getattr(mod, atom)
    if isinstance(value, ember.nn.Parameter):
        mod.register_parameter(name, value)
    else:
        mod.register_buffer(name, value)


def _guards_fn(ep):
    """The input checks of a program with symbolic sizes (NOTE [dynamic export]), or None for a static one (a
    static program's operators check their inputs' shapes as eager mode does)."""
    from .dynamic_shapes import GuardsFn, input_shapes
    from ember.fx.experimental.symbolic_shapes import SymInt
    placeholders = [n for n in ep.graph.nodes if n.op == Op.PLACEHOLDER]
    user = [(ph.target, ph.meta.get('val')) for ph, spec in zip(placeholders, ep.graph_signature.input_specs)
            if spec.kind == InputKind.USER_INPUT]
    if not ep.range_constraints and not any(isinstance(v, ember.Tensor) and any(isinstance(n, SymInt) for n in v.shape)
                                            for _, v in user):
        return None
    return GuardsFn([name for name, _ in user], input_shapes([v for _, v in user]), ep.range_constraints)
