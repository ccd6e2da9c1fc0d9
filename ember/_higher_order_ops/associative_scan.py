"""torch._higher_order_ops.associative_scan (NOTE [control-flow operators] in __init__.py): the inclusive scan of
``xs`` along ``dim`` under an associative ``combine_fn``, run eagerly, one step per position. torch compiles it
into a parallel scan; transformers' Mamba imports it and calls it only under ``torch.compile``."""
from ..utils import _pytree as pytree

__all__ = ['associative_scan']


def associative_scan(combine_fn, xs, dim, reverse=False, combine_mode='pointwise'):
    """``out[i] = combine_fn(out[i - 1], xs[i])`` along ``dim`` (from the end with ``reverse``), ``out[0] =
    xs[0]``; ``xs`` and the result are pytrees of tensors of one size along ``dim``.

    >>> import ember
    >>> associative_scan(lambda a, b: a + b, ember.tensor([1., 2., 3.]), 0, combine_mode='generic')
    tensor([1., 3., 6.])
    """
    import ember
    if not callable(combine_fn):
        raise ValueError(f"Combine_fn must be a callable, but got {combine_fn}")
    if not isinstance(dim, int):
        raise ValueError("Dim must be an int, but got " + str(type(dim)))
    if combine_mode not in ('pointwise', 'generic'):
        raise ValueError(f"Combine_mode must either 'pointwise' or 'generic', but got {combine_mode}")
    leaves, spec = pytree.tree_flatten(xs)
    if not leaves:
        raise ValueError(f"Expected at least 1 xs leaf, but got {xs}")
    if any(not isinstance(x, ember.Tensor) for x in leaves):
        raise ValueError(f"xs leaves must be a Tensor but got {xs}")
    if combine_mode == 'pointwise' and any(x.device.type not in ('cuda', 'xpu') for x in leaves):
        raise ValueError("For combine_mode='pointwise', all input tensors need to be on CUDA or XPU")
    d = dim + leaves[0].dim() if dim < 0 else dim
    n = leaves[0].shape[d]
    if any(x.shape[d] != n for x in leaves):
        raise ValueError("All xs leaves must have the same size along the scan dimension")
    order = range(n - 1, -1, -1) if reverse else range(n)
    results = []
    for i in order:
        step = pytree.tree_unflatten([x.select(d, i) for x in leaves], spec)
        if results:
            step = combine_fn(results[-1], step)
        results.append(step)
    if reverse:
        results.reverse()
    flat = [pytree.tree_flatten(r)[0] for r in results]
    return pytree.tree_unflatten([ember.stack([r[k] for r in flat], d) for k in range(len(leaves))], spec)
