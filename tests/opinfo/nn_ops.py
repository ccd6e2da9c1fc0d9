"""OpInfo records for neural-network operators (ember/_ops/nn_ops.py) and the nn.functional wrappers over them."""
import numpy as np
import torch

from .core import op, S, Arg, FLOATS

_F = 'nn.functional.'


# --- convolution ---------------------------------------------------------------------

def _conv2d_samples(dt):
    yield S(Arg((2, 3, 6, 5)), Arg((4, 3, 3, 3)), Arg((4,)))
    yield S(Arg((1, 4, 7, 7)), Arg((6, 2, 3, 2)), None, stride=2, padding=1, groups=2)
    yield S(Arg((2, 2, 8, 8)), Arg((2, 2, 3, 3)), Arg((2,)), stride=(2, 1), padding=(2, 1), dilation=(2, 3))
    yield S(Arg((2, 5, 5)), Arg((3, 2, 2, 2)), None)                      # unbatched
    yield S(Arg((1, 2, 5, 6)), Arg((3, 2, 4, 3)), Arg((3,)), padding='same', dilation=(1, 2))
    yield S(Arg((1, 2, 5, 6)), Arg((3, 2, 3, 3)), padding='valid')
    yield S(Arg((0, 2, 5, 5)), Arg((3, 2, 3, 3)))                         # empty batch
    # channels enough for the batch-folded GEMM kernel (NOTE [convolution kernel]), stride 1 and 2, fields in
    # the weight's order (fewer field rows than output channels) and channels last
    yield S(Arg((2, 64, 3, 4)), Arg((64, 64, 3, 3)), Arg((64,)), padding=1)
    yield S(Arg((3, 64, 5, 5)), Arg((64, 64, 3, 3)), None, padding=1)
    yield S(Arg((2, 64, 5, 4)), Arg((64, 64, 3, 2)), None, stride=2, padding=(1, 0))
    yield S(Arg((0, 64, 3, 3)), Arg((64, 64, 3, 3)), padding=1)             # empty batch
    yield S(Arg((2, 3, 5, 5)), Arg((4, 2, 3, 3)))                         # channel mismatch: error
    yield S(Arg((1, 3, 2, 2)), Arg((4, 3, 3, 3)))                         # kernel larger than input: error


def _conv1d_samples(dt):
    yield S(Arg((2, 3, 9)), Arg((4, 3, 3)), Arg((4,)), stride=2, padding=1)
    yield S(Arg((4, 8)), Arg((4, 2, 2)), None, dilation=2, groups=2)
    yield S(Arg((2, 2, 7)), Arg((2, 2, 4)), padding='same')


def _conv3d_samples(dt):
    yield S(Arg((1, 2, 4, 4, 4)), Arg((3, 2, 2, 2, 2)), Arg((3,)), stride=(1, 2, 1), padding=1)


def _convt2d_samples(dt):
    yield S(Arg((2, 3, 4, 4)), Arg((3, 2, 3, 3)), Arg((2,)))
    yield S(Arg((1, 4, 3, 5)), Arg((4, 3, 3, 2)), None, stride=2, padding=1, output_padding=1, groups=2)
    yield S(Arg((1, 2, 3, 3)), Arg((2, 2, 2, 2)), Arg((2,)), stride=(2, 3), dilation=(2, 1), output_padding=(1, 0))
    yield S(Arg((2, 3, 3)), Arg((2, 3, 2, 2)), None)                      # unbatched
    yield S(Arg((2, 64, 2, 3)), Arg((64, 64, 3, 3)), Arg((64,)), stride=2, padding=1, output_padding=1)
    yield S(Arg((1, 64, 2, 2)), Arg((64, 64, 3, 3)), None, padding=1)
    yield S(Arg((2, 64, 6, 6)), Arg((64, 64, 3, 3)), None, stride=2, padding=1)
    yield S(Arg((1, 4, 3, 3)), Arg((3, 2, 3, 3)))                         # channel mismatch: error


