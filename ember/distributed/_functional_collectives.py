"""torch.distributed._functional_collectives: collectives that return a new tensor and leave their input alone.

``all_reduce(x, 'sum', group)`` is ``y = x.clone(); dist.all_reduce(y, group=group)``, so each goes through the
c10d operators like ember's other collectives. ``group`` is a ProcessGroup, a 1-D DeviceMesh, a
``(DeviceMesh, dim)`` pair, a group's name, or a list of global ranks (the group of those ranks, made by
``new_group`` on first use, in increasing rank order: every rank of the world must make that first call, as
torch's ``new_group`` requires). Ranks given to a collective (``broadcast``'s ``src``, ``permute_tensor``'s
``src_dst``) are ranks in the group. ``reduceOp`` is a name: 'sum', 'avg', 'product', 'min', 'max', 'band',
'bor', 'bxor'.

Differences from torch: the collective has finished when the function returns. The result is still an
``AsyncCollectiveTensor`` (as torch's in eager mode), so code that calls ``wait_tensor(y)`` or ``y.wait()``
runs unchanged. The plain functions are not differentiable (torch registers no gradient for them either);
``all_gather_tensor_autograd``, ``reduce_scatter_tensor_autograd`` and ``all_to_all_single_autograd`` are.

Run ``emberrun --nproc_per_node=2 script.py``::

    import ember.distributed._functional_collectives as funcol
    x = ember.ones(2) * (dist.get_rank() + 1)
    funcol.all_reduce(x, 'sum', [0, 1])             # AsyncCollectiveTensor(tensor([3., 3.])); x unchanged
"""
import functools

from ember._warn import warnings

import ember
from . import distributed_c10d as c10d
from .device_mesh import DeviceMesh

__all__ = ['AsyncCollectiveTensor', 'wait_tensor', 'all_reduce', 'all_gather_tensor', 'all_gather_single',
           'reduce_scatter_tensor', 'reduce_scatter_single', 'all_to_all_single', 'broadcast', 'permute_tensor',
           'all_reduce_coalesced', 'all_gather_into_tensor_coalesced', 'all_gather_single_coalesced',
           'reduce_scatter_tensor_coalesced', 'reduce_scatter_single_coalesced', 'all_gather_tensor_autograd',
           'all_gather_single_autograd', 'reduce_scatter_tensor_autograd', 'reduce_scatter_single_autograd',
           'all_to_all_single_autograd']

REDUCE_OP_TO_STR = {c10d.ReduceOp.SUM: 'sum', c10d.ReduceOp.AVG: 'avg', c10d.ReduceOp.PRODUCT: 'product',
                    c10d.ReduceOp.MIN: 'min', c10d.ReduceOp.MAX: 'max', c10d.ReduceOp.BAND: 'band',
                    c10d.ReduceOp.BOR: 'bor', c10d.ReduceOp.BXOR: 'bxor'}
_STR_TO_OP = {name: op for op, name in REDUCE_OP_TO_STR.items()}


class AsyncCollectiveTensor(ember.Tensor):
    """What a functional collective returns: a second handle on the result's memory. ``wait()`` (or
    ``wait_tensor``) gives the plain tensor; operators on it return plain tensors too. ember's collectives
    have completed by the time it exists, so waiting never blocks."""
    __torch_function__ = ember._C._disabled_torch_function_impl

    def __new__(cls, elem):
        t = object.__new__(cls)
        t._alias(elem)
        t.elem = elem
        return t

    def __init__(self, elem):
        pass

    def wait(self):
        return self.elem

    def trigger_wait(self):
        return self.elem

    def __repr__(self):
        return f'AsyncCollectiveTensor({self.elem!r})'


def wait_tensor(tensor):
    """The result of a functional collective as a plain tensor."""
    return tensor.elem if isinstance(tensor, AsyncCollectiveTensor) else tensor


# --- groups and operations ---------------------------------------------------------------------------------

_BY_RANKS = {}          # (default group, tag, ranks) -> the group made for a list of ranks


def _group(group, tag=''):
    """The ProcessGroup that ``group`` (any of the forms torch takes) names, with this rank in it."""
    if isinstance(group, DeviceMesh):
        assert group.ndim == 1, "Only 1D mesh is supported, pass in (DeviceMesh, int) together if mesh > 1D"
        pg = group.get_group(0)
    elif isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        pg = group[0].get_group(group[1])
    elif isinstance(group, c10d.ProcessGroup):
        pg = group
    elif isinstance(group, str):
        pg = next((g for g in c10d._STATE.groups if g.group_name == group), None)
        if pg is None:
            raise ValueError(f"Could not resolve the process group registered under the name {group}")
    elif isinstance(group, list) and group and all(isinstance(r, int) for r in group):
        pg = _group_of_ranks(group, tag)
    elif isinstance(group, list) and group and all(isinstance(r, list) for r in group):
        raise ValueError("ember's functional collectives take one list of ranks, not a list of lists (an MPMD "
                         "mesh): pass a DeviceMesh and a dimension, or the ProcessGroup")
    else:
        raise ValueError(f"Unsupported group type: {type(group)}, {group}")
    if pg is c10d.GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError(f"Rank {c10d.get_rank()} is not part of the group {group}")
    return pg


