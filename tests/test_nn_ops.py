"""nn operators beyond the generic OpInfo checks: argument forms, torch's error classes and messages,
running statistics, in-place renormalisation, padding_idx gradients, dropout in attention, meta shapes."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
import torch.nn.functional as TF


def _pair(*shape, seed=0, grad=False, dtype=np.float64):
    a = np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)
    e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if grad:
        e.requires_grad_(True)
        t.requires_grad_(True)
    return e, t


def _close(e, t, atol=1e-6):
    np.testing.assert_allclose(np.asarray(e.detach()._a), t.detach().numpy(), atol=atol, rtol=1e-6)


def _ones(like, *shape):
    lib = torch if isinstance(like, torch.Tensor) else ember
    return lib.ones(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape, dtype=like.dtype)


def _same_error(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    return str(ee.value), str(te.value)


# --- argument forms ------------------------------------------------------------------

def test_conv2d_int_and_tuple_arguments_agree():
    x, _ = _pair(2, 3, 9, 8)
    w, _ = _pair(4, 3, 3, 3, seed=1)
    a = F.conv2d(x, w, stride=2, padding=1, dilation=2)
    b = F.conv2d(x, w, stride=(2, 2), padding=[1, 1], dilation=(2,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize('k,d', [((3, 3), (1, 1)), ((4, 2), (1, 1)), ((2, 3), (3, 2)), ((1, 4), (1, 1))])
def test_same_padding_keeps_size_and_matches_torch(k, d):
    (xe, xt), (we, wt) = _pair(1, 2, 7, 6), _pair(3, 2, *k, seed=1)
    out = F.conv2d(xe, we, padding='same', dilation=d)
    assert tuple(out.shape) == (1, 3, 7, 6)
    _close(out, TF.conv2d(xt, wt, padding='same', dilation=d))


def test_unbatched_inputs():
    (xe, xt), (we, wt) = _pair(3, 6, 6), _pair(2, 3, 3, 3, seed=1)
    _close(F.conv2d(xe, we), TF.conv2d(xt, wt))
    (xe, xt) = _pair(3, 7)
    (we, wt) = _pair(2, 3, 2, seed=2)
    _close(F.conv1d(xe, we, stride=2), TF.conv1d(xt, wt, stride=2))
    out, idx = F.max_pool2d(_pair(2, 5, 5)[0], 2, return_indices=True)
    assert tuple(out.shape) == (2, 2, 2) and idx.dtype == ember.int64


def test_public_names():
    x = ember.ones(1, 2, 5, 5)
    w = ember.ones(3, 2, 3, 3)
    assert tuple(ember.conv2d(x, w).shape) == (1, 3, 3, 3)
    assert tuple(ember.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1).shape) == (1, 3, 3, 3)
    assert tuple(ember.conv_transpose2d(x, ember.ones(2, 3, 3, 3)).shape) == (1, 3, 7, 7)
    assert tuple(ember.layer_norm(x, (5,)).shape) == (1, 2, 5, 5)
    assert tuple(ember.embedding(ember.ones(4, 3), ember.tensor([1, 2])).shape) == (2, 3)


def test_meta_device_shapes():
    x = ember.empty(2, 3, 10, 10, device='meta')
    assert tuple(F.conv2d(x, ember.empty(4, 3, 3, 3, device='meta'), stride=2).shape) == (2, 4, 4, 4)
    assert tuple(F.max_pool2d(x, 3, 2, ceil_mode=True).shape) == (2, 3, 5, 5)
    assert tuple(F.layer_norm(x, (10,)).shape) == (2, 3, 10, 10)
    with pytest.raises(RuntimeError, match='expected input'):
        F.conv2d(x, ember.empty(4, 2, 3, 3, device='meta'))


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda F, x: F.conv2d(x, _ones(x, (2, 3, 3, 3))),                    # channels
    lambda F, x: F.conv2d(x[..., :2, :2], _ones(x, (2, 4, 3, 3))),       # kernel larger than input
    lambda F, x: F.conv2d(x, _ones(x, (3, 2, 3, 3)), groups=2),          # weight not divisible by groups
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), _ones(x, 3)),     # bias size
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), stride=0),
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), padding=-1),
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), groups=0),
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), padding='same', stride=2),
    lambda F, x: F.conv2d(x, _ones(x, (2, 4, 3, 3)), padding='full'),
    lambda F, x: F.conv2d(x[0, 0], _ones(x, (2, 4, 3, 3))),              # 2-D input
    lambda F, x: F.conv_transpose2d(x, _ones(x, (3, 2, 3, 3))),
    lambda F, x: F.conv_transpose2d(x, _ones(x, (4, 2, 3, 3)), output_padding=1),
    lambda F, x: F.max_pool2d(x, 3, padding=2),
    lambda F, x: F.max_pool2d(x[..., :2, :2], 3),
    lambda F, x: F.avg_pool2d(x[..., :2, :2], 3),
    lambda F, x: F.layer_norm(x, (4,)),
    lambda F, x: F.layer_norm(x, (5,), weight=_ones(x, 4)),
    lambda F, x: F.group_norm(x, 3),
    lambda F, x: F.pixel_shuffle(x, 3),
    lambda F, x: F.unfold(x, 6),
])
def test_errors_match_torch(call):
    xe, xt = _pair(1, 4, 5, 5)
    em, tm = _same_error(lambda: call(F, xe), lambda: call(TF, xt))
    assert em.replace('ember', 'torch') == tm


def test_dtype_mismatch_error():
    x = ember.ones(1, 2, 4, 4)
    with pytest.raises(RuntimeError, match='expected scalar type Float but found Double'):
        F.conv2d(x, ember.ones(2, 2, 3, 3, dtype=ember.float64))


def test_embedding_errors():
    w = ember.ones(4, 3)
    with pytest.raises(IndexError, match='index out of range in self'):
        F.embedding(ember.tensor([4]), w)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding(ember.tensor([1.0]), w)
    with pytest.raises(AssertionError, match='Padding_idx must be within num_embeddings'):
        F.embedding(ember.tensor([1]), w, padding_idx=4)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(ember.tensor([1]), ember.ones(4))


def test_batch_norm_needs_more_than_one_value():
    with pytest.raises(ValueError, match='Expected more than 1 value per channel when training'):
        F.batch_norm(ember.ones(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match='running_mean must be defined in evaluation mode'):
        F.batch_norm(ember.ones(2, 3), None, None, training=False)


# --- stateful behaviour ----------------------------------------------------------------

@pytest.mark.parametrize('shape', [(8, 3), (4, 3, 5), (2, 3, 4, 4)])
def test_batch_norm_running_stats_match_torch(shape):
    (xe, xt) = _pair(*shape)
    rme, rmt = _pair(3, seed=1)
    rve, rvt = ember.ones(3, dtype=ember.float64), torch.ones(3, dtype=torch.float64)
    for _ in range(2):
        oe = F.batch_norm(xe, rme, rve, training=True, momentum=0.2)
        ot = TF.batch_norm(xt, rmt, rvt, training=True, momentum=0.2)
    _close(oe, ot)
    _close(rme, rmt)
    _close(rve, rvt)
    _close(F.batch_norm(xe, rme, rve), TF.batch_norm(xt, rmt, rvt))     # eval uses the running stats


def test_failed_batch_norm_leaves_running_stats_unchanged():
    rm, rv = ember.zeros(3), ember.ones(4)
    with pytest.raises(RuntimeError, match='running_var should contain 3 elements not 4'):
        F.batch_norm(ember.ones(4, 3), rm, rv, training=True)
    assert rm.tolist() == [0.0, 0.0, 0.0]


def test_instance_norm_running_stats_match_torch():
    (xe, xt) = _pair(2, 3, 6)
    rme, rmt = ember.zeros(3, dtype=ember.float64), torch.zeros(3, dtype=torch.float64)
    rve, rvt = ember.ones(3, dtype=ember.float64), torch.ones(3, dtype=torch.float64)
    _close(F.instance_norm(xe, rme, rve, momentum=0.3), TF.instance_norm(xt, rmt, rvt, momentum=0.3))
    _close(rme, rmt)
    _close(rve, rvt)
    _close(F.instance_norm(xe, rme, rve, use_input_stats=False), TF.instance_norm(xt, rmt, rvt, use_input_stats=False))


def test_embedding_max_norm_renormalises_weight_in_place():
    (we, wt) = _pair(6, 4)
    idx = [[0, 2, 2], [5, 1, 0]]
    oe = F.embedding(ember.tensor(idx), we, max_norm=1.5)
    ot = TF.embedding(torch.tensor(idx), wt, max_norm=1.5)
    _close(oe, ot)
    _close(we, wt)                      # rows 0, 1, 2, 5 rescaled in place; 3, 4 untouched
    assert we._version > 0


def test_embedding_padding_idx_gets_no_gradient():
    (we, wt) = _pair(5, 3, grad=True)
    idx = [[1, 2, 1], [4, 1, 0]]
    F.embedding(ember.tensor(idx), we, padding_idx=1).sum().backward()
    TF.embedding(torch.tensor(idx), wt, padding_idx=1).sum().backward()
    _close(we.grad, wt.grad)
    assert we.grad[1].abs().sum().item() == 0


def test_max_pool_indices_and_gradient_with_ties():
    # torch's index: the first maximum of each window, as a flat index into the input plane
    x = np.array([[[[1., 1., 0., 2.], [1., 0., 2., 2.], [3., 3., 3., 3.]]]])
    (xe, xt) = ember.from_numpy(x.copy()).requires_grad_(True), torch.from_numpy(x.copy()).requires_grad_(True)
    oe, ie = F.max_pool2d(xe, 2, stride=1, return_indices=True)
    ot, it = TF.max_pool2d(xt, 2, stride=1, return_indices=True)
    assert ie.tolist() == it.tolist()
    oe.sum().backward()
    ot.sum().backward()
    _close(xe.grad, xt.grad)


def test_sdpa_dropout():
    (qe, qt) = _pair(2, 3, 4, 5)
    # p=1 drops everything (deterministic): both libraries give zeros
    _close(F.scaled_dot_product_attention(qe, qe, qe, dropout_p=1.0),
           TF.scaled_dot_product_attention(qt, qt, qt, dropout_p=1.0))
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(qe, qe, qe, dropout_p=0.5)
    ember.manual_seed(0)
    b = F.scaled_dot_product_attention(qe, qe, qe, dropout_p=0.5)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), F.scaled_dot_product_attention(qe, qe, qe).numpy())


def test_sdpa_mask_and_causal_combine():
    (qe, qt), (me, mt) = _pair(1, 2, 3, 4), _pair(3, 3, seed=1)
    _close(F.scaled_dot_product_attention(qe, qe, qe, attn_mask=me, is_causal=True),
           TF.scaled_dot_product_attention(qt, qt, qt, attn_mask=mt, is_causal=True))


@pytest.mark.parametrize('shapes,kw', [
    (((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)), {}),                     # fused (flash) path
    (((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)), {'is_causal': True}),
    (((2, 4, 5, 4), (2, 2, 6, 4), (2, 2, 6, 4)), {'enable_gqa': True}),
    (((3, 5, 4), (3, 6, 4), (3, 6, 4)), {}),                              # math path: 3-D
    (((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7)), {}),                     # math path: value head size
    (((2, 3, 5, 4), (1, 3, 6, 4), (1, 3, 6, 4)), {}),                     # math path: broadcast batch
    (((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), (3, 5)), {}),             # math path: the mask requires grad
])
def test_sdpa_takes_torchs_path(shapes, kw):
    # where torch's CPU dispatch picks its fused kernel, ember's graph carries the same node, with the same
    # values and gradients
    pairs = [_pair(*s, seed=i, grad=True) for i, s in enumerate(shapes)]
    oe = F.scaled_dot_product_attention(*[p[0] for p in pairs[:3]], *[p[0] for p in pairs[3:]], **kw)
    ot = TF.scaled_dot_product_attention(*[p[1] for p in pairs[:3]], *[p[1] for p in pairs[3:]], **kw)
    fused = 'ScaledDotProductFlashAttentionForCpuBackward0'
    assert (type(oe.grad_fn).__name__ == fused) == (ot.grad_fn.name() == fused)
    if ot.grad_fn.name() == fused:
        assert oe.stride() == ot.stride()       # torch's (B, L, H, E) layout
    _close(oe, ot)
    w = np.random.default_rng(5).standard_normal(tuple(ot.shape))
    (oe * ember.tensor(w)).sum().backward()
    (ot * torch.tensor(w)).sum().backward()
    for (xe, xt) in pairs:
        _close(xe.grad, xt.grad)


def test_sdpa_fused_bool_mask_with_a_fully_masked_row():
    (qe, qt), (ke, kt) = _pair(1, 2, 3, 4, grad=True), _pair(1, 2, 5, 4, seed=1, grad=True)
    m = np.array([[True, False, True, True, False], [False] * 5, [True] * 5])
    oe = F.scaled_dot_product_attention(qe, ke, ke, attn_mask=ember.tensor(m))
    ot = TF.scaled_dot_product_attention(qt, kt, kt, attn_mask=torch.tensor(m))
    _close(oe, ot)
    assert not oe.detach()[0, :, 1].numpy().any()   # the fully masked row is 0, not NaN
    oe.sum().backward()
    ot.sum().backward()
    _close(qe.grad, qt.grad)
    _close(ke.grad, kt.grad)


def test_sdpa_fused_has_no_double_backward_like_torch():
    (qe, qt) = _pair(1, 2, 3, 4, grad=True)
    for lib, F_, q in ((ember, F, qe), (torch, TF, qt)):
        g, = lib.autograd.grad(F_.scaled_dot_product_attention(q, q, q).sum(), q, create_graph=True)
        with pytest.raises(RuntimeError, match='_scaled_dot_product_flash_attention_for_cpu_backward'):
            lib.autograd.grad(g.sum(), q)


def test_interpolate_argument_errors():
    x, xt = _pair(1, 2, 4, 4)
    for kw in (dict(), dict(size=3, scale_factor=2), dict(size=3, mode='nearest', align_corners=True)):
        _same_error(lambda: F.interpolate(x, **kw), lambda: TF.interpolate(xt, **kw))


def test_conv_float32_training_step_matches_torch():
    (xe, xt) = _pair(4, 3, 10, 10, dtype=np.float32)
    (we, wt) = _pair(5, 3, 3, 3, seed=1, grad=True, dtype=np.float32)
    (be, bt) = _pair(5, seed=2, grad=True, dtype=np.float32)
    he = F.max_pool2d(F.conv2d(xe, we, be, padding=1), 2)
    ht = TF.max_pool2d(TF.conv2d(xt, wt, bt, padding=1), 2)
    (he * he).sum().backward()
    (ht * ht).sum().backward()
    _close(he, ht, atol=1e-4)
    np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(be.grad.numpy(), bt.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize('cfg', [dict(stride=1, padding=1, dilation=1, groups=1),
                                 dict(stride=2, padding=0, dilation=2, groups=2),
                                 dict(stride=(2, 1), padding=(1, 2), dilation=(1, 3), groups=1)])
def test_convolution_backward_weight_matches_torch(cfg):
    (xe, xt), (we, wt) = _pair(2, 4, 9, 10), _pair(6, 4 // cfg['groups'], 3, 2, seed=1)
    out = TF.conv2d(xt, wt, **cfg)
    (ge, gt) = _pair(*out.shape, seed=2)
    s, p, d = (torch.nn.modules.utils._pair(cfg[k]) for k in ('stride', 'padding', 'dilation'))
    e = ember.ops.aten.convolution_backward_weight(ge, xe, list(wt.shape), s, p, d, cfg['groups'])
    t = torch.nn.grad.conv2d_weight(xt, wt.shape, gt, **cfg)
    _close(e, t)


def test_max_unpool2d_matches_torch():
    (xe, xt) = _pair(2, 3, 6, 7, grad=True)
    oe, ie = F.max_pool2d(xe, 2, return_indices=True)
    ot, it = TF.max_pool2d(xt, 2, return_indices=True)
    em, tm = _same_error(lambda: F.max_unpool2d(oe, ie, 2), lambda: TF.max_unpool2d(ot, it, 2))   # 6x6 too small
    pattern = r'Found an invalid max index: \d+ \(output volumes are of size 6x6\)'   # torch's pick varies by thread
    import re
    assert re.fullmatch(pattern, em) and re.fullmatch(pattern, tm), (em, tm)
    ue, ut = F.max_unpool2d(oe, ie, 2, output_size=(6, 7)), TF.max_unpool2d(ot, it, 2, output_size=(6, 7))
    _close(ue, ut)
    (ue * ue).sum().backward()
    (ut * ut).sum().backward()
    _close(xe.grad, xt.grad)
    (ve, vt) = _pair(2, 3, 8, grad=True)
    oe, ie = F.max_pool1d(ve, 2, return_indices=True)
    ot, it = TF.max_pool1d(vt, 2, return_indices=True)
    _close(F.max_unpool1d(oe, ie, 2), TF.max_unpool1d(ot, it, 2))


def test_max_pool_indices_of_nan_and_fill_windows_match_torch():
    # two NaNs in one window: torch reports the last; an all -inf input with padding: the window's first
    # position inside the input, never one in the padding
    a = np.arange(32, dtype=np.float64).reshape(1, 2, 4, 4)
    a[0, 0, 0, 0] = a[0, 0, 1, 1] = np.nan
    b = np.full((1, 1, 5, 5), -np.inf)
    for x, kw in ((a, {}), (b, {'padding': 1}), (b, {'padding': 1, 'ceil_mode': True, 'stride': 2})):
        ve, ie = F.max_pool2d(ember.tensor(x), 2, return_indices=True, **kw)
        vt, it = TF.max_pool2d(torch.tensor(x), 2, return_indices=True, **kw)
        np.testing.assert_array_equal(ie.numpy(), it.numpy())
        np.testing.assert_array_equal(ve.numpy(), vt.numpy())


def test_batch_norm_empty_batch_in_training_matches_torch():
    """An empty batch: an empty result, the running statistics untouched, zero parameter gradients (the fused
    kernels must not divide by the zero count)."""
    res = []
    for lib in (ember, torch):
        x = lib.zeros(0, 3, 4, requires_grad=True)
        w, rm, rv = lib.ones(3, requires_grad=True), lib.zeros(3), lib.ones(3)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, training=True)
        y.sum().backward()
        res.append([tuple(y.shape), tuple(x.grad.shape), w.grad.tolist(), rm.tolist(), rv.tolist()])
    assert res[0] == res[1]


def test_sdpa_kernel_selects_backends_as_torch():
    """ember.nn.attention (torch.nn.attention): inside sdpa_kernel only the listed kernels are enabled (the
    backends.cuda flags, restored after); MATH or FLASH_ATTENTION run on the CPU (the same values), the GPU-only
    ones leave no viable kernel and raise torch's error, under torch as under ember."""
    from ember.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.attention as tA
    q = np.random.default_rng(0).standard_normal((2, 3, 5, 8)).astype(np.float32)
    eq, tq = ember.from_numpy(q), torch.from_numpy(q)
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True).numpy()
    assert [(b.name, int(b)) for b in SDPBackend] == [(n, int(v)) for n, v in tA.SDPBackend.__members__.items()]
    assert str(SDPBackend.MATH) == 'SDPBackend.MATH'
    for name in ('MATH', 'FLASH_ATTENTION', 'EFFICIENT_ATTENTION', 'CUDNN_ATTENTION'):
        with sdpa_kernel(getattr(SDPBackend, name)):
            flags = (ember.backends.cuda.flash_sdp_enabled(), ember.backends.cuda.math_sdp_enabled())
            if name in ('MATH', 'FLASH_ATTENTION'):
                out = ember.nn.functional.scaled_dot_product_attention(eq, eq, eq, is_causal=True)
                np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
            else:
                with pytest.raises(RuntimeError, match='No viable backend'):
                    ember.nn.functional.scaled_dot_product_attention(eq, eq, eq)
                with tA.sdpa_kernel(getattr(tA.SDPBackend, name)), pytest.raises(RuntimeError, match='No viable'):
                    torch.nn.functional.scaled_dot_product_attention(tq, tq, tq)
        assert flags == (name == 'FLASH_ATTENTION', name == 'MATH')
    assert ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        ember.nn.functional.scaled_dot_product_attention(eq, eq, eq)
    with pytest.raises(TypeError, match='SDPBackend'):
        with sdpa_kernel('math'):
            pass


def test_batch_norm_statistics_when_a_threads_rows_are_not_whole_blocks():
    """The centred squares go in blocks of samples within each thread's range: a range that is not a multiple
    of the block wrote one block's rows into a longer slice (timm's LeViT: batch norm over 392 x 640 failed
    with 'could not broadcast (94,640) into (102,640)')."""
    prev = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        for shape in [(392, 640), (333, 640), (7, 640, 5)]:
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            e = F.batch_norm(ember.from_numpy(x), None, None, training=True).numpy()
            t = TF.batch_norm(torch.from_numpy(x), None, None, training=True).numpy()
            np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-5)
    finally:
        ember.set_num_threads(prev)
