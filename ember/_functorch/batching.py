"""vmap's machinery: BatchedTensor and the FuncTorchBatched kernels (torch's functorch batching rules).

NOTE [vmap]: a BatchedTensor is an ember.Tensor whose ``_bt`` is ``(physical, level)``: ``physical`` holds every
sample, the batch dimension first, and the BatchedTensor itself has the per-sample (logical) shape, dtype and
device, with shape-only metadata in place of data (a MetaArray), so shape queries and the autograd kernel see the
logical tensor. Its key set has FuncTorchBatched, just below Autograd: autograd records the logical computation
(its formulas run on BatchedTensors again, which gives ``vmap(grad(f))``), then the batching kernel of the operator
maps the call onto the physical tensors, one call for the whole batch. Levels nest: the physical tensor of an
inner vmap may be a BatchedTensor of an outer one; a kernel works at the highest level among its arguments and
treats tensors of lower levels as unbatched (they dispatch again when its physical operation runs).
Differentiating through vmap from outside (``grad(vmap(f))``, ``vmap(f)(x).sum().backward()``) needs nothing more:
the kernels' physical operations take the caller's tensors that require grad as arguments, so autograd records
them as well, and the unwrapped physical result carries that history (the logical graph recorded alongside is
then unused).

Kernels by operator class, chosen from the declaration: pointwise (batched operands get singleton dimensions after
the batch so that broadcasting stays right-aligned), dimension arguments shifted past the batch (reductions,
softmax, cat/stack, transpose, select, ...), shapes (view, expand, permute), matmul and its family, linear (a batched
weight decomposes into matmul) and convolution (a batched weight: the batch folded into the groups), functions of the whole tensor that keep its
shape (clone, _to_copy); batching_rules.py has the rest (scans and sorts, scatter/index families, linear algebra,
FFTs, padding, attention, einsum, normalisation, losses). Everything else takes the slow path
(``python bench/vmap_coverage.py`` lists those operators): one call per sample, stacked, with torch's
performance warning naming the operator. Random operators follow vmap's ``randomness``.
"""
import threading
from ember._warn import warnings

from .._core.dispatch_key import DispatchKey, BATCHED_BIT, below
from .._core.storage import MetaArray
from .._core import tensor_impl as _ti
from .._core.tensor_impl import TensorImpl
from .._dispatch.ops_namespace import aten
from .._dispatch import dispatcher
from . import TRANSFORMS

_BELOW = below(DispatchKey.FuncTorchBatched)


class _State(threading.local):
    def __init__(self):
        self.levels = []        # (level, randomness, batch size) of the running vmaps, outermost first


STATE = _State()
_next_level = [0]


def push_level(randomness, batch_size):
    """A new vmap level. While any is running, FuncTorchBatched is in the thread-local include set, so that
    random factories (randn inside the vmapped function, no tensor argument) reach their batching kernels."""
    _next_level[0] += 1
    STATE.levels.append((_next_level[0], randomness, batch_size))
    TRANSFORMS.stack.append('vmap')      # NOTE [functorch transform stack]
    dispatcher.STATE.include |= BATCHED_BIT
    return _next_level[0]


def pop_level():
    STATE.levels.pop()
    TRANSFORMS.stack.pop()
    if not STATE.levels:
        dispatcher.STATE.include &= ~BATCHED_BIT


def _randomness(level):
    for lv, r, _ in STATE.levels:
        if lv == level:
            return r
    return 'error'


_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def _random_factory_kernel(op):
    """randn(size) inside vmap: an error, one draw for every sample ('same'), or one per sample ('different')."""
    names = [a.name for a in op.schema.arguments]
    size_pos = names.index('size') if 'size' in names else None

    def kernel(ks, *args):
        if not STATE.levels:
            return op.redispatch(ks & _BELOW, *args)
        level, r, n = STATE.levels[-1]
        if r == 'error':
            raise RuntimeError(_RANDOM_ERROR)
        if r == 'same':
            return op.redispatch(ks & _BELOW, *args)
        if size_pos is None:        # randperm: one permutation per sample
            return make_batched(aten.stack.default([op.redispatch(ks & _BELOW, *args) for _ in range(n)]), level)
        new = list(args)
        new[size_pos] = [n] + list(args[size_pos])
        return make_batched(op.redispatch(ks & _BELOW, *new), level)
    kernel.__qualname__ = f'batched::{op.schema.full_name}'
    return kernel


