"""``torch._vmap_internals``: the vmap torch.autograd.functional used before torch.func, which libraries still
import (pytorch-minimize). Here it is torch.func's vmap (ember/func)."""
from .func import vmap as _func_vmap

__all__ = ['vmap']


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    """``vmap``; ``allow_none_pass_through``: outputs that are None come back as None (the gradient of an input an
    output does not depend on) instead of raising."""
    if not allow_none_pass_through:
        return _func_vmap(func, in_dims, out_dims)
    nones = []

    def tensors_only(*args):
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        nones[:] = [isinstance(out, tuple)] + [o is None for o in outs]
        return tuple(o for o in outs if o is not None)

    def wrapped(*args):
        res = iter(_func_vmap(tensors_only, in_dims, out_dims)(*args))
        outs = tuple(None if none else next(res) for none in nones[1:])
        return outs if nones[0] else outs[0]
    return wrapped


def vmap(func, in_dims=0, out_dims=0):
    return _func_vmap(func, in_dims, out_dims)
