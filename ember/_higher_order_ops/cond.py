"""torch._higher_order_ops.cond (NOTE [control-flow operators] in __init__.py)."""


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
        pred = bool(pred)
    for fn, which in ((true_fn, 'true_fn'), (false_fn, 'false_fn')):
        if not callable(fn):
            raise RuntimeError(f"Expect both branches to be callable, but got {which}={fn!r}.")
    return (true_fn if pred else false_fn)(*operands)


def _tensor_leaves(o):
    from .._tensor import Tensor
    if isinstance(o, dict):
        return all(_tensor_leaves(v) for v in o.values())
    if isinstance(o, (tuple, list)):
        return all(_tensor_leaves(v) for v in o)
    return isinstance(o, Tensor)
