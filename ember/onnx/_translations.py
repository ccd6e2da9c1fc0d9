"""One translation per aten operator of an exported graph into ONNX nodes (torch/onnx/_internal/.../torchlib).

``TRANSLATIONS[op](b, out, *args, **kwargs)``: ``b`` is the Builder, ``out`` the node's example result (a meta
tensor, or a tuple of them), ``args``/``kwargs`` the node's arguments with tensors as ``Value``s. It returns
the ONNX name of the result (a list for several results; ``None`` for a result ONNX cannot give, whose use is
then an error). Operators without a translation are decomposed first where ``ember._decomp`` has a
decomposition (gelu below opset 20, silu, hardswish...); what remains raises UnsupportedOperatorError.
"""
import math

import numpy as np

import ember
from ember.ops import aten

from ._builder import Value, SymInt, numpy_dtype, onnx_dtype

TRANSLATIONS = {}
MIN_OPSET = {}           # operator -> the first opset its translation works at
INT64_MAX = 2 ** 63 - 1


def translates(*ops, opset=13):
    def deco(fn):
        for op in ops:
            TRANSLATIONS[op] = fn
            MIN_OPSET[op] = opset
        return fn
    return deco


def _meta(x):
    if isinstance(x, Value):
        return ember.empty(x.shape, dtype=x.dtype, device='meta')
    return x


def _operand(b, x, dtype):
    """A Value or Python number as an ONNX name of dtype ``dtype``."""
    if isinstance(x, Value):
        return b.cast(x, dtype)
    return b.scalar(x, dtype)


def _dim(d, rank):
    return d + rank if d < 0 else d


# --- pointwise -----------------------------------------------------------------------------------------

def _binary(onnx_op, compute=None):
    def fn(b, out, x, y, alpha=1):
        dtype = compute or ember.result_type(_meta(x), _meta(y))
        lhs, rhs = _operand(b, x, dtype), _operand(b, y, dtype)
        if alpha != 1:
            rhs = b.op('Mul', [rhs, b.scalar(alpha, dtype)], name='scaled')
        r = b.op(onnx_op, [lhs, rhs], name=onnx_op.lower())
        return b.op('Cast', [r], name='cast', to=onnx_dtype(out.dtype)) if out.dtype != dtype else r
    return fn


for _op, _onnx in ((aten.add.Tensor, 'Add'), (aten.sub.Tensor, 'Sub'), (aten.mul.Tensor, 'Mul'),
                   (aten.maximum.default, 'Max'), (aten.minimum.default, 'Min')):
    translates(_op)(_binary(_onnx))
# an in-place operator is a new ONNX value holding the same numbers: later uses of the tensor read the in-place
# Node (NOTE [make_fx]), so they read that value
for _op, _onnx in ((aten.add_.Tensor, 'Add'), (aten.sub_.Tensor, 'Sub'), (aten.mul_.Tensor, 'Mul')):
    translates(_op)(_binary(_onnx))


@translates(aten.div.Tensor, aten.div_.Tensor)
def div(b, out, x, y):
    dtype = out.dtype        # true division: integers divide as floats
    return b.op('Div', [_operand(b, x, dtype), _operand(b, y, dtype)], name='div')


@translates(aten.div.Tensor_mode)
def div_mode(b, out, x, y, rounding_mode=None):
    dtype = ember.result_type(_meta(x), _meta(y))
    q = b.op('Div', [_operand(b, x, dtype), _operand(b, y, dtype)], name='div')
    if rounding_mode is None or not dtype.is_floating_point:
        if rounding_mode == 'floor' and not dtype.is_floating_point:
            return _int_floor_div(b, x, y, dtype, q)
        return q
    if rounding_mode == 'floor':
        return b.op('Floor', [q], name='floor')
    return b.op('Mul', [b.op('Sign', [q]), b.op('Floor', [b.op('Abs', [q])])], name='trunc')


