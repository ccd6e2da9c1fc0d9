"""torchvision.models.feature_extraction: a model's intermediate outputs as a dict, by fx symbolic tracing.

``get_graph_node_names(model)`` traces the model (in train and in eval mode) with ``NodePathTracer`` and names
each graph node by where it happens: the submodule path, then, for a function or method call inside a
submodule's forward, the operation (``layer1.0.relu``, ``layer1.0.add``), with ``_1``, ``_2``... for repeats
inside the same parent, as torchvision names them. ``create_feature_extractor(model, return_nodes)`` traces the
model again, makes the requested nodes (a name picks the last node under that path) the outputs, drops what
they do not need, and returns a module whose forward returns ``{output name: tensor}``; it keeps a train and an
eval graph and runs the one the module's mode picks.

Leaf modules (called, not traced through): ember.nn's own layers, ``FrozenBatchNorm2d`` and ``StochasticDepth``,
and those given as ``tracer_kwargs={'leaf_modules': [...]}``; calls into ``math`` and ``ember.vision.ops`` are
recorded as calls.

>>> import ember
>>> m = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
>>> get_graph_node_names(m)[0]
['x', '0', '1', '2']
>>> fe = create_feature_extractor(m, return_nodes={'1': 'hidden'})
>>> fe(ember.ones(4, 2))['hidden'].shape
ember.Size([4, 3])
"""
import copy
import itertools
import math
import re
import warnings
from collections import OrderedDict

from ember import fx, nn
from ember.fx.graph_module import _copy_attr

from .. import ops

__all__ = ['create_feature_extractor', 'get_graph_node_names']


class LeafModuleAwareTracer(fx.Tracer):
    """A tracer that also treats the modules in ``leaf_modules`` (types) as leaves."""

    def __init__(self, *args, **kwargs):
        self.leaf_modules = kwargs.pop('leaf_modules', {})
        super().__init__(*args, **kwargs)

    def is_leaf_module(self, m, module_qualname):
        if isinstance(m, tuple(self.leaf_modules)):
            return True
        return super().is_leaf_module(m, module_qualname)


class NodePathTracer(LeafModuleAwareTracer):
    """Records, for each node it creates, its qualified name (the module docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.current_module_qualname = ''
        self.node_to_qualname = OrderedDict()

    def call_module(self, m, forward, args, kwargs):
        old = self.current_module_qualname
        try:
            self.current_module_qualname = self.path_of_module(m)
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.current_module_qualname = old

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *_):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
        self.node_to_qualname[proxy.node] = self._get_node_qualname(self.current_module_qualname, proxy.node)
        return proxy

    def _get_node_qualname(self, module_qualname, node):
        qualname = module_qualname
        if node.op != 'call_module':        # a function or method inside the module: append the op's name
            qualname = (qualname + '.' if qualname else '') + str(node)
        # fx numbers repeated names globally (relu_1); the name here is numbered within its parent instead
        if re.match(r'.+_[0-9]+$', qualname) is not None:
            qualname = qualname.rsplit('_', 1)[0]
        for existing in reversed(self.node_to_qualname.values()):
            if re.match(rf'{qualname}(_[0-9]+)?$', existing) is not None:
                postfix = existing.replace(qualname, '')
                qualname += f'_{int(postfix[1:]) + 1 if postfix else 1}'
                break
        return qualname


def _is_subseq(x, y):
    """Whether ``x`` is a subsequence of ``y``."""
    it = iter(y)
    return all(any(x_item == y_item for y_item in it) for x_item in x)


def _warn_graph_differences(train_tracer, eval_tracer):
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    if len(train_nodes) == len(eval_nodes) and all(t == e for t, e in zip(train_nodes, eval_nodes)):
        return
    suggestion = ("When choosing nodes for feature extraction, you may need to specify output nodes for train and "
                  "eval mode separately.")
    if _is_subseq(train_nodes, eval_nodes):
        msg = ("NOTE: The nodes obtained by tracing the model in train mode are a subsequence of those obtained in "
               "eval mode. ")
    elif _is_subseq(eval_nodes, train_nodes):
        msg = ("NOTE: The nodes obtained by tracing the model in eval mode are a subsequence of those obtained in "
               "train mode. ")
    else:
        msg = "The nodes obtained by tracing the model in train mode are different to those obtained in eval mode. "
    warnings.warn(msg + suggestion, stacklevel=3)


def _set_default_tracer_kwargs(original):
    default_autowrap_modules = (math, ops)
    default_leaf_modules = (ops.misc.FrozenBatchNorm2d, ops.misc.StochasticDepth)
    result = {} if original is None else dict(original)
    result['autowrap_modules'] = (tuple(set(result['autowrap_modules'] + default_autowrap_modules))
                                  if 'autowrap_modules' in result else default_autowrap_modules)
    result['leaf_modules'] = (list(set(result['leaf_modules'] + list(default_leaf_modules)))
                              if 'leaf_modules' in result else list(default_leaf_modules))
    return result


def get_graph_node_names(model, tracer_kwargs=None, suppress_diff_warning=False, concrete_args=None):
    """The node names of ``model``'s graph in train mode and in eval mode: ``(train_nodes, eval_nodes)``, for
    ``create_feature_extractor``'s ``return_nodes`` (module docstring)."""
    tracer_kwargs = _set_default_tracer_kwargs(tracer_kwargs)
    is_training = model.training
    train_tracer = NodePathTracer(**tracer_kwargs)
    train_tracer.trace(model.train(), concrete_args=concrete_args)
    eval_tracer = NodePathTracer(**tracer_kwargs)
    eval_tracer.trace(model.eval(), concrete_args=concrete_args)
    if not suppress_diff_warning:
        _warn_graph_differences(train_tracer, eval_tracer)
    model.train(is_training)
    return list(train_tracer.node_to_qualname.values()), list(eval_tracer.node_to_qualname.values())


