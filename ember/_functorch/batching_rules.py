"""More batching rules (NOTE [vmap] in batching.py): scans and sorts, scatter/index families, linear algebra on the
last two dimensions, FFTs, padding and pooling, fused matmul-adds, einsum, and the losses and backward kernels
real programs reach. Each maps a call on BatchedTensors to one call on the physical tensors (batch first), or to
logical operators that are batched in turn; a case a rule does not cover goes to the per-sample fallback.
``python bench/vmap_coverage.py`` lists the operators still without a rule.
"""
import string

from .._core.tensor_impl import TensorImpl
from .._core.dtype import int32 as _INT32
from .._dispatch.ops_namespace import aten
from .batching import (_dims_rule, _fold_rule, _same_shape_rule, _pointwise, _fallback, _batch_size, _wrap_out,
                       _physical_or_expanded, make_batched, unwrap, _norm, inplace_error)

# operator: (dimension arguments, extra rank of the result, None means every dimension, arguments the samples share)
DIMS = {
    'sort': (('dim',), 0, False), 'topk': (('dim',), 0, False), 'kthvalue': (('dim',), 0, False),
    'median.dim': (('dim',), 0, False), 'nanmedian.dim': (('dim',), 0, False), 'mode': (('dim',), 0, False),
    'cummax': (('dim',), 0, False), 'cummin': (('dim',), 0, False), 'logcumsumexp': (('dim',), 0, False),
    'count_nonzero.dim_IntList': (('dim',), 0, True),
    'scatter.src': (('dim',), 0, False), 'scatter.value': (('dim',), 0, False),
    'scatter.reduce': (('dim',), 0, False), 'scatter.value_reduce': (('dim',), 0, False),
    'scatter_add': (('dim',), 0, False), 'scatter_reduce.two': (('dim',), 0, False),
    'index_add': (('dim',), 0, False, ('index',)), 'index_copy': (('dim',), 0, False, ('index',)),
    'index_fill.int_Scalar': (('dim',), 0, False, ('index',)),
    'index_fill.int_Tensor': (('dim',), 0, False, ('index', 'value')),
    'diagonal_scatter': (('dim1', 'dim2'), 0, False), 'select_scatter': (('dim',), 0, False),
    'slice_scatter': (('dim',), 0, False), 'diag_embed': (('dim1', 'dim2'), 1, False),
    'fft_fft': (('dim',), 0, False), 'fft_ifft': (('dim',), 0, False), 'fft_rfft': (('dim',), 0, False),
    'fft_irfft': (('dim',), 0, False), 'fft_hfft': (('dim',), 0, False), 'fft_ihfft': (('dim',), 0, False),
    'fft_fft2': (('dim',), 0, False), 'fft_ifft2': (('dim',), 0, False), 'fft_rfft2': (('dim',), 0, False),
    'fft_irfft2': (('dim',), 0, False),
    'linalg_cross': (('dim',), 0, False), 'unfold': (('dimension',), 0, False),
}
_FFTN = {'fft_fftn', 'fft_ifftn', 'fft_rfftn', 'fft_irfftn'}
# functions of the last dimensions (or of the whole sample, batch-aware): the same call on the physical tensor
_LAST_DIMS = {'tril', 'triu', 'linalg_inv', 'linalg_det', 'linalg_slogdet', 'linalg_cholesky', 'linalg_qr',
              'linalg_svd', 'linalg_svdvals', 'linalg_eigh', 'linalg_eigvalsh', 'linalg_pinv', 'constant_pad_nd',
              'linalg_eig', 'geqrf', 'linalg_ldl_factor_ex', 'linalg_matrix_exp'}
# (C, *spatial) or (N, C, *spatial) per sample: the batch folded into N
_FOLD = {'reflection_pad1d': 1, 'reflection_pad2d': 2, 'reflection_pad3d': 3, 'replication_pad1d': 1,
         'replication_pad2d': 2, 'replication_pad3d': 3, 'adaptive_max_pool2d': 2, 'adaptive_max_pool2d_backward': 2,
         '_adaptive_avg_pool3d': 3, '_adaptive_avg_pool3d_backward': 3, 'im2col': 2, 'col2im': 1}
_SDPA = {'_scaled_dot_product_flash_attention_for_cpu', '_scaled_dot_product_flash_attention_for_cpu_backward'}
_ELEMENTWISE = {'isclose', '_standard_gamma_grad', '_prelu_kernel_backward'}
_WHOLE = {'max': 'amax', 'min': 'amin', 'median': 'median', 'nanmedian': 'nanmedian'}