def _group_of_ranks(ranks, tag):
    world, ranks = c10d._default(), sorted(ranks)
    if ranks == list(range(world.size())):
        return world
    key = (world, tag, tuple(ranks))
    if key not in _BY_RANKS:
        _BY_RANKS[key] = c10d.new_group(ranks)
    return _BY_RANKS[key]


def _op(reduceOp):
    op = _STR_TO_OP.get(reduceOp.lower()) if isinstance(reduceOp, str) else None
    if op is None:
        raise RuntimeError(f"Unrecognized reduce_op: {reduceOp}")
    return op


def _fresh(t):
    """A contiguous copy of ``t`` outside autograd: the buffer an in-place collective writes."""
    return t.detach().clone(memory_format=ember.contiguous_format)


def _split_sizes(sizes, name):
    if sizes is None:
        return None
    assert all(isinstance(s, int) for s in sizes), f"All {name} must be int or SymInt, got {sizes}"
    return list(sizes)


# --- the collectives -------------------------------------------------------------------------------------------

def all_reduce(self, reduceOp, group, tag=''):
    """``self`` reduced over the group, on every rank."""
    out = _fresh(self)
    c10d.all_reduce(out, op=_op(reduceOp), group=_group(group, tag))
    return AsyncCollectiveTensor(out)


def _all_gather(self, gather_dim, pg):
    n = pg.size()
    src = self.detach().contiguous()
    out = ember.empty((n * src.shape[0],) + tuple(src.shape[1:]), dtype=src.dtype, device=src.device)
    c10d.all_gather_into_tensor(out, src, group=pg)
    return out if gather_dim == 0 else ember.cat(ember.chunk(out, n, dim=0), dim=gather_dim)


def all_gather_single(self, gather_dim, group, tag=''):
    """The ranks' ``self`` concatenated along ``gather_dim``, in group rank order."""
    out = _all_gather(self, gather_dim, _group(group, tag))
    return AsyncCollectiveTensor(out) if gather_dim == 0 else out


