"""Attention: ``scaled_dot_product_attention``, and torch's CPU flash-attention operator and its backward
(NOTE [fused attention] in ember/_backends/cpu/attention.py).

``scaled_dot_product_attention`` is one operator (a composite, as in torch), so Python modes and tracing
see it whole. It calls the fused operator where torch 2.13's CPU dispatcher picks its flash kernel (4-D
inputs with equal batch sizes and head sizes, or key/value heads dividing the query's with enable_gqa, no
dropout, a non-empty query), so the graph carries ``ScaledDotProductFlashAttentionForCpuBackward0`` as
torch's does; otherwise it runs the math path in other operators. Like torch's, the fused backward has no
derivative of its own: a second-order gradient through fused attention raises.
"""
import math

from .registry import declare
from .._core import dtype as _dt
from .._core.dtype import scalar_name as _tname
from .._dispatch.ops_namespace import aten

_NAME = 'scaled_dot_product_attention_flash_attention'




def _check(query, key, value, dropout_p, attn_mask):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise RuntimeError(f"{_NAME}: Accept only 4 dims inputs shape of {{B, H, T, K}}")
    for t in (key, value):
        if t._dtype is not query._dtype:
            raise RuntimeError(f"expected scalar type {_tname(query._dtype)} but found {_tname(t._dtype)}")
    if query.shape[-1] != key.shape[-1] or query.shape[-1] != value.shape[-1]:
        raise RuntimeError(f"{_NAME}: Q/K/V should have the same head size")
    # grouped-query attention: key/value may have fewer heads, a divisor of the query's
    if key.shape[-2] != value.shape[-2] or query.shape[0] != key.shape[0] or key.shape[:2] != value.shape[:2] \
            or key.shape[1] == 0 or query.shape[1] % key.shape[1]:
        raise RuntimeError(f"{_NAME}: Q/K/V should have the same batch size and number of heads, and K/V the "
                           f"same length, got query {list(query.shape)}, key {list(key.shape)} and value "
                           f"{list(value.shape)}")
    if dropout_p > 0:
        raise RuntimeError(f"{_NAME}: Currently do not support dropout > 0")
    if query._dtype.category < 2:
        raise RuntimeError(f"\"flash_attention\" not implemented for '{_tname(query._dtype)}'")
    if attn_mask is not None:
        if attn_mask._dtype is not query._dtype:
            raise RuntimeError(f"{_NAME}: Attention mask is the same data type as query")
        B, H, L = query.shape[:3]
        S = key.shape[-2]
        m = tuple(attn_mask.shape)
        if len(m) > 4 or any(a != 1 and a != b for a, b in zip(m[::-1], (S, L, H, B))):
            raise RuntimeError(f"{_NAME}: attn_mask of shape {list(m)} does not broadcast to "
                               f"{[B, H, L, S]}")


def _lse_dtype(d):
    return _dt.float32 if d.itemsize < 4 else d


def _like(t, shape, dtype):
    """(shape, dtype, strides): dense strides in the order of ``t``'s, as the kernel allocates them."""
    st = t.stride()
    order = sorted(range(len(shape)), key=lambda d: (-st[d], d))
    strides, acc = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = acc
        acc *= shape[d]
    return tuple(shape), dtype, tuple(strides)


def _flash_meta(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    _check(query, key, value, dropout_p, attn_mask)
    B, H, L = query.shape[:3]
    return [_like(query, tuple(query.shape[:3]) + (value.shape[3],), query._dtype),
            ((B, H, L), _lse_dtype(query._dtype), (L * H, 1, H))]


def _flash_backward_meta(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None,
                         scale=None):
    _check(query, key, value, dropout_p, attn_mask)
    return [_like(t, tuple(t.shape), t._dtype) for t in (query, key, value)]


def _flash_grads(grad, query, key, value, results, dropout_p, is_causal, attn_mask, scale):
    return aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
        grad, query, key, value, results[0], results[1], dropout_p, is_causal, attn_mask=attn_mask, scale=scale)


declare('_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, '
        'bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)', forward='transpose',
        meta=_flash_meta, method=False, output_differentiability=(True, False),
        derivatives={('query', 'key', 'value'): _flash_grads})

declare('_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor key, '
        'Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, Tensor? attn_mask=None, '
        'float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)',
        meta=_flash_backward_meta, method=False)


# --- scaled_dot_product_attention: the operator that chooses ----------------------------------------