def _first_rank(op, args):
    return next(a.dim() for a in args if isinstance(a, TensorImpl))


def _unless_scalar(op, rule):
    """A rule for samples with dimensions; 0-d samples run per sample (no dimension to shift)."""
    def wrapped(level, args):
        if _first_rank(op, args) == 0:
            return _fallback(op, level, args, warn=False)
        return rule(level, args)
    return wrapped


def _last_dims_rule(op):
    """Operators batched over leading dimensions already: the physical tensor is one more leading dimension; other
    tensor arguments must be the samples' shared ones."""
    same = _same_shape_rule(op)

    def rule(level, args):
        if any(unwrap(a, level) is not None for a in args[1:] if isinstance(a, TensorImpl)) or \
                unwrap(args[0], level) is None:
            return _fallback(op, level, args)
        if op.schema.name == 'constant_pad_nd' and len(args[1]) // 2 > args[0].dim() or \
                op.schema.name == 'linalg_qr' and args[1] == 'r':     # mode='r': Q is one empty tensor, unbatched
            return _fallback(op, level, args)
        return same(level, args)
    return rule


def _fftn_rule(op):
    """fftn and friends: no ``dim`` means the last len(s) dimensions, or all of them."""
    dims = _dims_rule(op, ('dim',))

    def rule(level, args):
        self, s, dim, norm = args
        if dim is None:
            dim = list(range(-len(s), 0)) if s is not None else list(range(self.dim()))
        return dims(level, (self, s, dim, norm))
    return rule


def _all_any_rule(op):
    """all/any over ``dim``: None is every dimension, an empty list none (unlike sum's)."""
    dims = _dims_rule(op, ('dim',))

    def rule(level, args):
        self, dim, keepdim = args
        return dims(level, (self, list(range(self.dim())) if dim is None else dim, keepdim))
    return rule


def _whole_rule(op, dim_op):
    """A reduction of the whole sample (max(), median()): the dim form over the flattened sample."""
    def rule(level, args):
        p = unwrap(args[0], level)
        if p is None or args[0].numel() == 0:
            return _fallback(op, level, args)
        flat = p.reshape(p.shape[0], -1)
        if dim_op in ('amax', 'amin'):
            return make_batched(getattr(aten, dim_op).default(flat, [1]), level)
        return make_batched(getattr(aten, dim_op).dim(flat, 1)[0], level)
    return rule


def _aminmax_rule(op):
    def rule(level, args):
        self, dim, keepdim = args
        p = unwrap(self, level)
        if p is None or self.dim() == 0 or self.numel() == 0:
            return _fallback(op, level, args, warn=p is not None and self.dim() != 0)
        if dim is None:
            lo, hi = aten.aminmax.default(p.reshape(p.shape[0], -1), dim=1)
            if keepdim:
                lo, hi = (t.reshape((p.shape[0],) + (1,) * self.dim()) for t in (lo, hi))
        else:
            lo, hi = aten.aminmax.default(p, dim=_norm(dim, self.dim()) + 1, keepdim=keepdim)
        return make_batched(lo, level), make_batched(hi, level)
    return rule


def _addmm_rule(op):
    """addmm, addmv, baddbmm, addbmm: beta * self + alpha * product, each piece a batched logical operator."""
    name = op.schema.name

    def rule(level, args):
        self, a, b, beta, alpha = args
        if name == 'addbmm':
            prod = aten.bmm.default(a, b).sum(0)
        elif name == 'baddbmm':
            prod = aten.bmm.default(a, b)
        elif name == 'addmv':
            prod = aten.mv.default(a, b)
        else:
            prod = aten.mm.default(a, b)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:       # self is ignored, NaNs included (torch's)
            return prod
        return prod + (self if beta == 1 else self * beta)
    return rule


def _einsum_rule(op):
    """einsum: the batched operands get a new leading subscript, which the output keeps first."""
    def rule(level, args):
        equation, tensors, path = args
        eq = equation.replace(' ', '')
        lhs, arrow, out = eq.partition('->')
        ins = lhs.split(',')
        used = set(eq)
        letter = next(c for c in string.ascii_letters if c not in used)
        if not arrow:       # the implicit output: subscripts seen once, in order, after the ellipsis if any
            counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
            out = ('...' if '...' in lhs else '') + ''.join(sorted(c for c, k in counts.items() if k == 1))
        new_ins, phys = [], []
        for sub, t in zip(ins, tensors):
            p = unwrap(t, level)
            new_ins.append(letter + sub if p is not None else sub)
            phys.append(p if p is not None else t)
        res = aten.einsum.default(','.join(new_ins) + '->' + letter + out, phys, path=path)
        return make_batched(res, level)
    return rule