def _int_floor_div(b, x, y, dtype, q):
    # integer Div truncates; floor differs when the signs differ and the division is inexact
    xs, ys = _operand(b, x, dtype), _operand(b, y, dtype)
    inexact = b.op('Not', [b.op('Equal', [b.op('Mul', [q, ys]), xs])])
    neg = b.op('Less', [b.op('Mul', [b.op('Sign', [xs]), b.op('Sign', [ys])]), b.scalar(0, dtype)])
    fix = b.op('Cast', [b.op('And', [inexact, neg])], to=onnx_dtype(dtype))
    return b.op('Sub', [q, fix], name='floordiv')


@translates(aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar, aten.pow.Scalar)      # x ** 2 is pow.Tensor_Scalar
def pow_(b, out, x, y):
    dtype = out.dtype
    if not isinstance(y, Value) and y == 2:
        xs = _operand(b, x, dtype)
        return b.op('Mul', [xs, xs], name='square')
    return b.op('Pow', [_operand(b, x, dtype), _operand(b, y, dtype)], name='pow')


def _compare(onnx_op, negate=False):
    def fn(b, out, x, y):
        dtype = ember.result_type(_meta(x), _meta(y))
        r = b.op(onnx_op, [_operand(b, x, dtype), _operand(b, y, dtype)], name=onnx_op.lower())
        return b.op('Not', [r], name='not') if negate else r
    return fn


for _op, _onnx, _neg in ((aten.eq.Tensor, 'Equal', False), (aten.ne.Tensor, 'Equal', True),
                         (aten.lt.Tensor, 'Less', False), (aten.gt.Tensor, 'Greater', False),
                         (aten.le.Tensor, 'LessOrEqual', False), (aten.ge.Tensor, 'GreaterOrEqual', False)):
    translates(_op, getattr(aten, _op.schema.name).Scalar)(_compare(_onnx, _neg))       # x > 0 is gt.Scalar


def _unary(onnx_op, float_only=True, **attrs):
    def fn(b, out, x, *rest):
        src = b.cast(x, out.dtype) if float_only else x.name
        return b.op(onnx_op, [src], name=onnx_op.lower(), **attrs)
    return fn


for _op, _onnx in ((aten.relu.default, 'Relu'), (aten.sigmoid.default, 'Sigmoid'), (aten.tanh.default, 'Tanh'),
                   (aten.exp.default, 'Exp'), (aten.log.default, 'Log'), (aten.sqrt.default, 'Sqrt'),
                   (aten.erf.default, 'Erf'), (aten.sin.default, 'Sin'), (aten.cos.default, 'Cos'),
                   (aten.reciprocal.default, 'Reciprocal'), (aten.floor.default, 'Floor'),
                   (aten.ceil.default, 'Ceil'), (aten.round.default, 'Round'), (aten.relu_.default, 'Relu'),
                   (aten.sigmoid_.default, 'Sigmoid'), (aten.tanh_.default, 'Tanh')):
    translates(_op)(_unary(_onnx))
for _op, _onnx in ((aten.neg.default, 'Neg'), (aten.abs.default, 'Abs'), (aten.sign.default, 'Sign'),
                   (aten.logical_not.default, 'Not'), (aten.bitwise_not.default, 'Not')):
    translates(_op)(_unary(_onnx, float_only=False))


@translates(aten.rsqrt.default)
def rsqrt(b, out, x):
    return b.op('Reciprocal', [b.op('Sqrt', [b.cast(x, out.dtype)])], name='rsqrt')


@translates(aten.log1p.default)
def log1p(b, out, x):
    return b.op('Log', [b.op('Add', [b.cast(x, out.dtype), b.scalar(1, out.dtype)])], name='log1p')


@translates(aten.expm1.default)
def expm1(b, out, x):
    return b.op('Sub', [b.op('Exp', [b.cast(x, out.dtype)]), b.scalar(1, out.dtype)], name='expm1')


@translates(aten.gelu.default, opset=20)
def gelu(b, out, x, approximate='none'):
    return b.op('Gelu', [x.name], name='gelu', approximate=approximate)