def make_batched(physical, level):
    """A BatchedTensor over ``physical`` (batch dimension first) at ``level``."""
    T = _ti._tensor_class
    t = object.__new__(T)
    shape = tuple(physical.shape[1:])
    isz = physical._a.itemsize
    # the physical strides less the batch's: contiguity and view decisions on the logical tensor hold for its samples
    t._a = MetaArray(shape, physical._a.dtype, tuple(s * isz for s in physical.stride()[1:]))
    t._dtype, t._device = physical._dtype, physical._device
    t._keys = physical._device._iface.keyset | BATCHED_BIT
    t._vc = [0]
    t._bt = (physical, level)
    return t


def unwrap(t, level):
    """The physical tensor of ``t`` at ``level`` (batch first), or None when ``t`` is not batched there."""
    bt = t._bt if isinstance(t, TensorImpl) else None
    return bt[0] if bt is not None and bt[1] == level else None


def _level_of(args):
    lv = None
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            if isinstance(x, TensorImpl) and x._bt is not None:
                lv = x._bt[1] if lv is None else max(lv, x._bt[1])
    return lv


def _batch_size(args, level):
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            p = unwrap(x, level)
            if p is not None:
                return p.shape[0]
    raise AssertionError('no batched argument')


def _wrap_out(out, level):
    if isinstance(out, TensorImpl):
        return make_batched(out, level)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap_out(o, level) for o in out)
    return out


def _physical_or_expanded(x, level, B):
    """The physical tensor of a batched argument; an unbatched tensor expanded over the batch."""
    p = unwrap(x, level)
    if p is not None:
        return p
    return x.unsqueeze(0).expand((B,) + tuple(x.shape))


# --- rules ----------------------------------------------------------------------------------------------------

def _pointwise(op):
    tensor_pos = [i for i, a in enumerate(op.schema.arguments) if a.base_type == 'Tensor']

    def rule(level, args):
        rank = max((x.dim() for i in tensor_pos for x in (args[i],) if isinstance(x, TensorImpl)), default=0)
        new = list(args)
        for i in tensor_pos:
            p = unwrap(args[i], level)
            if p is not None and p.dim() - 1 < rank:     # singleton dims after the batch: broadcasting stays aligned
                p = p.reshape((p.shape[0],) + (1,) * (rank - p.dim() + 1) + tuple(p.shape[1:]))
            if p is not None:
                new[i] = p
        return _wrap_out(op.call_in_schema_order(new), level)
    return rule


def _norm(d, rank):
    return d + rank if d < 0 else d


def _dims_rule(op, dim_args, extra_rank=0, none_means_all=False, shared=()):
    """Operators whose dimension arguments are shifted past the batch; every tensor argument is batched (an
    unbatched one is expanded over the batch)."""
    names = [a.name for a in op.schema.arguments]
    types = {a.name: a.base_type for a in op.schema.arguments}

    def rule(level, args):
        B = _batch_size(args, level)
        new = list(args)
        rank = None
        for i, n in enumerate(names):
            if n in shared:     # an argument the samples share (index_select's index): batched, no rule applies
                if unwrap(args[i], level) is not None:
                    return _fallback(op, level, args)
                continue
            if types[n] == 'Tensor' and isinstance(args[i], TensorImpl):
                rank = args[i].dim() if rank is None else rank
                new[i] = _physical_or_expanded(args[i], level, B)
            elif types[n] == 'Tensor[]':
                rank = args[i][0].dim() if rank is None else rank
                new[i] = [_physical_or_expanded(x, level, B) for x in args[i]]
        r = rank + extra_rank
        if r == 0 and any(isinstance(args[names.index(n)], int) for n in dim_args):
            return _fallback(op, level, args, warn=False)   # a dimension of a 0-d sample (cumsum(x, 0)): per sample
        for n in dim_args:
            i = names.index(n)
            d = args[i]
            if d is None and none_means_all == 'flatten':       # argmax(): over the flattened sample
                new[0] = new[0].reshape(new[0].shape[0], -1)
                new[i] = 1
                if 'keepdim' in names and args[names.index('keepdim')]:
                    out = op.call_in_schema_order(new[:names.index('keepdim')] + [False] + new[names.index('keepdim') + 1:])
                    return make_batched(out.reshape((B,) + (1,) * rank), level)
                continue
            if d is None:
                if none_means_all:
                    new[i] = list(range(1, rank + 1))
                continue
            if isinstance(d, (list, tuple)):
                if len(d) == 0 and none_means_all:
                    new[i] = list(range(1, rank + 1))
                else:
                    new[i] = [_norm(x, r) + 1 for x in d]
            else:
                new[i] = _norm(d, max(r, 1)) + 1
        return _wrap_out(op.call_in_schema_order(new), level)
    return rule


