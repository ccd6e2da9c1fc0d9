"""torch._higher_order_ops.cond (NOTE [control-flow operators] in __init__.py)."""
from .._dispatch.ops_namespace import HigherOrderOperator  # torch._ops.HigherOrderOperator


def _cond_node(pred, true_graph, false_graph, operands):
    """The node's meaning: the chosen subgraph on the operands, its outputs as a tuple."""
    out = (true_graph if bool(pred) else false_graph)(*operands)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


cond_op = HigherOrderOperator('cond', _cond_node)       # ember.ops.higher_order.cond


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` is a bool or a one-element tensor.

    >>> import ember
    >>> x = ember.tensor([1.0, -2.0])
    >>> ember.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, (x,))
    tensor([ 0., -3.])
    """
    from .._tensor import Tensor
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        if not (isinstance(operands, (tuple, list)) and all(_tensor_leaves(o) for o in operands)):
            raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists "
                               f"of tensor leaves, but got {operands}.")
    for fn, which in ((true_fn, 'true_fn'), (false_fn, 'false_fn')):
        if not callable(fn):
            raise RuntimeError(f"Expect both branches to be callable, but got {which}={fn!r}.")
    if isinstance(pred, Tensor):
        tracer = _recording_tracer(operands)
        if tracer is not None:
            return tracer.record_cond(cond_op, pred, true_fn, false_fn, tuple(operands))
        pred = bool(pred)
    return (true_fn if pred else false_fn)(*operands)


def _recording_tracer(operands):
    """The make_fx tracer to record the call into, when one is tracing and no gradient flows through the
    operands (ember records no backward for a cond node: with one, the predicate is read, as eagerly)."""
    from ..fx.experimental.proxy_tensor import get_proxy_mode
    from ..autograd.grad_mode import is_grad_enabled
    from ..utils import _pytree as pytree
    mode = get_proxy_mode()
    if mode is None:
        return None
    if is_grad_enabled() and any(getattr(t, 'requires_grad', False) for t in pytree.tree_leaves(operands)):
        return None
    return mode.tracer


def _tensor_leaves(o):
    from .._tensor import Tensor
    if isinstance(o, dict):
        return all(_tensor_leaves(v) for v in o.values())
    if isinstance(o, (tuple, list)):
        return all(_tensor_leaves(v) for v in o)
    return isinstance(o, Tensor)