@translates(aten.leaky_relu.default)
def leaky_relu(b, out, x, negative_slope=0.01):
    return b.op('LeakyRelu', [x.name], name='leaky_relu', alpha=float(negative_slope))


@translates(aten.hardtanh.default)
def hardtanh(b, out, x, min_val=-1, max_val=1):
    return b.op('Clip', [x.name, b.scalar(min_val, x.dtype), b.scalar(max_val, x.dtype)], name='hardtanh')


@translates(aten.clamp.default)
def clamp(b, out, x, min=None, max=None):
    lo = '' if min is None else _operand(b, min, out.dtype)
    hi = '' if max is None else _operand(b, max, out.dtype)
    return b.op('Clip', [b.cast(x, out.dtype), lo, hi], name='clamp')


@translates(aten.clamp_min.default)
def clamp_min(b, out, x, m):
    return clamp(b, out, x, m, None)


@translates(aten.clamp_max.default)
def clamp_max(b, out, x, m):
    return clamp(b, out, x, None, m)


@translates(aten.threshold.default)
def threshold(b, out, x, threshold, value):
    return b.op('Where', [b.op('Greater', [x.name, b.scalar(threshold, x.dtype)]), x.name,
                          b.scalar(value, x.dtype)], name='threshold')


@translates(aten.where.self)
def where(b, out, cond, x, y):
    return b.op('Where', [b.cast(cond, ember.bool), _operand(b, x, out.dtype), _operand(b, y, out.dtype)],
                name='where')


@translates(aten.masked_fill.Scalar, aten.masked_fill.Tensor, aten.masked_fill_.Scalar, aten.masked_fill_.Tensor)
def masked_fill(b, out, x, mask, value):
    return b.op('Where', [b.cast(mask, ember.bool), _operand(b, value, out.dtype), x.name], name='masked_fill')


@translates(aten.logical_and.default)
def logical_and(b, out, x, y):
    return b.op('And', [b.cast(x, ember.bool), b.cast(y, ember.bool)], name='and')


@translates(aten.logical_or.default)
def logical_or(b, out, x, y):
    return b.op('Or', [b.cast(x, ember.bool), b.cast(y, ember.bool)], name='or')


@translates(aten.isnan.default)
def isnan(b, out, x):
    return b.op('IsNaN', [x.name], name='isnan')


# --- copies, casts and views ---------------------------------------------------------------------------

@translates(aten.clone.default, aten.contiguous.default, aten.alias.default, aten.detach.default)
def identity(b, out, x, *rest, **kw):
    return b.op('Identity', [x.name], name='copy')


@translates(aten._to_copy.default)
def to_copy(b, out, x, dtype=None, device=None, non_blocking=False):
    return b.op('Cast', [x.name], name='to', to=onnx_dtype(out.dtype)) if out.dtype != x.dtype else \
        b.op('Identity', [x.name], name='to')


