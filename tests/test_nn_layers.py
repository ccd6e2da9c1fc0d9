"""Every layer against torch with identical weights: outputs, input gradients, parameter gradients and
buffers, in train and eval mode; state_dict layouts; reprs; default initialisation statistics."""
import math

import numpy as np
import pytest
import torch

import ember
from test_nn_util import compare_module, same_state_dict_layout, randn, e2n

tnn, enn = torch.nn, ember.nn


def both(name, *args, **kwargs):
    return getattr(tnn, name)(*args, **kwargs), getattr(enn, name)(*args, **kwargs)


LAYERS = [
    ('Linear', (5, 3), {}, [(4, 5)]),
    ('Linear', (5, 3), {'bias': False}, [(2, 4, 5)]),
    ('Linear', (5, 3), {}, [(5,)]),
    ('Bilinear', (4, 3, 2), {}, [(5, 4), (5, 3)]),
    ('Identity', (), {}, [(3, 4)]),
    ('Flatten', (), {}, [(2, 3, 4)]),
    ('Flatten', (0, 1), {}, [(2, 3, 4)]),
    ('Unflatten', (1, (2, 3)), {}, [(4, 6)]),
    ('Conv1d', (3, 4, 3), {}, [(2, 3, 10)]),
    ('Conv1d', (4, 6, 3), {'stride': 2, 'padding': 1, 'dilation': 2, 'groups': 2}, [(2, 4, 11)]),
    ('Conv1d', (3, 4, 3), {'padding': 'same', 'padding_mode': 'circular'}, [(2, 3, 8)]),
    ('Conv2d', (3, 4, 3), {}, [(2, 3, 7, 6)]),
    ('Conv2d', (3, 4, (3, 2)), {'stride': (2, 1), 'padding': (1, 0), 'bias': False}, [(2, 3, 7, 6)]),
    ('Conv2d', (4, 4, 3), {'groups': 4, 'padding': 'same', 'dilation': 2}, [(1, 4, 6, 6)]),
    ('Conv2d', (3, 2, 3), {'padding': 1, 'padding_mode': 'reflect'}, [(2, 3, 5, 5)]),
    ('Conv2d', (3, 2, 3), {'padding': 2, 'padding_mode': 'replicate'}, [(2, 3, 5, 5)]),
    ('Conv2d', (3, 2, 3), {'padding': 1, 'padding_mode': 'circular'}, [(3, 5, 5)]),
    ('Conv2d', (3, 2, 3), {'padding': 'valid'}, [(1, 3, 5, 5)]),
    ('ConvTranspose1d', (3, 4, 3), {'stride': 2}, [(2, 3, 5)]),
    ('ConvTranspose2d', (4, 2, 3), {'stride': 2, 'padding': 1, 'output_padding': 1, 'groups': 2}, [(2, 4, 4, 4)]),
    ('ConvTranspose2d', (3, 2, (2, 3)), {'dilation': 2, 'bias': False}, [(1, 3, 4, 5)]),
    ('MaxPool1d', (3,), {'stride': 2}, [(2, 3, 9)]),
    ('MaxPool2d', (2,), {}, [(2, 3, 6, 6)]),
    ('MaxPool2d', (3,), {'stride': 2, 'padding': 1, 'ceil_mode': True}, [(1, 2, 7, 7)]),
    ('AvgPool1d', (3,), {'stride': 2, 'padding': 1}, [(2, 3, 9)]),
    ('AvgPool2d', (2,), {}, [(2, 3, 6, 6)]),
    ('AvgPool2d', (3,), {'stride': 2, 'padding': 1, 'count_include_pad': False}, [(1, 2, 7, 7)]),
    ('AdaptiveAvgPool1d', (4,), {}, [(2, 3, 10)]),
    ('AdaptiveAvgPool2d', ((3, 2),), {}, [(2, 3, 7, 5)]),
    ('AdaptiveAvgPool2d', (1,), {}, [(2, 3, 4, 4)]),
    ('BatchNorm1d', (3,), {}, [(6, 3)]),
    ('BatchNorm1d', (3,), {'momentum': None}, [(4, 3, 5)]),
    ('BatchNorm1d', (3,), {'affine': False}, [(6, 3)]),
    ('BatchNorm1d', (3,), {'track_running_stats': False}, [(6, 3)]),
    ('BatchNorm2d', (3,), {}, [(4, 3, 5, 5)]),
    ('LayerNorm', (5,), {}, [(3, 4, 5)]),
    ('LayerNorm', ((4, 5),), {'elementwise_affine': False}, [(3, 4, 5)]),
    ('LayerNorm', (5,), {'bias': False}, [(3, 5)]),
    ('BatchNorm1d', (3,), {'bias': False}, [(6, 3)]),
    ('GroupNorm', (3, 6), {'bias': False}, [(2, 6, 4)]),
    ('InstanceNorm1d', (3,), {}, [(2, 3, 5)]),
    ('InstanceNorm2d', (3,), {'affine': True, 'track_running_stats': True}, [(2, 3, 4, 4)]),
    ('GroupNorm', (2, 4), {}, [(3, 4, 5)]),
    ('GroupNorm', (2, 6), {'affine': False}, [(2, 6, 3, 3)]),
    ('RMSNorm', (5,), {}, [(3, 5)]),
    ('RMSNorm', ((3, 5),), {'eps': 1e-3}, [(2, 3, 5)]),
    ('Dropout', (0.3,), {}, [(4, 5)]),
]

