"""split_module: cut a GraphModule into submodules by a per-node partition id (torch.fx.passes.split_module).

``split_callback(node)`` names each node's partition; each partition becomes a GraphModule ``submod_<id>``
whose inputs are the values it uses from elsewhere and whose outputs are the values used elsewhere, and the
returned module calls the partitions in dependency order.
"""
import inspect

import ember

from ..graph import Graph
from ..graph_module import GraphModule
from ..node import Op, map_arg
from ..proxy import Proxy

__all__ = ['Partition', 'split_module']


class Partition:
    def __init__(self, name):
        self.name = name
        self.submod_name = f'submod_{name}'
        self.node_names = []
        self.inputs = {}
        self.outputs = {}
        self.dependencies = {}
        self.dependents = {}
        self.graph = Graph()
        self.environment = {}
        self.targets = {}

    def __repr__(self):
        return (f'name: {self.name},\n nodes: {self.node_names},\n inputs: {self.inputs},\n outputs: '
                f'{self.outputs},\n partitions depended on: {self.dependencies},\n partition dependents: '
                f'{self.dependents}')


def _attr(mod, qualname):
    for atom in qualname.split('.'):
        if not hasattr(mod, atom):
            raise AttributeError(f'{mod} has no attribute {atom}')
        mod = getattr(mod, atom)
    return mod


def split_module(m, root_m, split_callback, qualname_map=None, keep_original_order=False,
                 keep_original_node_name=False, keep_original_input_name=True):
    """Split ``m`` into ``submod_<id>`` GraphModules by ``split_callback(node)``; ``root_m`` is the module
    the submodules and attributes are taken from. ``qualname_map`` (a dict) receives the new qualified
    name of every submodule and attribute moved."""
    partitions, part_of, orig_nodes = {}, {}, {}

    def cross_use(def_node, use_node):
        defined = part_of.get(def_node.name)
        used = part_of.get(use_node.name) if use_node is not None else None
        if defined != used:
            if defined is not None:
                partitions[defined].outputs.setdefault(def_node.name)
                if used is not None:
                    partitions[defined].dependents.setdefault(used)
            if used is not None:
                partitions[used].inputs.setdefault(def_node.name)
                if defined is not None:
                    partitions[used].dependencies.setdefault(defined)

    for node in m.graph.nodes:
        orig_nodes[node.name] = node
        if node.op in (Op.PLACEHOLDER, Op.GET_ATTR):
            continue
        if node.op == Op.OUTPUT:
            map_arg(node.args[0], lambda n: cross_use(n, None))
            continue
        name = str(split_callback(node))
        partitions.setdefault(name, Partition(name)).node_names.append(node.name)
        part_of[node.name] = name
        map_arg(node.args, lambda d: cross_use(d, node))
        map_arg(node.kwargs, lambda d: cross_use(d, node))

    original_order = list(partitions)
    roots = [n for n, p in partitions.items() if not p.dependencies]
    pending = {n: dict(p.dependencies) for n, p in partitions.items()}
    ordered = []
    while roots:
        r = roots.pop()
        ordered.append(r)
        for dep in partitions[r].dependents:
            pending[dep].pop(r)
            if not pending[dep]:
                roots.append(dep)
    if len(ordered) != len(partitions):
        raise RuntimeError('cycle exists between partitions!')

    for name in ordered:                    # each partition's inputs become its placeholders
        part = partitions[name]
        new_inputs = {}
        for inp in part.inputs:
            orig = orig_nodes[inp]
            if orig.op == Op.GET_ATTR and isinstance(_attr(m, orig.target), ember.nn.Module):
                ph = part.graph.get_attr(orig.target)
                part.targets[orig.target] = _attr(m, orig.target)
            else:
                ph = part.graph.placeholder(inp, type_expr=orig.type)
                new_inputs[inp] = None
            ph.meta = dict(orig.meta)
            part.environment[orig] = ph
        part.inputs = new_inputs

    for node in m.graph.nodes:              # each node into its partition's graph
        name = part_of.get(node.name)
        if name is None:
            continue
        part = partitions[name]
        env = part.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if node.op in (Op.CALL_MODULE, Op.GET_ATTR):
            target = node.target.replace('.', '_')
            part.targets[target] = _attr(root_m, node.target)
            if qualname_map is not None:
                qualname_map[f'{part.submod_name}.{target}'] = node.target
        new = part.graph.create_node(node.op, target, args, kwargs, type_expr=node.type,
                                     name=node.name if keep_original_node_name else None)
        new.meta = dict(node.meta)
        env[node] = new

    base = Graph()
    base_env, base_attrs = {}, {}
    for node in m.graph.nodes:
        if node.op == Op.PLACEHOLDER:
            default = node.args[0] if node.args else inspect.Signature.empty
            if keep_original_input_name:
                args = () if default is inspect.Signature.empty else (default,)
                base_env[node.name] = base.create_node(Op.PLACEHOLDER, node.name, args=args, type_expr=node.type)
            else:
                base_env[node.name] = base.placeholder(node.target, type_expr=node.type, default_value=default)
            base_env[node.name].meta = dict(node.meta)
        elif node.op == Op.GET_ATTR:
            base_env[node.name] = base.get_attr(node.target)
            base_env[node.name].meta = dict(node.meta)
            base_attrs[node.target] = _attr(m, node.target)

    for name in (ordered if not keep_original_order else original_order):
        part = partitions[name]
        outs = tuple(part.environment[orig_nodes[n]] for n in part.outputs)
        part.graph.output(outs[0] if len(outs) == 1 else outs)
        base_attrs[part.submod_name] = GraphModule(part.targets, part.graph)
        call = base.call_module(part.submod_name, tuple(base_env[n] for n in part.inputs))
        if len(part.outputs) > 1:
            proxy = Proxy(call)
            for i, out_name in enumerate(part.outputs):
                base_env[out_name] = proxy[i].node
        elif len(part.outputs) == 1:
            base_env[next(iter(part.outputs))] = call

    for node in m.graph.nodes:
        if node.op == Op.OUTPUT:
            base.output(map_arg(node.args[0], lambda n: base_env[n.name]))
    return GraphModule(base_attrs, base)
