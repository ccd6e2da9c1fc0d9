"""torch._higher_order_ops.while_loop (NOTE [control-flow operators] in __init__.py)."""


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; returns the final values as a tuple.
    ``body_fn`` returns as many values as it is given, each a tensor of its input's shape and dtype, and
    ``cond_fn`` a bool or a one-element boolean tensor.

    >>> import ember
    >>> ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (ember.tensor(0), ember.tensor(1.0)))
    (tensor(3), tensor(8.))
    """
    from .._tensor import Tensor
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried)):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as carried_inputs: got "
                               f"{len(out)} for {len(carried)} carried inputs")
        for i, (new, old) in enumerate(zip(out, carried)):
            if isinstance(old, Tensor) and (not isinstance(new, Tensor) or new.shape != old.shape
                                            or new.dtype != old.dtype):
                got = f'{tuple(new.shape)} {new.dtype}' if isinstance(new, Tensor) else type(new).__name__
                raise RuntimeError(f"body_fn output {i} must keep its carried input's shape and dtype: expected "
                                   f"{tuple(old.shape)} {old.dtype}, got {got}")
        carried = out
    return carried


def _truth(c):
    from .._tensor import Tensor
    if isinstance(c, Tensor):
        if c.numel() != 1 or c.dtype.is_floating_point:
            raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a bool, but got {c}")
        return bool(c)
    return bool(c)