def _vdot_rule(op):
    def rule(level, args):
        a, b = args
        return (a.conj() * b).sum() if a.is_complex() else (a * b).sum()
    return rule


def _fill_tensor_rule(op):
    def rule(level, args):
        self, value = args
        pv = unwrap(value, level)
        if pv is None:
            return _same_shape_rule(op)(level, args)
        B = pv.shape[0]
        full = pv.reshape((B,) + (1,) * self.dim()).to(self.dtype).expand((B,) + tuple(self.shape))
        return make_batched(aten.clone.default(full, memory_format='contiguous_format'), level)
    return rule


def _loss_rule(op):
    """A loss whose last argument is its reduction (binary_cross_entropy, binary_cross_entropy_with_logits,
    mse_loss): unreduced on the physical tensors, then each sample's own mean or sum."""
    elementwise = _pointwise(op)

    def rule(level, args):
        out = elementwise(level, tuple(args[:-1]) + (0,))
        reduction = args[-1]
        if reduction == 0:
            return out
        return out.mean() if reduction == 1 else out.sum()
    return rule


def _mse_backward_rule(op):
    """mse_loss_backward: the sum's gradient (norm 2) on the physical tensors, divided by a sample's element count
    for the mean (the physical call would divide by the whole batch's)."""
    elementwise = _pointwise(op)

    def rule(level, args):
        grad, self, target, reduction = args
        out = elementwise(level, (grad, self, target, 2 if reduction == 1 else reduction))
        return out / max(self.numel(), 1) if reduction == 1 else out
    return rule


def _int_mm_rule(op):
    """_int_mm (int8 x int8 -> int32): one batched product of the operands widened to int32, what the per-sample
    loop computes."""
    def rule(level, args):
        a, b = args
        B = _batch_size(args, level)
        pa, pb = (_physical_or_expanded(t, level, B).to(dtype=_INT32) for t in (a, b))
        return make_batched(aten.bmm.default(pa, pb), level)
    return rule


def _embedding_backward_rule(op):
    """embedding's weight gradient per sample: sample b's indices shifted by b * num_weights, one call for the
    batch, the result split back into (B, num_weights, D)."""
    def rule(level, args):
        grad, indices, num_weights, padding_idx, scale = args
        B = _batch_size(args, level)
        pg, pi = _physical_or_expanded(grad, level, B), _physical_or_expanded(indices, level, B)
        if padding_idx >= 0:        # compares index values: zero those rows' gradients instead
            keep = (pi != padding_idx).unsqueeze(-1).to(pg.dtype)
            pg = pg * keep
        offs = aten.arange.default(B, device=pi.device).to(pi.dtype).reshape((B,) + (1,) * (pi.dim() - 1))
        out = aten.embedding_dense_backward.default(pg, pi + offs * num_weights, num_weights * B, -1, scale)
        return make_batched(out.reshape(B, num_weights, -1), level)
    return rule


def _unfold_backward_rule(op):
    def rule(level, args):
        g, sizes, dim, size, step = args
        p = unwrap(g, level)
        if p is None or len(sizes) == 0:
            return _fallback(op, level, args)
        return make_batched(aten.unfold_backward.default(p, [p.shape[0]] + list(sizes), _norm(dim, len(sizes)) + 1,
                                                         size, step), level)
    return rule


def _copy_rule(op):
    """x.copy_(src) into a batched x: the physical copy, src aligned as pointwise operands are. An unbatched x cannot
    hold a batched src: torch's error, naming copy_ as its binary in-place rule does ("inplace arithmetic"), where a
    loop over the samples would keep only the last one."""
    def rule(level, args):
        self, src, non_blocking = args
        p = unwrap(self, level)
        if p is None:
            raise inplace_error('inplace arithmetic')
        q = unwrap(src, level)
        if q is not None:
            q = q.reshape((q.shape[0],) + (1,) * (self.dim() - src.dim()) + tuple(q.shape[1:]))
        p.copy_(q if q is not None else src, non_blocking)
        return self
    return rule


