"""torch.utils._pytree: flatten nested Python containers of tensors into a list of leaves and back.

A ``TreeSpec`` records the containers (tuple, list, dict, namedtuple, None) and ``LeafSpec`` marks a leaf;
``tree_unflatten(leaves, spec)`` rebuilds the structure. make_fx and ember.export flatten their inputs and
outputs with it, as torch's do, so that a graph has one placeholder per tensor.

>>> leaves, spec = tree_flatten((1, {'a': [2, 3]}, None))
>>> leaves
[1, 2, 3]
>>> tree_unflatten([4, 5, 6], spec)
(4, {'a': [5, 6]}, None)
"""
import collections

__all__ = ['TreeSpec', 'LeafSpec', 'tree_flatten', 'tree_unflatten', 'tree_map', 'tree_leaves']


class TreeSpec:
    """The shape of a container: its type, its context (dict keys, namedtuple class) and its children's specs."""

    def __init__(self, type, context, children_specs):
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and not other.is_leaf() and self.type is other.type
                and self.context == other.context and self.children_specs == other.children_specs)

    def __repr__(self):
        name = self.type.__name__
        return f'TreeSpec({name}, {self.context!r}, [{", ".join(map(repr, self.children_specs))}])'


class LeafSpec(TreeSpec):
    def __init__(self):
        self.type, self.context, self.children_specs, self.num_leaves = None, None, [], 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __repr__(self):
        return '*'


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), '_fields')


def _children(tree):
    """(children, context) of a container, or None for a leaf."""
    if tree is None:
        return [], None
    if _is_namedtuple(tree):
        return list(tree), None
    if isinstance(tree, (tuple, list)):      # subclasses too (fx's immutable_list): as the plain container
        return list(tree), None
    if isinstance(tree, dict):
        keys = list(tree)
        return [tree[k] for k in keys], keys
    return None


def _container_type(tree):
    if _is_namedtuple(tree) or type(tree) in (tuple, list, dict, collections.OrderedDict):
        return type(tree)
    for base in (tuple, list, dict):
        if isinstance(tree, base):
            return base
    return type(tree)


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in depth-first order and the structure around them."""
    leaves = []

    def go(t):
        ch = _children(t)
        if ch is None:
            leaves.append(t)
            return LeafSpec()
        children, context = ch
        return TreeSpec(_container_type(t), None if _is_namedtuple(t) else context, [go(c) for c in children])
    return leaves, go(tree)


def tree_unflatten(leaves, spec):
    """The structure ``spec`` describes, filled with ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f'tree_unflatten(leaves, treespec): `leaves` has length {len(leaves)} but the spec '
                         f'refers to a pytree that holds {spec.num_leaves} items ({spec}).')
    it = iter(leaves)

    def go(s):
        if s.is_leaf():
            return next(it)
        children = [go(c) for c in s.children_specs]
        if s.type is type(None):
            return None
        if issubclass(s.type, tuple) and hasattr(s.type, '_fields'):
            return s.type(*children)
        if s.type in (dict, collections.OrderedDict):
            return s.type(zip(s.context, children))
        return s.type(children)
    return go(spec)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