def _flash_applies(q, k, v, attn_mask, dropout_p, enable_gqa):
    """Where torch 2.13's CPU dispatch picks its fused flash kernel (checked case by case against torch's
    grad_fn names): 4-D floating inputs with one batch size, one head count (or, with enable_gqa, key/value
    heads dividing the query's), one head size, no dropout, nothing empty, and no mask that requires grad."""
    if not (q.dim() == 4 and k.dim() == 4 and v.dim() == 4):
        return False
    heads_ok = q.shape[:2] == k.shape[:2] or (enable_gqa and q.shape[0] == k.shape[0] and k.shape[1] > 0
                                              and q.shape[1] % k.shape[1] == 0)
    return (dropout_p == 0.0 and q.dtype.is_floating_point and q.dtype == k.dtype == v.dtype and heads_ok
            and k.shape[:2] == v.shape[:2] and q.shape[-1] == k.shape[-1] == v.shape[-1]
            and k.shape[-2] == v.shape[-2] and q.numel() > 0 and k.numel() > 0
            and not (attn_mask is not None and attn_mask.requires_grad))


def _repeat_heads(t, rep):
    """repeat_interleave(rep, dim=-3): each key/value head serves ``rep`` consecutive query heads."""
    n = t.shape[-3]
    idx = aten.arange.default(n, device=t.device).unsqueeze(-1).expand(n, rep).reshape(-1)
    return t.index_select(-3, idx)


def _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """torch's math path, in aten operators (as torch's C++ composite: a profiler that patches the public
    ``Tensor.matmul`` counts the call to scaled_dot_product_attention alone, ptflops' FLOPs)."""
    if query.dtype in (_dt.float16, _dt.bfloat16):
        # torch's math path computes half precision in float32 and rounds the output once (its
        # allow_fp16_bf16_reduction_math_sdp setting, False by default)
        up = lambda t: aten._to_copy.default(t, dtype=_dt.float32) \
            if t is not None and t.dtype in (_dt.float16, _dt.bfloat16) else t
        return aten._to_copy.default(_math(up(query), up(key), up(value), up(attn_mask), dropout_p, is_causal,
                                           scale, enable_gqa), dtype=query.dtype)
    L, S = query.shape[-2], key.shape[-2]
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, rep), _repeat_heads(value, rep)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    # as torch's math path: query and key each scaled by sqrt(|scale|) before the product, so the product saves
    # the scaled copies (an in-place change of query or key afterwards is allowed, as in torch)
    root = math.sqrt(abs(scale))
    mul, fill, inf = aten.mul.Tensor, aten.masked_fill.Scalar, float('-inf')
    scores = aten.matmul.default(mul(query, -root if scale < 0 else root),
                                 mul(aten.transpose.int(key, -2, -1), root))
    if is_causal:      # combined with attn_mask when both are given, as torch's CPU kernel does
        causal = aten.tril.default(aten.ones.default((L, S), dtype=_dt.bool_, device=query.device))
        scores = fill(scores, aten.logical_not.default(causal), inf)
    if attn_mask is not None:
        if attn_mask.dtype is _dt.bool_:
            scores = fill(scores, aten.logical_not.default(attn_mask), inf)
        else:
            scores = aten.add.Tensor(scores, attn_mask)
    if is_causal or attn_mask is not None:
        # torch's _safe_softmax: a row whose scores are all -inf (a query that may attend to nothing, as left
        # padding makes) gives zeros, not softmax's NaNs, and passes no gradient (nor NaNs) back
        empty = aten.all.dims(aten.eq.Scalar(scores, inf), [-1], True)
        attn = fill(aten.softmax.int(fill(scores, empty, 0.0), -1), empty, 0.0)
    else:
        attn = aten.softmax.int(scores, -1)
    if dropout_p > 0.0:
        attn = aten.dropout.default(attn, dropout_p, True)
    return aten.matmul.default(attn, value)


# which of scaled_dot_product_attention's kernels may run (torch's at::Context flags): torch.backends.cuda's
# enable_*_sdp and torch.nn.attention.sdpa_kernel set them; the CPU has the flash kernel and the math path
SDP_ENABLED = {'flash': True, 'mem_efficient': True, 'math': True, 'cudnn': True}

_NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due to turning off "
               "both the math kernel and the fused kernels.")


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    flash = SDP_ENABLED['flash'] and _flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa)
    if not flash and not SDP_ENABLED['math']:
        raise RuntimeError(_NO_BACKEND)
    if flash:                               # the fused kernel shares heads
        if attn_mask is not None and attn_mask.dtype is _dt.bool_:   # torch converts it the same way
            attn_mask = aten.zeros.default((), dtype=query.dtype, device=query.device).masked_fill(
                attn_mask.logical_not(), float('-inf'))
        return aten._scaled_dot_product_flash_attention_for_cpu.default(
            query, key, value, 0.0, is_causal, attn_mask=attn_mask, scale=scale)[0]
    return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


declare('scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, '
        'float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor',
        composite=_sdpa, method=False, function=False, nn=True,
        doc="""softmax(Q K^T * scale + mask) V. A bool mask keeps the True positions; a float mask is added.

    >>> q = ember.ones(1, 2, 3, 4)
    >>> ember.nn.functional.scaled_dot_product_attention(q, q, q).shape
    ember.Size([1, 2, 3, 4])
    """)
