"""Fused attention: torch's CPU flash-attention operator and its backward (NOTE [fused attention] in
ember/_backends/cpu/attention.py).

``ember.nn.functional.scaled_dot_product_attention`` calls the fused operator where torch 2.13's CPU
dispatcher picks its flash kernel (4-D inputs with equal batch sizes and head sizes, no dropout, a
non-empty query), so the graph carries ``ScaledDotProductFlashAttentionForCpuBackward0`` as torch's does;
otherwise it runs the composite math path. Like torch's, the backward operator has no derivative of its
own: a second-order gradient through fused attention raises.
"""
from .registry import declare, DECLS
from .._core import dtype as _dt

_NAME = 'scaled_dot_product_attention_flash_attention'


def _tname(d):
    from .adapters import _tname as t
    return t(d)


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
    return DECLS['_scaled_dot_product_flash_attention_for_cpu_backward'].op.call(
        grad, query, key, value, results[0], results[1], dropout_p, is_causal, attn_mask=attn_mask, scale=scale)


declare('_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, '
        'bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)',
        meta=_flash_meta, method=False, output_differentiability=(True, False),
        derivatives={('query', 'key', 'value'): _flash_grads})

declare('_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor key, '
        'Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, Tensor? attn_mask=None, '
        'float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)',
        meta=_flash_backward_meta, method=False)