def _view_rule(op):
    def rule(level, args):
        p = unwrap(args[0], level)
        size = list(args[1])
        return _wrap_out(op.call_in_schema_order([p, [p.shape[0]] + size] + list(args[2:])), level)
    return rule


def _expand_rule(op):
    def rule(level, args):
        p = unwrap(args[0], level)
        size = list(args[1])
        B, lshape = p.shape[0], tuple(p.shape[1:])
        p = p.reshape((B,) + (1,) * (len(size) - len(lshape)) + lshape)
        return _wrap_out(p.expand([B] + size), level)
    return rule


def _permute_rule(op):
    def rule(level, args):
        p = unwrap(args[0], level)
        r = p.dim() - 1
        return _wrap_out(p.permute([0] + [_norm(d, r) + 1 for d in args[1]]), level)
    return rule


def _t_rule(op):
    """``t()`` of one sample: its two dimensions swapped, behind the batch dimension (a 0-d or 1-d sample: itself)."""
    def rule(level, args):
        p = unwrap(args[0], level)
        return _wrap_out(p.transpose(1, 2) if p.dim() == 3 else p, level)
    return rule


def _same_shape_rule(op):
    """Functions of the whole tensor that keep its shape (clone, _to_copy, alias): applied to the physical one."""
    def rule(level, args):
        new = list(args)
        new[0] = unwrap(args[0], level)
        if new[0] is None:
            return op.call_in_schema_order(args)
        return _wrap_out(op.call_in_schema_order(new), level)
    return rule


def _elementwise_self_rule(op, axis_arg=None):
    """Elementwise in ``self`` with per-tensor (or per-channel, along ``axis_arg``) parameters that the samples share
    (fake quantization): the physical tensor, the channel axis moved past the batch; batched parameters run per
    sample."""
    names = [a.name for a in op.schema.arguments]
    ax = names.index(axis_arg) if axis_arg else None

    def rule(level, args):
        if any(unwrap(a, level) is not None for a in args[1:] if isinstance(a, TensorImpl)):
            return _fallback(op, level, args)
        new = list(args)
        new[0] = unwrap(args[0], level)
        if ax is not None:
            new[ax] = args[ax] % max(args[0].dim(), 1) + 1
        return _wrap_out(op.call_in_schema_order(new), level)
    return rule


def _item_rule(level, args):
    raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
                       ".item() on a Tensor, please try to rewrite what you're doing with other operations.")


def _matmul_rule(op):
    """matmul, mm, bmm, mv, dot: matmul of the physical tensors. A 1-D operand becomes a matrix (and its dimension
    is squeezed from the result), and a batched operand gets singleton dimensions after the batch up to the other
    operand's rank, so that matmul's broadcasting of leading dimensions never meets the batch."""
    def rule(level, args):
        a, b = args[0], args[1]
        pa, pb = unwrap(a, level), unwrap(b, level)
        sq_a, sq_b = a.dim() == 1, b.dim() == 1
        A = pa if pa is not None else a
        Bm = pb if pb is not None else b
        if sq_a:
            A = A.unsqueeze(-2)
        if sq_b:
            Bm = Bm.unsqueeze(-1)
        la, lb = max(a.dim(), 2), max(b.dim(), 2)
        r = max(la, lb)
        if pa is not None:
            A = A.reshape((A.shape[0],) + (1,) * (r - la) + tuple(A.shape[1:]))
        if pb is not None:
            Bm = Bm.reshape((Bm.shape[0],) + (1,) * (r - lb) + tuple(Bm.shape[1:]))
        out = aten.matmul.default(A, Bm)
        if sq_b:
            out = out.squeeze(-1)
        if sq_a:
            out = out.squeeze(-1 if sq_b else -2)
        return make_batched(out, level)
    return rule


def _linear_rule(op):
    def rule(level, args):
        x, w, b = args[0], args[1], args[2] if len(args) > 2 else None
        if unwrap(w, level) is None and (b is None or unwrap(b, level) is None):
            px = unwrap(x, level)
            return make_batched(aten.linear.default(px, w, b), level)
        out = aten.matmul.default(x, w if w.dim() == 1 else w.transpose(-1, -2))   # logical ops, each batched
        return out if b is None else out + b
    return rule


