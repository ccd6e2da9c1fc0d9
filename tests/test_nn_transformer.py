"""MultiheadAttention and the Transformer layers against torch with identical weights: masks (bool and
float, key padding, causal), batch_first, unbatched, kdim/vdim, bias_kv, zero_attn, norm_first, activations;
outputs and all gradients; parameter names and reprs."""
import numpy as np
import pytest
import torch

import ember
from test_nn_util import compare_module, same_state_dict_layout, randn, copy_state, e2n

tnn, enn = torch.nn, ember.nn


def both(name, *args, **kw):
    t = getattr(tnn, name)(*args, **kw).double()
    e = getattr(enn, name)(*args, **kw).double()
    same_state_dict_layout(t, e)
    assert repr(e) == repr(t)
    return t, e


MHA = [({}, {}), ({'batch_first': True}, {}), ({'kdim': 3, 'vdim': 5}, {}), ({'add_bias_kv': True}, {}),
       ({'add_zero_attn': True}, {}), ({'bias': False}, {}), ({}, {'average_attn_weights': False}),
       ({}, {'need_weights': False})]


def _d(*s, seed=0):
    return randn(*s, seed=seed, dtype=np.float64)


@pytest.mark.parametrize('ctor,call', MHA, ids=[f'{a}-{b}' for a, b in MHA])
def test_mha(ctor, call):
    t, e = both('MultiheadAttention', 8, 2, **ctor)
    kd, vd = ctor.get('kdim', 8), ctor.get('vdim', 8)
    if ctor.get('batch_first'):
        q, k, v = _d(3, 4, 8), _d(3, 6, kd, seed=1), _d(3, 6, vd, seed=2)
    else:
        q, k, v = _d(4, 3, 8), _d(6, 3, kd, seed=1), _d(6, 3, vd, seed=2)
    compare_module(t, e, [q, k, v], kwargs=call, atol=1e-10)


def test_mha_self_attention_and_unbatched():
    t, e = both('MultiheadAttention', 8, 4)
    copy_state(t, e)
    x = _d(5, 2, 8)
    compare_module(t, e, [x], call=lambda m, a: m(a, a, a), atol=1e-10, copy=False)
    compare_module(t, e, [x[:, 0], x[:, 1], x[:, 1]], atol=1e-10, copy=False)


