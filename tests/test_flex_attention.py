"""torch.nn.attention.flex_attention against torch 2.13 (CPU build): outputs and logsumexp for the usual mask
and score modifications (causal, sliding window, prefix-LM, document masking, ALiBi, relative-position bias,
tanh soft-capping), GQA, scale, a batch-broadcast key, fully masked rows; the BlockMask fields and views for a few
shapes and block sizes; and gradients through query, key, value and captured tensors, against torch's eager math
reference (torch refuses backward through flex_attention on the CPU).

torch's eager flex_attention compiles with the ``eager`` backend into that same math reference; the tests set
``_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG`` to skip the compile (same numbers, a fraction of the time), except
``test_compiled_eager_path_agrees``."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as tfa
from torch._higher_order_ops.flex_attention import math_attention

import ember
import ember.nn.attention.flex_attention as efa


@pytest.fixture(autouse=True)
def _no_compile(monkeypatch):
    monkeypatch.setattr(tfa, '_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG', True)
    warnings.filterwarnings('ignore', message='.*return_lse is deprecated.*')


def arrays(*shape, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return torch.tensor(a), ember.tensor(a)


def qkv(B=2, Hq=2, Hkv=None, L=20, S=20, E=8, Ev=None, dtype=np.float32):
    t, e = zip(*(arrays(B, Hq, L, E, seed=1, dtype=dtype), arrays(B, Hkv or Hq, S, E, seed=2, dtype=dtype),
                 arrays(B, Hkv or Hq, S, Ev or E, seed=3, dtype=dtype)))
    return t, e


def close(e, t, atol=1e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5)


# mask_mods and score_mods, built for one library (T: torch or ember) and its captured tensors
def causal(T, cap):
    return lambda b, h, q, kv: q >= kv


def sliding(T, cap):
    return T.nn.attention.flex_attention.and_masks(causal(T, cap), lambda b, h, q, kv: q - kv <= 3)


def prefix_lm(T, cap):
    return T.nn.attention.flex_attention.or_masks(causal(T, cap), lambda b, h, q, kv: kv < 5)


def documents(T, cap):
    doc = cap['doc']
    return lambda b, h, q, kv: doc[b, q] == doc[b, kv]


def alibi(T, cap):
    slopes = cap['slopes']
    return lambda s, b, h, q, kv: s + slopes[h] * (kv - q)


def relative(T, cap):
    bias = cap['bias']
    return lambda s, b, h, q, kv: s + bias[h, q - kv + 19]


def softcap(T, cap):
    return lambda s, b, h, q, kv: 5 * T.tanh(s / 5)


def captured(seed=0):
    doc = np.sort(np.random.default_rng(seed).integers(0, 3, (2, 20)), axis=1)
    slopes = 2.0 ** -np.arange(1, 5, dtype=np.float32)
    bias = np.random.default_rng(seed + 1).standard_normal((4, 39)).astype(np.float32)
    return ({'doc': torch.tensor(doc), 'slopes': torch.tensor(slopes), 'bias': torch.tensor(bias)},
            {'doc': ember.tensor(doc), 'slopes': ember.tensor(slopes), 'bias': ember.tensor(bias)})


CASES = [(causal, None, 4), (sliding, None, (8, 4)), (prefix_lm, None, 8), (documents, None, 4),
         (None, alibi, None), (None, relative, None), (None, softcap, None), (causal, alibi, 16),
         (sliding, softcap, 2), (documents, relative, (4, 8))]


@pytest.mark.parametrize('mask,mod,block', CASES,
                         ids=[f'{m and m.__name__}-{s and s.__name__}-{b}' for m, s, b in CASES])
def test_against_torch(mask, mod, block):
    (tq, tk, tv), (eq, ek, ev) = qkv()
    tcap, ecap = captured()
    kw_t, kw_e = {}, {}
    if mask is not None:
        kw_t['block_mask'] = tfa.create_block_mask(mask(torch, tcap), 2, 2, 20, 20, device='cpu', BLOCK_SIZE=block)
        kw_e['block_mask'] = efa.create_block_mask(mask(ember, ecap), 2, 2, 20, 20, device='cpu', BLOCK_SIZE=block)
    if mod is not None:
        kw_t['score_mod'], kw_e['score_mod'] = mod(torch, tcap), mod(ember, ecap)
    to, tl = tfa.flex_attention(tq, tk, tv, return_lse=True, **kw_t)
    eo, el = efa.flex_attention(eq, ek, ev, return_lse=True, **kw_e)
    close(eo, to)
    close(el, tl)
    assert eo.dtype == ember.float32 and el.shape == (2, 2, 20)


@pytest.mark.parametrize('enable_gqa,Hkv,scale', [(True, 1, None), (True, 2, 0.3), (False, 4, 2.0)])
def test_gqa_and_scale(enable_gqa, Hkv, scale):
    (tq, tk, tv), (eq, ek, ev) = qkv(Hq=4, Hkv=Hkv, L=12, S=9, Ev=5)
    tcap, ecap = captured()
    tb = tfa.create_block_mask(lambda b, h, q, kv: (kv + h) % 3 != 0, None, 4, 12, 9, device='cpu', BLOCK_SIZE=4)
    eb = efa.create_block_mask(lambda b, h, q, kv: (kv + h) % 3 != 0, None, 4, 12, 9, device='cpu', BLOCK_SIZE=4)
    to, ta = tfa.flex_attention(tq, tk, tv, alibi(torch, tcap), tb, scale=scale, enable_gqa=enable_gqa,
                                return_aux=tfa.AuxRequest(lse=True))
    eo, ea = efa.flex_attention(eq, ek, ev, alibi(ember, ecap), eb, scale=scale, enable_gqa=enable_gqa,
                                return_aux=efa.AuxRequest(lse=True))
    close(eo, to)
    close(ea.lse, ta.lse)
    assert ea.max_scores is None and eo.shape == (2, 4, 12, 5)


def test_float64_and_bfloat16():
    (tq, tk, tv), (eq, ek, ev) = qkv(dtype=np.float64)
    close(efa.flex_attention(eq, ek, ev, softcap(ember, None)), tfa.flex_attention(tq, tk, tv, softcap(torch, None)),
          atol=1e-12)
    tq, tk, tv = (x.bfloat16() for x in (tq, tk, tv))
    eq, ek, ev = (x.bfloat16() for x in (eq, ek, ev))
    to, tl = tfa.flex_attention(tq, tk, tv, return_lse=True)
    eo, el = efa.flex_attention(eq, ek, ev, return_lse=True)
    assert eo.dtype == ember.bfloat16 and el.dtype == ember.float32
    close(eo.float(), to.float(), atol=1e-2)
    close(el, tl)


def test_fully_masked_rows():
    (tq, tk, tv), (eq, ek, ev) = qkv(L=10, S=10)

    def mask(b, h, q, kv):
        return (q != 3) & (kv <= q) & (q != 9 - b)
    tb = tfa.create_block_mask(mask, 2, None, 10, 10, device='cpu', BLOCK_SIZE=4)
    eb = efa.create_block_mask(mask, 2, None, 10, 10, device='cpu', BLOCK_SIZE=4)
    to, tl = tfa.flex_attention(tq, tk, tv, block_mask=tb, return_lse=True)
    eo, el = efa.flex_attention(eq, ek, ev, block_mask=eb, return_lse=True)
    close(eo, to)
    close(el, tl)
    assert (eo[:, :, 3] == 0).all() and (el[:, :, 3] == -math.inf).all() and (el[1, :, 8] == -math.inf).all()
    # a score_mod that sends a whole row to -inf masks it as well
    inf_row = {T: (lambda T: lambda s, b, h, q, kv: T.where(q == 0, -math.inf, s))(T) for T in (torch, ember)}
    close(efa.flex_attention(eq, ek, ev, inf_row[ember]), tfa.flex_attention(tq, tk, tv, inf_row[torch]))


def test_batch_broadcast_key():
    (tq, tk, tv), (eq, ek, ev) = qkv()
    tk, tv, ek, ev = tk[:1], tv[:1], ek[:1], ev[:1]
    tcap, ecap = captured()
    tb = tfa.create_block_mask(documents(torch, tcap), 2, 1, 20, 20, device='cpu', BLOCK_SIZE=8)
    eb = efa.create_block_mask(documents(ember, ecap), 2, 1, 20, 20, device='cpu', BLOCK_SIZE=8)
    close(efa.flex_attention(eq, ek, ev, block_mask=eb), tfa.flex_attention(tq, tk, tv, block_mask=tb))
    with pytest.raises(ValueError, match='same batch size'):
        efa.flex_attention(eq, ek, ev)


def test_score_mod_broadcasting_does_not_fit():
    """A score_mod that stacks its indices needs 0-d arguments: it runs under vmap, as torch runs every one."""
    (tq, tk, tv), (eq, ek, ev) = qkv(L=6, S=7)
    mods = {T: (lambda T: lambda s, b, h, q, kv: s + 0.1 * T.stack([q, kv, h]).float().max(0)[0])(T)
            for T in (torch, ember)}
    close(efa.flex_attention(eq, ek, ev, mods[ember]), tfa.flex_attention(tq, tk, tv, mods[torch]))


def test_compiled_eager_path_agrees(monkeypatch):
    monkeypatch.setattr(tfa, '_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG', False)
    (tq, tk, tv), (eq, ek, ev) = qkv(L=8, S=8)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        to = tfa.flex_attention(tq, tk, tv, softcap(torch, None))
    close(efa.flex_attention(eq, ek, ev, softcap(ember, None)), to)


def block_fields(bm):
    names = ['kv_num_blocks', 'kv_indices', 'full_kv_num_blocks', 'full_kv_indices', 'q_num_blocks', 'q_indices',
             'full_q_num_blocks', 'full_q_indices']
    return {n: getattr(bm, n) for n in names} | {'to_dense': bm.to_dense()}


def same_block_mask(eb, tb):
    for name, t in block_fields(tb).items():
        e = block_fields(eb)[name]
        assert (e is None) == (t is None), name
        if t is not None:
            assert e.dtype == ember.int32 and tuple(e.shape) == tuple(t.shape), name
            np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=name)
    assert eb.shape == tb.shape and eb.BLOCK_SIZE == tb.BLOCK_SIZE and eb.seq_lengths == tb.seq_lengths
    assert eb.sparsity() == pytest.approx(tb.sparsity())
    assert repr(eb) == repr(tb).replace('torch.Size', 'ember.Size') and str(eb) == str(tb)


SHAPES = [(causal, None, None, 20, 20, 4), (sliding, 2, 3, 10, 7, (4, 2)), (prefix_lm, 1, 2, 33, 17, 8),
          (documents, 2, None, 20, 20, 128), (documents, 2, 1, 20, 20, (2, 16))]


@pytest.mark.parametrize('mask,B,H,L,S,block', SHAPES, ids=[f'{m.__name__}-{B}x{H}x{L}x{S}-{k}'
                                                            for m, B, H, L, S, k in SHAPES])
@pytest.mark.parametrize('separate', [True, False])
def test_block_mask_fields(mask, B, H, L, S, block, separate):
    tcap, ecap = captured()
    tb = tfa.create_block_mask(mask(torch, tcap), B, H, L, S, device='cpu', BLOCK_SIZE=block,
                               separate_full_blocks=separate)
    eb = efa.create_block_mask(mask(ember, ecap), B, H, L, S, device='cpu', BLOCK_SIZE=block,
                               separate_full_blocks=separate)
    same_block_mask(eb, tb)
    np.testing.assert_array_equal(efa.create_mask(mask(ember, ecap), B, H, L, S, 'cpu').numpy(),
                                  tfa.create_mask(mask(torch, tcap), B, H, L, S, 'cpu').numpy())


def test_block_mask_views():
    tb = tfa.create_block_mask(lambda b, h, q, kv: q >= kv + h, 2, 3, 40, 24, device='cpu', BLOCK_SIZE=8)
    eb = efa.create_block_mask(lambda b, h, q, kv: q >= kv + h, 2, 3, 40, 24, device='cpu', BLOCK_SIZE=8)
    for ti, ei in [(0, 0), ((1, -1), (1, -1)), ((slice(0, 2), slice(1, 2), torch.tensor([1, 3])),
                                               (slice(0, 2), slice(1, 2), ember.tensor([1, 3])))]:
        same_block_mask(eb[ei], tb[ti])
    with pytest.raises(RuntimeError, match='sliced BlockMask'):
        efa.flex_attention(*qkv(L=40, S=24)[1], block_mask=eb[0])
    # _adjust crops to the upper-left corner: the mask create_block_mask makes for the shorter lengths (torch's
    # recount can list a full block as partial too, which changes no attention output)
    short = efa.create_block_mask(lambda b, h, q, kv: q >= kv + h, 2, 3, 40, 16, device='cpu', BLOCK_SIZE=8)
    for name, t in block_fields(short).items():
        assert ember.equal(block_fields(eb._adjust(40, 16))[name], t), name
    (tq, tk, tv), (eq, ek, ev) = qkv(Hq=3, L=40, S=16)
    close(efa.flex_attention(eq, ek, ev, block_mask=eb._adjust(40, 16)),
          tfa.flex_attention(tq, tk, tv, block_mask=tb._adjust(40, 16)))
    assert eb.to_string(grid_size=-1, limit=1) == tb.to_string(grid_size=-1, limit=1)
    blocks = [np.array([[[1, 0, 2]]], np.int32), np.array([[[[2, 0], [1, 0], [0, 1]]]], np.int32)]
    same_block_mask(efa.BlockMask.from_kv_blocks(*map(ember.tensor, blocks), BLOCK_SIZE=4),
                    tfa.BlockMask.from_kv_blocks(*map(torch.tensor, blocks), BLOCK_SIZE=4))


def test_score_mod_create_mask_and_helpers():
    def mod(T):
        return lambda s, b, h, q, kv: T.where(q >= kv + h, s, -math.inf)
    np.testing.assert_array_equal(efa.create_mask(mod(ember), 1, 2, 5, 6, 'cpu').numpy(),
                                  tfa.create_mask(mod(torch), 1, 2, 5, 6, 'cpu').numpy())
    z = ember.tensor(0)
    assert efa.noop_mask(z, z, z, z).item() is True and efa.noop_mask(z, z, z, z).dtype == ember.bool
    with pytest.raises(AssertionError, match='mask_mod'):
        efa.create_block_mask(mod(ember), 1, 1, 4, 4, device='cpu')
    with pytest.raises(RuntimeError, match='callable'):
        efa.and_masks(causal(ember, None), 3)
    assert set(efa.__all__) == set(tfa.__all__)
    assert efa.AuxRequest()._fields == tfa.AuxRequest()._fields and efa.AuxOutput()._fields == tfa.AuxOutput()._fields


def test_errors_and_warnings():
    _, (eq, ek, ev) = qkv(Hq=4, Hkv=2, L=8, S=8)
    with pytest.raises(ValueError, match='enable_gqa=True'):
        efa.flex_attention(eq, ek, ev)
    bm = efa.create_block_mask(causal(ember, None), None, None, 16, 8, device='cpu', BLOCK_SIZE=4)
    with pytest.raises(ValueError, match='larger length'):
        efa.flex_attention(eq, ek, ev, block_mask=bm, enable_gqa=True)
    with pytest.raises(ValueError, match='Cannot specify both'):
        efa.flex_attention(eq, ek, ev, enable_gqa=True, return_lse=True, return_aux=efa.AuxRequest(lse=True))
    efa._WARNED.discard('return_lse')
    with pytest.warns(FutureWarning, match='return_lse is deprecated'):
        efa.flex_attention(eq, ek, ev, enable_gqa=True, return_lse=True)


@pytest.mark.skipif(ember.cuda.is_available(), reason='this process has a CUDA device')
def test_cuda_device_without_cuda():
    """torch's CPU build raises for device='cuda'; ember builds the mask on the CPU, with a warning, and uses it."""
    (tq, tk, tv), (eq, ek, ev) = qkv(L=8, S=8)
    with pytest.warns(UserWarning, match='built on the CPU'):
        eb = efa.create_block_mask(causal(ember, None), None, None, 8, 8, device='cuda', BLOCK_SIZE=4)
    assert eb.kv_num_blocks.device == ember.device('cpu')
    assert efa.create_block_mask(causal(ember, None), 1, 1, 8, 8).kv_num_blocks.device == ember.device('cpu')
    tb = tfa.create_block_mask(causal(torch, None), None, None, 8, 8, device='cpu', BLOCK_SIZE=4)
    close(efa.flex_attention(eq, ek, ev, block_mask=eb), tfa.flex_attention(tq, tk, tv, block_mask=tb))


