"""Graph passes run before code generation: dead-code elimination, common-subexpression elimination and
constant folding, on the aten graph (each returns how many nodes it changed, for the logs)."""
import operator

from .._dispatch.dispatcher import OpOverload

__all__ = ['dce', 'cse', 'fold_constants']

_UNINITIALISED = ('empty', 'empty_like', 'empty_strided')      # equal arguments, different memory


def _pure(node):
    """An operator call whose value depends only on its arguments and that writes nothing."""
    if node.op != 'call_function':
        return False
    t = node.target
    if t is operator.getitem:
        return True
    if not isinstance(t, OpOverload) or t.schema.is_mutable:
        return False
    return 'nondeterministic_seeded' not in t.tags and t.schema.name not in _UNINITIALISED


def dce(graph):
    before = len(graph.nodes)
    graph.eliminate_dead_code()
    return before - len(graph.nodes)


def _key(x):
    if hasattr(x, 'op') and hasattr(x, 'users'):
        return ('node', id(x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_key(e) for e in x)
    if isinstance(x, dict):
        return ('dict',) + tuple((k, _key(v)) for k, v in sorted(x.items()))
    if isinstance(x, float) and x != x:
        return ('nan',)
    try:
        hash(x)
        return (type(x).__name__, x)
    except TypeError:
        return ('id', id(x))


def cse(graph):
    """Replace a pure node by an earlier one with the same target and arguments. Values are only merged
    between mutations: an in-place operator anywhere clears the table (its target may be read by both)."""
    seen, n_merged = {}, 0
    for node in list(graph.nodes):
        if node.op == 'call_function' and isinstance(node.target, OpOverload) and node.target.schema.is_mutable:
            seen.clear()
            continue
        if not _pure(node):
            continue
        key = (node.target, _key(node.args), _key(node.kwargs))
        prev = seen.get(key)
        if prev is None:
            seen[key] = node
            continue
        node.replace_all_uses_with(prev)
        graph.erase_node(node)
        n_merged += 1
    return n_merged


def fold_constants(graph, attrs):
    """Evaluate pure nodes whose inputs are all literals (a causal mask built with ``ones``/``tril``, a
    ``arange`` of positions) once, at compile time; the value becomes a constant the graph reads. Parameters
    and buffers are not constants: they change between calls."""
    import ember
    folded, values = 0, {}
    for node in list(graph.nodes):
        if not _pure(node) or node.target is operator.getitem:
            continue
        if any(a not in values for a in node.all_input_nodes):
            continue
        val = node.meta.get('val')
        if val is None or not isinstance(val, ember.Tensor):
            continue

        def real(a):
            if hasattr(a, 'op') and hasattr(a, 'users'):
                return values[a]
            if isinstance(a, (list, tuple)):
                return type(a)(real(e) for e in a)
            if isinstance(a, ember.device) and a.type == 'meta':
                return ember.device('cpu')
            return a
        kwargs = {k: real(v) for k, v in node.kwargs.items()}
        if kwargs.get('device') is not None and getattr(kwargs['device'], 'type', None) == 'meta':
            kwargs['device'] = ember.device('cpu')
        with ember.no_grad():
            r = node.target(*real(node.args), **kwargs)
        values[node] = r
    for node, r in values.items():
        if not node.users or all(u in values for u in node.users):
            continue
        name = f'_folded{len(attrs)}'
        attrs[name] = r
        with graph.inserting_before(node):
            new = graph.create_node('get_attr', name)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new, delete_user_cb=lambda u: u not in values)
        folded += 1
    graph.eliminate_dead_code()
    return folded
