"""torch.distributed.nn.functional: collectives that autograd differentiates.

NOTE [differentiable collectives] -- ``dist.all_gather`` and its siblings write into tensors the caller made,
so autograd sees no operation. These functions return new tensors and record a node whose backward is the
adjoint collective, each an autograd Function applied again (so gradients of gradients flow too):
all_gather <-> a reduce-scatter of the gradients (summed: every rank's loss may use every slice), broadcast
<-> a reduce to the source (zero elsewhere), reduce <-> a broadcast from the destination, scatter <-> gather,
all_to_all <-> all_to_all, and all_reduce <-> all_reduce with the same op, as torch defines it (for MAX and MIN
that is torch's choice, not the derivative). Every rank must call them in the same order, as any collective.
The reduce-scatter goes through all_to_all and a sum, as torch does on backends without reduce-scatter.
"""
import ember
from ember.autograd import Function

from .. import distributed_c10d as dist
from ..distributed_c10d import ReduceOp, group as _group

__all__ = ['broadcast', 'gather', 'scatter', 'reduce', 'reduce_scatter', 'all_gather', 'all_to_all',
           'all_to_all_single', 'all_reduce']


def broadcast(tensor, src, group=_group.WORLD):
    """``src``'s tensor on every rank; its gradient is the sum of all ranks' gradients, on ``src`` only."""
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=_group.WORLD):
    """Every rank's tensor, as a tuple, on ``dst`` (zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=_group.WORLD):
    """This rank's entry of ``src``'s list."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=_group.WORLD):
    """The reduction of every rank's tensor, on ``dst`` (the input elsewhere)."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=_group.WORLD):
    """This rank's slot of the reduction of every rank's list."""
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=_group.WORLD):
    """Every rank's tensor, as a tuple, on every rank."""
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=_group.WORLD):
    """Entry j of this rank's list goes to rank j; returns the entries the other ranks sent here."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=_group.WORLD):
    """``all_to_all`` on one tensor split along its first dimension."""
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=_group.WORLD):
    """The reduction of every rank's tensor, on every rank, as a new tensor."""
    return _AllReduce.apply(op, group, tensor)


def _rank(group):
    return dist.get_rank(group=group)


def _size(group):
    return dist.get_world_size(group=group)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = tensor.clone()
        dist.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        g = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if _rank(ctx.group) != ctx.src:
            g = g * 0
        return None, None, g


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        tensor = tensor.contiguous()
        outs = [ember.zeros_like(tensor) for _ in range(_size(group))]
        dist.gather(tensor, outs if _rank(group) == dst else None, dst=dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + (_Scatter.apply(ctx.dst, ctx.group, *grads),)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if any(t.shape != tensors[0].shape for t in tensors):
            raise RuntimeError("scatter: every tensor of the list must have the same shape")
        out = ember.zeros_like(tensors[_rank(group)]).contiguous()
        dist.scatter(out, [t.contiguous() for t in tensors] if _rank(group) == src else None, src=src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        dist.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        ctx.group = group
        out = output.contiguous()
        dist.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        tensor = tensor.contiguous()
        outs = [ember.empty_like(tensor) for _ in range(_size(group))]
        dist.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        got = _AllToAll.apply(ctx.group, [ember.empty_like(g) for g in grads], *grads)
        return None, ember.stack(got).sum(0)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, group, outputs, *inputs):
        ctx.group = group
        outs = [o.contiguous() for o in outputs]
        dist.all_to_all(outs, [t.contiguous() for t in inputs], group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        back = [ember.empty_like(g) for g in grads]
        return (None, None) + _AllToAll.apply(ctx.group, back, *grads)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.sizes, ctx.shape = group, (output_split_sizes, input_split_sizes), input.shape
        out = output.contiguous()
        dist.all_to_all_single(out, input.contiguous(), output_split_sizes=output_split_sizes,
                               input_split_sizes=input_split_sizes, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out_sizes, in_sizes = ctx.sizes
        back = ember.empty(ctx.shape, dtype=grad.dtype, device=grad.device)
        return (None, None, None, None,
                _AllToAllSingle.apply(ctx.group, back, in_sizes, out_sizes, grad.contiguous()))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.clone(memory_format=ember.contiguous_format)
        dist.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)
