"""functionalize (torch.func.functionalize): run a function with its mutations, and optionally its views, replaced
by out-of-place operators (NOTE [functionalize] in ember/_functorch/functionalization.py).

>>> import ember
>>> from ember.func import functionalize
>>> def f(x):
...     y = x.clone()
...     y[0].mul_(2)
...     return y
>>> functionalize(f)(ember.ones(2, 2))
tensor([[2., 2.],
        [1., 1.]])
"""
import functools

import ember
from .._functorch import transform
from .._functorch.functionalization import FunctionalizeMode
from ._tree import tree_flatten, tree_unflatten


def functionalize(func, *, remove='mutations'):
    """A function computing what ``func`` computes with no in-place operator running on the way: each mutation
    becomes its out-of-place operator and the scatter of the result into the mutated tensor's base, mutations of
    the inputs are copied back into them at the end. ``remove='mutations_and_views'`` also replaces every view by
    its ``*_copy`` operator (no output aliases an input). Mostly useful under a tracer:
    ``make_fx(functionalize(f))(x)`` gives a graph of out-of-place operators.

    >>> import ember
    >>> from ember.func import functionalize
    >>> from ember.fx.experimental.proxy_tensor import make_fx
    >>> def f(x):
    ...     x.add_(1)
    ...     return x * 2
    >>> gm = make_fx(functionalize(f))(ember.zeros(3))
    >>> [str(n.target) for n in gm.graph.nodes if n.op == 'call_function']
    ['aten.add.Tensor', 'aten.mul.Tensor', 'aten.copy_.default']
    """
    if remove not in ('mutations', 'mutations_and_views'):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           f"Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           f"removed from the program, and replaced with their out-of-place equivalents.\n     "
                           f"remove='mutations_and_views': In addition to the above, all aliasing operators "
                           f"{{view}} will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        mode = FunctionalizeMode(remove)
        for x in tree_flatten((args, kwargs))[0]:
            if isinstance(x, ember.Tensor):
                mode.handle(x, created=False)
        with transform('functionalize'), mode:     # NOTE [functorch transform stack]
            out = func(*args, **kwargs)
        leaves, spec = tree_flatten(out)
        tensors = [i for i, x in enumerate(leaves) if isinstance(x, ember.Tensor)]
        vals = mode.finish([leaves[i] for i in tensors])      # outside the mode: its operators are the ones it runs
        for i, v in zip(tensors, vals):
            leaves[i] = v
        return tree_unflatten(leaves, spec)
    return wrapped