def _put_rule(op):
    """put on the flattened sample: sample b's indices shifted by b * numel."""
    def rule(level, args):
        self, index, source, accumulate = args
        B = _batch_size(args, level)
        ps = _physical_or_expanded(self, level, B)
        n = self.numel()
        pi = _physical_or_expanded(index, level, B).reshape(B, -1)
        pi = pi.remainder(n) if n else pi       # negative indices count from the end of their own sample
        offs = aten.arange.default(B, device=pi.device).to(pi.dtype).reshape(B, 1) * n
        psrc = _physical_or_expanded(source, level, B).reshape(B, -1)
        out = aten.put.default(ps.reshape(-1), (pi + offs).reshape(-1), psrc.reshape(-1), accumulate)
        return make_batched(out.reshape(ps.shape), level)
    return rule


def _take_rule(op):
    def rule(level, args):
        self, index = args
        B = _batch_size(args, level)
        ps = _physical_or_expanded(self, level, B).reshape(B, -1)
        pi = _physical_or_expanded(index, level, B)
        n = self.numel()
        flat = pi.reshape(B, -1)
        flat = flat.remainder(n) if n else flat
        return make_batched(ps.gather(1, flat).reshape(pi.shape), level)
    return rule


def _masked_scatter_rule(op):
    """masked_scatter per sample: the k-th True of sample b takes element k of b's source (a cumulative count)."""
    def rule(level, args):
        self, mask, source = args
        B = _batch_size(args, level)
        if mask.dim() > self.dim() or any(m not in (1, n) for m, n in zip(reversed(mask.shape), reversed(self.shape))):
            return _fallback(op, level, args)       # a mask that broadcasts self to a bigger shape
        shape = tuple(self.shape)
        ps = _physical_or_expanded(self, level, B)
        pm = unwrap(mask, level)
        pm = (pm.reshape((B,) + (1,) * (self.dim() - mask.dim()) + tuple(pm.shape[1:])) if pm is not None
              else mask).expand((B,) + shape)
        src = _physical_or_expanded(source, level, B).reshape(B, -1)
        k = pm.reshape(B, -1).long().cumsum(1) - 1
        if src.shape[1] == 0:
            return _fallback(op, level, args)
        vals = src.gather(1, k.clamp(0, src.shape[1] - 1)).reshape(ps.shape)
        return make_batched(aten.where.self(pm, vals, ps), level)
    return rule


def _searchsorted_rule(op):
    def rule(level, args):
        seq, self, out_int32, right, side, sorter = args
        ps, px = unwrap(seq, level), unwrap(self, level) if isinstance(self, TensorImpl) else None
        if sorter is not None or ps is None and px is None:
            return _fallback(op, level, args)
        if ps is None and seq.dim() == 1:      # shared boundaries: any shape of values
            return make_batched(op.call_in_schema_order([seq, px, out_int32, right, side, sorter]), level)
        B = _batch_size(args, level)
        ps = _physical_or_expanded(seq, level, B)
        if not isinstance(self, TensorImpl):
            return _fallback(op, level, args)
        px = _physical_or_expanded(self, level, B)
        if seq.dim() == 1:      # one sorted row per sample: the values flattened into that row
            out = op.call_in_schema_order([ps, px.reshape(B, -1), out_int32, right, side, None])
            return make_batched(out.reshape(px.shape), level)
        return make_batched(op.call_in_schema_order([ps, px, out_int32, right, side, None]), level)
    return rule


def _bucketize_rule(op):
    def rule(level, args):
        self, boundaries, out_int32, right = args
        if unwrap(boundaries, level) is not None or unwrap(self, level) is None:
            return _fallback(op, level, args)
        return make_batched(op.call_in_schema_order([unwrap(self, level), boundaries, out_int32, right]), level)
    return rule


def _one_hot_rule(op):
    def rule(level, args):
        self, num_classes = args
        p = unwrap(self, level)
        if num_classes < 0 or p is None:    # the class count read from the data: per sample, as torch refuses
            return _fallback(op, level, args)
        return make_batched(op.call_in_schema_order([p, num_classes]), level)
    return rule


