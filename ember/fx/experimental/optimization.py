"""``torch.fx.experimental.optimization``: graph rewrites for inference. ``fuse`` folds each BatchNorm that
follows a convolution (or a Linear) into that layer's weights, ``remove_dropout`` drops the Dropout calls; both
work on a symbolic trace of an ``eval()`` model (pytorch/tutorials' fx_conv_bn_fuser does it by hand).

>>> import ember, ember.nn as nn
>>> m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)).eval()
>>> [type(x).__name__ for x in fuse(m).modules()][1:]
['Conv2d']
"""
import copy

import ember.nn as nn
from ember.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from .. import symbolic_trace, GraphModule

__all__ = ['fuse', 'remove_dropout', 'matches_module_pattern', 'replace_node_module', 'fuse_conv_bn_eval',
           'fuse_linear_bn_eval']

_PATTERNS = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d), (nn.Conv3d, nn.BatchNorm3d),
             (nn.Linear, nn.BatchNorm1d)]


def _parent_name(target):
    *parent, name = target.rsplit('.', 1)
    return (parent[0] if parent else ''), name


def matches_module_pattern(pattern, node, modules):
    """Whether ``node`` calls a module of ``pattern[1]`` on the single output of a ``pattern[0]`` module."""
    if len(node.args) == 0:
        return False
    nodes = (node.args[0], node)
    for expected, current in zip(pattern, nodes):
        if not hasattr(current, 'op') or current.op != 'call_module' or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """Put ``new_module`` where ``node``'s target module was (in ``modules`` and in its parent)."""
    parent, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """Conv/BatchNorm (and Linear/BatchNorm1d) pairs of an eval-mode ``model`` folded into one layer each; a
    GraphModule is returned (``model`` itself is changed only with ``inplace=True``)."""
    patterns = _PATTERNS
    if not inplace:
        model = copy.deepcopy(model)
    fx_model = model if no_trace and isinstance(model, GraphModule) else symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in list(graph.nodes):
            if matches_module_pattern(pattern, node, modules):
                if len(node.args[0].users) > 1:      # the layer's output is used elsewhere too
                    continue
                first, bn = modules[node.args[0].target], modules[node.target]
                if not bn.track_running_stats:
                    continue
                fused = (fuse_linear_bn_eval if pattern[0] is nn.Linear else fuse_conv_bn_eval)(first, bn)
                replace_node_module(node.args[0], modules, fused)
                node.replace_all_uses_with(node.args[0])
                graph.erase_node(node)
    return GraphModule(fx_model, graph)


def remove_dropout(model):
    """The traced ``model`` without its Dropout calls (each replaced by its input)."""
    fx_model = symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    for node in list(fx_model.graph.nodes):
        if node.op == 'call_module' and isinstance(modules.get(node.target), nn.Dropout):
            node.replace_all_uses_with(node.args[0])
            fx_model.graph.erase_node(node)
    fx_model.recompile()
    return fx_model