def _conv_rule(op):
    def rule(level, args):
        x, w, b = args[0], args[1], args[2]
        px = unwrap(x, level)
        if unwrap(w, level) is not None and not args[6]:
            return _conv_batched_weight(op, level, args)
        if px is None or unwrap(w, level) is not None or (b is not None and unwrap(b, level) is not None):
            return _fallback(op, level, args)
        B = px.shape[0]
        if x.dim() == w.dim():      # (N, C, ...) per sample: fold the batch into N
            folded = px.reshape((B * px.shape[1],) + tuple(px.shape[2:]))
            out = op.call_in_schema_order([folded] + list(args[1:]))
            return make_batched(out.reshape((B, px.shape[1]) + tuple(out.shape[1:])), level)
        return make_batched(op.call_in_schema_order([px] + list(args[1:])), level)    # (C, ...) per sample: the batch is N
    return rule


def _conv_batched_weight(op, level, args):
    """A convolution with per-sample weights (model ensembles, per-sample filters): the batch goes into the
    channels and the groups, sample b's input channels meeting only sample b's filters; one call."""
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
    pw = unwrap(w, level)
    B = pw.shape[0]
    px = _physical_or_expanded(x, level, B)
    if x.dim() != w.dim():      # (C, ...) samples: a batch of one image each
        px = px.unsqueeze(1)
    N, C = px.shape[1], px.shape[2]
    xin = px.transpose(0, 1).reshape((N, B * C) + tuple(px.shape[3:]))
    win = pw.reshape((B * pw.shape[1],) + tuple(pw.shape[2:]))
    bin_ = None if b is None else _physical_or_expanded(b, level, B).reshape(-1)
    out = op.call_in_schema_order([xin, win, bin_, stride, padding, dilation, False, output_padding, groups * B])
    out = out.reshape((N, B, pw.shape[1]) + tuple(out.shape[2:])).transpose(0, 1)
    return make_batched(out.squeeze(1) if x.dim() != w.dim() else out, level)


def _rows(t, B):
    """``t`` (B, ..., C) as (B, rows, C), with the rows counted (a -1 cannot be resolved for an empty batch)."""
    rows = 1
    for n in t.shape[1:-1]:
        rows *= n
    return t.reshape(B, rows, t.shape[-1])


def _linear_backward_rule(op):
    """linear's fused backward with a batched input or gradient: the weight's and the bias's gradients are per
    sample (one batched matmul), the input's one matmul (a stacked one for per-sample weights)."""
    def rule(level, args):
        x, g, w, mask = args
        B = _batch_size(args, level)
        px, pg = _physical_or_expanded(x, level, B), _physical_or_expanded(g, level, B)
        pw = unwrap(w, level)
        gi = gw = gb = None
        if mask[0] and pw is not None:      # per-sample weights (an ensemble): one stacked matmul
            gi = aten.matmul.default(_rows(pg, B), pw).reshape(tuple(px.shape))
            gi = make_batched(gi, level)
        elif mask[0]:
            gi = make_batched(aten.matmul.default(pg, w), level)
        if mask[1]:
            g3, x3 = _rows(pg, B), _rows(px, B)
            # one row per sample (an MLP on single examples): an outer product, which a stacked matmul with an
            # inner dimension of 1 computes far more slowly
            gw = g3.transpose(1, 2) * x3 if g3.shape[1] == 1 else aten.matmul.default(g3.transpose(1, 2), x3)
            gw = make_batched(gw, level)
        if mask[2]:
            gb = make_batched(_rows(pg, B).sum(1), level)
        return gi, gw, gb
    return rule


def _nll_forward_rule(op):
    """nll_loss_forward per sample of a (C,) or (N, C) input: one unreduced call on the flattened batch, then
    each sample's reduction (its own total weight)."""
    def rule(level, args):
        self, target, weight, reduction, ignore_index = args
        if weight is not None and unwrap(weight, level) is not None or self.dim() > 2 or self.numel() == 0:
            return _fallback(op, level, args)
        B = _batch_size(args, level)
        ps, pt = _physical_or_expanded(self, level, B), _physical_or_expanded(target, level, B)
        C = ps.shape[-1]
        out = aten.nll_loss_forward.default(ps.reshape(-1, C), pt.reshape(-1), weight, 0, ignore_index)[0]
        keep = (pt.reshape(-1) != ignore_index).to(ps.dtype)
        w = keep if weight is None else weight[pt.reshape(-1).clamp(0, C - 1)] * keep
        tw = w.reshape(B, -1).sum(1)
        if reduction == 0:
            res = out.reshape(tuple(pt.shape))
            if self.dim() == 2:
                tw = tw * 0     # the kernel's total_weight of an unreduced (N, C) call
        else:
            res = out.reshape(B, -1).sum(1)
            if reduction == 1:
                res = res / tw
        return make_batched(res, level), make_batched(tw, level)
    return rule


