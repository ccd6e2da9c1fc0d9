"""Find the places where a pattern graph occurs in a graph (torch.fx.passes.utils.matcher_utils).

A match starts at the pattern's anchors (the nodes it returns that nothing else in the pattern uses) and
walks their arguments backwards; a pattern placeholder matches any value. A match whose inner nodes are
used outside it, or that overlaps an earlier match, is dropped.
"""
import copy

from ...node import Node, Op

__all__ = ['InternalMatch', 'SubgraphMatcher']


class InternalMatch:
    """One occurrence of a pattern: ``nodes_map`` maps pattern Nodes to graph Nodes (or, for a placeholder
    matched by a literal, that value); ``placeholder_nodes`` and ``returning_nodes`` are the graph's values
    for the pattern's inputs and outputs."""

    def __init__(self, anchors, nodes_map=None, placeholder_nodes=None, returning_nodes=None,
                 name_node_map=None):
        self.anchors = anchors
        self.nodes_map = {} if nodes_map is None else nodes_map
        self.placeholder_nodes = [] if placeholder_nodes is None else placeholder_nodes
        self.returning_nodes = [] if returning_nodes is None else returning_nodes
        self.name_node_map = {} if name_node_map is None else name_node_map

    def __copy__(self):
        return InternalMatch(self.anchors, dict(self.nodes_map), list(self.placeholder_nodes),
                             list(self.returning_nodes), dict(self.name_node_map))

    def __repr__(self):
        return (f'InternalMatch(anchors={self.anchors}, nodes_map={self.nodes_map}, placeholder_nodes='
                f'{self.placeholder_nodes}, returning_nodes={self.returning_nodes})')


class SubgraphMatcher:
    """Matches ``pattern`` (a Graph) against graphs."""

    def __init__(self, pattern, match_output=False, match_placeholder=False, remove_overlapping_matches=True,
                 ignore_literals=False):
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError('SubgraphMatcher cannot be initialized with an empty pattern')
        for node in pattern.nodes:
            if node.op != Op.OUTPUT and not node.users:
                raise ValueError('SubgraphMatcher cannot be initialized with an pattern with dead code')
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == Op.PLACEHOLDER]
        output = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes = output.all_input_nodes
        if match_output:
            self.pattern_anchors = [output]
        else:
            self.pattern_anchors = [n for n in output.all_input_nodes if len(n.users) == 1]

    def _match_attributes(self, pn, gn):
        pm, gm = pn.graph.owning_module, gn.graph.owning_module
        if pm is None or gm is None:
            return pn.target == gn.target
        pa, ga = _fetch(pm, pn.target), _fetch(gm, gn.target)
        return type(pa) is type(ga) and (pa is ga or getattr(pa, 'shape', None) == getattr(ga, 'shape', None))

    def _nodes_are_equal(self, pn, gn):
        if not self.match_placeholder and pn.op == Op.PLACEHOLDER:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in (Op.PLACEHOLDER, Op.OUTPUT):
            return True
        if pn.op == Op.GET_ATTR:
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    def _match_literals(self, pn, gn, match):
        if isinstance(pn, Node) and not isinstance(gn, Node):
            if pn.op == Op.PLACEHOLDER:
                if pn in match.nodes_map:
                    return match.nodes_map[pn] == gn
                match.nodes_map[pn] = gn
                return True
            return False
        if not isinstance(pn, Node) and isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match):
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if any(v is gn for v in match.nodes_map.values()):
            return False            # a graph node plays one pattern node only
        if not self._nodes_are_equal(pn, gn):
            return False
        saved = dict(match.nodes_map)
        match.nodes_map[pn] = gn
        if pn.op == Op.PLACEHOLDER:
            return True

        def match_args(a1, a2):
            if len(a1) != len(a2):
                return False
            for x, y in zip(a1, a2):
                if isinstance(x, Node) and isinstance(y, Node):
                    ok = self._match_nodes(x, y, match)
                elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
                    ok = match_args(x, y)
                else:
                    ok = self._match_literals(x, y, match) or self.ignore_literals
                if not ok:
                    return False
            return True
        if list(pn.kwargs) != list(gn.kwargs) or not match_args(list(pn.args) + list(pn.kwargs.values()),
                                                                 list(gn.args) + list(gn.kwargs.values())):
            match.nodes_map.clear()
            match.nodes_map.update(saved)
            return False
        return True

    def _is_contained(self, nodes_map):
        inner = {gn: pn for pn, gn in nodes_map.items() if pn.op != Op.PLACEHOLDER and isinstance(gn, Node)}
        for gn, pn in inner.items():
            if pn in self.pattern_returning_nodes:
                continue            # the pattern's results may be used anywhere
            if any(user not in inner for user in gn.users):
                return False
        return True

    def _remove_overlapping(self, matches):
        kept, taken = [], set()
        for m in matches:
            inner = [gn for pn, gn in m.nodes_map.items() if pn.op not in (Op.PLACEHOLDER, Op.OUTPUT)]
            if any(gn in taken for gn in inner):
                continue
            kept.append(m)
            taken.update(inner)
        return kept

    def match(self, graph):
        """Every occurrence of the pattern in ``graph``, as InternalMatch objects, in graph order."""
        candidates = []
        for anchor in self.pattern_anchors:
            candidates.append((anchor, [n for n in graph.nodes if self._nodes_are_equal(anchor, n)]))
        matches = []

        def backtrack(i, match):
            if i == len(candidates):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[i]
            for node in nodes:
                attempt = copy.copy(match)
                if self._match_nodes(anchor, node, attempt):
                    backtrack(i + 1, attempt)

        if candidates:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping(matches)
        return matches


def _fetch(mod, target):
    for atom in target.split('.'):
        mod = getattr(mod, atom)
    return mod
