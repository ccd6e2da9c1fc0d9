"""The autograd engine: runs a graph task from some roots back to the leaves.

A graph task (1) counts, for every node reachable from the roots, how many
edges lead into it, (2) keeps a ready queue of nodes whose incoming gradients
are all summed, and (3) runs each node once, passing its outputs along its
``next_functions``. With ``inputs=`` only the nodes on a path to those inputs
run, and their gradients are captured instead of accumulated (NOTE [grad inputs]).

The main loop is the hot path of every backward: nodes are dictionary keys
(hashed by identity), the ready queue is a heap keyed by the node's creation
number (set once in Node.__init__), and hooks cost a truth test when absent.
"""
import threading
from heapq import heappush, heappop

import numpy as np

from .._core.coo import strided as _strided
from .._core.storage import is_dense, _contiguous as is_contiguous
from .._core.dispatch_key import DispatchKey, TORCH_FUNCTION_BIT, PYTHON_SUBCLASS_BIT
from .._dispatch.dispatcher import OBSERVERS, observed_call, STATE as _STATE
from .grad_mode import is_grad_enabled, _set_enabled
from .node import AccumulateGrad, gradient_edge, _FREED, SavedVariable
from . import anomaly


def _dependencies(roots, active=None):
    """For every node reachable from ``roots``: how many edges lead into it. With ``active`` (NOTE [grad
    inputs]), only those nodes and the edges between them count."""
    # each node once, also when several roots are outputs of one node (the pieces of a split)
    deps, stack = {}, list(dict.fromkeys(n for n in roots if n is not None))
    seen = set(stack)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None or active is not None and nxt not in active:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps


# NOTE [grad inputs]: with ``inputs=`` a node runs only when something the caller asked for lies behind it
# (torch's exec_info ``needed_``). ``autograd.grad`` captures the gradient arriving at an input's node and runs
# that node only if another input lies beyond it, so ``grad(y, h)`` leaves the graph from the leaves to ``h``
# unused (not freed, its hooks silent); ``backward(inputs=...)`` accumulates into each input, so an input's
# node runs (torch: ``needed_`` is set on every input's node). A node from which no input is reachable is
# skipped altogether: its tensor hooks do not fire. A captured gradient is the one the tensor hooks returned
# when the node is not run, and the one that arrived (before those hooks) when it is run, as in torch.
# A node that runs computes only the gradients of its inputs whose nodes run or capture (``task_active``, torch's
# ``task_should_compute_output``): jacrev of an MLP wrt its input computes no weight gradients (under vmap those
# are per-sample: (256, 256, 256) per layer for a 256-wide MLP).
def _needed(roots, targets, inputs_run):
    """The nodes that run: those from which some target edge is reachable through a node's inputs, and the
    target nodes themselves when ``inputs_run``. One walk down from the roots records each node's parents (the
    nodes with an edge into it), then the targets' ancestors are marked walking up: about half the time of a
    post-order walk and a sweep (torchdiffeq's adjoint calls ``autograd.grad`` once per solver step on a
    graph whose history runs thousands of nodes deep)."""
    parents = {}        # node -> its one parent, or a list of them when several (most nodes have one)
    stack = []
    for r in roots:
        if r is not None and r not in parents:
            parents[r] = ()
            stack.append(r)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            p = parents.get(nxt)
            if p is None:
                parents[nxt] = node
                stack.append(nxt)
            elif p.__class__ is list:
                p.append(node)
            else:
                parents[nxt] = [node] if p == () else [p, node]
    work = list({n for n, _ in targets if n in parents})
    needed = set(work) if inputs_run else set()
    while work:
        p = parents[work.pop()]
        for p in (p if p.__class__ is list or p == () else (p,)):
            if p not in needed:
                needed.add(p)
                work.append(p)
    return needed


class _Task(threading.local):
    retain_graph = False        # the running backward's retain_graph, for a node that frees its own saved values
    callbacks = None            # the running backward's final callbacks (queue_callback); None outside a backward
    active = None               # with inputs: the nodes that run or capture (NOTE [grad inputs]); None: all
    will_run = None             # the nodes the running backward executes (will_engine_execute_node)


_task = _Task()


def will_engine_execute_node(node):
    """Whether the backward running in this thread executes ``node`` (torch's ``_will_engine_execute_node``): a
    node an edge of the graph leads to (a root that none leads to does not count, as in torch), and with inputs
    one that runs or captures."""
    if _task.will_run is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return node in _task.will_run


def task_active():
    """The nodes the backward running in this thread runs or captures at, when it was given inputs; None when it
    runs all (NOTE [grad inputs])."""
    return _task.active