def _nll_backward_rule(op):
    def rule(level, args):
        g, self, target, weight, reduction, ignore_index, total_weight = args
        if weight is not None and unwrap(weight, level) is not None or self.dim() > 2:
            return _fallback(op, level, args)
        B = _batch_size(args, level)
        ps, pt = _physical_or_expanded(self, level, B), _physical_or_expanded(target, level, B)
        pg = _physical_or_expanded(g, level, B)
        C = ps.shape[-1]
        rows = pt.reshape(B, -1).shape[1]
        if reduction == 0:
            gr = pg.reshape(-1)
        else:
            pg = pg.reshape(B)      # one gradient per sample
            if reduction == 1:
                pg = pg / _physical_or_expanded(total_weight, level, B).reshape(B)
            gr = pg.reshape(B, 1).expand(B, rows).reshape(-1)
        one = aten.ones.default((), dtype=ps.dtype, device=ps.device)
        out = aten.nll_loss_backward.default(gr, ps.reshape(-1, C), pt.reshape(-1), weight, 0, ignore_index, one)
        return make_batched(out.reshape(tuple(ps.shape)), level)
    return rule


def _index_rule(op):
    """``x[indices]``. Shared indices: the batch gets a full slice in front. Per-sample indices (or a shared tensor
    indexed per sample): the batch gets an arange index in front, each index aligned to the others' rank so that
    broadcasting never meets the batch; when slices come first, torch puts the advanced dimensions first (the
    batch's arange is not adjacent to the others), and a permute puts them back where one sample has them.
    Advanced indices that are not adjacent within the sample, and masks, take the slow path."""
    def rule(level, args):
        self, indices = args
        p = unwrap(self, level)
        given = [i for i, x in enumerate(indices) if x is not None]
        if given and given[-1] - given[0] + 1 != len(given):
            return _fallback(op, level, args)
        if not any(unwrap(x, level) is not None for x in indices if x is not None):
            return make_batched(aten.index.Tensor(p, [None] + list(indices)), level)
        if any(x.dtype.name in ('bool', 'uint8') for x in indices if x is not None):
            return _fallback(op, level, args)
        B = _batch_size(args, level)
        p = _physical_or_expanded(self, level, B)
        r = max(indices[i].dim() for i in given)
        k = given[0]
        new = [aten.arange.default(B, device=p.device).reshape((B,) + (1,) * r)] + [None] * k
        for i in given:
            q = unwrap(indices[i], level)
            new.append(q.reshape((B,) + (1,) * (r - indices[i].dim()) + tuple(q.shape[1:])) if q is not None
                       else indices[i])
        out = aten.index.Tensor(p, new)
        if k:       # (B, *index dims, *sliced dims, *rest) -> (B, *sliced dims, *index dims, *rest)
            rest = list(range(1 + r + k, out.dim()))
            out = out.permute([0] + list(range(1 + r, 1 + r + k)) + list(range(1, 1 + r)) + rest)
        return make_batched(out, level)
    return rule


def _inplace_pointwise(op, functional_rule):
    """``x.add_(y)`` on a batched ``x``: the in-place operator on the physical tensors; an unbatched ``x`` with a
    batched operand cannot hold the result (torch's error)."""
    tensor_pos = [i for i, a in enumerate(op.schema.arguments) if a.base_type == 'Tensor']

    def rule(level, args):
        p = unwrap(args[0], level)
        if p is None:
            raise inplace_error(op.schema.name)
        rank = args[0].dim()
        new = list(args)
        new[0] = p
        for i in tensor_pos[1:]:
            q = unwrap(args[i], level)
            if q is not None:
                new[i] = q.reshape((q.shape[0],) + (1,) * (rank - q.dim() + 1) + tuple(q.shape[1:]))
        op.call_in_schema_order(new)
        return args[0]
    return rule


