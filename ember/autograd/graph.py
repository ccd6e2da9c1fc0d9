"""ember.autograd.graph: the graph's Node type, saved-tensor hooks, and graph inspection.

``saved_tensors_nbytes(t)`` walks the graph behind ``t`` and sums the bytes the
SavedVariables still hold (what checkpointing saves, and what must be zero
after backward); ``to_dot(t)`` writes the graph as Graphviz DOT text and
``render`` draws it when the optional ``graphviz`` package is installed.

>>> import ember
>>> x = ember.ones(3, requires_grad=True)
>>> y = (x * x).exp()
>>> saved_tensors_nbytes(y)    # mul saves x (as self and other: one buffer), exp its result
24
"""
from typing import Any, NamedTuple

from .node import Node, SavedVariable, AccumulateGrad
from .saved_hooks import saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks

__all__ = ['Node', 'saved_tensors_hooks', 'save_on_cpu', 'disable_saved_tensors_hooks', 'walk',
           'saved_tensors_nbytes', 'to_dot', 'render', 'increment_version', 'register_multi_grad_hook',
           'GradientEdge', 'get_gradient_edge', 'allow_mutation_on_saved_tensors']


def _roots(tensors):
    from .._core.tensor_impl import TensorImpl
    if isinstance(tensors, (TensorImpl, Node)):
        tensors = (tensors,)
    return [t if isinstance(t, Node) else t._grad_fn for t in tensors]


def walk(tensors):
    """Every node reachable from ``tensors`` (tensors or nodes), each once, roots first."""
    seen, order, stack = set(), [], [n for n in _roots(tensors) if n is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        order.append(n)
        stack.extend(nx for nx, _ in reversed(n.next_functions) if nx is not None and id(nx) not in seen)
    return order


def _saved_variables(node):
    saved = node.__dict__.get('_saved')
    if not saved:
        return
    for v in saved.values():
        if isinstance(v, SavedVariable):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, SavedVariable):
                    yield x


def _sv_nbytes(sv):
    t = sv.data if sv.data is not None else sv.packed
    a = getattr(t, '_a', None)
    return 0 if a is None else int(a.size) * t._dtype.itemsize


def saved_tensors_nbytes(tensors, distinct=True):
    """Bytes held by the saved tensors of the graph behind ``tensors``. With ``distinct`` a buffer saved by
    several nodes (or as several views) counts once, by its memory, as an allocator would see it."""
    total, seen = 0, set()
    for node in walk(tensors):
        for sv in _saved_variables(node):
            t = sv.data if sv.data is not None else sv.packed
            a = getattr(t, '_a', None)
            if a is None:
                continue
            key = (a.__array_interface__['data'][0], a.shape, a.strides) if distinct and hasattr(a, '__array_interface__') else id(sv)
            if key in seen:
                continue
            seen.add(key)
            total += _sv_nbytes(sv)
    return total


def increment_version(tensor):
    """Bump the version counter as an in-place write would (torch.autograd.graph.increment_version)."""
    for t in ((tensor,) if not isinstance(tensor, (list, tuple)) else tensor):
        t._vc[0] += 1


def _shape(t):
    return str(tuple(t.shape))


def _q(s):
    return '"' + str(s).replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'


