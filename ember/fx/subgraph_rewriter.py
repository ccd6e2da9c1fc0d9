"""Replace every occurrence of a pattern in a GraphModule with a replacement (torch.fx.subgraph_rewriter).

The pattern and the replacement are functions (traced here), Graphs or GraphModules with the same inputs;
each non-overlapping match whose inner values are used nowhere else is replaced, the replacement's nodes
inserted before the first user of the pattern's result.
"""
import copy
from dataclasses import dataclass, field
from typing import NamedTuple

import ember

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, Op
from .passes.utils.matcher_utils import SubgraphMatcher

__all__ = ['Match', 'ReplacedPatterns', 'replace_pattern', 'replace_pattern_with_filters']


class Match(NamedTuple):
    anchor: Node            # the pattern node the match was found from
    nodes_map: dict         # pattern node -> graph node


@dataclass
class ReplacedPatterns:
    anchor: Node
    nodes_map: dict
    replacements: list = field(default_factory=list)    # the nodes inserted into the graph


def _graph_of(obj):
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    from ._symbolic_trace import symbolic_trace
    return symbolic_trace(obj).graph


def _copy_missing_attributes(gm, replacement):
    """Submodules and attributes the replacement module's graph reads, copied into ``gm`` when missing."""
    for node in gm.graph.nodes:
        if node.op in (Op.CALL_MODULE, Op.GET_ATTR) and not _has(gm, node.target) and _has(replacement, node.target):
            obj = replacement
            for atom in node.target.split('.'):
                obj = getattr(obj, atom)
            if isinstance(obj, ember.nn.Module):
                gm.add_submodule(node.target, copy.deepcopy(obj))
            else:
                *prefix, last = node.target.split('.')
                owner = gm
                for atom in prefix:
                    owner = getattr(owner, atom)
                setattr(owner, last, copy.deepcopy(obj))


def _has(mod, target):
    for atom in target.split('.'):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True


def replace_pattern(gm, pattern, replacement):
    """Replace each occurrence of ``pattern`` in ``gm``'s graph with ``replacement``; returns the Matches.

    >>> import ember, ember.fx as fx
    >>> gm = fx.symbolic_trace(lambda x: ember.relu(x) * 2)
    >>> _ = fx.replace_pattern(gm, lambda x: ember.relu(x), lambda x: ember.sigmoid(x))
    >>> [n.name for n in gm.graph.nodes]
    ['x', 'sigmoid', 'mul', 'output']
    """
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                                 replacement_callback=None):
    """``replace_pattern`` keeping only the matches every ``match_filters`` function accepts
    (``filter(match, original_graph, pattern_graph)``); ``replacement_callback(match, original_graph,
    pattern_graph)`` may give each match its own replacement graph."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback)


def _replace_pattern(gm, pattern, replacement, match_filters=None, ignore_literals=False, replacement_callback=None):
    graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matcher = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True, ignore_literals=ignore_literals)
    matches = [m for m in matcher.match(graph)
               if all(f(m, graph, pattern_graph) for f in (match_filters or []))]
    common = _graph_of(replacement) if replacement is not None else None
    if common is None and replacement_callback is None:
        raise ValueError('replace_pattern needs a replacement or a replacement_callback')
    changed = {}            # graph node -> the node that replaced it (an earlier match's result)
    done = []
    for match in matches:
        rgraph = replacement_callback(match, graph, pattern_graph) if replacement_callback else common
        r_placeholders = [n for n in rgraph.nodes if n.op == Op.PLACEHOLDER]
        if len(r_placeholders) != len(match.placeholder_nodes):
            raise AssertionError('the replacement must take as many inputs as the pattern')
        val_map = {}
        for rn, gn in zip(r_placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                new = changed.get(gn, gn)
                if new is not gn:
                    match.placeholder_nodes[match.placeholder_nodes.index(gn)] = new
                    for k, v in match.nodes_map.items():
                        if v is gn:
                            match.nodes_map[k] = new
                val_map[rn] = new
            else:
                val_map[rn] = gn
        users = {u for n in match.returning_nodes for u in n.users}
        insert_point = next((n for n in graph.nodes if n in users), None)
        if insert_point is None:        # results unused: insert after the last of them
            nxt = None
            for n in reversed(graph.nodes):
                if n in match.returning_nodes:
                    insert_point = nxt
                    break
                nxt = n
        with graph.inserting_before(insert_point):
            copied = graph.graph_copy(rgraph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        placeholders = {id(p) for p in match.placeholder_nodes}
        replacements = [v for v in val_map.values() if isinstance(v, Node) and id(v) not in placeholders]
        if len(copied) != len(match.returning_nodes):
            raise AssertionError('the replacement must return as many values as the pattern')
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in (Op.PLACEHOLDER, Op.OUTPUT):
                graph.erase_node(match.nodes_map[pn])
        done.append(ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=replacements))
    gm.recompile()
    if isinstance(replacement, ember.nn.Module):
        _copy_missing_attributes(gm, replacement)
    return done