def _conv_weight_grad_rule(op):
    """Per-sample weight gradients of a convolution in one call: the batch goes into the channels and the groups
    (sample b's channels form groups b*g .. b*g+g-1), so each sample's input meets only its own gradient."""
    def rule(level, args):
        g, x, wsizes, stride, padding, dilation, groups = args
        B = _batch_size(args, level)
        pg, px = _physical_or_expanded(g, level, B), _physical_or_expanded(x, level, B)
        if x.dim() == len(wsizes) - 1:      # unbatched images (C, ...): each sample is a batch of one
            pg, px = pg.unsqueeze(1), px.unsqueeze(1)
        N = px.shape[1]
        fold = lambda p: p.transpose(0, 1).reshape((N, -1) + tuple(p.shape[3:]))
        out = op.call_in_schema_order([fold(pg), fold(px), [B * wsizes[0]] + list(wsizes[1:]), stride, padding, dilation,
                         groups * B])
        return make_batched(out.reshape([B] + list(wsizes)), level)
    return rule


def _roll_rule(op):
    """roll: with no dims it rolls the flattened sample, which must not reach the batch."""
    dims_rule = _dims_rule(op, ('dims',))

    def rule(level, args):
        self, shifts, dims = args
        if not (dims is None or isinstance(dims, (list, tuple)) and len(dims) == 0):
            return dims_rule(level, args)
        p = _physical_or_expanded(self, level, _batch_size(args, level))
        flat = p.reshape(p.shape[0], -1)
        return make_batched(op.call_in_schema_order([flat, shifts, [1]]).reshape(tuple(p.shape)), level)
    return rule


def _fold_rule(op, spatial):
    """Pooling and its backward: a per-sample (N, C, *spatial) tensor has the batch folded into N, a (C, *spatial)
    one takes the batch as N; every tensor argument alike (indices included: they index within each plane)."""
    types = [a.base_type for a in op.schema.arguments]

    def rule(level, args):
        B = _batch_size(args, level)
        batched_image = next(a for a, t in zip(args, types) if t == 'Tensor').dim() == spatial + 2
        new = list(args)
        for i, t in enumerate(types):
            if t == 'Tensor' and isinstance(args[i], TensorImpl):
                p = _physical_or_expanded(args[i], level, B)
                new[i] = p.reshape((-1,) + tuple(p.shape[2:])) if batched_image else p
        out = op.call_in_schema_order(new)

        def unfold(o):
            return make_batched(o.reshape((B, -1) + tuple(o.shape[1:])) if batched_image else o, level)
        return tuple(unfold(o) for o in out) if isinstance(out, tuple) else unfold(out)
    return rule


def _random_rule(op):
    def rule(level, args):
        r = _randomness(level)
        if r == 'error':
            raise RuntimeError(_RANDOM_ERROR)
        p = unwrap(args[0], level)
        if r == 'same' and p is not None:
            one = op.call_in_schema_order([p[0]] + list(args[1:]))
            outs = one if isinstance(one, tuple) else (one,)
            res = tuple(make_batched(o.unsqueeze(0).expand((p.shape[0],) + tuple(o.shape)), level) for o in outs)
            return res if isinstance(one, tuple) else res[0]
        return _fallback(op, level, args, warn=False) if p is None else _wrap_out(op.call_in_schema_order([p] + list(args[1:])), level)
    return rule


def inplace_error(name):
    """torch's error for an in-place operator whose unbatched ``self`` would have to hold a batched operand."""
    return RuntimeError(f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in "
                        f"extra_args that has more elements than `self`. This happened due to `other` being vmapped "
                        f"over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators "
                        f"instead of {name}. If said operator is being called inside the PyTorch framework, please "
                        f"file a bug report instead.")


def _is_inplace(op):
    """An operator that writes its first argument, ``self``, and returns it (torch's isInplaceOp): ``add_`` but also
    ``copy_`` and ``zero_``, which carry no 'inplace' tag (they are not generated from a functional operator)."""
    a = op.schema.arguments
    return 'inplace' in op.tags or bool(a) and a[0].is_write and not a[0].kwarg_only and a[0].name == 'self' and \
        len(op.schema.returns) == 1


def zeros_strided(like, size, stride, offset=0):
    """Zeros of ``size`` laid out with ``stride`` and ``offset`` in their storage, batched at every vmap level that
    ``like`` is (torch's new_empty_strided batching rule): each sample gets its own storage of that extent, the
    batch dimension first, so that a per-sample copy into it keeps every sample."""
    extent = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    bt = like._bt
    if bt is None:
        buf = aten.zeros.default((extent,), dtype=like.dtype, device=like.device)
        return aten.as_strided.default(buf, tuple(size), tuple(stride), offset)
    physical, level = bt
    inner = zeros_strided(physical, (physical.shape[0],) + tuple(size), (extent,) + tuple(stride), offset)
    return make_batched(inner, level)


