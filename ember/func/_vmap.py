"""vmap (torch.func.vmap): run a per-sample function once over a batch, through BatchedTensors (NOTE [vmap] in
ember/_functorch/batching.py).

>>> import ember
>>> from ember.func import vmap
>>> vmap(lambda x: x.dot(x))(ember.tensor([[1., 2.], [3., 4.]]))
tensor([ 5., 25.])
"""
import functools

import ember
from .._functorch import batching as _b
from ._tree import tree_flatten, tree_unflatten, broadcast_prefix


def _dims(prefix, tree, what):
    try:
        return broadcast_prefix(prefix, tree, is_leaf_value=lambda v: v is None or isinstance(v, int))
    except ValueError:
        raise ValueError(f"vmap(f, {what}={prefix}, ...)(<inputs>): {what} is not compatible with the structure of "
                         f"`inputs`. {what} has structure {tree_flatten(prefix)[1]} but inputs has structure "
                         f"{tree_flatten(tree)[1]}.") from None


def vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None):
    """Vectorize ``func`` over dimension ``in_dims`` of its inputs (nested like the inputs; None: not mapped),
    stacking the results along ``out_dims``. ``randomness``: 'error', 'different' or 'same' for random operators;
    ``chunk_size``: run the batch in chunks of that many samples.

    >>> import ember
    >>> from ember.func import vmap, grad
    >>> w = ember.tensor([1., -1.])
    >>> vmap(grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))(w, ember.tensor([[1., 2.], [3., 1.]]))
    tensor([[-2., -4.],
            [12.,  4.]])
    """
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        leaves, spec = tree_flatten(args)
        dims = _dims(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), args, 'in_dims')
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, ember.Tensor):
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                 f"input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please use "
                                 f"None as the respective in_dim")
            if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                                 f"that input is a Tensor of dimensionality {x.dim()} so expected in_dim to satisfy "
                                 f"-{x.dim()} <= in_dim < {x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                             f"mapped over a dimension (in_dims not all None)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        B = sizes[0]
        moved = [x.movedim(d, 0) if d is not None else x for x, d in zip(leaves, dims)]
        if chunk_size is None or chunk_size >= B:
            return _run(func, moved, dims, spec, kwargs, B)
        outs = [_run(func, [x[s:s + chunk_size] if d is not None else x for x, d in zip(moved, dims)], dims, spec,
                     kwargs, min(chunk_size, B - s), flat_out=True) for s in range(0, B, chunk_size)]
        flat0, out_spec = outs[0]
        od = _dims(out_dims, tree_unflatten(flat0, out_spec), 'out_dims')
        cat = [ember.cat([o[0][k] for o in outs]).movedim(0, d) if d is not None else flat0[k]
               for k, d in enumerate(od)]
        return tree_unflatten(cat, out_spec)

    def _run(func, moved, dims, spec, kwargs, B, flat_out=False):
        level = _b.push_level(randomness, B)
        try:
            batched = [_b.make_batched(x, level) if d is not None else x for x, d in zip(moved, dims)]
            out = func(*tree_unflatten(batched, spec), **kwargs)
            leaves, out_spec = tree_flatten(out)
            od = [0] * len(leaves) if flat_out else _dims(out_dims, out, 'out_dims')
            res = []
            for o, d in zip(leaves, od):
                if not isinstance(o, ember.Tensor):
                    raise ValueError(f"vmap({getattr(func, '__name__', func)}, ...): `{getattr(func, '__name__', func)}`"
                                     f" must only return Tensors, got type {type(o)}. Did you mean to set out_dims= "
                                     f"to None for output?")
                p = _b.unwrap(o, level)
                if d is None:
                    if p is not None:
                        raise ValueError("vmap: can not return a BatchedTensor when out_dim is None")
                    res.append(o)
                    continue
                if p is None:       # the same for every sample: broadcast over the batch
                    p = o.unsqueeze(0).expand((B,) + tuple(o.shape))
                res.append(p.movedim(0, d))
        finally:
            _b.pop_level()
        return (res, out_spec) if flat_out else tree_unflatten(res, out_spec)
    return wrapped
