"""Buffer planning: which intermediate arrays of a generated graph live in buffers reused across calls.

NOTE [buffer planning]: NumPy allocates a fresh array for every operator result; for a training step's
elementwise work (GELU and its backward, layer norm's pieces, the optimizer's arithmetic) the allocation and
the page faults of first touch cost as much as the arithmetic. A graph knows every intermediate's shape,
dtype and last use, so it can do what a static memory planner does:

1. the *root* of a value is the array that owns its memory: a view's root is its input's, an in-place
   operator's result is its target's; an operator the planner does not understand (a fallback) may alias
   any input, so its value is rooted in all of them;
2. a root that reaches the graph's output (a result, or a tensor saved for the backward graph) escapes:
   the caller keeps it, so it must be a fresh array each call, never a buffer;
3. every other pointwise result gets a slot, a buffer kept between calls; walking the graph in order, a slot
   is free again once the last use of every value rooted in it has run, and a later result of the same
   shape and dtype reuses it (a NumPy ufunc may even write into the input it reads, so a chain of ufuncs
   runs in one buffer).

The slots are allocated at a thread's first call and live as long as the compiled graph (one set per thread).
"""
import threading

import numpy as np

from .._core.dispatch_key import DispatchKey
from .._dispatch.dispatcher import OpOverload
from .fusion import target

_CPU = DispatchKey.CPU


class Plan:
    def __init__(self):
        self.slots = {}          # node -> slot variable name
        self.specs = []          # slot -> (shape, numpy dtype)

    @property
    def count(self):
        return len(self.specs)

    @property
    def names(self):
        return [f'_buf{i}' for i in range(len(self.specs))]

    def allocator(self):
        return _Allocator(self.specs)


class _Allocator:
    """The planned buffers, one set per thread: two threads running the same compiled graph at once must
    not share intermediate arrays."""

    def __init__(self, specs):
        self.specs = specs
        self.local = threading.local()

    def get(self):
        arrays = getattr(self.local, 'arrays', None)
        if arrays is None:
            arrays = self.local.arrays = tuple(np.empty(s, d) for s, d in self.specs)
        return arrays


def _is_node(a):
    return hasattr(a, 'op') and hasattr(a, 'users')


def _flat_nodes(a, out):
    if _is_node(a):
        out.append(a)
    elif isinstance(a, (list, tuple)):
        for e in a:
            _flat_nodes(e, out)
    elif isinstance(a, dict):
        for e in a.values():
            _flat_nodes(e, out)
    return out


def _array_fn(op):
    fn = getattr(op.kernels.get(_CPU), 'array_fn', None)
    return getattr(fn, '__wrapped__', fn)      # the kernel inside the quiet wrapper (codegen._raw)


def bufferable(node):
    """A functional pointwise operator whose kernel can write into a given array."""
    op = target(node)
    if node.op != 'call_function' or not isinstance(op, OpOverload):
        return False
    decl = op.decl
    if decl is None or op is not decl.op or decl.kind != 'pointwise':
        return False
    fn = _array_fn(op)
    if fn is None:
        return False
    from .._ops.adapters import accepts_out
    v = node.meta.get('val')
    return (accepts_out(fn) and v is not None and v.dim() > 0 and all(d.__class__ is int for d in v.shape)
            and v.numel() > 0)          # a symbolic size (NOTE [symbolic sizes]) has no fixed buffer


def _own_memory(node):
    """Whether a call_function node's value is a fresh array (not a view, not an in-place target, not a
    fallback that might alias its inputs)."""
    op = target(node)
    if not isinstance(op, OpOverload) or op.decl is None:
        return False
    decl = op.decl
    if op is not decl.op:
        return False            # in-place or out= variant: the target's memory
    if decl.kind == 'view':
        return False
    return _array_fn(op) is not None


def plan(graph, skip=(), moved=None):
    """The buffer plan of ``graph``; ``skip``: nodes that get no buffer (computed inside a fused kernel);
    ``moved``: node -> the node where it really runs (a fused node runs where its group's result stands, so
    its reads of other values happen there)."""
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    if moved:
        for n, at in moved.items():
            index[n] = index[at]
    roots = {}
    for n in nodes:
        if n.op == 'call_function' and _own_memory(n):
            roots[n] = {n}
        elif n.op in ('call_function', 'call_method', 'call_module'):
            rs = set()
            for a in _flat_nodes((n.args, n.kwargs), []):
                rs |= roots.get(a, set())
            roots[n] = rs | {n}
        else:
            roots[n] = {n}
    escaped = set()
    last = {}
    for n in nodes:
        for a in _flat_nodes((n.args, n.kwargs), []):
            for r in roots.get(a, ()):
                last[r] = max(last.get(r, index[n]), index[n])
                if n.op == 'output':
                    escaped.add(r)
        for r in roots[n]:
            last[r] = max(last.get(r, index[n]), index[n])
    p = Plan()
    free = []           # (slot, shape, dtype)
    live = []           # (last use, slot, shape, dtype)
    for i, n in enumerate(nodes):
        still = []
        reusable_now = []
        for entry in live:
            if entry[0] < i:
                free.append(entry[1:])
            elif entry[0] == i:
                reusable_now.append(entry)
                still.append(entry)
            else:
                still.append(entry)
        live = still
        if n in escaped or n in skip or not bufferable(n) or last.get(n, i) <= i:
            continue
        v = n.meta['val']
        shape, dt = tuple(v.shape), v.dtype.np
        if not v.is_contiguous():
            continue
        slot = None
        for j, (s, sh, d) in enumerate(free):
            if sh == shape and d == dt:
                slot = s
                del free[j]
                break
        fn = _array_fn(target(n))
        if slot is None and (isinstance(fn, np.ufunc) or getattr(fn, 'writes_over_input', False)):
            # a ufunc (or a kernel that computes before it writes) may write into an input it reads: take the
            # slot of an input whose last use is here
            for entry in reusable_now:
                if entry[2] == shape and entry[3] == dt and any(entry[1] == p.slots.get(a) for a in n.all_input_nodes):
                    slot = entry[1]
                    live.remove(entry)
                    break
        if slot is None:
            slot = f'_buf{len(p.specs)}'
            p.specs.append((shape, dt))
        p.slots[n] = slot
        live.append((last[n], slot, shape, dt))
    return p