def _fallback(op, level, args, warn=True):
    """One call per sample, the results stacked: torch's slow vmap fallback, with its warning."""
    if warn:       # Python's warning filters decide how often it shows (by default once per place)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{op.name}. Please file us an issue on GitHub so that we can prioritize its implementation.",
                      UserWarning, stacklevel=4)
    B = _batch_size(args, level)
    inplace = _is_inplace(op)
    if inplace and unwrap(args[0], level) is None:
        raise inplace_error(op.schema.name)
    per = []
    for i in range(B):
        sl = []
        for a in args:
            if isinstance(a, (list, tuple)) and any(isinstance(x, TensorImpl) for x in a):
                sl.append(type(a)(unwrap(x, level)[i] if unwrap(x, level) is not None else x for x in a))
            else:
                p = unwrap(a, level)
                sl.append(p[i] if p is not None else a)
        per.append(op.call_in_schema_order(sl))
    if inplace:
        return args[0]
    first = per[0]
    if isinstance(first, TensorImpl):
        return make_batched(aten.stack.default(per), level)
    if isinstance(first, (list, tuple)):
        return type(first)(None if first[k] is None else make_batched(aten.stack.default([p[k] for p in per]), level)
                           for k in range(len(first)))
    raise RuntimeError(f"vmap: {op.name} returned {type(first).__name__}, which vmap cannot batch (a Python value "
                       f"per sample); move the call out of the vmapped function")


# --- registration ------------------------------------------------------------------------------------------

_DIMS = {  # operator: (dimension arguments, extra rank of the result, None means every dimension)
    'sum.dim_IntList': (('dim',), 0, True), 'mean.dim': (('dim',), 0, True), 'nansum': (('dim',), 0, True),
    'amax': (('dim',), 0, True), 'amin': (('dim',), 0, True),
    'logsumexp': (('dim',), 0, False), 'prod.dim_int': (('dim',), 0, 'flatten'), 'var.correction': (('dim',), 0, True), 'std.correction': (('dim',), 0, True),
    'max.dim': (('dim',), 0, False), 'min.dim': (('dim',), 0, False), 'argmax': (('dim',), 0, 'flatten'),
    'argmin': (('dim',), 0, 'flatten'), 'cumsum': (('dim',), 0, False), 'cumprod': (('dim',), 0, False),
    'softmax.int': (('dim',), 0, False), 'log_softmax.int': (('dim',), 0, False),
    '_softmax_backward_data': (('dim',), 0, False), '_log_softmax_backward_data': (('dim',), 0, False),
    'cat': (('dim',), 0, False), 'stack': (('dim',), 1, False), 'transpose.int': (('dim0', 'dim1'), 0, False),
    'select.int': (('dim',), 0, False), 'slice.Tensor': (('dim',), 0, False), 'squeeze.dims': (('dim',), 0, False),
    'unsqueeze': (('dim',), 1, False), 'diagonal': (('dim1', 'dim2'), 0, False), 'flip': (('dims',), 0, False),
    'gather': (('dim',), 0, False), 'index_select': (('dim',), 0, False, ('index',)),
    'linalg_vector_norm': (('dim',), 0, True),
}
_POOLS = {'max_pool2d_with_indices': 2, 'max_pool2d_with_indices_backward': 2, 'avg_pool2d': 2,
          'avg_pool2d_backward': 2, '_adaptive_avg_pool2d': 2, '_adaptive_avg_pool2d_backward': 2,
          'max_pool3d_with_indices': 3, 'max_pool3d_with_indices_backward': 3, 'avg_pool3d': 3,
          'avg_pool3d_backward': 3}
_BROADCASTING = {'where.self', 'masked_fill.Scalar', 'masked_fill.Tensor'}     # elementwise, not 'pointwise' kind
_SAME = {'clone', 'alias', '_to_copy', 'detach', 'fill.Scalar', 'zero', 'bernoulli.p', 'empty_like', 'zeros_like',
         'ones_like', 'full_like'}