def _cdist_rule(op):
    """cdist's two kernels (_cdist_forward, _euclidean_dist) per sample: one call with the batch in front of the
    broadcast batch dimensions (_euclidean_dist's, expanded: its backward does not reduce a broadcast)."""
    def rule(level, args):
        x1, x2, rest = args[0], args[1], list(args[2:])
        B = _batch_size(args, level)
        r = max(x1.dim(), x2.dim())      # batch dimensions broadcast from the right: align them past the batch
        a, b = (_physical_or_expanded(t, level, B) for t in (x1, x2))
        a = a.reshape((B,) + (1,) * (r - x1.dim()) + tuple(a.shape[1:]))
        b = b.reshape((B,) + (1,) * (r - x2.dim()) + tuple(b.shape[1:]))
        if not rest:
            batch = tuple(max(m, n) for m, n in zip(a.shape[:-2], b.shape[:-2]))
            a, b = a.expand(batch + tuple(a.shape[-2:])), b.expand(batch + tuple(b.shape[-2:]))
        return make_batched(op.call_in_schema_order([a, b] + rest), level)
    return rule


def _layer_norm_rule(op):
    """layer_norm per sample: one call on the physical input; a batched weight or bias (per-sample parameters)
    is applied afterwards, as batched pointwise operators."""
    def rule(level, args):
        x, shape, w, b, eps = args
        px = _physical_or_expanded(x, level, _batch_size(args, level))
        if any(t is not None and unwrap(t, level) is not None for t in (w, b)):
            out, mean, rstd = aten.native_layer_norm.default(px, shape, None, None, eps)
            out = make_batched(out, level)
            out = out * w if w is not None else out
            out = out + b if b is not None else out
            return out, make_batched(mean, level), make_batched(rstd, level)
        return _wrap_out(op.call_in_schema_order([px, shape, w, b, eps]), level)
    return rule


def _layer_norm_backward_rule(op):
    """The input's gradient in one call on the physical tensors (a batched weight multiplies the incoming
    gradient first); the weight's and bias's per sample, summed over each sample's own rows only."""
    def rule(level, args):
        g, x, shape, mean, rstd, w, b, mask = args
        B = _batch_size(args, level)
        pg, px = _physical_or_expanded(g, level, B), _physical_or_expanded(x, level, B)
        pm, pr = _physical_or_expanded(mean, level, B), _physical_or_expanded(rstd, level, B)
        gi = gw = gb = None
        if mask[0]:
            pw = None if w is None else unwrap(w, level)
            if pw is not None:      # per-sample weight: d(out)/dx with weight w is the unweighted one of g * w
                gw_in = pg * pw.reshape((B,) + (1,) * (x.dim() - w.dim()) + tuple(pw.shape[1:]))
                gi = aten.native_layer_norm_backward.default(gw_in, px, shape, pm, pr, None, None,
                                                             [True, False, False])[0]
            else:
                gi = aten.native_layer_norm_backward.default(pg, px, shape, pm, pr, w, b, [True, False, False])[0]
        rows = list(range(1, x.dim() - len(shape) + 1))
        if mask[1] and w is not None:
            xhat = (px - pm) * pr
            gw = (pg * xhat).sum(rows) if rows else pg * xhat
        if mask[2] and b is not None:
            gb = pg.sum(rows) if rows else pg
        return tuple(None if t is None else make_batched(t, level) for t in (gi, gw, gb))
    return rule


def _group_norm_rule(op):
    """group_norm per sample of (N, C, *): one call on the physical input with the batch merged into N; a batched
    weight or bias (per-sample parameters) is applied afterwards, as batched pointwise operators."""
    def rule(level, args):
        x, w, b, N, C, HxW, group, eps = args
        B = _batch_size(args, level)
        px = _physical_or_expanded(x, level, B)
        per_sample = any(t is not None and unwrap(t, level) is not None for t in (w, b))
        out, mean, rstd = aten.native_group_norm.default(
            px.reshape((B * N,) + tuple(px.shape[2:])), None if per_sample else w, None if per_sample else b,
            B * N, C, HxW, group, eps)
        out = make_batched(out.reshape(px.shape), level)
        if per_sample:
            cshape = (C,) + (1,) * (x.dim() - 2)
            out = out * w.reshape(cshape) if w is not None else out
            out = out + b.reshape(cshape) if b is not None else out
        return out, make_batched(mean.reshape(B, N, group), level), make_batched(rstd.reshape(B, N, group), level)
    return rule


