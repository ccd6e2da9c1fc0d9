"""``torch.nn.attention.bias``: causal masks described by their variant and sizes, materialised when used.

``causal_upper_left(L, S)`` keeps, for query i, keys j <= i (the mask ``is_causal=True`` means); ``causal_lower_right(L,
S)`` aligns the diagonal to the last key: keys j <= i + (S - L), as a decoder with S - L cached keys needs. Passed as
``attn_mask`` to ``F.scaled_dot_product_attention``, the bias answers through ``__torch_function__`` (NOTE
[__torch_function__]) with its boolean mask, as torch's CausalBias (a Tensor subclass there) does.

>>> import ember
>>> causal_lower_right(2, 3)
tensor([[ True,  True, False],
        [ True,  True,  True]])
"""
import warnings
from enum import IntEnum

import ember

__all__ = ['causal_upper_left', 'causal_lower_right', 'CausalVariant', 'CausalBias']


class CausalVariant(IntEnum):
    """Which corner the causal diagonal starts from."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal attention mask of ``seq_len_q`` queries and ``seq_len_kv`` keys (see the module docstring)."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:     # rows that attend to no key
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          UserWarning, stacklevel=2)

    def _materialize(self, device=None):
        """The boolean mask: True where a query may attend to a key."""
        ones = ember.ones(self.seq_len_q, self.seq_len_kv, dtype=ember.bool, device=device)
        if self.variant == CausalVariant.UPPER_LEFT:
            return ones.tril()
        return ones.tril(self.seq_len_kv - self.seq_len_q)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is ember.nn.functional.scaled_dot_product_attention:
            return cls._dispatch(*args, **kwargs)
        args = [a._materialize(_device_of(args, kwargs)) if isinstance(a, CausalBias) else a for a in args]
        kwargs = {k: v._materialize(_device_of(args, kwargs)) if isinstance(v, CausalBias) else v
                  for k, v in kwargs.items()}
        return func(*args, **kwargs)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        """sdpa with this bias as torch runs it: an upper-left (or square) causal bias is ``is_causal=True``
        (the same kernel path, so the same values to the bit); a lower-right one is its materialised mask."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        square = attn_mask.seq_len_q == attn_mask.seq_len_kv
        mask, causal = (None, True) if square or attn_mask.variant == CausalVariant.UPPER_LEFT else \
            (attn_mask._materialize(query.device), False)
        return ember.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=dropout_p,
                                                                is_causal=causal, scale=scale, enable_gqa=enable_gqa)

    def __repr__(self):
        return repr(self._materialize())


def _device_of(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, ember.Tensor):
            return a.device
    return None


def _check(size):
    if len(size) != 2:
        raise AssertionError("causal_upper_left and causal_lower_right only support 2D tensors")


def causal_upper_left(*size):
    """The causal mask whose diagonal starts at the first query and the first key (``is_causal=True``)."""
    _check(size)
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size):
    """The causal mask whose diagonal ends at the last query and the last key."""
    _check(size)
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