def retaining_graph():
    """Whether the backward running in this thread keeps the graph (``retain_graph=True``): a node that frees its
    saved values itself while it runs (a compiled function's backward graph) must keep them then."""
    return _task.retain_graph


def queue_callback(fn):
    """Call ``fn()`` when the backward running in this thread has finished (torch's
    ``Variable._execution_engine.queue_callback``): what a hook set up for this backward alone undoes there."""
    if _task.callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _task.callbacks.append(fn)


def in_backward():
    """Whether a backward is running in this thread (torch's ``_current_graph_task_id() != -1``)."""
    return _task.callbacks is not None


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate=True):
    """Execute the graph task. Returns captured grads for ``inputs`` when ``accumulate`` is False."""
    roots = [_edge_of(t) for t in tensors]
    for node, _ in roots:
        if node is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    root_nodes = [n for n, _ in roots]
    targets = needed = None
    capture_at = {}      # (node, input_nr) -> indices of the inputs whose gradient flows in there
    if inputs is not None:
        targets = [_edge_of(t) if isinstance(t, tuple) or t._grad_fn is not None or t._requires_grad else (None, 0)
                   for t in inputs]
        needed = _needed(root_nodes, [e for e in targets if e[0] is not None], accumulate)
        for i, (n, nr) in enumerate(targets):
            if n is not None:
                capture_at.setdefault((n, nr), []).append(i)
        # the nodes that run or capture: a node from which no input is reachable has no effect, and neither has
        # anything behind it, so the walk leaves them out (torchcde's many small autograd.grad calls on a long
        # graph walked all of it each time)
        active = needed | {n for n, _ in capture_at}
        root_nodes = [n for n in root_nodes if n in active]
        deps = _dependencies(root_nodes, active)
    else:
        active = None
        deps = _dependencies(root_nodes)
    capture_nodes = {n for n, _ in capture_at}
    captured = {}

    buffers = {}     # node -> {input_nr: summed gradient}
    heap = []        # ready nodes, the most recently created first (torch's sequence-number order)
    for (node, nr), g in zip(roots, grad_tensors):
        if g is not None:
            g._grad_owner = False       # the caller's (or backward()'s) tensor: never the engine's alone
        _add(buffers, node, nr, g)
    pushed = set()
    for node in root_nodes:
        if node not in deps and node not in pushed:
            pushed.add(node)
            heappush(heap, (-node._seq, node))

    prev_mode = is_grad_enabled()
    _set_enabled(create_graph)
    prev_retain, _task.retain_graph = _task.retain_graph, retain_graph
    prev_callbacks, _task.callbacks = _task.callbacks, []
    prev_active, _task.active = _task.active, active
    prev_will_run, _task.will_run = _task.will_run, (active if active is not None else deps)
    tf_kept = _STATE.keep & TORCH_FUNCTION_BIT
    _STATE.keep &= ~TORCH_FUNCTION_BIT      # NOTE [torch function modes]: backward is below the public API
    try:
        while heap:
            node = heappop(heap)[1]
            buf = buffers.pop(node, None)
            if buf is None:
                grads = (None,)
            elif len(buf) == 1 and 0 in buf:
                grads = (buf[0],)
            else:
                grads = tuple([buf.get(i) for i in range(max(buf) + 1)])
            is_acc = type(node) is AccumulateGrad
            runs = needed is None or node in needed
            if capture_at and runs:        # NOTE [grad inputs]: what arrived, before the tensor hooks
                _capture(capture_at, captured, node, grads)
            if node._tensor_pre_hooks or node._retain_grad_hooks or (is_acc and node.variable._hooks):
                if runs or node in capture_nodes:       # a skipped node's hooks stay silent
                    grads = tuple(_incoming(node, list(grads)))
            if capture_at and not runs:
                _capture(capture_at, captured, node, grads)
            # NOTE [engine fast path]: a node with no hooks, no profiler listening and anomaly mode off is
            # applied here without going through _call_node (which handles all of those); an AccumulateGrad's
            # apply is accumulate_grad on its variable
            plain = not (node._pre_hooks or node._hooks or OBSERVERS or anomaly._enabled or node._released)
            if is_acc:
                if accumulate and (targets is None or (node, 0) in capture_at) and grads[0] is not None:
                    if plain:
                        accumulate_grad(node.variable, grads[0])
                    else:
                        _call_node(node, grads, retain_graph)
                continue
            if not runs:
                outs = ()
            elif plain:
                outs = node.apply(grads)
                if not retain_graph and node._saved:
                    node._release()
            else:
                outs = _call_node(node, grads, retain_graph)
            n_outs = len(outs)
            fresh = node._fresh_outputs
            i = -1
            for nxt, nr in node.next_functions:
                i += 1
                if nxt is None:
                    continue
                if i < n_outs:
                    g = outs[i]
                    if g is not None:
                        # NOTE [gradient ownership]: first delivery of a new tensor by one of ember's nodes
                        g._grad_owner = fresh and g._grad_owner is None
                        b = buffers.get(nxt)
                        if b is None:
                            buffers[nxt] = {nr: g}
                        else:
                            prev = b.get(nr)
                            if prev is None:
                                b[nr] = g
                            else:
                                b[nr] = s = prev + g
                                s._grad_owner = True
                d = deps.get(nxt)
                if d is None:           # outside the inputs' part of the graph (NOTE [grad inputs])
                    continue
                deps[nxt] = d = d - 1
                if d == 0:
                    heappush(heap, (-nxt._seq, nxt))
        for fn in _task.callbacks:      # in order; a callback may queue more, which run after it
            fn()
    finally:
        _set_enabled(prev_mode)
        _task.retain_graph = prev_retain
        _task.callbacks = prev_callbacks
        _task.active = prev_active
        _task.will_run = prev_will_run
        _STATE.keep |= tf_kept      # only this bit: grad mode lives in the same set
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