ACTIVATIONS = [
    ('ReLU', (), {}), ('ReLU6', (), {}), ('LeakyReLU', (0.2,), {}), ('PReLU', (), {}), ('PReLU', (6,), {}),
    ('ELU', (0.5,), {}), ('SELU', (), {}), ('CELU', (1.5,), {}), ('GELU', (), {}), ('GELU', (), {'approximate': 'tanh'}),
    ('SiLU', (), {}), ('Mish', (), {}), ('Sigmoid', (), {}), ('Tanh', (), {}), ('Softplus', (2.0, 5.0), {}),
    ('Hardtanh', (-0.5, 0.7), {}), ('Hardswish', (), {}), ('Hardsigmoid', (), {}), ('LogSigmoid', (), {}),
    ('Softsign', (), {}), ('Softmax', (1,), {}), ('LogSoftmax', (-1,), {}), ('Softmin', (1,), {}),
    ('Threshold', (0.1, 20.0), {}), ('GLU', (1,), {}), ('Tanhshrink', (), {}), ('Hardshrink', (0.3,), {}),
    ('Softshrink', (0.3,), {}),
]


def _id(p):
    return f'{p[0]}-{p[1]}-{p[2]}'.replace(' ', '')


@pytest.mark.parametrize('name,args,kwargs,shapes', LAYERS, ids=[_id(p) for p in LAYERS])
@pytest.mark.parametrize('train', [True, False])
def test_layer_matches_torch(name, args, kwargs, shapes, train):
    t, e = both(name, *args, **kwargs)
    same_state_dict_layout(t, e)
    inputs = [randn(*s, seed=i) for i, s in enumerate(shapes)]
    if name.startswith('Dropout'):
        if train:       # random masks differ: check the scaling and the zero fraction instead
            x = ember.ones(2000)
            y = e(x)
            vals = e2n(y)
            assert np.all(np.isclose(vals, 0) | np.isclose(vals, 1 / 0.7))
            assert abs(float((y == 0).float().mean()) - 0.3) < 0.05
            return
    compare_module(t, e, inputs, train=train)


@pytest.mark.parametrize('name,args,kwargs', ACTIVATIONS, ids=[_id(p) for p in ACTIVATIONS])
def test_activation_matches_torch(name, args, kwargs):
    t, e = both(name, *args, **kwargs)
    assert repr(e) == repr(t)
    compare_module(t, e, [randn(4, 6) * 2])


@pytest.mark.parametrize('name', ['ReLU', 'ReLU6', 'LeakyReLU', 'ELU', 'SELU', 'CELU', 'SiLU', 'Mish', 'Hardtanh',
                                  'Hardswish', 'Hardsigmoid'])
def test_inplace_activation(name):
    t, e = both(name, inplace=True)
    assert repr(e) == repr(t)
    a = randn(3, 4)
    tx, ex = torch.from_numpy(a.copy()), ember.from_numpy(a.copy())
    ty, ey = t(tx), e(ex)
    assert ey is ex or np.shares_memory(e2n(ey), e2n(ex))
    np.testing.assert_allclose(e2n(ex), tx.numpy(), atol=1e-6)


