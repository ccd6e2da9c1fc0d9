"""A small pytree for ember.func: tuples, lists, dicts, namedtuples and registered containers of leaves.

torch.func flattens its arguments and results with torch.utils._pytree; this is the part of it the transforms need
(flatten to leaves and a spec, unflatten, map). It lives here, private to ember.func, so that ember.func depends on
nothing below the public API.
"""

from ..utils._pytree import SUPPORTED_NODES


class Spec:
    """How to rebuild a tree: ``kind`` ('leaf', 'tuple', 'list', 'dict', 'namedtuple', 'node': a registered
    container, whose context ``keys`` holds), its type and keys, and the children's specs."""
    __slots__ = ('kind', 'type', 'keys', 'children', 'num_leaves')

    def __init__(self, kind, type_=None, keys=None, children=()):
        self.kind, self.type, self.keys, self.children = kind, type_, keys, tuple(children)
        self.num_leaves = 1 if kind == 'leaf' else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.kind, self.type, self.keys, self.children) == \
            (other.kind, other.type, other.keys, other.children)

    def __repr__(self):
        return '*' if self.kind == 'leaf' else f'{self.kind}({", ".join(map(repr, self.children))})'


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), '_fields')


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves in order and what rebuilds the tree from them."""
    leaves = []

    def go(x):
        if _is_namedtuple(x):
            return Spec('namedtuple', type(x), None, [go(v) for v in x])
        if isinstance(x, tuple):
            return Spec('tuple', None, None, [go(v) for v in x])
        if isinstance(x, list):
            return Spec('list', None, None, [go(v) for v in x])
        if isinstance(x, dict):
            keys = tuple(x)
            return Spec('dict', type(x), keys, [go(x[k]) for k in keys])
        node = _registered(type(x))
        if node is not None:        # a container registered with utils._pytree (tensordict's TensorDict)
            children, context = node.flatten_fn(x)
            return Spec('node', type(x), context, [go(v) for v in children])
        leaves.append(x)
        return Spec('leaf')
    return leaves, go(tree)


def _registered(cls):
    """The node definition of a class registered with ``register_pytree_node``, as torch.func's pytree (that of
    torch.utils._pytree) flattens it; None for any other."""
    return SUPPORTED_NODES.get(cls) if cls not in _BUILTIN else None


_BUILTIN = (tuple, list, dict)


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def go(s):
        if s.kind == 'leaf':
            return next(it)
        vals = [go(c) for c in s.children]
        if s.kind == 'tuple':
            return tuple(vals)
        if s.kind == 'list':
            return vals
        if s.kind == 'namedtuple':
            return s.type(*vals)
        if s.kind == 'node':
            return _registered(s.type).unflatten_fn(vals, s.keys)
        return s.type(zip(s.keys, vals))
    return go(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, is_leaf_value=lambda v: not isinstance(v, (tuple, list, dict))):
    """The leaves of ``prefix`` repeated over the leaves of ``tree`` below it (vmap's in_dims, jvp's structure
    checks): a leaf of ``prefix`` applies to every leaf of the subtree it stands for."""
    out = []

    def go(p, t):
        if is_leaf_value(p):
            out.extend([p] * tree_flatten(t)[1].num_leaves)
            return
        if isinstance(p, dict):
            if not isinstance(t, dict) or set(p) != set(t):
                raise ValueError(f"expected a dict with keys {sorted(t) if isinstance(t, dict) else t!r}, got {p!r}")
            for k in t:
                go(p[k], t[k])
            return
        if not isinstance(t, (tuple, list)) or len(p) != len(t):
            raise ValueError(f"the structure {p!r} does not match the structure of the inputs")
        for a, b in zip(p, t):
            go(a, b)
    go(prefix, tree)
    return out