_MATMUL = {'matmul', 'mm', 'bmm', 'mv', 'dot'}
_RANDOM = {'bernoulli', 'bernoulli.p', 'bernoulli.Tensor', 'native_dropout', 'uniform', 'normal_functional',
           'exponential', 'geometric', 'cauchy', 'log_normal', 'random.from', 'poisson', 'normal.Tensor_float',
           'normal.Tensor_Tensor', 'normal.float_Tensor', '_standard_gamma'}


def rule_for(decl):
    name = decl.op.schema.full_name
    op = decl.op
    if name in _RANDOM:
        return _random_rule(op), 'random'
    if decl.kind == 'pointwise' or name in _BROADCASTING:
        return _pointwise(op), 'pointwise'
    if name in _DIMS:
        return _dims_rule(op, *_DIMS[name]), 'dims'
    if name in ('view', '_unsafe_view'):
        return _view_rule(op), 'shape'
    if name == 'expand':
        return _expand_rule(op), 'shape'
    if name == 'permute':
        return _permute_rule(op), 'shape'
    if name == 't':
        return _t_rule(op), 'shape'
    if name in _SAME:
        return _same_shape_rule(op), 'same'
    if name == '_local_scalar_dense':
        return _item_rule, 'error'
    if name in ('fake_quantize_per_tensor_affine_cachemask', '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams',
                '_fake_quantize_learnable_per_tensor_affine'):
        return _elementwise_self_rule(op), 'pointwise'
    if name in ('fake_quantize_per_channel_affine_cachemask', '_fake_quantize_learnable_per_channel_affine'):
        return _elementwise_self_rule(op, 'axis'), 'dims'
    if name in _MATMUL:
        return _matmul_rule(op), 'matmul'
    if name == 'linear':
        return _linear_rule(op), 'linear'
    if name == 'convolution':
        return _conv_rule(op), 'convolution'
    if name == 'roll':
        return _roll_rule(op), 'dims'
    if name == 'convolution_backward_weight':
        return _conv_weight_grad_rule(op), 'convolution'
    if name in _POOLS:
        return _fold_rule(op, _POOLS[name]), 'pooling'
    if name == 'index.Tensor':
        return _index_rule(op), 'indexing'
    if name == 'linear_backward':
        return _linear_backward_rule(op), 'linear'
    if name == 'nll_loss_forward':
        return _nll_forward_rule(op), 'loss'
    if name == 'nll_loss_backward':
        return _nll_backward_rule(op), 'loss'
    from .batching_rules import rule_for as more_rules     # scans, scatter/index, linalg, fft, padding, losses
    return more_rules(decl)


def batched_kernel(op, rule):
    def kernel(ks, *args):
        level = _level_of(args)
        if level is None:
            return op.redispatch(ks & _BELOW, *args)
        return rule(level, args)
    kernel.__qualname__ = f'batched::{op.schema.full_name}'
    return kernel


def fallback_kernel(op, ks, *args):
    level = _level_of(args)
    if level is None:
        return op.redispatch(ks & _BELOW, *args)
    return _fallback(op, level, args)


def register_all():
    from .._ops.registry import BY_OP
    from ..library import Library
    from .._dispatch.dispatcher import lookup_op
    lib = Library('aten', 'IMPL')
    for name in ('aten::rand', 'aten::randn', 'aten::randint.low', 'aten::normal.float_float', 'aten::randperm'):
        op = lookup_op(name)
        op.register(DispatchKey.FuncTorchBatched, _random_factory_kernel(op))
    for name in ('aten::real', 'aten::imag', 'aten::view_as_real', 'aten::view_as_complex'):
        op = lookup_op(name)    # composites of Python views (NOTE [complex views]): the same view of the physical
        op.register(DispatchKey.FuncTorchBatched, batched_kernel(op, _same_shape_rule(op)))
    from .batching_rules import INPLACE
    for name, make in INPLACE.items():
        op = lookup_op('aten::' + name)
        op.register(DispatchKey.FuncTorchBatched, batched_kernel(op, make(op)))
    lib.fallback(fallback_kernel, 'FuncTorchBatched', with_keyset=True)
    for decl in set(BY_OP.values()):
        if decl.composite is not None:
            continue
        rule, kind = rule_for(decl)
        if rule is not None:
            lib.impl(decl.op.name, batched_kernel(decl.op, rule), 'FuncTorchBatched', with_keyset=True)
        if kind == 'pointwise' and decl.inplace_op is not None:
            lib.impl(decl.inplace_op.name, batched_kernel(decl.inplace_op, _inplace_pointwise(decl.inplace_op, rule)),
                     'FuncTorchBatched', with_keyset=True)
    return lib