@translates(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def view(b, out, x, size):
    size = list(size)
    static = [int(s) for s in out.shape]
    # a -1 is written out as the size it stands for, unless the shape is dynamic (then Reshape infers it)
    if not any(isinstance(s, SymInt) for s in size):
        size = static
    return b.op('Reshape', [x.name, b.ints(size)], name='view', allowzero=1 if 0 in static else None)


@translates(aten.expand.default)
def expand(b, out, x, size, implicit=False):
    # -1 keeps the input's size: ONNX's Expand broadcasts both ways, so 1 says the same
    lead = len(size) - x.rank
    size = [1 if (not isinstance(s, SymInt) and s == -1) else s for s in size]
    size = [s if isinstance(s, SymInt) or i < lead or x.shape[i - lead] != s else 1 for i, s in enumerate(size)]
    return b.op('Expand', [x.name, b.ints(size)], name='expand')


@translates(aten.permute.default)
def permute(b, out, x, dims):
    return b.op('Transpose', [x.name], name='permute', perm=[_dim(d, x.rank) for d in dims])


@translates(aten.transpose.int)
def transpose(b, out, x, dim0, dim1):
    perm = list(range(x.rank))
    d0, d1 = _dim(dim0, x.rank), _dim(dim1, x.rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op('Transpose', [x.name], name='transpose', perm=perm)


@translates(aten.t.default)
def t(b, out, x):
    return transpose(b, out, x, 0, 1) if x.rank == 2 else b.op('Identity', [x.name], name='t')


@translates(aten.unsqueeze.default)
def unsqueeze(b, out, x, dim):
    return b.op('Unsqueeze', [x.name, b.ints([_dim(dim, x.rank + 1)])], name='unsqueeze')


@translates(aten.squeeze.dims)
def squeeze(b, out, x, dim=None):
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        dims = [_dim(d, x.rank) for d in (dim if isinstance(dim, (list, tuple)) else [dim]) if x.shape[d] == 1]
    if not dims:
        return b.op('Identity', [x.name], name='squeeze')
    return b.op('Squeeze', [x.name, b.ints(dims)], name='squeeze')


@translates(aten.select.int)
def select(b, out, x, dim, index):
    d = _dim(dim, x.rank)
    if not isinstance(index, SymInt) and index < 0:
        index += x.shape[d]
    idx = b.const(np.asarray(int(index), np.int64)) if not isinstance(index, SymInt) else \
        b.op('Squeeze', [b.sym(index), b.ints([0])], name='index')
    return b.op('Gather', [x.name, idx], name='select', axis=d)


@translates(aten.slice.Tensor)
def slice_(b, out, x, dim=0, start=None, end=None, step=1):
    d = _dim(dim, x.rank)
    start = 0 if start is None else start
    if end is None or (not isinstance(end, SymInt) and end >= x.shape[d]):
        end = INT64_MAX
    return b.op('Slice', [x.name, b.ints([start]), b.ints([end]), b.ints([d]), b.ints([step])], name='slice')


@translates(aten.cat.default)
def cat(b, out, tensors, dim=0):
    ts = [t for t in tensors if not (t.rank == 1 and t.shape[0] == 0)]     # torch skips empty 1-d pieces
    return b.op('Concat', [b.cast(t, out.dtype) for t in ts], name='cat', axis=_dim(dim, out.dim()))


@translates(aten.stack.default)
def stack(b, out, tensors, dim=0):
    d = _dim(dim, out.dim())
    pieces = [b.op('Unsqueeze', [b.cast(t, out.dtype), b.ints([d])], name='unsqueeze') for t in tensors]
    return b.op('Concat', pieces, name='stack', axis=d)


def _split(b, out, x, sizes, dim):
    d = _dim(dim, x.rank)
    return b.op('Split', [x.name, b.ints(sizes)], n_out=len(sizes), name='split', axis=d)


@translates(aten.split.Tensor)
def split(b, out, x, split_size, dim=0):
    return _split(b, out, x, [int(o.shape[_dim(dim, x.rank)]) for o in out], dim)


@translates(aten.split_with_sizes.default)
def split_with_sizes(b, out, x, split_sizes, dim=0):
    return _split(b, out, x, list(split_sizes), dim)


@translates(aten.unbind.int)
def unbind(b, out, x, dim=0):
    d = _dim(dim, x.rank)
    parts = _split(b, out, x, [1] * x.shape[d], dim)
    parts = parts if isinstance(parts, list) else [parts]
    return [b.op('Squeeze', [p, b.ints([d])], name='unbind') for p in parts]


@translates(aten.index_select.default)
def index_select(b, out, x, dim, index):
    return b.op('Gather', [x.name, b.cast(index, ember.int64)], name='index_select', axis=_dim(dim, x.rank))


@translates(aten.index.Tensor)
def index(b, out, x, indices):
    used = [(i, v) for i, v in enumerate(indices) if v is not None]
    if len(used) != 1 or used[0][1].dtype == ember.bool:
        return NotImplemented
    d, idx = used[0]
    return b.op('Gather', [x.name, b.cast(idx, ember.int64)], name='index', axis=d)


@translates(aten.embedding.default)
def embedding(b, out, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return b.op('Gather', [weight.name, b.cast(indices, ember.int64)], name='embedding', axis=0)


@translates(aten.constant_pad_nd.default)
def constant_pad_nd(b, out, x, pad, value=0):
    n = len(pad) // 2
    begins = [0] * (x.rank - n) + [pad[2 * (n - 1 - i)] for i in range(n)]
    ends = [0] * (x.rank - n) + [pad[2 * (n - 1 - i) + 1] for i in range(n)]
    return b.op('Pad', [x.name, b.ints(begins + ends), b.scalar(value, x.dtype)], name='pad', mode='constant')


@translates(aten.tril.default, opset=14)
def tril(b, out, x, diagonal=0):
    return b.op('Trilu', [x.name, b.const(np.asarray(diagonal, np.int64))], name='tril', upper=0)


@translates(aten.triu.default, opset=14)
def triu(b, out, x, diagonal=0):
    return b.op('Trilu', [x.name, b.const(np.asarray(diagonal, np.int64))], name='triu', upper=1)


# --- reductions ----------------------------------------------------------------------------------------

def _axes(dim, rank):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(rank))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return sorted(_dim(d, rank) for d in dims)


def _reduce(b, onnx_op, x, axes, keepdim, dtype=None):
    src = b.cast(x, dtype) if dtype is not None else x.name
    if not axes:
        return b.op('Identity', [src], name=onnx_op.lower())
    if onnx_op == 'ReduceSum' or b.opset >= 18:
        return b.op(onnx_op, [src, b.ints(axes)], name=onnx_op.lower(), keepdims=int(bool(keepdim)))
    return b.op(onnx_op, [src], name=onnx_op.lower(), axes=axes, keepdims=int(bool(keepdim)))


@translates(aten.sum.dim_IntList, aten.sum.default)      # x.sum() is sum.default (NOTE [boxed arguments])
def sum_(b, out, x, dim=None, keepdim=False, dtype=None):
    return _reduce(b, 'ReduceSum', x, _axes(dim, x.rank), keepdim, out.dtype)


@translates(aten.mean.dim, aten.mean.default)
def mean(b, out, x, dim=None, keepdim=False, dtype=None):
    return _reduce(b, 'ReduceMean', x, _axes(dim, x.rank), keepdim, out.dtype)


@translates(aten.all.dims, aten.all.default)
def all_(b, out, x, dim=None, keepdim=False):
    # as the minimum of the values read as 0/1 (ONNX has no logical reduction)
    ints = Value(b.op('Cast', [x.name], name='as_int', to=onnx_dtype(ember.int32)), x.shape, ember.int32)
    r = Value(_reduce(b, 'ReduceMin', ints, _axes(dim, x.rank), keepdim), out.shape, ember.int32)
    return b.op('Cast', [r.name], name='all', to=onnx_dtype(ember.bool))


@translates(aten.amax.default)
def amax(b, out, x, dim=(), keepdim=False):
    return _reduce(b, 'ReduceMax', x, _axes(dim, x.rank), keepdim)


@translates(aten.amin.default)
def amin(b, out, x, dim=(), keepdim=False):
    return _reduce(b, 'ReduceMin', x, _axes(dim, x.rank), keepdim)


@translates(aten.var.correction)
def var(b, out, x, dim=None, correction=None, keepdim=False):
    axes = _axes(dim, x.rank)
    n = math.prod(x.shape[a] for a in axes)
    c = 1 if correction is None else correction
    mean_ = _reduce(b, 'ReduceMean', x, axes, True, out.dtype)
    diff = b.op('Sub', [b.cast(x, out.dtype), mean_], name='diff')
    sq = _reduce(b, 'ReduceMean', Value(b.op('Mul', [diff, diff]), x.shape, out.dtype), axes, keepdim)
    return b.op('Mul', [sq, b.scalar(n / max(n - c, 0) if n - c > 0 else float('inf'), out.dtype)], name='var')


@translates(aten.argmax.default)
def argmax(b, out, x, dim=None, keepdim=False):
    if dim is None:
        flat = b.op('Reshape', [x.name, b.ints([-1])])
        return b.op('ArgMax', [flat], name='argmax', axis=0, keepdims=0)
    return b.op('ArgMax', [x.name], name='argmax', axis=_dim(dim, x.rank), keepdims=int(keepdim))


@translates(aten.softmax.int)
def softmax(b, out, x, dim, dtype=None):
    return b.op('Softmax', [b.cast(x, out.dtype)], name='softmax', axis=_dim(dim, x.rank))


@translates(aten.log_softmax.int)
def log_softmax(b, out, x, dim, dtype=None):
    return b.op('LogSoftmax', [b.cast(x, out.dtype)], name='log_softmax', axis=_dim(dim, x.rank))


# --- products, convolution, pooling, normalisation -----------------------------------------------------

@translates(aten.mm.default, aten.bmm.default, aten.matmul.default, aten.mv.default, aten.dot.default)
def matmul(b, out, x, y):
    return b.op('MatMul', [x.name, y.name], name='matmul')


@translates(aten.addmm.default)
def addmm(b, out, bias, x, y, beta=1, alpha=1):
    return b.op('Gemm', [x.name, y.name, bias.name], name='addmm', alpha=float(alpha), beta=float(beta))


@translates(aten.linear.default)
def linear(b, out, x, weight, bias=None):
    if x.rank == 2:
        return b.op('Gemm', [x.name, weight.name] + ([bias.name] if bias is not None else []), name='linear',
                    transB=1)
    y = b.op('MatMul', [x.name, b.op('Transpose', [weight.name], name='weight_t', perm=[1, 0])], name='matmul')
    return b.op('Add', [y, bias.name], name='linear') if bias is not None else y


@translates(aten._scaled_dot_product_flash_attention_for_cpu.default)
def flash_attention(b, out, q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    # softmax(Q K^T * scale + mask) V; the logsumexp output (for the backward) has no use in an exported graph
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    if any(not isinstance(n, int) for n in (L, S, E)):
        return NotImplemented
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    kt = b.op('Transpose', [k.name], name='key_t', perm=list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2])
    scores = b.op('Mul', [b.op('MatMul', [q.name, kt], name='scores'), b.scalar(scale, q.dtype)], name='scaled')
    if is_causal:
        mask = np.triu(np.full((L, S), -np.inf, dtype=numpy_dtype(q.dtype)), 1)
        scores = b.op('Add', [scores, b.const(mask)], name='causal')
    if attn_mask is not None:
        scores = b.op('Add', [scores, b.cast(attn_mask, q.dtype)], name='masked')
    weights = b.op('Softmax', [scores], name='attn_weights', axis=-1)
    return [b.op('MatMul', [weights, v.name], name='attention'), None]


@translates(aten.convolution.default)
def convolution(b, out, x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    n = weight.rank - 2
    stride, dilation, padding = _ntuple(stride, n), _ntuple(dilation, n), _ntuple(padding, n)
    attrs = dict(strides=stride, dilations=dilation, pads=padding + padding, group=int(groups),
                 kernel_shape=list(weight.shape[2:]))
    inputs = [x.name, weight.name] + ([bias.name] if bias is not None else [])
    if transposed:
        return b.op('ConvTranspose', inputs, name='conv_transpose', output_padding=_ntuple(output_padding, n), **attrs)
    return b.op('Conv', inputs, name='conv', **attrs)


def _ntuple(v, n):
    v = [v] if isinstance(v, int) else list(v)
    return v * n if len(v) == 1 else v


def _pool_attrs(kernel_size, stride, padding, n):
    k = _ntuple(kernel_size, n)
    s = _ntuple(stride, n) if (isinstance(stride, int) or stride) else k
    return k, s, _ntuple(padding, n)


@translates(aten.max_pool2d_with_indices.default)
def max_pool2d(b, out, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p = _pool_attrs(kernel_size, stride, padding, 2)
    d = _ntuple(dilation, 2)
    y = b.op('MaxPool', [x.name], name='max_pool2d', kernel_shape=k, strides=s, pads=p + p, dilations=d,
             ceil_mode=int(ceil_mode))
    return [y, None]      # torch's indices are not ONNX's: a graph that uses them is refused


@translates(aten.avg_pool2d.default)
def avg_pool2d(b, out, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if divisor_override is not None:
        return NotImplemented
    k, s, p = _pool_attrs(kernel_size, stride, padding, 2)
    return b.op('AveragePool', [x.name], name='avg_pool2d', kernel_shape=k, strides=s, pads=p + p,
                ceil_mode=int(ceil_mode), count_include_pad=int(count_include_pad))


@translates(aten._adaptive_avg_pool2d.default)
def adaptive_avg_pool2d(b, out, x, output_size):
    h, w = x.shape[-2:]
    oh, ow = output_size
    if (oh, ow) == (1, 1):
        return b.op('GlobalAveragePool', [x.name], name='adaptive_avg_pool2d')
    if h % oh or w % ow:
        return NotImplemented       # uneven windows: ONNX has no adaptive pooling
    return b.op('AveragePool', [x.name], name='adaptive_avg_pool2d', kernel_shape=[h // oh, w // ow],
                strides=[h // oh, w // ow])


@translates(aten.native_batch_norm.default)
def native_batch_norm(b, out, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if training or running_mean is None:
        return NotImplemented
    c = x.shape[1]
    w = weight.name if weight is not None else b.const(np.ones(c, numpy_dtype(x.dtype)))
    bb = bias.name if bias is not None else b.const(np.zeros(c, numpy_dtype(x.dtype)))
    y = b.op('BatchNormalization', [x.name, w, bb, running_mean.name, running_var.name], name='batch_norm',
             epsilon=float(eps), momentum=float(1 - momentum))
    return [y, None, None]


@translates(aten.native_layer_norm.default, opset=17)
def native_layer_norm(b, out, x, normalized_shape, weight, bias, eps):
    axis = x.rank - len(normalized_shape)
    shape = list(x.shape[axis:])
    w = weight.name if weight is not None else b.const(np.ones(shape, numpy_dtype(x.dtype)))
    inputs = [x.name, w] + ([bias.name] if bias is not None else [])
    y, mean_, rstd = b.op('LayerNormalization', inputs, n_out=3, name='layer_norm', axis=axis, epsilon=float(eps))
    return [y, mean_, rstd]


# --- factories (folded to constants unless a size is dynamic) ------------------------------------------

def _fill(b, out, size, value):
    dtype = out.dtype
    value_t = b.helper.make_tensor('value', onnx_dtype(dtype), [1], [value if dtype != ember.bool else int(value)])
    return b.op('ConstantOfShape', [b.ints(size)], name='full', value=value_t)


@translates(aten.zeros.default)
def zeros(b, out, size, dtype=None, device=None):
    return _fill(b, out, size, 0)


@translates(aten.ones.default)
def ones(b, out, size, dtype=None, device=None):
    return _fill(b, out, size, 1)


@translates(aten.full.default)
def full(b, out, size, fill_value, dtype=None, device=None):
    return _fill(b, out, size, fill_value)


@translates(aten.arange.default)
def arange(b, out, start, end=None, step=1, dtype=None, device=None):
    if end is None:
        start, end = 0, start
    return b.op('Range', [b.scalar(start, out.dtype) if not isinstance(start, SymInt) else _scalar_sym(b, start, out),
                          b.scalar(end, out.dtype) if not isinstance(end, SymInt) else _scalar_sym(b, end, out),
                          b.scalar(step, out.dtype)], name='arange')


def _scalar_sym(b, s, out):
    v = b.op('Squeeze', [b.sym(s), b.ints([0])], name='size')
    return b.op('Cast', [v], to=onnx_dtype(out.dtype)) if out.dtype != ember.int64 else v