def _group_norm_backward_rule(op):
    """The input's gradient in one call with the batch merged into N (a batched weight multiplies the incoming
    gradient first); the weight's and bias's per sample, summed over each sample's own rows only."""
    def rule(level, args):
        g, x, mean, rstd, w, N, C, HxW, group, mask = args
        B = _batch_size(args, level)
        pg, px = _physical_or_expanded(g, level, B), _physical_or_expanded(x, level, B)
        pm, pr = _physical_or_expanded(mean, level, B), _physical_or_expanded(rstd, level, B)
        flat = lambda t: t.reshape((B * t.shape[1],) + tuple(t.shape[2:]))
        gi = gw = gb = None
        if mask[0]:
            pw = None if w is None else unwrap(w, level)
            if pw is not None:      # per-sample weight: d(out)/dx with weight w is the unweighted one of g * w
                pg_in, w_in = pg * pw.reshape((B, 1, C) + (1,) * (x.dim() - 2)), None
            else:
                pg_in, w_in = pg, w
            gi = aten.native_group_norm_backward.default(flat(pg_in), flat(px), flat(pm), flat(pr), w_in, B * N, C,
                                                         HxW, group, [True, False, False])[0].reshape(px.shape)
        if mask[1] or mask[2]:
            g4 = pg.reshape(B, N, C, HxW)
        if mask[1]:
            n = C // group * HxW
            xhat = (px.reshape(B, N, group, n) - pm.unsqueeze(-1)) * pr.unsqueeze(-1)
            gw = (g4 * xhat.reshape(B, N, C, HxW)).sum([1, 3])
        if mask[2]:
            gb = g4.sum([1, 3])
        return tuple(None if t is None else make_batched(t, level) for t in (gi, gw, gb))
    return rule


def _embedding_rule(op):
    """embedding: shared weight and batched indices, one lookup; a batched weight (per-sample tables): each
    sample's indices read its own table (an index with the batch position in front)."""
    def rule(level, args):
        weight, indices = args[0], args[1]
        pw = unwrap(weight, level)
        pi = unwrap(indices, level)
        if pw is None:
            return make_batched(op.call_in_schema_order([weight, pi] + list(args[2:])), level)
        B = pw.shape[0]
        pi = _physical_or_expanded(indices, level, B)
        pos = aten.arange.default(B, device=pi.device).reshape((B,) + (1,) * indices.dim())
        return make_batched(aten.index.Tensor(pw, [pos, pi]), level)
    return rule


def _fill_inplace_rule(op):
    """x.fill_(v) on a batched x: the physical fill; a batched 0-d value: each sample its own."""
    def rule(level, args):
        self, value = args
        p = unwrap(self, level)
        if p is None:
            return _fallback(op, level, args)
        pv = unwrap(value, level) if isinstance(value, TensorImpl) else None
        if pv is None:
            op.call_in_schema_order([p, value])
        else:
            p.copy_(pv.reshape((p.shape[0],) + (1,) * self.dim()).expand(tuple(p.shape)))
        return self
    return rule


def _batch_norm_rule(op):
    """native_batch_norm per sample of (N, C, ...): training with no running statistics (functorch's
    replace_all_batch_norm_modules_) takes each sample's own statistics, its channels renumbered b*C + c so that
    one call computes them all; evaluation with shared running statistics folds the batch into N. The affine
    weight and bias are applied afterwards as batched logical operators (they may be per-sample). Training that
    would update running statistics from a batch of samples goes per sample."""
    def rule(level, args):
        x, w, b, rm, rv, training, momentum, eps = args
        px = unwrap(x, level)
        if px is None or x.dim() < 2 or x.numel() == 0 or training and (rm is not None or rv is not None) or \
                any(t is not None and unwrap(t, level) is not None for t in (rm, rv)):
            return _fallback(op, level, args)
        B, N, C = px.shape[0], px.shape[1], px.shape[2]
        rest = tuple(px.shape[3:])
        if training:
            xin = px.transpose(0, 1).reshape((N, B * C) + rest)
            out, mean, invstd = aten.native_batch_norm.default(xin, None, None, None, None, True, momentum, eps)
            out = make_batched(out.reshape((N, B, C) + rest).transpose(0, 1), level)
            mean, invstd = make_batched(mean.reshape(B, C), level), make_batched(invstd.reshape(B, C), level)
        else:
            out, mean, invstd = aten.native_batch_norm.default(px.reshape((B * N, C) + rest), None, None, rm, rv,
                                                               False, momentum, eps)
            out = make_batched(out.reshape(tuple(px.shape)), level)     # the statistics: empty, as unbatched
        shape = (C,) + (1,) * len(rest)
        if w is not None:
            out = out * w.reshape(shape)
        if b is not None:
            out = out + b.reshape(shape)
        return out, mean, invstd
    return rule