def _reduce_scatter(self, op, scatter_dim, pg):
    n = pg.size()
    assert self.size(scatter_dim) % n == 0, \
        f"input dimension {scatter_dim} ({self.size(scatter_dim)} must be a multiple of group_size {n})"
    src = self.detach()
    src = ember.cat(ember.chunk(src, n, dim=scatter_dim)) if scatter_dim != 0 else src.contiguous()
    out = ember.empty((src.shape[0] // n,) + tuple(src.shape[1:]), dtype=src.dtype, device=src.device)
    c10d.reduce_scatter_tensor(out, src, op=op, group=pg)
    return out


def reduce_scatter_single(self, reduceOp, scatter_dim, group, tag=''):
    """``self`` reduced over the group and cut into group-size pieces along ``scatter_dim``: rank r gets the
    r-th."""
    return AsyncCollectiveTensor(_reduce_scatter(self, _op(reduceOp), scatter_dim, _group(group, tag)))


def _all_to_all(self, output_split_sizes, input_split_sizes, pg):
    rows = self.shape[0] if output_split_sizes is None else sum(output_split_sizes)
    out = ember.empty((rows,) + tuple(self.shape[1:]), dtype=self.dtype, device=self.device)
    c10d.all_to_all_single(out, self.detach().contiguous(), output_split_sizes, input_split_sizes, group=pg)
    return out


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=''):
    """``self`` cut along dim 0 (``input_split_sizes``, default equal pieces): piece r goes to group rank r;
    the result holds the pieces received, in group rank order (``output_split_sizes`` rows from each)."""
    out = _all_to_all(self, _split_sizes(output_split_sizes, 'output_split_sizes'),
                      _split_sizes(input_split_sizes, 'input_split_sizes'), _group(group, tag))
    return AsyncCollectiveTensor(out)


def broadcast(self, src, group, tag=''):
    """Group rank ``src``'s ``self``, on every rank."""
    out = _fresh(self)
    c10d.broadcast(out, group=_group(group, tag), group_src=src)
    return AsyncCollectiveTensor(out)


def permute_tensor(self, src_dst, group, tag=''):
    """Group rank m's ``self`` goes to group rank ``src_dst[m]`` (a permutation of the group ranks)."""
    pg = _group(group, tag)
    me, n = pg.rank(), self.numel()
    sends = [n if k == src_dst[me] else 0 for k in range(pg.size())]
    receives = [n if src_dst[k] == me else 0 for k in range(pg.size())]
    out = _all_to_all(self.reshape(-1), receives, sends, pg)
    return AsyncCollectiveTensor(out.view(self.shape))


def all_reduce_coalesced(self, reduceOp, group, tag=''):
    """``all_reduce`` of each tensor of the list ``self``."""
    return [all_reduce(t, reduceOp, group, tag) for t in self]


def all_gather_single_coalesced(self, group, tag=''):
    """``all_gather_single(t, 0, group)`` of each tensor of the list ``self``."""
    return [all_gather_single(t, 0, group, tag) for t in self]


def reduce_scatter_single_coalesced(inputs, reduceOp, scatter_dim, group, tag=''):
    """``reduce_scatter_single`` of each tensor of ``inputs`` along its ``scatter_dim``."""
    return [reduce_scatter_single(t, reduceOp, d, group, tag) for t, d in zip(inputs, scatter_dim)]


# --- differentiable versions ---------------------------------------------------------------------------------
# The gradient of an all-gather is the sum-reduce-scatter of the output's gradient (every rank's loss used
# every piece), and the other way round; an all-to-all's is the all-to-all back with the split sizes swapped.

class _AllGather(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, gather_dim, pg):
        ctx.gather_dim, ctx.pg = gather_dim, pg
        return _all_gather(x, gather_dim, pg)

    @staticmethod
    def backward(ctx, grad):
        return _reduce_scatter(grad, c10d.ReduceOp.SUM, ctx.gather_dim, ctx.pg), None, None


class _ReduceScatter(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, op, scatter_dim, pg):
        if op not in (c10d.ReduceOp.SUM, c10d.ReduceOp.AVG):
            raise RuntimeError(f"reduce_scatter_tensor_autograd: only 'sum' and 'avg' have a gradient, got "
                               f"{REDUCE_OP_TO_STR[op]!r}")
        ctx.op, ctx.scatter_dim, ctx.pg = op, scatter_dim, pg
        return _reduce_scatter(x, op, scatter_dim, pg)

    @staticmethod
    def backward(ctx, grad):
        g = _all_gather(grad, ctx.scatter_dim, ctx.pg)
        return (g / ctx.pg.size() if ctx.op == c10d.ReduceOp.AVG else g), None, None, None


class _AllToAll(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, pg):
        ctx.splits, ctx.pg = (output_split_sizes, input_split_sizes), pg
        return _all_to_all(x, output_split_sizes, input_split_sizes, pg)

    @staticmethod
    def backward(ctx, grad):
        out_sizes, in_sizes = ctx.splits
        return _all_to_all(grad, in_sizes, out_sizes, ctx.pg), None, None, None


def all_gather_single_autograd(self, gather_dim, group, tag=''):
    """``all_gather_single`` that autograd differentiates."""
    return _AllGather.apply(self, gather_dim, _group(group, tag))


def reduce_scatter_single_autograd(self, reduceOp, scatter_dim, group, tag=''):
    """``reduce_scatter_single`` ('sum' or 'avg') that autograd differentiates."""
    return _ReduceScatter.apply(self, _op(reduceOp), scatter_dim, _group(group, tag))


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=''):
    """``all_to_all_single`` that autograd differentiates."""
    return _AllToAll.apply(self, _split_sizes(output_split_sizes, 'output_split_sizes'),
                           _split_sizes(input_split_sizes, 'input_split_sizes'), _group(group, tag))


# --- torch's older names ---------------------------------------------------------------------------------------

def _renamed(new, old):
    @functools.wraps(new)
    def call(*args, **kwargs):
        warnings.warn(f"`torch.distributed._functional_collectives.{old}` is deprecated. Please use "
                      f"`torch.distributed._functional_collectives.{new.__name__}` instead.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    call.__name__ = call.__qualname__ = old
    call.__doc__ = f"``{new.__name__}`` under its older name (deprecated, as in torch)."
    return call


all_gather_tensor = _renamed(all_gather_single, 'all_gather_tensor')
reduce_scatter_tensor = _renamed(reduce_scatter_single, 'reduce_scatter_tensor')
all_gather_into_tensor_coalesced = _renamed(all_gather_single_coalesced, 'all_gather_into_tensor_coalesced')
reduce_scatter_tensor_coalesced = _renamed(reduce_scatter_single_coalesced, 'reduce_scatter_tensor_coalesced')
all_gather_tensor_autograd = _renamed(all_gather_single_autograd, 'all_gather_tensor_autograd')
reduce_scatter_tensor_autograd = _renamed(reduce_scatter_single_autograd, 'reduce_scatter_tensor_autograd')