class DualGraphModule(fx.GraphModule):
    """A GraphModule with a train graph and an eval graph: ``train()``/``eval()`` switch between them."""

    def __init__(self, root, train_graph, eval_graph, class_name='GraphModule'):
        super().__init__(root, train_graph, class_name)
        self.train_graph, self.eval_graph = train_graph, eval_graph
        for node in itertools.chain(train_graph.nodes, eval_graph.nodes):
            if node.op in ('get_attr', 'call_module'):
                if not isinstance(node.target, str):
                    raise TypeError(f"node.target should be of type str instead of {type(node.target)}")
                _copy_attr(root, self, node.target)
        if eval_graph._tracer_cls != train_graph._tracer_cls:
            raise TypeError(f"Train mode and eval mode should use the same tracer class. Instead got "
                            f"{eval_graph._tracer_cls} for eval vs {train_graph._tracer_cls} for train")
        self.training = True
        self.graph = train_graph

    def train(self, mode=True):
        if mode and not self.training:
            self.graph = self.train_graph
        elif not mode and self.training:
            self.graph = self.eval_graph
        return super().train(mode=mode)


def _to_strdict(n):
    if isinstance(n, list):
        return {str(i): str(i) for i in n}
    return {str(k): str(v) for k, v in n.items()}


def _check_return_nodes(return_nodes, train_return_nodes, eval_return_nodes):
    if all(arg is None for arg in (return_nodes, train_return_nodes, eval_return_nodes)):
        raise ValueError("Either `return_nodes` or `train_return_nodes` and `eval_return_nodes` together, should be "
                         "specified")
    if (train_return_nodes is None) ^ (eval_return_nodes is None):
        raise ValueError("If any of `train_return_nodes` and `eval_return_nodes` are specified, then both should be "
                         "specified")
    if not ((return_nodes is None) ^ (train_return_nodes is None)):
        raise ValueError("If `train_return_nodes` and `eval_return_nodes` are specified, then both should be "
                         "specified")


def _rewrite_outputs(tracer, graph_module, wanted):
    """Make the nodes ``wanted`` names (query -> output name) the graph's outputs, and drop the rest."""
    available = list(tracer.node_to_qualname.values())
    if len(set(available)) != len(available):
        raise ValueError("There are duplicate nodes! Please raise an issue https://github.com/pytorch/vision/issues")
    for query in wanted:
        if not any(re.match(rf'^{query}(\.|$)', n) is not None for n in available):
            raise ValueError(f"node: '{query}' is not present in model. Hint: use `get_graph_node_names` to make sure "
                             f"the `return_nodes` you specified are present. It may even be that you need to specify "
                             f"`train_return_nodes` and `eval_return_nodes` separately.")
    graph = graph_module.graph
    outputs = [n for n in reversed(graph.nodes) if n.op == 'output']
    if not outputs:
        raise ValueError("No output nodes found in graph_module.graph.nodes")
    for n in outputs:
        graph.erase_node(n)
    nodes, found = list(graph.nodes), OrderedDict()
    for n in reversed(nodes):
        qualname = tracer.node_to_qualname.get(n)
        if qualname is None:
            continue            # a tensor constant, or a named tuple packing outputs
        for query in list(wanted):
            if '.'.join(qualname.split('.')[:query.count('.') + 1]) == query:
                found[wanted.pop(query)] = n
                break
    with graph.inserting_after(nodes[-1]):
        graph.output(OrderedDict(reversed(list(found.items()))))
    graph.eliminate_dead_code()
    graph_module.recompile()


def create_feature_extractor(model, return_nodes=None, train_return_nodes=None, eval_return_nodes=None,
                             tracer_kwargs=None, suppress_diff_warning=False, concrete_args=None):
    """A module running ``model`` up to the nodes in ``return_nodes`` (a list of node names, or a dict from node
    name to output name; or ``train_return_nodes`` and ``eval_return_nodes`` for the two modes) and returning
    ``{output name: value}`` (module docstring)."""
    tracer_kwargs = _set_default_tracer_kwargs(tracer_kwargs)
    is_training = model.training
    _check_return_nodes(return_nodes, train_return_nodes, eval_return_nodes)
    if train_return_nodes is None:
        train_return_nodes = _to_strdict(return_nodes)
        eval_return_nodes = copy.deepcopy(train_return_nodes)
    else:
        train_return_nodes, eval_return_nodes = _to_strdict(train_return_nodes), _to_strdict(eval_return_nodes)
    tracers, graphs = {}, {}
    name = model.__class__.__name__ if isinstance(model, nn.Module) else model.__name__
    for mode, wanted in (('train', train_return_nodes), ('eval', eval_return_nodes)):
        model.train(mode == 'train')
        tracer = NodePathTracer(**tracer_kwargs)
        graph = tracer.trace(model, concrete_args=concrete_args)
        _rewrite_outputs(tracer, fx.GraphModule(tracer.root, graph, name), dict(wanted))
        tracers[mode], graphs[mode] = tracer, graph
    if not suppress_diff_warning:
        _warn_graph_differences(tracers['train'], tracers['eval'])
    graph_module = DualGraphModule(model, graphs['train'], graphs['eval'], class_name=name)
    model.train(is_training)
    graph_module.train(is_training)
    return graph_module