def _batch_norm_backward_rule(op):
    """native_batch_norm_backward (the fused first-order kernel) under vmap: the same gradients written in
    logical ember ops (the formula a recorded backward uses), which batch through their own rules."""
    def rule(level, args):
        from .._ops.nn_ops import _bn_grads
        g, x, w, rm, rv, save_mean, save_invstd, train, eps, mask = args
        return tuple(_bn_grads(g, x, w, rm, rv, train, eps, save_mean, save_invstd, mask))
    return rule


INPLACE = {'fill_.Scalar': _fill_inplace_rule, 'fill_.Tensor': _fill_inplace_rule}


def _repeat_rule(op):
    def rule(level, args):
        self, repeats = args
        p = unwrap(self, level)
        if p is None:
            return _fallback(op, level, args)
        r = len(repeats)
        p = p.reshape((p.shape[0],) + (1,) * (r - self.dim()) + tuple(p.shape[1:]))
        return make_batched(aten.repeat.default(p, [1] + list(repeats)), level)
    return rule


def _index_put_rule(op):
    """index_put with every index a tensor (no slices, no masks): the batch gets an arange index in front, each
    index aligned to the others' rank so that broadcasting never meets the batch; values likewise."""
    def rule(level, args):
        self, indices, values, accumulate = args
        if any(i is None or i.dtype.name in ('bool', 'uint8') for i in indices):
            return _fallback(op, level, args)       # slices and masks: per sample
        B = _batch_size(args, level)
        ps = _physical_or_expanded(self, level, B)
        rank = max(i.dim() for i in indices)
        new = [aten.arange.default(B, device=ps.device).reshape((B,) + (1,) * rank)]
        for i in indices:
            q = unwrap(i, level)
            new.append(q.reshape((B,) + (1,) * (rank - i.dim()) + tuple(q.shape[1:])) if q is not None else i)
        full = rank + self.dim() - len(indices)     # rank of the indexed result per sample
        pv = unwrap(values, level)
        v = pv.reshape((B,) + (1,) * (full - values.dim()) + tuple(pv.shape[1:])) if pv is not None else values
        return make_batched(aten.index_put.default(ps, new, v, accumulate), level)
    return rule


def _sdpa_rule(op):
    """Attention on (N, H, L, E) per sample: the batch folded into N (a (H, L, E) sample: the batch is N); a
    shared attn_mask broadcasts from the right as before, a batched one goes per sample."""
    names = [a.name for a in op.schema.arguments]
    mpos = names.index('attn_mask')

    def rule(level, args):
        mask = args[mpos]
        if mask is not None and unwrap(mask, level) is not None:
            return _fallback(op, level, args)
        B = _batch_size(args, level)
        four = args[names.index('query')].dim() == 4
        new = list(args)
        for i, a in enumerate(args):
            if i != mpos and isinstance(a, TensorImpl):
                p = _physical_or_expanded(a, level, B)
                new[i] = p.reshape((-1,) + tuple(p.shape[2:])) if four else p
        if four and mask is not None and mask.dim() == 4 and mask.shape[0] != 1:     # per-N masks: one per sample
            m = mask.unsqueeze(0).expand((B,) + tuple(mask.shape))
            new[mpos] = m.reshape((-1,) + tuple(mask.shape[1:]))
        out = op.call_in_schema_order(new)
        return tuple(make_batched(o.reshape((B, -1) + tuple(o.shape[1:])) if four else o, level) for o in out)
    return rule


def _fold_rows(ts, level, N):
    """Row tensors (B, X) of every sample as one (N * B, X) tensor (None stays None)."""
    out = []
    for t in ts:
        if t is None:
            out.append(None)
            continue
        p = _physical_or_expanded(t, level, N)
        out.append(p.reshape((p.shape[0] * p.shape[1],) + tuple(p.shape[2:])))
    return out