def _convt1d_samples(dt):
    yield S(Arg((2, 3, 5)), Arg((3, 4, 3)), Arg((4,)), stride=2, padding=1, output_padding=1)


def _convolution_samples(dt):
    yield S(Arg((2, 2, 5, 5)), Arg((3, 2, 3, 3)), Arg((3,)), [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    yield S(Arg((2, 4, 4)), Arg((4, 3, 3)), Arg((6,)), [2], [1], [1], True, [1], 2)


_conv_kw = dict(atol=1e-4, rtol=1e-5)
op('conv2d', _conv2d_samples, torch_name=_F + 'conv2d', **_conv_kw)
op('conv1d', _conv1d_samples, torch_name=_F + 'conv1d', **_conv_kw)
op('conv3d', _conv3d_samples, torch_name=_F + 'conv3d', **_conv_kw)
op('conv_transpose2d', _convt2d_samples, torch_name=_F + 'conv_transpose2d', **_conv_kw)
op('conv_transpose1d', _convt1d_samples, torch_name=_F + 'conv_transpose1d', **_conv_kw)
op('conv_transpose3d', lambda dt: [S(Arg((1, 2, 3, 3, 3)), Arg((2, 2, 2, 2, 2)), None, stride=2)],
   torch_name=_F + 'conv_transpose3d', **_conv_kw)
op('convolution', _convolution_samples, **_conv_kw)


def _unfold_samples(dt):
    yield S(Arg((2, 3, 5, 6)), 2)
    yield S(Arg((1, 2, 6, 6)), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    yield S(Arg((2, 5, 5)), 3, padding=1)


def _fold_samples(dt):
    yield S(Arg((2, 12, 20)), (5, 6), 2)
    yield S(Arg((1, 8, 9)), (4, 4), (2, 2), padding=1, stride=2)
    yield S(Arg((12, 9)), (4, 4), 2)


op('im2col', _unfold_samples, torch_name=_F + 'unfold')
op('col2im', _fold_samples, torch_name=_F + 'fold', atol=1e-5)


# --- pooling -------------------------------------------------------------------------

def _maxpool2d_samples(dt):
    yield S(Arg((2, 3, 6, 6)), 2)
    yield S(Arg((1, 2, 7, 8)), 3, stride=2, padding=1, return_indices=True)
    yield S(Arg((1, 2, 7, 8)), (3, 2), stride=(2, 3), padding=(1, 1), dilation=(2, 1), ceil_mode=True,
            return_indices=True)
    yield S(Arg((2, 5, 5)), 2, ceil_mode=True, return_indices=True)   # unbatched
    yield S(Arg((1, 1, 5, 5)), 3, padding=2)                          # pad too large: error
    yield S(Arg((1, 1, 2, 2)), 3)                                     # output too small: error


def _maxpool_with_indices_samples(dt):
    yield S(Arg((2, 2, 6, 5)), (2, 2))
    yield S(Arg((1, 2, 7, 7)), (3, 3), (2, 2), (1, 1), (1, 1), True)


def _pool_grad_args(x_shape, k, s, p, d, ceil, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    x = rng.uniform(-3, 3, x_shape)
    out, idx = torch.nn.functional.max_pool2d(torch.from_numpy(x), k, s, p, d, ceil, return_indices=True)
    return x, idx.numpy(), tuple(out.shape)


def _maxpool_bwd_samples(dt):
    for (shape, k, s, p, d, ceil) in [((2, 2, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
                                      ((1, 2, 7, 6), (3, 3), (2, 1), (1, 1), (1, 2), True)]:
        x, idx, oshape = _pool_grad_args(shape, k, s, p, d, ceil)
        yield S(Arg(oshape), x.astype(dt), k, s, p, d, ceil, idx)


def _maxpool1d_samples(dt):
    yield S(Arg((2, 3, 9)), 3, stride=2, padding=1)
    yield S(Arg((3, 8)), 2, return_indices=True, ceil_mode=True)


op('max_pool2d_with_indices', _maxpool2d_samples, torch_name=_F + 'max_pool2d')
op('nn.functional.max_pool2d_with_indices', _maxpool_with_indices_samples,
   torch_name='ops.aten.max_pool2d_with_indices')
op('max_pool2d_with_indices_backward', _maxpool_bwd_samples, torch_name='ops.aten.max_pool2d_with_indices_backward')
op('nn.functional.max_pool1d', _maxpool1d_samples, torch_name=_F + 'max_pool1d')


def _avgpool2d_samples(dt):
    yield S(Arg((2, 3, 6, 6)), 2)
    yield S(Arg((1, 2, 7, 8)), 3, stride=2, padding=1)
    yield S(Arg((1, 2, 7, 8)), 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
    yield S(Arg((1, 2, 7, 8)), (3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True)
    yield S(Arg((2, 5, 5)), 2, divisor_override=3)
    yield S(Arg((1, 1, 2, 2)), 3)                                     # output too small: error


def _avgpool_bwd_samples(dt):
    yield S(Arg((2, 2, 3, 3)), Arg((2, 2, 6, 6)), (2, 2), (2, 2), (0, 0), False, True, None)
    yield S(Arg((1, 2, 4, 5)), Arg((1, 2, 7, 8)), (3, 3), (2, 2), (1, 1), True, False, None)
    yield S(Arg((1, 2, 4, 4)), Arg((1, 2, 7, 8)), (3, 3), (2, 2), (1, 1), False, True, 2)
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 7, 8)), (3, 3), (2, 2), (1, 1), False, True, 2)   # wrong grad shape


def _avgpool1d_samples(dt):
    yield S(Arg((2, 3, 9)), 3, stride=2, padding=1)
    yield S(Arg((3, 8)), 3, ceil_mode=True, count_include_pad=False)


op('avg_pool2d', _avgpool2d_samples, torch_name=_F + 'avg_pool2d')
op('avg_pool2d_backward', _avgpool_bwd_samples, torch_name='ops.aten.avg_pool2d_backward')
op('nn.functional.avg_pool1d', _avgpool1d_samples, torch_name=_F + 'avg_pool1d')


def _adaptive_samples(dt):
    yield S(Arg((2, 3, 6, 6)), 3)
    yield S(Arg((1, 2, 7, 5)), (3, 4))          # non-divisible sizes
    yield S(Arg((2, 5, 5)), (None, 2))
    yield S(Arg((1, 2, 3, 3)), (5, 7))          # upsampling windows overlap


op('_adaptive_avg_pool2d', _adaptive_samples, torch_name=_F + 'adaptive_avg_pool2d')
op('nn.functional.adaptive_avg_pool2d', lambda dt: [S(Arg((2, 3, 4, 5)), 1), S(Arg((2, 3, 4)), (1, 1)),
                                                   S(Arg((2, 3, 4, 5), noncontig=True), 1), S(Arg((2, 3, 6, 6)), 3),
                                                   S(Arg((2, 3, 4, 5, 6)), 1),      # the mean: no rank check
                                                   S(Arg((2, 3, 4, 5)), (None, 1)), S(Arg((4,)), 1)],
   torch_name=_F + 'adaptive_avg_pool2d')
op('nn.functional.adaptive_avg_pool3d', lambda dt: [S(Arg((2, 3, 2, 4, 5)), 1), S(Arg((3, 2, 4, 5)), (1, 1, 1)),
                                                   S(Arg((1, 2, 5, 4, 6)), (2, 3, 4))],
   torch_name=_F + 'adaptive_avg_pool3d')
op('_adaptive_avg_pool2d_backward', lambda dt: [S(Arg((2, 2, 3, 4)), Arg((2, 2, 7, 5))),
                                                S(Arg((1, 2, 5, 7)), Arg((1, 2, 3, 3)))],
   torch_name='ops.aten._adaptive_avg_pool2d_backward')
op('nn.functional.adaptive_avg_pool1d', lambda dt: [S(Arg((2, 3, 7)), 3), S(Arg((3, 5)), 4), S(Arg((2, 3, 7)), 1)],
   torch_name=_F + 'adaptive_avg_pool1d')


def _adaptive_max_samples(dt):
    yield S(Arg((2, 3, 6, 6)), 3, return_indices=True)
    yield S(Arg((1, 2, 7, 5)), (3, 4), return_indices=True)     # non-divisible: windows of two sizes
    yield S(Arg((2, 5, 5)), (None, 2))
    yield S(Arg((1, 2, 3, 3)), (5, 7), return_indices=True)     # overlapping windows


def _adaptive_max_bwd_samples(dt):
    for shape, o in [((2, 2, 7, 5), (3, 4)), ((1, 2, 3, 3), (5, 4))]:
        x = np.random.default_rng(1).uniform(-3, 3, shape)
        out, idx = torch.nn.functional.adaptive_max_pool2d(torch.from_numpy(x), o, return_indices=True)
        yield S(Arg(tuple(out.shape)), x.astype(dt), idx.numpy())


op('adaptive_max_pool2d', _adaptive_max_samples, torch_name=_F + 'adaptive_max_pool2d')
op('adaptive_max_pool2d_backward', _adaptive_max_bwd_samples, torch_name='ops.aten.adaptive_max_pool2d_backward')
op('nn.functional.adaptive_max_pool1d', lambda dt: [S(Arg((2, 3, 7)), 3, return_indices=True), S(Arg((3, 5)), 4)],
   torch_name=_F + 'adaptive_max_pool1d')


def _pool3d_bwd_samples(dt):
    x = np.random.default_rng(2).uniform(-3, 3, (1, 2, 5, 4, 6))
    out, idx = torch.nn.functional.max_pool3d(torch.from_numpy(x), (2, 2, 3), (1, 2, 2), (1, 0, 1), 1, True,
                                              return_indices=True)
    yield S(Arg(tuple(out.shape)), x.astype(dt), (2, 2, 3), (1, 2, 2), (1, 0, 1), (1, 1, 1), True, idx.numpy())


op('max_pool3d_with_indices', lambda dt: [S(Arg((1, 2, 4, 4, 4)), 2, return_indices=True),
                                          S(Arg((2, 5, 4, 6)), (2, 2, 3), stride=(1, 2, 2), padding=(1, 0, 1),
                                            ceil_mode=True, return_indices=True),
                                          S(Arg((1, 1, 5, 5, 5)), 3, dilation=2)],
   torch_name=_F + 'max_pool3d')
op('max_pool3d_with_indices_backward', _pool3d_bwd_samples, torch_name='ops.aten.max_pool3d_with_indices_backward')
op('avg_pool3d', lambda dt: [S(Arg((1, 2, 4, 4, 4)), 2), S(Arg((2, 5, 4, 6)), (2, 2, 3), stride=(1, 2, 2),
                                                          padding=(1, 0, 1), ceil_mode=True, count_include_pad=False)],
   torch_name=_F + 'avg_pool3d')
op('avg_pool3d_backward', lambda dt: [S(Arg((1, 2, 2, 2, 2)), Arg((1, 2, 4, 4, 4)), (2, 2, 2), (2, 2, 2), (0, 0, 0),
                                        False, True, None)],
   torch_name='ops.aten.avg_pool3d_backward')
op('_adaptive_avg_pool3d', lambda dt: [S(Arg((1, 2, 5, 4, 6)), (2, 3, 4)), S(Arg((2, 3, 3, 3)), (None, 2, 5))],
   torch_name=_F + 'adaptive_avg_pool3d')
op('_adaptive_avg_pool3d_backward', lambda dt: [S(Arg((1, 2, 2, 3, 4)), Arg((1, 2, 5, 4, 6)))],
   torch_name='ops.aten._adaptive_avg_pool3d_backward')


# --- embedding -------------------------------------------------------------------------

def _emb_samples(dt):
    yield S(np.array([[0, 2, 4], [4, 3, 0]]), Arg((5, 3)))
    yield S(np.array([1, 1, 2, 0, 1]), Arg((4, 2)), padding_idx=1)
    yield S(np.array([1, 1, 2, 0, 1]), Arg((4, 2)), padding_idx=-1, scale_grad_by_freq=True)
    yield S(np.zeros((0,), np.int64), Arg((4, 2)))
    yield S(np.array([1.0]), Arg((4, 2)))                               # float indices: error


def _emb_bwd_samples(dt):
    yield S(Arg((2, 3, 4)), np.array([[0, 2, 4], [4, 3, 0]]), 6, -1, False)
    yield S(Arg((5, 2)), np.array([1, 1, 2, 0, 1]), 4, 1, False)
    yield S(Arg((5, 2)), np.array([1, 1, 2, 0, 1]), 4, -1, True)


op('embedding', _emb_samples, torch_name=_F + 'embedding')
op('embedding_dense_backward', _emb_bwd_samples, torch_name='ops.aten.embedding_dense_backward')
op('embedding_renorm', lambda dt: [S(Arg((5, 3)), np.array([0, 2, 2]), 1.0, 2.0),
                                   S(Arg((5, 3)), np.array([[1, 4]]), 2.0, 1.0)],
   torch_name='embedding_renorm_', grad=False)


# --- normalisation -----------------------------------------------------------------------

def _native_ln_samples(dt):
    yield S(Arg((3, 4)), [4], Arg((4,)), Arg((4,)), 1e-5)
    yield S(Arg((2, 3, 4)), [3, 4], Arg((3, 4)), None, 1e-3)   # (torch cannot double-backward weight=None here)
    yield S(Arg((2, 5)), [5], Arg((5,)), None, 1e-5)


def _ln_samples(dt):
    yield S(Arg((3, 4)), (4,))
    yield S(Arg((2, 3, 4)), [3, 4], Arg((3, 4)), Arg((3, 4)), eps=1e-3)
    yield S(Arg((4, 3), noncontig=True), (3,), Arg((3,)))
    yield S(Arg((2, 3)), (4,))                                          # shape mismatch: error


def _native_bn_samples(dt):
    yield S(Arg((4, 3)), Arg((3,)), Arg((3,)), Arg((3,)), Arg((3,), low=0.5, high=2), True, 0.1, 1e-5)
    yield S(Arg((2, 3, 4, 4)), None, None, None, None, True, 0.1, 1e-5)
    yield S(Arg((2, 3, 8, 9)), Arg((3,)), Arg((3,)), Arg((3,)), Arg((3,), low=0.5, high=2), True, 0.1, 1e-5)  # long planes
    yield S(Arg((2, 3, 5)), Arg((3,)), Arg((3,)), Arg((3,)), Arg((3,), low=0.5, high=2), False, 0.1, 1e-5)


def _bn_samples(dt):
    yield S(Arg((4, 3)), Arg((3,)), Arg((3,), low=0.5, high=2), Arg((3,)), Arg((3,)), training=True)
    yield S(Arg((2, 3, 4, 4)), None, None, training=True, momentum=0.3)
    yield S(Arg((2, 3, 5)), Arg((3,)), Arg((3,), low=0.5, high=2), Arg((3,)), Arg((3,)))
    yield S(Arg((2, 3, 4)), Arg((3,)), Arg((3,), low=0.5, high=2), training=False)


op('native_layer_norm', _native_ln_samples, torch_name='native_layer_norm', atol=1e-5, rtol=1e-5)
op('layer_norm', _ln_samples, torch_name=_F + 'layer_norm', atol=1e-5, rtol=1e-5)
def _native_gn_samples(dt):
    yield S(Arg((2, 6, 4)), Arg((6,)), Arg((6,)), 2, 6, 4, 3, 1e-5)
    yield S(Arg((2, 4, 3, 3)), None, None, 2, 4, 9, 2, 1e-5)
    yield S(Arg((3, 4)), Arg((4,)), None, 3, 4, 1, 4, 1e-3)        # one channel per group
    yield S(Arg((2, 4, 5), noncontig=True), None, Arg((4,)), 2, 4, 5, 1, 1e-5)
    yield S(Arg((0, 4, 3)), Arg((4,)), Arg((4,)), 0, 4, 3, 2, 1e-5)   # empty batch
    yield S(Arg((2, 6, 4)), None, None, 2, 6, 4, 4, 1e-5)             # error: channels not divisible


op('native_group_norm', _native_gn_samples, torch_name='native_group_norm', atol=1e-5, rtol=1e-5)
op('native_batch_norm', _native_bn_samples, torch_name='native_batch_norm', atol=1e-5, rtol=1e-5)
op('nn.functional.batch_norm', _bn_samples, torch_name=_F + 'batch_norm', atol=1e-5, rtol=1e-5)
op('nn.functional.group_norm', lambda dt: [S(Arg((2, 6, 4)), 3, Arg((6,)), Arg((6,))),
                                           S(Arg((2, 4, 3, 3)), 2), S(Arg((2, 6, 4)), 4)],
   torch_name=_F + 'group_norm', atol=1e-5, rtol=1e-5)
op('nn.functional.instance_norm', lambda dt: [S(Arg((2, 3, 5)), weight=Arg((3,)), bias=Arg((3,))),
                                              S(Arg((2, 3, 4, 4)))],
   torch_name=_F + 'instance_norm', atol=1e-5, rtol=1e-5)
op('nn.functional.rms_norm', lambda dt: [S(Arg((3, 4)), (4,), Arg((4,))), S(Arg((2, 3, 4)), [3, 4], eps=1e-3)],
   torch_name=_F + 'rms_norm', atol=1e-5, rtol=1e-5)


# --- shuffles ------------------------------------------------------------------------------

op('pixel_shuffle', lambda dt: [S(Arg((2, 8, 3, 2)), 2), S(Arg((9, 2, 2)), 3), S(Arg((1, 5, 2, 2)), 2)],
   torch_name=_F + 'pixel_shuffle')
op('pixel_unshuffle', lambda dt: [S(Arg((2, 2, 4, 6)), 2), S(Arg((1, 6, 6)), 3), S(Arg((1, 1, 3, 4)), 2)],
   torch_name=_F + 'pixel_unshuffle')
op('channel_shuffle', lambda dt: [S(Arg((2, 6, 3)), 3), S(Arg((1, 4, 2, 2)), 2)], torch_name=_F + 'channel_shuffle')


# --- functional compositions (attention, distances, resampling) --------------------------------

def _sdpa_samples(dt):
    yield S(Arg((2, 3, 4, 5)), Arg((2, 3, 6, 5)), Arg((2, 3, 6, 4)))
    yield S(Arg((2, 4, 5)), Arg((2, 4, 5)), Arg((2, 4, 3)), is_causal=True)
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), attn_mask=Arg((3, 5)), scale=0.3)
    yield S(Arg((1, 2, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)),
            attn_mask=np.array([[True, False, True, True, False]] * 3))
    yield S(Arg((1, 4, 3, 4)), Arg((1, 2, 5, 4)), Arg((1, 2, 5, 4)), enable_gqa=True)


op('nn.functional.scaled_dot_product_attention', _sdpa_samples, torch_name=_F + 'scaled_dot_product_attention',
   atol=1e-5, rtol=1e-5, gradgrad=False)   # torch's fused CPU attention has no double backward to compare with


def _interp_samples(dt):
    yield S(Arg((2, 3, 4, 5)), scale_factor=2)                                      # nearest
    yield S(Arg((1, 2, 5, 4)), size=(7, 3))
    yield S(Arg((1, 2, 5, 4)), size=(7, 3), mode='nearest-exact')
    yield S(Arg((1, 2, 4, 5)), scale_factor=(1.5, 2.5), mode='bilinear')
    yield S(Arg((1, 2, 4, 5)), size=(7, 3), mode='bilinear', align_corners=True)
    yield S(Arg((2, 3, 6)), size=4, mode='linear')
    yield S(Arg((2, 3, 6)), scale_factor=2, mode='linear', align_corners=True)
    yield S(Arg((1, 2, 4, 5)), size=(8, 7), mode='bicubic')
    yield S(Arg((1, 2, 4, 5)), size=(3, 9), mode='bicubic', align_corners=True)
    yield S(Arg((1, 2, 6, 6)), size=(4, 3), mode='area')
    yield S(Arg((1, 2, 3, 2, 2)), scale_factor=2, mode='trilinear')
    yield S(Arg((1, 2, 4, 4)), size=(2, 2), mode='linear')                         # wrong rank for mode: error


op('nn.functional.interpolate', _interp_samples, torch_name=_F + 'interpolate', atol=1e-5, rtol=1e-5)
op('nn.functional.normalize', lambda dt: [S(Arg((3, 4))), S(Arg((2, 3, 4)), p=1.0, dim=-1), S(Arg((3, 4)), dim=0)],
   torch_name=_F + 'normalize')
op('nn.functional.cosine_similarity', lambda dt: [S(Arg((3, 4)), Arg((3, 4))), S(Arg((2, 3, 4)), Arg((3, 4)), dim=-1)],
   torch_name=_F + 'cosine_similarity')
op('nn.functional.pairwise_distance', lambda dt: [S(Arg((3, 4)), Arg((3, 4))), S(Arg((3, 4)), Arg((4,)), p=1.0),
                                                  S(Arg((3, 4)), Arg((3, 4)), keepdim=True)],
   torch_name=_F + 'pairwise_distance')
op('nn.functional.pdist', lambda dt: [S(Arg((4, 3))), S(Arg((5, 2)), p=1.0), S(Arg((4, 3)), p=0.0), S(Arg((4, 3)), p=0.5),
                                      S(Arg((4, 3)), p=3.0), S(Arg((4, 3)), p=float('inf')), S(Arg((1, 3))),
                                      S(Arg((3, 4), noncontig=True)), S(Arg((3, 0))), S(Arg((3,))), S(Arg((4, 3)), p=-1.0),
                                      S(Arg((2, 3), 'int64'))],
   torch_name=_F + 'pdist',
   gradgrad=False)   # torch has no double backward for pdist
op('nn.functional.local_response_norm', lambda dt: [S(Arg((2, 5, 4)), 3), S(Arg((1, 4, 3, 3)), 2, alpha=0.1)],
   torch_name=_F + 'local_response_norm', atol=1e-5, rtol=1e-5)
op('nn.functional.lp_pool2d', lambda dt: [S(Arg((1, 2, 4, 4), low=0.5, high=3), 2.0, 2),
                                          S(Arg((1, 2, 5, 5), low=0.5, high=3), 3, (2, 3), stride=1)],
   torch_name=_F + 'lp_pool2d', atol=1e-5, rtol=1e-5)
op('nn.functional.lp_pool1d', lambda dt: [S(Arg((1, 2, 6), low=0.5, high=3), 2.0, 2)],
   torch_name=_F + 'lp_pool1d', atol=1e-5, rtol=1e-5)


# weight normalisation's primitives (torch.nn.utils.parametrizations.weight_norm builds on them)
op('norm_except_dim', lambda dt: [S(Arg((4, 3, 5)), 2, d) for d in (0, 1, 2, -1)] +
   [S(Arg((3, 4), noncontig=True), 2, 0), S(Arg((5,)), 2, 0), S(Arg((2, 0)), 2, 0)])
op('_weight_norm', lambda dt: [S(Arg((4, 3, 5)), Arg((4, 1, 1), low=0.5, high=2), 0),
                               S(Arg((4, 3, 5)), Arg((1, 3, 1), low=0.5, high=2), 1),
                               S(Arg((4, 3, 5), noncontig=True), Arg((1, 1, 5), low=0.5, high=2), 2),
                               S(Arg((4, 3)), Arg((1, 1), low=0.5, high=2), -1)],
   # torch's own _weight_norm fails gradgradcheck (its differentiable backward is wrong; the composite below
   # passes, as ember's does), so the reference is the formula in torch ops
   torch_fn=lambda v, g, dim=0: v * (g / __import__('torch').norm_except_dim(v, 2, dim)))
