"""``multi_head_attention_forward``: the attention of nn.MultiheadAttention as a function (torch's signature),
with torch's masking rules (boolean masks mean "not allowed", float masks are added to the scores)."""
import math

import ember
from ember._warn import warnings
from ... import _functions as _E
from ... import bool as _bool

__all__ = ['multi_head_attention_forward']


def _canonical_mask(mask, name, target_dtype):
    """A bool mask as an additive float mask (-inf where True); float masks pass through."""
    if mask is None:
        return None
    if mask.dtype is _bool:
        return _E.zeros(tuple(mask.shape), dtype=target_dtype, device=mask.device).masked_fill(mask, float('-inf'))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _causal_mask(n, dtype, device):
    return _E.full((n, n), float('-inf'), dtype=dtype, device=device).triu(1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: (L, N, E) inputs (or unbatched (L, E)); ``static_k`` /
    ``static_v`` (N * num_heads, S, E / num_heads) replace the projected keys / values."""
    F = ember.nn.functional
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if key_padding_mask is not None and attn_mask is not None and key_padding_mask.dtype is not attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    key_padding_mask = _canonical_mask(key_padding_mask, 'key_padding_mask', query.dtype)
    if is_causal and attn_mask is None:
        attn_mask = _causal_mask(tgt_len, query.dtype, query.device)
    attn_mask = _canonical_mask(attn_mask, 'attn_mask', query.dtype)

    # input projections: one matmul for self-attention, three otherwise
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = F.linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
            q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    else:
        b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
        q, k, v = F.linear(query, q_proj_weight, b_q), F.linear(key, k_proj_weight, b_k), \
            F.linear(value, v_proj_weight, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _E.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = _E.cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else \
        _static(static_k, 'static_k', bsz * num_heads, head_dim)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else \
        _static(static_v, 'static_v', bsz * num_heads, head_dim)
    if add_zero_attn:
        k = _E.cat([k, _E.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], 1)
        v = _E.cat([v, _E.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not need_weights:        # torch's path without weights: one scaled_dot_product_attention over the heads
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3 else \
                attn_mask.view(bsz, num_heads, -1, src_len)
        out = F.scaled_dot_product_attention(q.view(bsz, num_heads, tgt_len, head_dim),
                                             k.view(bsz, num_heads, src_len, head_dim),
                                             v.view(bsz, num_heads, src_len, head_dim), attn_mask,
                                             dropout_p if training else 0.0)
        out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        return (out.squeeze(1) if not batched else out), None
    scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(-2, -1)
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = F.softmax(scores, -1)
    if dropout_p > 0.0 and training:
        weights = F.dropout(weights, dropout_p, True)
    out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))       # out_proj may change the width (open_clip's attention pool)
    if not batched:
        out = out.squeeze(1)
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights


def _static(t, name, rows, head_dim):
    if t.size(0) != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.size(2)}")
    return t