def _unfold_rows(t, level, N):
    return None if t is None else make_batched(t.reshape((N, t.shape[0] // N) + tuple(t.shape[1:])), level)


def _fused_cell_rule(op):
    """_thnn_fused_lstm_cell / _thnn_fused_gru_cell: rows are independent, so the samples' rows are one call; biases
    batched per sample are added into their gates first (the operator takes one bias for all rows)."""
    def rule(level, args):
        ig, hg, state, ib, hb = args
        N = _batch_size(args, level)
        if (ib is not None and unwrap(ib, level) is not None) or (hb is not None and unwrap(hb, level) is not None):
            ig, hg, ib, hb = ig + ib, hg + hb, None, None
        ig, hg, state = _fold_rows((ig, hg, state), level, N)
        return tuple(_unfold_rows(o, level, N) for o in op(ig, hg, state, ib, hb))
    return rule


def _fused_cell_backward_rule(op, rows_out, has_bias_pos):
    """The fused cells' backward kernels: the samples' rows in one call, each bias gradient summed per sample (the
    folded call's would sum over every sample's rows)."""
    def rule(level, args):
        N = _batch_size(args, level)
        args = list(args)
        has_bias = args[has_bias_pos]
        args[has_bias_pos] = False
        tensors = [i for i, a in enumerate(args) if isinstance(a, TensorImpl)]
        for i, f in zip(tensors, _fold_rows([args[i] for i in tensors], level, N)):
            args[i] = f
        outs = [_unfold_rows(o, level, N) for o in op(*args)[:rows_out]]
        if not has_bias:
            return tuple(outs) + (None,) * (len(op.schema.returns) - rows_out)
        gate_grads = outs[:1] if rows_out == 2 else outs[:2]        # LSTM: one gates grad; GRU: input and hidden
        return tuple(outs) + tuple(g.sum(0) for g in gate_grads)
    return rule


def rule_for(decl):
    name = decl.op.schema.full_name
    op = decl.op
    if name in DIMS:
        return _unless_scalar(op, _dims_rule(op, *DIMS[name])), 'dims'
    if name in ('all.dims', 'any.dims'):
        return _unless_scalar(op, _all_any_rule(op)), 'dims'
    if name in _FFTN:
        return _unless_scalar(op, _fftn_rule(op)), 'dims'
    if name in _LAST_DIMS:
        return _last_dims_rule(op), 'same'
    if name in _FOLD:
        return _fold_rule(op, _FOLD[name]), 'pooling'
    if name in _SDPA:
        return _sdpa_rule(op), 'attention'
    if name in _ELEMENTWISE:
        return _pointwise(op), 'pointwise'
    if name in _WHOLE:
        return _whole_rule(op, _WHOLE[name]), 'dims'
    table = {'aminmax': _aminmax_rule, 'addmm': _addmm_rule, 'addmv': _addmm_rule, 'baddbmm': _addmm_rule,
             'addbmm': _addmm_rule, 'einsum': _einsum_rule, 'vdot': _vdot_rule, 'fill.Tensor': _fill_tensor_rule,
             'binary_cross_entropy': _loss_rule, 'binary_cross_entropy_with_logits': _loss_rule, '_int_mm': _int_mm_rule, 'mse_loss': _loss_rule, 'mse_loss_backward': _mse_backward_rule, 'embedding_dense_backward': _embedding_backward_rule,
             'unfold_backward': _unfold_backward_rule, 'copy_': _copy_rule, 'put': _put_rule, 'take': _take_rule,
             'masked_scatter': _masked_scatter_rule, 'searchsorted.Tensor': _searchsorted_rule,
             'searchsorted.Scalar': _searchsorted_rule, 'bucketize.Tensor': _bucketize_rule,
             'one_hot': _one_hot_rule, '_cdist_forward': _cdist_rule, '_euclidean_dist': _cdist_rule, 'native_layer_norm': _layer_norm_rule,
             'native_layer_norm_backward': _layer_norm_backward_rule, 'repeat': _repeat_rule,
             'index_put': _index_put_rule, 'embedding': _embedding_rule, 'native_batch_norm': _batch_norm_rule,
             'native_batch_norm_backward': _batch_norm_backward_rule, 'native_group_norm': _group_norm_rule,
             'native_group_norm_backward': _group_norm_backward_rule,
             '_thnn_fused_lstm_cell': _fused_cell_rule, '_thnn_fused_gru_cell': _fused_cell_rule,
             '_thnn_fused_lstm_cell_backward_impl': lambda op: _fused_cell_backward_rule(op, 2, 5),
             '_thnn_fused_gru_cell_backward': lambda op: _fused_cell_backward_rule(op, 3, 2)}
    if name in table:
        return table[name](op), 'other'
    return None, None
