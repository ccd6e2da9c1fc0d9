"""The autograd engine: runs a graph task from some roots back to the leaves.

A graph task (1) counts, for every node reachable from the roots, how many
edges lead into it, (2) keeps a ready queue of nodes whose incoming gradients
are all summed, and (3) runs each node once, passing its outputs along its
``next_functions``. With ``inputs=`` only the nodes on a path to those inputs
run, and their gradients are captured instead of accumulated.
"""
import heapq
import itertools

from .grad_mode import is_grad_enabled, _set_enabled
from .node import AccumulateGrad, gradient_edge, _FREED

_seq = itertools.count()


def _dependencies(roots):
    deps, seen, stack = {}, set(), [n for n in roots if n is not None]
    seen.update(id(n) for n in stack)
    order = {}
    while stack:
        node = stack.pop()
        order[id(node)] = node
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return deps, order


def _needed(roots, targets, order):
    """Nodes from which some target edge is reachable (torch's exec_info)."""
    target_nodes = {id(n) for n, _ in targets}
    memo = {}

    def visit(node):
        k = id(node)
        if k in memo:
            return memo[k]
        memo[k] = False
        res = k in target_nodes
        for nxt, _ in node.next_functions:
            if nxt is not None and visit(nxt):
                res = True
        memo[k] = res
        return res
    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * len(order) + 1000))
    try:
        for r in roots:
            if r is not None:
                visit(r)
    finally:
        sys.setrecursionlimit(old)
    return {k for k, v in memo.items() if v}


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """Execute the graph task. Returns captured grads for ``inputs`` when ``accumulate`` is False."""
    roots = [gradient_edge(t) for t in tensors]
    for (node, _), t in zip(roots, tensors):
        if node is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    targets = [gradient_edge(t) if t._grad_fn is not None or t._requires_grad else (None, 0) for t in inputs] \
        if inputs is not None else None
    deps, order = _dependencies([n for n, _ in roots])
    needed = _needed([n for n, _ in roots], [e for e in targets if e[0] is not None], order) \
        if targets is not None else None
    captured = {}
    capture_at = {}
    if targets is not None:
        for i, (n, nr) in enumerate(targets):
            if n is not None:
                capture_at.setdefault((id(n), nr), []).append(i)

    buffers = {}     # id(node) -> list of summed grads per output
    heap = []        # ready nodes, the most recently created first (torch's sequence-number order)

    def add_grad(node, nr, g):
        buf = buffers.get(id(node))
        if buf is None:
            buf = buffers[id(node)] = {}
        prev = buf.get(nr)
        buf[nr] = g if prev is None else prev + g

    for (node, nr), g in zip(roots, grad_tensors):
        add_grad(node, nr, g)
    for node, _ in roots:
        if deps.get(node, 0) == 0 and id(node) not in {id(h[2]) for h in heap}:
            heapq.heappush(heap, (-_seqno(node), next(_seq), node))

    prev_mode = is_grad_enabled()
    _set_enabled(create_graph)
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = _incoming(node, buffers.pop(id(node), {}))
            if capture_at:
                for nr, g in enumerate(grads):
                    for i in capture_at.get((id(node), nr), ()):
                        captured[i] = g
            run = needed is None or id(node) in needed
            if isinstance(node, AccumulateGrad) and (not accumulate or (targets is not None and
                                                                         (id(node), 0) not in capture_at)):
                run = False
            outs = _call_node(node, grads, retain_graph) if run else None
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                if outs is not None and i < len(outs) and outs[i] is not None:
                    add_grad(nxt, nr, outs[i])
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (-_seqno(nxt), next(_seq), nxt))
    finally:
        _set_enabled(prev_mode)
    if inputs is None:
        return None
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None and targets[i][0] is None and not allow_unused:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if g is None and not allow_unused:
            raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return result


def _seqno(node):
    s = node.__dict__.get('_seq')
    if s is None:
        s = node.__dict__['_seq'] = next(_seq)
    return s


def _apply_tensor_hooks(node, nr, g):
    for hook in list(node._tensor_pre_hooks.get(nr, {}).values()):
        r = hook(g)
        if r is not None:
            g = r
    rg = node._retain_grad_hooks.get(nr)
    if rg is not None:
        rg(g)
    return g


def _incoming(node, buf):
    """The summed gradients for each output of ``node``, after the outputs' tensor hooks."""
    n_out = max(buf) + 1 if buf else 1
    grads = [buf.get(i) for i in range(n_out)]
    if node._tensor_pre_hooks or node._retain_grad_hooks:
        grads = [_apply_tensor_hooks(node, i, g) if g is not None else g for i, g in enumerate(grads)]
    if type(node) is AccumulateGrad and node.variable._hooks and grads[0] is not None:
        g = grads[0]    # a leaf's Tensor.register_hook hooks: they also see gradients captured by grad()
        for hook in list(node.variable._hooks.values()):
            r = hook(g)
            if r is not None:
                g = r
        grads[0] = g
    return grads


def _call_node(node, grads, retain_graph):
    for hook in list(node._pre_hooks.values()):
        r = hook(tuple(grads))
        if r is not None:
            grads = list(r)
    if node._released:
        raise RuntimeError(_FREED)
    from . import anomaly
    outs = node.apply(tuple(grads)) if not anomaly.enabled() else anomaly.checked_apply(node, tuple(grads))
    if node._hooks:
        for hook in list(node._hooks.values()):
            r = hook(tuple(outs), tuple(grads))
            if r is not None:
                outs = tuple(r)
    if not retain_graph and node._saved is not None:
        node._release()
    return outs


def accumulate_grad(var, g):
    """AccumulateGrad: first gradient becomes ``.grad`` (a new tensor), later ones are added in place."""
    if g.shape != var.shape:
        from .kernels import sum_to
        g = sum_to(g, var.shape)
    prev = var._grad
    if prev is None:
        var._grad = g.detach().clone() if not is_grad_enabled() else g.clone()
    elif is_grad_enabled():
        var._grad = prev + g
    else:
        prev.add_(g)
    for hook in list((var._post_acc_hooks or {}).values()):
        hook(var)