def torch_reference(q, k, v, score_mod, block_mask, scale=None, enable_gqa=False):
    """torch's eager math (autograd works through it), with lse back in natural-log units."""
    block_mask = block_mask or tfa.create_block_mask(tfa.noop_mask, None, None, q.size(2), k.size(2), device='cpu')
    out, lse, _ = math_attention(q, k, v, score_mod or (lambda s, b, h, qi, kv: s), block_mask.as_tuple(),
                                 scale or 1 / math.sqrt(q.size(-1)), {})
    return out, lse * math.log(2)


@pytest.mark.parametrize('mask,mod,Hkv', [(causal, relative, 2), (documents, alibi, 1), (None, softcap, 2),
                                          ('holes', relative, 1)])
def test_gradients(mask, mod, Hkv):
    (tq, tk, tv), (eq, ek, ev) = qkv(Hq=2, Hkv=Hkv, L=20, S=20, dtype=np.float64)
    tcap, ecap = captured()
    tcap['bias'], ecap['bias'] = tcap['bias'].double(), ecap['bias'].double()
    for x in (tq, tk, tv, eq, ek, ev, tcap['bias'], ecap['bias']):
        x.requires_grad_()
    if mask == 'holes':      # rows 4 and 11 fully masked: their gradients are 0, not NaN
        def mask(T, cap):
            return lambda b, h, q, kv: (q != 4) & (q != 11) & (kv <= q)
    tb = eb = None
    if mask is not None:
        tb = tfa.create_block_mask(mask(torch, tcap), 2, None, 20, 20, device='cpu', BLOCK_SIZE=8)
        eb = efa.create_block_mask(mask(ember, ecap), 2, None, 20, 20, device='cpu', BLOCK_SIZE=8)
    to, tl = torch_reference(tq, tk, tv, mod(torch, tcap), tb)
    eo, el = efa.flex_attention(eq, ek, ev, mod(ember, ecap), eb, enable_gqa=True, return_lse=True)
    close(eo, to, atol=1e-12)
    close(el, tl, atol=1e-12)
    weights = arrays(*to.shape, seed=7, dtype=np.float64)
    finite = arrays(*tl.shape, seed=8, dtype=np.float64)
    (to * weights[0]).sum().add(torch.where(tl.isfinite(), tl * finite[0], 0).sum()).backward()
    (eo * weights[1]).sum().add(ember.where(el.isfinite(), el * finite[1], 0).sum()).backward()
    for t, e in [(tq, eq), (tk, ek), (tv, ev), (tcap['bias'], ecap['bias'])]:
        if t.grad is None:      # the bias of a score_mod that does not read it
            assert e.grad is None
            continue
        assert not e.grad.isnan().any()
        close(e.grad, t.grad, atol=1e-10)


def test_block_structure_is_honoured():
    """A BlockMask made from blocks, with no mask_mod: ember skips its empty blocks as torch's compiled kernels
    do (torch's eager path reads only mask_mod, and would attend everywhere); the same as torch with a mask_mod
    that spells out the blocks."""
    (tq, tk, tv), (eq, ek, ev) = qkv(B=1, L=16, S=16)
    num, idx = ember.tensor([[[1, 2]]], dtype=ember.int32), ember.tensor([[[[1, 0], [0, 1]]]], dtype=ember.int32)
    eb = efa.BlockMask.from_kv_blocks(num, idx, BLOCK_SIZE=8)
    tb = tfa.create_block_mask(lambda b, h, q, kv: (q >= 8) | (kv >= 8), None, None, 16, 16, device='cpu',
                               BLOCK_SIZE=8)
    close(efa.flex_attention(eq, ek, ev, block_mask=eb), tfa.flex_attention(tq, tk, tv, block_mask=tb))