@pytest.mark.parametrize('mask_kind', ['bool', 'float', 'kpm', 'both', '3d', 'causal'])
def test_mha_masks(mask_kind):
    t, e = both('MultiheadAttention', 8, 2, batch_first=True)
    copy_state(t, e)
    rng = np.random.default_rng(0)
    q = _d(2, 4, 8)
    kv = _d(2, 4, 8, seed=3)
    bool_mask = rng.random((4, 4)) > 0.7
    np.fill_diagonal(bool_mask, False)
    kpm = np.array([[False, False, False, True], [False, True, False, False]])
    kw = {}
    if mask_kind == 'bool':
        kw['attn_mask'] = bool_mask
    elif mask_kind == 'float':
        kw['attn_mask'] = rng.standard_normal((4, 4))
    elif mask_kind == 'kpm':
        kw['key_padding_mask'] = kpm
    elif mask_kind == 'both':
        kw['attn_mask'], kw['key_padding_mask'] = bool_mask, kpm
    elif mask_kind == '3d':
        kw['attn_mask'] = rng.standard_normal((4, 4, 4))
    else:
        kw['attn_mask'] = np.triu(np.full((4, 4), -np.inf), 1)
        kw['is_causal'] = True

    def call(m, a, b, lib=None):
        lib = torch if isinstance(m, tnn.Module) else ember
        kk = {k: (lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        return m(a, b, b, **kk)
    compare_module(t, e, [q, kv], call=call, atol=1e-10, copy=False)


def test_mha_errors():
    with pytest.raises(AssertionError, match='divisible'):
        enn.MultiheadAttention(6, 4)
    m = enn.MultiheadAttention(8, 2)
    x = ember.randn(4, 2, 8)
    with pytest.raises(RuntimeError, match='The shape of the 2D attn_mask'):
        m(x, x, x, attn_mask=ember.zeros(3, 3))


LAYERS = [{}, {'norm_first': True}, {'activation': 'gelu'}, {'batch_first': True}, {'bias': False}]


@pytest.mark.parametrize('kw', LAYERS, ids=[str(k) for k in LAYERS])
def test_encoder_layer(kw):
    t, e = both('TransformerEncoderLayer', 8, 2, dim_feedforward=16, dropout=0.0, **kw)
    x = _d(3, 5, 8)
    compare_module(t, e, [x], atol=1e-10)


def test_encoder_layer_with_masks_and_module_activation():
    t, e = tnn.TransformerEncoderLayer(8, 2, 16, 0.0, activation=tnn.GELU()).double(), \
        enn.TransformerEncoderLayer(8, 2, 16, 0.0, activation=enn.GELU()).double()
    assert repr(e) == repr(t)
    copy_state(t, e)
    x = _d(4, 2, 8)
    mask = np.triu(np.full((4, 4), -np.inf), 1)
    kpm = np.array([[False, False, False, True], [False, False, False, False]])

    def call(m, a):
        lib = torch if isinstance(m, tnn.Module) else ember
        return m(a, src_mask=lib.from_numpy(mask.copy()), src_key_padding_mask=lib.from_numpy(kpm.copy()))
    compare_module(t, e, [x], call=call, atol=1e-10, copy=False)


@pytest.mark.parametrize('kw', LAYERS, ids=[str(k) for k in LAYERS])
def test_decoder_layer(kw):
    t, e = both('TransformerDecoderLayer', 8, 2, dim_feedforward=16, dropout=0.0, **kw)
    if kw.get('batch_first'):
        compare_module(t, e, [_d(2, 3, 8), _d(2, 5, 8, seed=1)], atol=1e-10)
    else:
        compare_module(t, e, [_d(3, 2, 8), _d(5, 2, 8, seed=1)], atol=1e-10)


def test_full_transformer_with_masks():
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0,
              batch_first=True)
    t, e = both('Transformer', **kw)
    copy_state(t, e)
    src, tgt = _d(2, 5, 8), _d(2, 3, 8, seed=1)
    tgt_mask = tnn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    emask = enn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    np.testing.assert_array_equal(e2n(emask), tgt_mask.numpy())
    kpm = np.array([[False] * 5, [False] * 3 + [True] * 2])

    def call(m, s, tg):
        lib = torch if isinstance(m, tnn.Module) else ember
        mask = tgt_mask if lib is torch else emask
        return m(s, tg, tgt_mask=mask, src_key_padding_mask=lib.from_numpy(kpm.copy()),
                 memory_key_padding_mask=lib.from_numpy(kpm.copy()))
    compare_module(t, e, [src, tgt], call=call, atol=1e-9, copy=False)
    with pytest.raises(RuntimeError, match='the feature number of src and tgt'):
        e(ember.randn(2, 5, 4, dtype=ember.float64), ember.randn(2, 3, 4, dtype=ember.float64))


def test_transformer_init_is_xavier():
    e = enn.Transformer(d_model=64, nhead=4, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=128)
    w = e2n(e.encoder.layers[0].linear1.weight)
    bound = np.sqrt(6 / (64 + 128))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


def test_functional_multi_head_attention_forward_matches_torch():
    """F.multi_head_attention_forward with torch's signature (embed_dim_to_check, static_k/static_v), as CLIP's
    attention pooling calls it."""
    rng = np.random.default_rng(0)
    E, H, L, S, N = 8, 2, 3, 4, 2
    arrs = dict(q=rng.standard_normal((L, N, E)), k=rng.standard_normal((S, N, E)), v=rng.standard_normal((S, N, E)),
                w=rng.standard_normal((3 * E, E)), b=rng.standard_normal(3 * E), ow=rng.standard_normal((E, E)),
                ob=rng.standard_normal(E), sk=rng.standard_normal((N * H, 5, E // H)),
                sv=rng.standard_normal((N * H, 5, E // H)))
    res = []
    for lib in (torch, ember):
        T = {k: lib.tensor(v, dtype=lib.float64) for k, v in arrs.items()}
        F = lib.nn.functional
        args = (T['q'], T['k'], T['v'], E, H, T['w'], T['b'], None, None, False, 0.0, T['ow'], T['ob'])
        o, w = F.multi_head_attention_forward(*args)
        o2, w2 = F.multi_head_attention_forward(*args, static_k=T['sk'], static_v=T['sv'], average_attn_weights=False)
        with pytest.raises(AssertionError, match='was expecting embedding dimension of 9, but got 8'):
            F.multi_head_attention_forward(*args[:3], E + 1, *args[4:])
        res.append([x.numpy() for x in (o, w, o2, w2)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