def _edge_of(t):
    """A tensor's gradient edge, or the (node, output_nr) of a GradientEdge given in its place."""
    return (t[0], t[1]) if isinstance(t, tuple) else gradient_edge(t)


def _capture(capture_at, captured, node, grads):
    for nr, g in enumerate(grads):
        for i in capture_at.get((node, nr), ()):
            captured[i] = g


def _add(buffers, node, nr, g):
    b = buffers.get(node)
    if b is None:
        buffers[node] = {nr: g}
    else:
        prev = b.get(nr)
        b[nr] = g if prev is None else prev + g


def _apply_tensor_hooks(node, nr, g):
    g._grad_owner = False        # a hook sees it (and may keep it): NOTE [gradient ownership]
    for hook in list(node._tensor_pre_hooks.get(nr, {}).values()):
        r = hook(g)
        if r is not None:
            g = r
            g._grad_owner = False
    rg = node._retain_grad_hooks.get(nr)
    if rg is not None:
        rg(g)
    return g


def _incoming(node, grads):
    """The gradients flowing into ``node``'s outputs after the tensor hooks of those outputs."""
    if node._tensor_pre_hooks or node._retain_grad_hooks:
        grads = [_apply_tensor_hooks(node, i, g) if g is not None else g for i, g in enumerate(grads)]
    if type(node) is AccumulateGrad and node.variable._hooks and grads[0] is not None:
        g = grads[0]    # a leaf's Tensor.register_hook hooks: they also see gradients captured by grad()
        g._grad_owner = False
        for hook in list(node.variable._hooks.values()):
            r = hook(g)
            if r is not None:
                g = r
                g._grad_owner = False
        grads[0] = g
    return grads


def _call_node(node, grads, retain_graph, _observed=False):
    if OBSERVERS and not _observed:     # a profiler is on: torch's two ranges per node (NOTE [record function])
        return observed_call(f'autograd::engine::evaluate_function: {node.name()}', _call_node, node, grads,
                             retain_graph, True)
    if node._pre_hooks:
        for g in grads:
            if g is not None:
                g._grad_owner = False
        for hook in list(node._pre_hooks.values()):
            r = hook(tuple(grads))
            if r is not None:
                grads = list(r)
                for g in grads:
                    if g is not None:
                        g._grad_owner = False
    if node._released:
        raise RuntimeError(_FREED)
    if OBSERVERS:
        outs = observed_call(node.name(), _apply, node, tuple(grads))
    else:
        outs = node.apply(tuple(grads)) if not anomaly._enabled else anomaly.checked_apply(node, tuple(grads))
    if node._hooks:
        for hook in list(node._hooks.values()):
            r = hook(tuple(outs), tuple(grads))
            if r is not None:
                r = tuple(r)
                if len(r) != len(outs):
                    raise RuntimeError(f"hook '{getattr(hook, '__name__', type(hook).__name__)}' has returned an "
                                       f"incorrect number of values (got {len(r)}, but expected {len(outs)})")
                outs = r
        for g in outs:          # the hooks saw them
            if g is not None:
                g._grad_owner = False
    if not retain_graph and node._saved:
        node._release()
    return outs


def _apply(node, grads):
    return node.apply(grads) if not anomaly._enabled else anomaly.checked_apply(node, grads)


