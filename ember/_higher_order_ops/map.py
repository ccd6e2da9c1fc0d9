"""torch._higher_order_ops.map (NOTE [control-flow operators] in __init__.py): ``f`` over the leading dimension.

Eagerly ``map`` is torch's ``map_dense``: ``f`` runs on each slice ``xs[i]`` (every leaf of ``xs`` sliced at the
same ``i``) with the extra arguments unchanged, and the outputs are stacked leaf by leaf. Autograd records the
slices, ``f``'s operators and the stack as any code does, so the gradients are the loop's, which are torch's
(torch records them as one ``MapAutogradOpBackward`` node that reruns ``f`` per slice; ember's graph is the
unrolled loop, which also reaches tensors ``f`` reads from its closure, as Dynamo's lifting does in torch).
A make_fx trace (``export``, ``ember.compile``) sees the loop unrolled.
"""
from .._dispatch.ops_namespace import HigherOrderOperator  # torch._ops.HigherOrderOperator


def _unstack_pytree(xs):
    """``xs`` (a pytree of tensors sharing a leading size n) as a list of n pytrees of their slices."""
    from ..utils import _pytree as pytree
    flat, spec = pytree.tree_flatten(xs)
    if not all(_is_tensor(x) for x in flat):
        raise RuntimeError(f"Leaves of xs must be Tensor {flat}")
    if not all(x.shape[0] == flat[0].shape[0] for x in flat):
        raise RuntimeError(f"Leaves of xs must have same leading dimension size {[x.shape for x in flat]}")
    return [pytree.tree_unflatten(list(row), spec) for row in zip(*[x.unbind(0) for x in flat])]


def _stack_pytree(pytrees):
    """The inverse of ``_unstack_pytree``: the leaves at each position stacked along a new first dimension."""
    from ..utils import _pytree as pytree
    import ember
    flats, out_spec = [], None
    for pt in pytrees:
        flat, out_spec = pytree.tree_flatten(pt)
        flats.append(flat)
    stacked = []
    for leaves in zip(*flats):
        if all(_is_tensor(x) for x in leaves):
            stacked.append(ember.stack(list(leaves)))
        elif all(x is None for x in leaves):
            stacked.append(None)        # torch: a None output (no gradient for that input) stays None
        else:
            raise RuntimeError(f"Cannot stack {leaves}.")
    return pytree.tree_unflatten(stacked, out_spec)


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _map_dense(f, xs, pos_args):
    """The node's meaning (torch's ``map_dense``): ``f(*slices, *pos_args)`` per row of the flat ``xs``, stacked."""
    return _stack_pytree([f(*row, *pos_args) for row in _unstack_pytree(list(xs))])


map_impl = HigherOrderOperator('map_impl', _map_dense)      # ember.ops.higher_order.map_impl


def map(f, xs, *args):
    """``torch.stack([f(x, *args) for x in xs])``: ``f`` on each slice of ``xs`` along its first dimension.

    ``xs`` is a tensor or a pytree (list, tuple, dict) of tensors of one leading size; ``f`` gets the slices
    in the same structure, and may return a pytree of tensors, each stacked.

    >>> import ember
    >>> from ember._higher_order_ops.map import map
    >>> map(lambda x, y: x + y, ember.ones(3, 2), ember.ones(2))
    tensor([[2., 2.],
            [2., 2.],
            [2., 2.]])
    """
    from ..utils import _pytree as pytree
    flat_xs, xs_spec = pytree.tree_flatten(xs)
    flat_args, args_spec = pytree.tree_flatten(args)
    if not all(_is_tensor(t) for t in flat_xs):
        raise RuntimeError(f"Mapped xs can only consist of tensors. Got xs {flat_xs}.")
    shapes = [x.shape for x in flat_xs]
    leading = shapes[0][0]          # a 0-d xs raises IndexError here, as torch's
    if leading == 0:
        raise RuntimeError("Leading dimensions of mapped xs cannot be 0.")
    if any(s[0] != leading for s in shapes):
        raise RuntimeError(f"Leading dimensions of mapped xs must be consistent. Got shapes {shapes}.")

    def flat_f(*leaves, n=len(flat_xs)):
        return f(pytree.tree_unflatten(list(leaves[:n]), xs_spec), *pytree.tree_unflatten(list(leaves[n:]), args_spec))
    return map_impl(flat_f, flat_xs, flat_args)