def to_dot(tensors, params=None, show_saved=True):
    """The graph behind ``tensors`` as Graphviz DOT text.

    Nodes are the backward functions (``MulBackward0``) with their saved tensors'
    names and shapes; leaves (AccumulateGrad) show their variable's shape and, when
    ``params`` (a dict name -> tensor, e.g. ``dict(model.named_parameters())``) names
    it, its name; the outputs are drawn as their shapes.
    """
    names = {id(v): k for k, v in (params or {}).items()}
    from .._core.tensor_impl import TensorImpl
    outs = [tensors] if isinstance(tensors, TensorImpl) else [t for t in tensors if isinstance(t, TensorImpl)]
    nodes = walk(outs)
    ids = {id(n): f'n{i}' for i, n in enumerate(nodes)}
    lines = ['digraph autograd {', '  node [shape=box, fontname="monospace", fontsize=10];']
    for n in nodes:
        if isinstance(n, AccumulateGrad):
            v = n.variable
            label = (names[id(v)] + '\n' if id(v) in names else '') + _shape(v)
            lines.append(f'  {ids[id(n)]} [label={_q(label)}, style=filled, fillcolor=lightblue];')
            continue
        label = n.name()
        if show_saved:
            saved = n.__dict__.get('_saved') or {}
            for k, v in saved.items():
                if isinstance(v, SavedVariable):
                    t = v.data if v.data is not None else None
                    label += f'\n{k}: ' + (_shape(t) if t is not None else '(packed)')
                elif isinstance(v, (tuple, list)) and v and isinstance(v[0], SavedVariable):
                    label += f'\n{k}: [{len(v)} tensors]'
                elif k.endswith(('_sizes', '_strides')) or isinstance(v, (int, float, bool, tuple)) and k != 'result':
                    label += f'\n{k}: {v}'
            if n._released:
                label += '\n(saved tensors freed)'
        lines.append(f'  {ids[id(n)]} [label={_q(label)}];')
    for i, t in enumerate(outs):
        lines.append(f'  out{i} [label={_q("output " + _shape(t))}, style=filled, fillcolor=darkolivegreen1];')
        if t._grad_fn is not None:
            lines.append(f'  {ids[id(t._grad_fn)]} -> out{i};')
    for n in nodes:
        for nx, _ in n.next_functions:
            if nx is not None:
                lines.append(f'  {ids[id(nx)]} -> {ids[id(n)]};')
    lines.append('}')
    return '\n'.join(lines) + '\n'


def render(tensors, path, format='svg', params=None):
    """Draw the graph to ``path`` (without extension) with the optional ``graphviz`` package; returns the
    written file's path."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("ember.autograd.graph.render needs the optional 'graphviz' package (pip install "
                          "graphviz, plus the Graphviz 'dot' program); to_dot() gives the DOT text without it.") \
            from None
    src = graphviz.Source(to_dot(tensors, params))
    return src.render(path, format=format, cleanup=True)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode='all'):
    """``fn`` sees the gradients of several tensors in one backward: with ``mode='all'``, once per backward, the
    tuple of their gradients (None for those the backward does not reach), as soon as the last one it reaches is
    computed (torch's count: the tensors whose node the engine executes, ``will_engine_execute_node``; a tensor
    ``backward()`` starts from is not counted, so a hook on it alone never fires, as in torch); with
    ``mode='any'``, the first gradient computed. Made of tensor hooks and a callback queued on the running
    backward (torch's ``queue_callback``) that forgets what this backward saw."""
    from .engine import queue_callback, in_backward, will_engine_execute_node
    from .node import gradient_edge
    if mode not in ('all', 'any'):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state = {'grads': None, 'fired': False, 'left': 0}

    def hook_for(i):
        def hook(grad):
            if mode == 'any':
                if not state['fired'] and in_backward():
                    state['fired'] = True
                    queue_callback(lambda: state.update(fired=False))
                    fn(grad)
                return None
            if state['grads'] is None:      # the first of this backward: how many it will see
                state['grads'] = [None] * len(tensors)
                state['left'] = sum(1 for t in tensors if t.requires_grad and
                                    will_engine_execute_node(gradient_edge(t)[0]))
                queue_callback(lambda: state.update(grads=None))
            state['grads'][i] = grad
            state['left'] -= 1
            if state['left'] == 0:
                fn(tuple(state['grads']))
            return None
        return hook
    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors) if t.requires_grad])


class GradientEdge(NamedTuple):
    """Where a gradient flows into the graph: ``node`` (a tensor's grad_fn, or a leaf's AccumulateGrad) and
    which of its inputs, ``output_nr`` (torch.autograd.graph.GradientEdge). ``ember.autograd.grad`` (and ``backward``'s
    ``inputs``) takes one in place of an input tensor."""
    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor):
    """The GradientEdge through which gradient flows into ``tensor``.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> ember.autograd.grad(y.sum(), get_gradient_edge(y))
    (tensor([1., 1.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    from .node import gradient_edge
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


class allow_mutation_on_saved_tensors:
    """Inside this context a tensor saved for backward may be changed in place afterwards: backward uses the
    value it had when saved (torch.autograd.graph.allow_mutation_on_saved_tensors). torch clones a saved tensor
    only when it is about to be mutated; ember clones every tensor saved in the context when it is saved
    (a ``saved_tensors_hooks`` pair), the same values at the cost of the copies' memory.

    >>> import ember
    >>> a = ember.ones(2, requires_grad=True)
    >>> with allow_mutation_on_saved_tensors():
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """
    _active = []

    def __enter__(self):
        if self._active:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self._active.append(self)
        self.hooks = saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t)
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)
        self._active.pop()