# NOTE [gradient ownership]: the first gradient of a leaf becomes its ``.grad`` without a copy when the
# engine alone holds that tensor, so ``.grad`` never aliases a tensor the user holds (which a later
# ``.grad.add_`` would then change). The engine tracks this itself, on the tensor (``_grad_owner``):
# - a node of ember's own (``Node._fresh_outputs``: formulas, view and copy nodes) hands out a tensor; the
#   first time the engine delivers a tensor it had not seen, it owns it (True);
# - the same tensor delivered again (a pass-through such as add's ``grad`` for both inputs, or a tensor a
#   formula took from an earlier backward) is shared (False), as is anything the caller gave (``gradient=``),
#   anything a custom Function's backward returned, and anything a hook saw or returned;
# - a sum the engine makes of two gradients is its own.
# Owned, not a view and not recorded (no grad mode): stolen. Anything else is copied.


# NOTE [accumulation lock]: several threads may run backward into the same leaf at once (Hogwild training,
# a thread pool of losses). The first-gradient check-then-set and the in-place add must not interleave:
# NumPy releases the GIL inside the add, so two unguarded adds lose one of the updates. torch holds a
# mutex per variable in AccumulateGrad; ember holds one of a fixed set of locks chosen by the variable's id
# (no per-tensor lock object to create or store; two leaves rarely share one, and sharing is only slower).
_ACC_LOCKS = [threading.Lock() for _ in range(64)]


# NOTE [gradient layout]: a leaf's first gradient is laid out as the leaf is (torch's layout contract,
# utils::obeys_layout_contract): with the leaf's strides where the leaf is dense (a channels_last weight gets a
# channels_last .grad, a transposed parameter a transposed one), C-contiguous otherwise (an expanded leaf). A
# gradient already laid out so is kept (stolen when nothing else holds it); any other is copied into that
# layout once. Later gradients are added into it in place, which keeps it.
def _obeys_layout(g, var):
    ga, va = g._a, var._a
    gs = getattr(ga, 'strides', None)
    if gs is None:              # a sparse gradient of a dense leaf (Embedding(sparse=True)) stays sparse, as in torch
        return True
    if gs == va.strides and va.__class__ is np.ndarray and va.flags.c_contiguous:
        return True                                     # the common case: both C-contiguous
    shape, isz = va.shape, va.itemsize
    vst = tuple(st // isz for st in va.strides)
    gst = tuple(st // isz for st in gs)
    if is_dense(shape, vst):
        return all(a == b if n != 1 else a != 0 for n, a, b in zip(shape, gst, vst))
    return is_contiguous(shape, gst)


def _clone_obeying(g, var):
    """``g`` copied into the layout NOTE [gradient layout] asks of ``var``'s gradient."""
    va = var._a
    vst = tuple(st // va.itemsize for st in va.strides)
    if is_dense(va.shape, vst):
        from .. import empty_strided
        return empty_strided(tuple(va.shape), vst, dtype=g.dtype, device=g.device).copy_(g)
    from .. import contiguous_format
    return g.clone(memory_format=contiguous_format)


def accumulate_grad(var, g):
    """AccumulateGrad: the first gradient becomes ``.grad``, later ones are added in place."""
    if var._a.__class__ is not np.ndarray and var.layout is not _strided:
        # a sparse (COO, CSR, CSC) leaf keeps the layout its gradient comes in, as torch's AccumulateGrad: dense
        # from mm or addmm, the leaf's own layout and pattern from torch.sparse.mm or to_dense (their formulas mask)
        prev = var._grad
        g = g if prev is None else g + prev if prev.layout is not _strided and g.layout is _strided else prev + g
        var._grad = g.detach()
        return
    if g._a.shape != var._a.shape:
        from .kernels import sum_to
        g = sum_to(g, var._a.shape)
        g._grad_owner = g._base is None      # a new tensor (a sum), unless sum_to only reshaped
    recorded = is_grad_enabled()
    with _ACC_LOCKS[(id(var) >> 4) % len(_ACC_LOCKS)]:
        prev = var._grad
        if prev is None:
            obeys = _obeys_layout(g, var)
            if recorded:
                var._grad = g.clone() if obeys else _clone_obeying(g, var)
            elif obeys and g._grad_owner is True and g._base is None and g._grad_fn is None:
                # stolen; a subclass's handler sees the detach torch's AccumulateGrad makes of it
                var._grad = g if not g._keys & PYTHON_SUBCLASS_BIT else g.detach()
            else:
                var._grad = g.detach().clone() if obeys else _clone_obeying(g.detach(), var)
        elif recorded:
            var._grad = prev + g
        else:
            prev.add_(g)
    if var._post_acc_hooks:
        for hook in list(var._post_acc_hooks.values()):
            hook(var)
