"""Records for the fused attention operators (ember/_ops/attention.py), against torch's own CPU kernels."""
import numpy as np

from .core import op, S, Arg

_A = 'ops.aten.'


def _masked_row(L, S_, dt):
    m = np.zeros((L, S_), dt)
    m[1] = -np.inf                      # a fully masked row: output 0, logsumexp 0
    m[2, ::2] = -np.inf
    return m


def _flash_samples(dt):
    yield S(Arg((2, 3, 4, 5)), Arg((2, 3, 6, 5)), Arg((2, 3, 6, 5)))
    yield S(Arg((2, 2, 5, 4)), Arg((2, 2, 5, 4)), Arg((2, 2, 5, 4)), 0.0, True)
    yield S(Arg((1, 2, 7, 3)), Arg((1, 2, 5, 3)), Arg((1, 2, 5, 3)), is_causal=True, scale=0.3)   # L > S
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), attn_mask=_masked_row(3, 5, dt))
    yield S(Arg((2, 2, 3, 4)), Arg((2, 2, 5, 4)), Arg((2, 2, 5, 4)), attn_mask=Arg((2, 1, 3, 5), grad=False),
            is_causal=True)
    yield S(Arg((4, 3, 2, 1), noncontig=True), Arg((4, 3, 2, 1), noncontig=True), Arg((1, 2, 3, 4)))
    big = dict(low=-20, high=20)        # scores past +-60: the kernel subtracts the row maximum first
    yield S(Arg((1, 2, 3, 4), **big), Arg((1, 2, 5, 4), **big), Arg((1, 2, 5, 4)), 0.0, True)
    # grouped-query attention: two key/value heads for four query heads. (Three, which does not divide four,
    # ember refuses; torch 2.13's kernel reads past the last key head there, so it is no reference.)
    yield S(Arg((1, 4, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), 0.0, True)
    # errors: 3-D inputs, head sizes, dropout, mask dtype, batch mismatch
    yield S(Arg((3, 4, 5)), Arg((3, 4, 5)), Arg((3, 4, 5)))
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 3)), Arg((1, 2, 5, 4)))
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), 0.5)
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), attn_mask=np.ones((3, 5), bool))


op('_scaled_dot_product_flash_attention_for_cpu', _flash_samples, torch_name=_A + '_scaled_dot_product_flash_attention_for_cpu',
   gradgrad=False)     # torch: "derivative for ..._backward is not implemented"; ember raises likewise (test_nn_ops)


def _flash_backward_samples(dt):
    for (B, H, Hk, L, S_, E), kw in [((2, 3, 3, 4, 6, 5), {}), ((1, 2, 2, 5, 5, 4), {'is_causal': True}),
                                     ((1, 2, 2, 3, 5, 4), {'attn_mask': _masked_row(3, 5, dt), 'scale': 0.7}),
                                     ((1, 4, 2, 3, 5, 4), {})]:          # grouped-query attention
        lse = Arg((B, H, L), low=0.5, high=2)
        yield S(Arg((B, H, L, E)), Arg((B, H, L, E)), Arg((B, Hk, S_, E)), Arg((B, Hk, S_, E)), Arg((B, H, L, E)),
                lse, 0.0, kw.pop('is_causal', False), **kw)


op('_scaled_dot_product_flash_attention_for_cpu_backward', _flash_backward_samples,
   torch_name=_A + '_scaled_dot_product_flash_attention_for_cpu_backward', grad=False, gradgrad=False,
   rtol=1e-5, atol=1e-5)     # float32: torch accumulates block by block