@pytest.mark.parametrize('name,shape', [('Dropout1d', (4, 8, 50)), ('Dropout2d', (4, 8, 5, 5))])
def test_channel_dropout_zeroes_whole_channels(name, shape):
    e = getattr(enn, name)(0.5)
    y = e2n(e(ember.ones(*shape))).reshape(shape[0], shape[1], -1)
    per_channel = set(np.unique(np.round(y.std(-1), 6)).tolist())
    assert per_channel == {0.0}                          # each channel is all zero or all 1/(1-p)
    assert set(np.unique(np.round(y, 5)).tolist()) <= {0.0, 2.0}
    e.eval()
    np.testing.assert_array_equal(e2n(e(ember.ones(*shape))), np.ones(shape, np.float32))


def test_module_to_meta_keeps_parameters():
    m = enn.Sequential(enn.Linear(3, 2), enn.BatchNorm1d(2))
    w = m[0].weight
    m.to('meta')
    assert m[0].weight is w and w.device.type == 'meta' and isinstance(w, enn.Parameter)
    assert m[1].running_mean.device.type == 'meta'
    out = m(ember.empty(4, 3, device='meta'))
    assert out.device.type == 'meta' and tuple(out.shape) == (4, 2)


def test_embedding_matches_torch():
    for kw in ({}, {'padding_idx': 1}, {'padding_idx': -1}, {'max_norm': 1.0}):
        t, e = both('Embedding', 10, 4, **kw)
        assert repr(e) == repr(t)
        idx = np.array([[1, 2, 9], [0, 1, 1]])
        compare_module(t, e, [idx])
    e = enn.Embedding(10, 4, padding_idx=2)
    assert np.all(e2n(e.weight)[2] == 0)
    w = ember.randn(5, 3)
    fp = enn.Embedding.from_pretrained(w)
    assert not fp.weight.requires_grad and fp.weight.shape == (5, 3)
    assert enn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


def test_batchnorm_running_stats_over_steps():
    for momentum in (0.1, None):
        t, e = both('BatchNorm1d', 3, momentum=momentum)
        from test_nn_util import copy_state
        copy_state(t, e)
        for i in range(3):
            a = randn(8, 3, seed=i) * (i + 1) + i
            t(torch.from_numpy(a))
            e(ember.from_numpy(a))
        for (n, tb), (_, eb) in zip(t.named_buffers(), e.named_buffers()):
            np.testing.assert_allclose(e2n(eb), e2n(tb), rtol=1e-5, atol=1e-6, err_msg=n)
        assert int(e.num_batches_tracked) == 3 and e.num_batches_tracked.dtype == ember.int64


def test_batchnorm_errors_and_old_checkpoints():
    e = enn.BatchNorm2d(3)
    with pytest.raises(ValueError, match='expected 4D input'):
        e(ember.randn(2, 3))
    sd = {k: v for k, v in e.state_dict().items() if k != 'num_batches_tracked'}
    e.load_state_dict(sd)           # no _metadata: num_batches_tracked is filled in, as torch does


def test_conv_transpose_output_size():
    t, e = both('ConvTranspose2d', 2, 3, 3, stride=2)
    from test_nn_util import copy_state
    copy_state(t, e)
    a = randn(1, 2, 4, 4)
    to = t(torch.from_numpy(a), output_size=[10, 10])
    eo = e(ember.from_numpy(a), output_size=[10, 10])
    assert tuple(eo.shape) == tuple(to.shape) == (1, 3, 10, 10)
    np.testing.assert_allclose(e2n(eo), to.detach().numpy(), atol=1e-5)
    with pytest.raises(ValueError, match='requested an output size'):
        e(ember.from_numpy(a), output_size=[20, 20])


@pytest.mark.parametrize('kwargs,exc', [({'groups': 0}, ValueError), ({'groups': 2}, ValueError),
                                         ({'padding': 'full'}, ValueError),
                                         ({'padding': 'same', 'stride': 2}, ValueError),
                                         ({'padding_mode': 'mirror'}, ValueError)])
def test_conv_argument_errors(kwargs, exc):
    with pytest.raises(exc) as te:
        tnn.Conv2d(3, 4, 3, **kwargs)
    with pytest.raises(exc) as ee:
        enn.Conv2d(3, 4, 3, **kwargs)
    strip = lambda m: m.split('{')[0] + m.split('}')[-1]     # the message without the (unordered) set
    assert strip(str(ee.value)) == strip(str(te.value))


