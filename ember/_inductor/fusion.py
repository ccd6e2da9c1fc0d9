"""Fusion of pointwise chains into one blocked kernel.

NOTE [blocked fusion]: NumPy runs one operator at a time over the whole array, so a chain of pointwise
operators (a GELU written out as ``0.5 * x * (1 + tanh(c * (x + 0.044715 * x**3)))``, an optimizer's
update, a loss's elementwise tail) reads and writes every intermediate array in full: with arrays larger
than the cache each step is a trip to memory. A fused kernel evaluates the whole chain on one block of
elements at a time (64K elements, cache-sized), so the intermediates live in cache and only the chain's
inputs and its result touch memory; the blocks are shared out among ember's intra-op threads
(``parallel_for``: NumPy's ufuncs release the GIL), which puts large pointwise work on every core.

A group is a tree of functional pointwise operators, all with the same static shape, in which every value
but the last is used only inside the group (so nothing else ever needs the full intermediate array); the
group's inputs are arrays of that same shape (read as flat contiguous blocks), 0-d arrays or Python
scalars. Each operator inside still calls the CPU backend's own array kernel, with the same casts as
unfused code, so the results are bit for bit those of the unfused graph. Chains whose arrays fit in one
block run as one call without the loop overhead mattering.
"""

from .._core.dispatch_key import DispatchKey
from .._dispatch.dispatcher import OpOverload
from .._dispatch.modes import ember_overload

_CPU = DispatchKey.CPU
BLOCK = 65536

__all__ = ['fusion_groups', 'BLOCK']


def _is_node(a):
    return hasattr(a, 'op') and hasattr(a, 'users')


def target(n):
    """The operator the generated code runs for node ``n``: ember's own where the graph names torch's overload
    for the call (``gt.Scalar`` -> ``gt.Tensor``, ``sum.default`` -> ``sum.dim_IntList``: NOTE [boxed
    arguments]; the arguments are the same)."""
    return ember_overload(n.target) or n.target


def _fusable(n):
    op = target(n)
    if n.op != 'call_function' or not isinstance(op, OpOverload):
        return False
    decl = op.decl
    if decl is None or op is not decl.op or decl.kind != 'pointwise':
        return False
    if getattr(op.kernels.get(_CPU), 'array_fn', None) is None:
        return False
    v = n.meta.get('val')
    return (v is not None and v.dim() > 0 and all(d.__class__ is int for d in v.shape) and v.is_contiguous()
            and not n.kwargs and 'nondeterministic_seeded' not in op.tags)


def _is_broadcast_scalar(v):
    """One value expanded to a shape (every stride 0): a gradient of a sum, broadcast back."""
    return v.dim() > 0 and all(st == 0 for st in v.stride())


def _fits(n, shape):
    """Whether each tensor input of ``n`` is the group's shape (contiguous) or 0-d."""
    for a in n.all_input_nodes:
        v = a.meta.get('val')
        if v is None or not hasattr(v, 'shape'):
            return False
        if v.dim() == 0 or _is_broadcast_scalar(v):
            continue
        if tuple(v.shape) != shape or not v.is_contiguous():
            return False
    return True


def fusion_groups(graph):
    """Groups of nodes to fuse (each a list in graph order, the last one the group's result): see NOTE
    [blocked fusion]."""
    nodes = list(graph.nodes)
    outputs = set(nodes[-1].all_input_nodes) if nodes and nodes[-1].op == 'output' else set()
    group_of = {}
    groups = []
    epoch, epoch_of = 0, {}
    for n in nodes:
        # a group computes its values where its last node stands: it must not reach back across an operator
        # that writes memory (a value read inside could change in between)
        if n.op == 'call_function' and getattr(getattr(n.target, 'schema', None), 'is_mutable', False):
            epoch += 1
        if n.op == 'call_function' and not isinstance(n.target, OpOverload) and n.target.__module__ != '_operator':
            epoch += 1
        epoch_of[n] = epoch
        if not _fusable(n):
            continue
        shape = tuple(n.meta['val'].shape)
        if not _fits(n, shape):
            continue
        # inputs that may join: fusable producers of the same shape used only here, not graph outputs
        joinable = [a for a in n.all_input_nodes
                    if a in group_of and len(a.users) == 1 and a not in outputs
                    and tuple(a.meta['val'].shape) == shape and epoch_of[group_of[a][0]] == epoch]
        if not joinable:
            g = [n]
            groups.append(g)
            group_of[n] = g
            continue
        g = []
        for a in joinable:
            ga = group_of[a]
            if ga and ga[-1] is a:           # a is its group's result: the group feeds n
                g.extend(ga)
                ga.clear()
        g.append(n)
        g.sort(key=nodes.index)
        groups.append(g)
        for x in g:
            group_of[x] = g
    return [g for g in groups if len(g) >= 2]