REPRS = [
    ('Linear', (3, 4), {}), ('Linear', (3, 4), {'bias': False}), ('Bilinear', (2, 3, 4), {}),
    ('Conv2d', (3, 8, 3), {'stride': 2, 'padding': 1}), ('Conv2d', (3, 8, (3, 5)), {'padding': 'same', 'bias': False}),
    ('Conv1d', (4, 8, 3), {'groups': 2, 'dilation': 2, 'padding_mode': 'reflect', 'padding': 1}),
    ('ConvTranspose2d', (3, 8, 3), {'output_padding': 1, 'stride': 2}), ('MaxPool2d', (2,), {}),
    ('MaxPool1d', (3, 1, 1), {}), ('AvgPool2d', (3,), {'stride': 2}), ('AvgPool1d', (3,), {}),
    ('AdaptiveAvgPool2d', ((5, 7),), {}), ('BatchNorm1d', (3,), {'momentum': None}), ('BatchNorm2d', (3,), {}),
    ('LayerNorm', (5,), {}), ('GroupNorm', (2, 4), {}), ('LayerNorm', (5,), {'bias': False}),
    ('GroupNorm', (2, 4), {'affine': False}), ('BatchNorm1d', (3,), {'bias': False}), ('InstanceNorm1d', (3,), {}), ('RMSNorm', (4,), {}), ('Dropout', (0.2,), {}),
    ('Dropout2d', (), {}), ('Embedding', (10, 3), {'padding_idx': 0}), ('Flatten', (), {}),
    ('Unflatten', (1, (2, 3)), {}), ('Identity', (), {}), ('RNN', (3, 4), {'num_layers': 2, 'nonlinearity': 'relu'}),
    ('LSTM', (3, 4), {'batch_first': True, 'bidirectional': True}), ('GRU', (3, 4), {'dropout': 0.5, 'num_layers': 2}),
    ('RNNCell', (3, 4), {'nonlinearity': 'relu'}), ('LSTMCell', (3, 4), {'bias': False}), ('GRUCell', (3, 4), {}),
    ('CrossEntropyLoss', (), {}), ('MSELoss', (), {}), ('Softmax', (), {'dim': 1}), ('PReLU', (), {}),
    ('Hardtanh', (), {}), ('ReLU6', (), {}), ('GELU', (), {'approximate': 'tanh'}),
]


@pytest.mark.parametrize('name,args,kwargs', REPRS, ids=[_id(p) for p in REPRS])
def test_repr_matches_torch(name, args, kwargs):
    t, e = both(name, *args, **kwargs)
    assert repr(e) == repr(t)


def test_nested_repr_matches_torch():
    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Dropout()),
                             nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()]),
                             nn.ModuleDict({'a': nn.Tanh(), 'b': nn.LSTM(2, 3)}))
    assert repr(build(enn)) == repr(build(tnn))


def test_default_init_statistics_like_torch():
    """Default initialisation: same bounds and spread as torch's (over many draws)."""
    cases = [('Linear', (400, 300)), ('Conv2d', (16, 32, 3)), ('Embedding', (500, 64)), ('LSTM', (50, 100)),
             ('Bilinear', (30, 40, 50)), ('ConvTranspose2d', (16, 8, 3)), ('GRUCell', (20, 40))]
    for name, args in cases:
        t, e = both(name, *args)
        for (n, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
            a, b = e2n(ep), tp.detach().numpy()
            assert a.dtype == b.dtype, n
            if a.size < 50:
                continue
            se = b.std() / math.sqrt(a.size)        # standard error of a mean of a.size draws
            assert abs(a.std() - b.std()) < 8 * se + 1e-7, (name, n, a.std(), b.std())
            assert abs(a.mean() - b.mean()) < 8 * se + 1e-7, (name, n)
            if name != 'Embedding':
                bound = np.abs(b).max()
                assert bound * 0.8 < np.abs(a).max() <= bound * 1.1 + 1e-7, (name, n)


def test_factory_kwargs():
    m = enn.Linear(3, 4, dtype=ember.float64)
    assert m.weight.dtype == ember.float64 and m.bias.dtype == ember.float64
    c = enn.Conv2d(2, 3, 3, device='cpu', dtype=ember.float64)
    assert c.weight.dtype == ember.float64
    bn = enn.BatchNorm1d(3, dtype=ember.float64)
    assert bn.running_mean.dtype == ember.float64 and bn.num_batches_tracked.dtype == ember.int64


MORE = [
    ('ZeroPad1d', (2,), {}, [(2, 3, 5)]), ('ZeroPad2d', ((1, 0, 2, 1),), {}, [(2, 3, 4, 4)]),
    ('ConstantPad1d', ((1, 2), 3.5), {}, [(2, 3, 5)]), ('ConstantPad2d', (1, -1.0), {}, [(3, 4, 4)]),
    ('ConstantPad3d', (1, 0.5), {}, [(1, 2, 3, 3, 3)]), ('ReflectionPad1d', (2,), {}, [(2, 3, 5)]),
    ('ReflectionPad2d', ((1, 0, 2, 1),), {}, [(2, 3, 4, 4)]), ('ReplicationPad1d', ((0, 3),), {}, [(2, 3, 5)]),
    ('ReplicationPad2d', (2,), {}, [(1, 2, 3, 3)]), ('CircularPad1d', (1,), {}, [(2, 3, 5)]),
    ('CircularPad2d', ((1, 0, 2, 1),), {}, [(2, 3, 4, 4)]),
    ('CosineSimilarity', (), {}, [(4, 5), (4, 5)]), ('CosineSimilarity', (0,), {}, [(4, 5), (4, 5)]),
    ('PairwiseDistance', (), {}, [(4, 5), (4, 5)]), ('PairwiseDistance', (1.0,), {'keepdim': True}, [(4, 5), (4, 5)]),
    ('PixelShuffle', (2,), {}, [(1, 8, 3, 3)]), ('PixelUnshuffle', (2,), {}, [(1, 2, 4, 6)]),
    ('ChannelShuffle', (2,), {}, [(1, 4, 3, 3)]),
    ('Upsample', (), {'scale_factor': 2}, [(1, 2, 3, 3)]),
    ('Upsample', ((5, 4),), {'mode': 'bilinear'}, [(1, 2, 3, 3)]),
    ('UpsamplingBilinear2d', (), {'scale_factor': 2}, [(1, 2, 3, 3)]),
    ('UpsamplingNearest2d', ((4, 6),), {}, [(1, 2, 2, 3)]),
    ('Unfold', (2,), {'padding': 1}, [(2, 3, 4, 4)]), ('Fold', (4, 2), {}, [(2, 12, 9)]),
    ('LocalResponseNorm', (3,), {}, [(2, 5, 4)]),
    ('LPPool1d', (2, 3), {'stride': 2}, [(2, 3, 9)]), ('LPPool2d', (2.0, 2), {}, [(2, 3, 4, 4)]),
    ('AdaptiveMaxPool1d', (4,), {}, [(2, 3, 9)]), ('AdaptiveMaxPool2d', ((2, 3),), {}, [(2, 3, 5, 7)]),
    ('MaxPool3d', (2,), {}, [(1, 2, 4, 4, 4)]), ('AvgPool3d', (2,), {}, [(1, 2, 4, 4, 4)]),
    ('AdaptiveAvgPool3d', (2,), {}, [(1, 2, 5, 4, 4)]), ('Conv3d', (2, 3, 2), {}, [(1, 2, 4, 4, 4)]),
    ('ConvTranspose3d', (2, 3, 2), {'stride': 2}, [(1, 2, 2, 2, 2)]),
    ('BatchNorm3d', (2,), {}, [(3, 2, 2, 2, 2)]), ('Softmax2d', (), {}, [(2, 3, 4, 4)]),
]


@pytest.mark.parametrize('name,args,kwargs,shapes', MORE, ids=[_id(p) for p in MORE])
def test_more_layers_match_torch(name, args, kwargs, shapes):
    t, e = both(name, *args, **kwargs)
    assert repr(e) == repr(t)
    same_state_dict_layout(t, e)
    compare_module(t, e, [randn(*s, seed=i) for i, s in enumerate(shapes)])


def test_rrelu():
    t, e = both('RReLU', 0.1, 0.3)
    assert repr(e) == repr(t)
    compare_module(t, e, [randn(4, 5)], train=False)
    x = ember.from_numpy(-np.abs(randn(2000)) - 0.1)
    slopes = e2n(e.train()(x)) / e2n(x)
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6 and slopes.std() > 0.03


@pytest.mark.parametrize('name,shape', [('1d', (2, 3, 8)), ('2d', (2, 3, 4, 6))])
def test_max_unpool(name, shape):
    tp, ep = getattr(tnn, f'MaxPool{name}')(2, return_indices=True), getattr(enn, f'MaxPool{name}')(2, return_indices=True)
    tu, eu = getattr(tnn, f'MaxUnpool{name}')(2), getattr(enn, f'MaxUnpool{name}')(2)
    assert repr(eu) == repr(tu)
    a = randn(*shape)
    to, ti = tp(torch.from_numpy(a))
    eo, ei = ep(ember.from_numpy(a))
    np.testing.assert_array_equal(e2n(eu(eo, ei)), tu(to, ti).numpy())
