"""ember.vision.models beyond test_vision_models.py's torch twins: every registered builder's parameter
count against torchvision's published ``num_params`` (built on the meta device, so even the largest
cost nothing), the registry, the Weights enums, and for the small models a forward, a training step and
a state_dict round trip. (The architectures were compared once, outside the test suite, with
torchvision's own code: same state_dict keys and shapes, same eval outputs for the same weights.)
"""
import math

import numpy as np
import pytest
import torch

import ember
from ember.vision import models

# torchvision's Weights meta['num_params'] (ImageNet, 1000 classes), for the default constructor;
# googlenet's number is without its auxiliary heads, which its checkpoint drops
PUBLISHED = {
    'alexnet': 61100840, 'convnext_base': 88591464, 'convnext_large': 197767336, 'convnext_small': 50223688,
    'convnext_tiny': 28589128, 'densenet121': 7978856, 'densenet161': 28681000, 'densenet169': 14149480,
    'densenet201': 20013928, 'efficientnet_b0': 5288548, 'efficientnet_b1': 7794184, 'efficientnet_b2': 9109994,
    'efficientnet_b3': 12233232, 'efficientnet_b4': 19341616, 'efficientnet_b5': 30389784,
    'efficientnet_b6': 43040704, 'efficientnet_b7': 66347960, 'efficientnet_v2_l': 118515272,
    'efficientnet_v2_m': 54139356, 'efficientnet_v2_s': 21458488, 'googlenet': 6624904, 'inception_v3': 27161264,
    'maxvit_t': 30919624, 'mnasnet0_5': 2218512, 'mnasnet0_75': 3170208, 'mnasnet1_0': 4383312, 'mnasnet1_3': 6282256,
    'mobilenet_v2': 3504872, 'mobilenet_v3_large': 5483032, 'mobilenet_v3_small': 2542856,
    'regnet_x_16gf': 54278536, 'regnet_x_1_6gf': 9190136, 'regnet_x_32gf': 107811560, 'regnet_x_3_2gf': 15296552,
    'regnet_x_400mf': 5495976, 'regnet_x_800mf': 7259656, 'regnet_x_8gf': 39572648, 'regnet_y_128gf': 644812894,
    'regnet_y_16gf': 83590140, 'regnet_y_1_6gf': 11202430, 'regnet_y_32gf': 145046770, 'regnet_y_3_2gf': 19436338,
    'regnet_y_400mf': 4344144, 'regnet_y_800mf': 6432512, 'regnet_y_8gf': 39381472, 'resnet101': 44549160,
    'resnet152': 60192808, 'resnet18': 11689512, 'resnet34': 21797672, 'resnet50': 25557032,
    'resnext101_32x8d': 88791336, 'resnext101_64x4d': 83455272, 'resnext50_32x4d': 25028904,
    'shufflenet_v2_x0_5': 1366792, 'shufflenet_v2_x1_0': 2278604, 'shufflenet_v2_x1_5': 3503624,
    'shufflenet_v2_x2_0': 7393996, 'squeezenet1_0': 1248424, 'squeezenet1_1': 1235496, 'swin_b': 87768224,
    'swin_s': 49606258, 'swin_t': 28288354, 'swin_v2_b': 87930848, 'swin_v2_s': 49737442, 'swin_v2_t': 28351570,
    'vgg11': 132863336,
    'vgg11_bn': 132868840, 'vgg13': 133047848, 'vgg13_bn': 133053736, 'vgg16': 138357544, 'vgg16_bn': 138365992,
    'vgg19': 143667240, 'vgg19_bn': 143678248, 'vit_b_16': 86567656, 'vit_b_32': 88224232, 'vit_h_14': 632045800,
    'vit_l_16': 304326632, 'vit_l_32': 306535400, 'wide_resnet101_2': 126886696,
    'wide_resnet50_2': 68883240}


def _count(model):
    return sum(p.numel() for p in model.parameters())


def test_every_model_is_registered():
    assert models.list_models() == sorted(PUBLISHED)
    assert models.list_models(include='resnet1*') == ['resnet101', 'resnet152', 'resnet18']
    assert models.list_models(include=['vgg1?', 'alex*'], exclude='vgg16') == ['alexnet', 'vgg11', 'vgg13', 'vgg19']
    assert models.list_models(module=models) == sorted(PUBLISHED)
    assert models.get_model_builder('DenseNet121') is models.densenet121
    assert models.get_model_weights('densenet121') is models.DenseNet121_Weights
    assert models.get_model_weights(models.regnet_y_16gf) is models.RegNet_Y_16GF_Weights
    assert models.get_weight('ResNet50_Weights.IMAGENET1K_V1') is models.ResNet50_Weights.IMAGENET1K_V1
    with pytest.raises(ValueError, match='Unknown model nope'):
        models.get_model('nope')
    with pytest.raises(ValueError, match="already registered under the name 'resnet18'"):
        models._api.register_model(models.ResNet18_Weights)(models.resnet18)


@pytest.mark.parametrize('name', sorted(PUBLISHED))
def test_parameter_count_is_torchvisions(name):
    kw = {'aux_logits': False, 'init_weights': False} if name == 'googlenet' else {}
    kw = {'init_weights': False} if name == 'inception_v3' else kw
    with ember.device('meta'):
        model = models.get_model(name, **kw)
    assert _count(model) == PUBLISHED[name]


def test_weights_enums_follow_torchvision(tmp_path, monkeypatch):
    assert models.RegNet_Y_16GF_Weights.DEFAULT is models.RegNet_Y_16GF_Weights.IMAGENET1K_V2
    assert models.RegNet_Y_128GF_Weights.DEFAULT is models.RegNet_Y_128GF_Weights.IMAGENET1K_SWAG_E2E_V1
    assert models.EfficientNet_B1_Weights.DEFAULT is models.EfficientNet_B1_Weights.IMAGENET1K_V2
    assert models.Wide_ResNet50_2_Weights.DEFAULT.url.endswith('wide_resnet50_2-9ba9bcbe.pth')
    monkeypatch.setenv('TORCH_HOME', str(tmp_path))
    with pytest.raises(RuntimeError, match=r'densenet121-a639ec97\.pth.*does not download'):
        models.densenet121(weights='DEFAULT')
    with pytest.raises(ValueError, match="'groups' expected value 32 but got 8"):
        models.resnext50_32x4d(groups=8)
    with pytest.raises(ValueError, match="num_classes' expected value 1000 but got 10"):
        models.convnext_tiny(weights='IMAGENET1K_V1', num_classes=10)


# small configurations: (builder, keyword arguments, input size)
SMALL = {
    'squeezenet1_1': ({}, 32), 'mobilenet_v3_small': ({}, 32), 'efficientnet_b0': ({}, 32),
    'shufflenet_v2_x0_5': ({}, 32), 'mnasnet0_5': ({}, 32), 'densenet121': ({}, 32),
    'regnet_y_400mf': ({}, 32), 'googlenet': ({'init_weights': True}, 32),
    'inception_v3': ({'init_weights': True, 'aux_logits': False}, 75),
    # swin pads its windows, so any size works; maxvit's partitions need 224 (7 x 7 at every block)
    'swin_t': ({}, 64), 'maxvit_t': ({}, 224),
}
ONE_IMAGE = {'maxvit_t'}     # a batch of one keeps the large input quick


@pytest.mark.parametrize('name', sorted(SMALL))
def test_small_model_trains_and_round_trips(name, tmp_path):
    kw, size = SMALL[name]
    n = 1 if name in ONE_IMAGE else 2
    ember.manual_seed(0)
    model = models.get_model(name, num_classes=5, **kw)
    x = ember.randn(n, 3, size, size)
    # a checkpoint round trip, in eval mode (on fresh running statistics)
    model.eval()
    path = str(tmp_path / 'ckpt.pth')
    ember.save(model.state_dict(), path)
    again = models.get_model(name, weights=path, num_classes=5, **kw).eval()
    with ember.no_grad():
        expect = model(x)
        assert expect.shape == (n, 5) and ember.allclose(again(x), expect, atol=1e-5)

    model.train()
    out = model(x)
    if name == 'googlenet':      # training with auxiliary heads: torchvision's named tuple
        assert isinstance(out, models.GoogLeNetOutputs) and out.aux_logits1.shape == (2, 5)
        out = out.logits
    assert out.shape == (n, 5)
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    ember.nn.functional.cross_entropy(out, ember.tensor([1, 3])[:n]).backward()
    weight = next(p for p in model.parameters() if p.dim() == 4)
    before = weight.detach().clone()
    assert weight.grad is not None and weight.grad.abs().sum() > 0
    opt.step()
    assert not ember.equal(weight.detach(), before)


def test_densenet_loads_torchvisions_old_key_names(tmp_path):
    """The published DenseNet files name ``denselayer1.norm.1`` what the module calls ``denselayer1.norm1``."""
    model = models.densenet121(num_classes=3)
    state = model.state_dict()
    # (those files come from LuaTorch, without the dense layers' num_batches_tracked)
    old = {k.replace('.norm1.', '.norm.1.').replace('.conv2.', '.conv.2.') if 'denselayer' in k else k: v
           for k, v in state.items() if not ('denselayer' in k and k.endswith('num_batches_tracked'))}
    assert 'features.denseblock1.denselayer1.norm.1.weight' in old
    path = str(tmp_path / 'old.pth')
    ember.save(old, path)
    loaded = models.densenet121(weights=path, num_classes=3)
    for k, v in loaded.state_dict().items():
        assert ember.equal(v, state[k]), k


def test_densenet_memory_efficient_matches():
    ember.manual_seed(0)
    plain = models.densenet121(num_classes=3)
    efficient = models.densenet121(num_classes=3, memory_efficient=True)
    efficient.load_state_dict(plain.state_dict())
    x = ember.randn(2, 3, 32, 32)
    plain(x).sum().backward()
    efficient(x).sum().backward()
    w1, w2 = plain.features.denseblock1.denselayer2.conv1.weight, efficient.features.denseblock1.denselayer2.conv1.weight
    assert ember.allclose(w1.grad, w2.grad, atol=1e-5)


def test_mnasnet_state_dict_versions():
    model = models.mnasnet0_5(num_classes=3)
    state = model.state_dict()
    assert state._metadata['']['version'] == 2
    model.load_state_dict(state)
    with pytest.raises(ValueError, match='version should be set to 1 or 2 instead of None'):
        model.load_state_dict(dict(state))      # no metadata: torchvision refuses it too
    # a version-1 checkpoint of alpha 0.5 had a stem of 32 and 16 channels: loading one rebuilds the stem
    v1_meta = type(state)()
    v1_meta._metadata = {'': {'version': 1}}
    v1 = models.mnasnet0_5(num_classes=3)
    with pytest.warns(UserWarning, match='new version of MNASNet'):
        v1.load_state_dict(v1_meta, strict=False)
    assert v1.layers[0].out_channels == 32 and v1.layers[6].out_channels == 16 and v1._version == 1
    old = v1.state_dict()
    assert old._metadata['']['version'] == 1
    fresh = models.mnasnet0_5(num_classes=3)
    with pytest.warns(UserWarning, match='new version of MNASNet'):
        fresh.load_state_dict(old)
    x = ember.randn(1, 3, 32, 32)
    with ember.no_grad():
        assert ember.allclose(fresh.eval()(x), v1.eval()(x))


def test_regnet_widths_use_torchvisions_float32_rounding():
    """BlockParams quantises widths in float32 as torchvision does with torch; compute the same with torch."""
    for depth, w_0, w_a, w_m in ((16, 48, 27.89, 2.09), (27, 456, 160.83, 2.52), (22, 216, 55.59, 2.1)):
        cont = torch.arange(depth) * w_a + w_0
        cap = torch.round(torch.log(cont / w_0) / math.log(w_m))
        widths = (torch.round(torch.divide(w_0 * torch.pow(w_m, cap), 8)) * 8).int().tolist()
        expect = [w for i, w in enumerate(widths) if i == 0 or w != widths[i - 1]]
        params = models.regnet.BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width=8)
        assert sum(params.depths) == depth
        assert params.widths == [models.regnet._make_divisible(w, min(8, w)) for w in expect]


def test_shufflenet_channel_shuffle_and_convnext_layernorm_match_torch():
    x = np.random.RandomState(0).randn(2, 6, 3, 4).astype(np.float32)
    t = torch.from_numpy(x)
    ref = t.view(2, 2, 3, 3, 4).transpose(1, 2).reshape(2, 6, 3, 4)
    assert np.array_equal(models.shufflenetv2.channel_shuffle(ember.from_numpy(x), 2).numpy(), ref.numpy())
    ln = models.convnext.LayerNorm2d(6, eps=1e-6)
    with ember.no_grad():
        ln.weight.uniform_()
        ln.bias.uniform_()
    ref = torch.nn.functional.layer_norm(t.permute(0, 2, 3, 1), (6,), torch.from_numpy(ln.weight.detach().numpy()),
                                         torch.from_numpy(ln.bias.detach().numpy()), 1e-6).permute(0, 3, 1, 2)
    assert np.allclose(ln(ember.from_numpy(x)).detach().numpy(), ref.numpy(), atol=1e-5)


def test_pretrained_googlenet_and_inception_drop_aux_heads(tmp_path, monkeypatch):
    """With weights, torchvision builds the auxiliary heads to load them, then drops them unless asked for,
    and renormalises the input (transform_input)."""
    monkeypatch.setenv('TORCH_HOME', str(tmp_path))
    ckpt = tmp_path / 'hub' / 'checkpoints'
    ckpt.mkdir(parents=True)
    with ember.device('meta'):
        full = models.googlenet(aux_logits=True, init_weights=False)
    ember.save({k: ember.zeros(v.shape, dtype=v.dtype) for k, v in full.state_dict().items()},
               str(ckpt / 'googlenet-1378be20.pth'))
    m = models.googlenet(weights='DEFAULT')
    assert m.aux1 is None and m.aux2 is None and not m.aux_logits and m.transform_input
    with pytest.warns(UserWarning, match='auxiliary heads in the pretrained googlenet'):
        m = models.googlenet(weights='DEFAULT', aux_logits=True)
    assert m.aux1 is not None


def _torch_window_attention(x, qkv_w, qkv_b, proj_w, proj_b, bias, window, heads, shift, logit_scale=None):
    """Shifted-window attention written window by window in torch, the mask from the three slices per axis of
    the Swin paper (the region a position came from before the shift)."""
    B, H, W, C = x.shape
    (wh, ww), N = window, window[0] * window[1]
    x = torch.nn.functional.pad(x, (0, 0, 0, -W % ww, 0, -H % wh))
    PH, PW = x.shape[1], x.shape[2]
    shift = [0 if wh >= PH else shift[0], 0 if ww >= PW else shift[1]]
    label = torch.zeros(PH, PW)
    count = 0
    for hs in (slice(0, PH - wh), slice(PH - wh, PH - shift[0]), slice(PH - shift[0], PH)):
        for ws in (slice(0, PW - ww), slice(PW - ww, PW - shift[1]), slice(PW - shift[1], PW)):
            label[hs, ws] = count
            count += 1
    if logit_scale is not None:
        qkv_b = torch.cat([qkv_b[:C], torch.zeros(C), qkv_b[2 * C:]])
    x = torch.roll(x, (-shift[0], -shift[1]), (1, 2))
    rows = []
    for i in range(0, PH, wh):
        cols = []
        for j in range(0, PW, ww):
            t = x[:, i:i + wh, j:j + ww].reshape(B, N, C) @ qkv_w.T + qkv_b
            q, k, v = t.reshape(B, N, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
            if logit_scale is None:
                attn = q @ k.transpose(-2, -1) / math.sqrt(C // heads)
            else:
                qn, kn = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
                attn = qn @ kn.transpose(-2, -1) * logit_scale.clamp(max=math.log(100.0)).exp()
            lab = label[i:i + wh, j:j + ww].reshape(N)
            attn = attn + bias + (lab[:, None] != lab[None, :]) * -100.0
            out = (attn.softmax(-1) @ v).transpose(1, 2).reshape(B, N, C) @ proj_w.T + proj_b
            cols.append(out.reshape(B, wh, ww, C))
        rows.append(torch.cat(cols, 2))
    x = torch.roll(torch.cat(rows, 1), (shift[0], shift[1]), (1, 2))
    return x[:, :H, :W]


@pytest.mark.parametrize('H, W, window, shift, v2', [
    (5, 6, [3, 3], [1, 1], False),     # padded, shifted
    (8, 8, [4, 4], [2, 2], True),      # cosine attention (V2)
    (4, 8, [4, 4], [2, 2], False),     # a window as tall as the map: shifted across only
    (3, 3, [7, 7], [3, 3], False)])    # one window: no shift
def test_shifted_window_attention_matches_torch(H, W, window, shift, v2):
    from ember.vision.models.swin_transformer import shifted_window_attention
    rng = np.random.default_rng(0)
    C, heads, N = 8, 2, window[0] * window[1]
    arrays = {'x': (2, H, W, C), 'qkv_w': (3 * C, C), 'qkv_b': (3 * C,), 'proj_w': (C, C), 'proj_b': (C,),
              'bias': (1, heads, N, N)}
    if v2:
        arrays['logit_scale'] = (heads, 1, 1)
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in arrays.items()}
    t = {k: torch.tensor(a, requires_grad=True) for k, a in arrays.items()}
    e = {k: ember.tensor(a, requires_grad=True) for k, a in arrays.items()}
    expect = _torch_window_attention(t['x'], t['qkv_w'], t['qkv_b'], t['proj_w'], t['proj_b'], t['bias'], window,
                                     heads, shift, t.get('logit_scale'))
    got = shifted_window_attention(e['x'], e['qkv_w'], e['proj_w'], e['bias'], window, heads, shift,
                                   qkv_bias=e['qkv_b'], proj_bias=e['proj_b'], logit_scale=e.get('logit_scale'))
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), atol=1e-4, rtol=1e-4)
    weight = torch.tensor(rng.standard_normal(expect.shape).astype(np.float32))
    (expect * weight).sum().backward()
    (got * ember.tensor(weight.numpy())).sum().backward()
    assert sorted(e) == sorted(t)
    for k in t:
        np.testing.assert_allclose(e[k].grad.numpy(), t[k].grad.numpy(), atol=1e-3, rtol=1e-3, err_msg=k)


def test_swin_and_maxvit_position_tables_and_errors():
    """The relative position index in the (2W-1)^2 table (checked on a 2x2 window), V2's log-spaced
    coordinates, the Weights meta, and MaxViT's partition check."""
    from ember.vision.models import swin_transformer, maxvit
    attn = swin_transformer.ShiftedWindowAttention(4, [2, 2], [0, 0], 2)
    # offsets (dh, dw) + 1, row-major in a 3x3 grid: position 0 to 3 is (-1, -1) -> 0, 3 to 0 is (1, 1) -> 8
    assert attn.relative_position_index.tolist() == [4, 3, 1, 0, 5, 4, 2, 1, 7, 6, 4, 3, 8, 7, 5, 4]
    assert attn.get_relative_position_bias().shape == (1, 2, 4, 4)
    v2 = swin_transformer.ShiftedWindowAttentionV2(4, [3, 3], [0, 0], 2)
    coords = torch.arange(-2.0, 3.0) / 2 * 8        # offsets -2..2 scaled to [-8, 8]
    coords = torch.sign(coords) * torch.log2(coords.abs() + 1) / 3
    table = v2.relative_coords_table
    assert table.shape == (1, 5, 5, 2)
    np.testing.assert_allclose(table[0, :, 1, 0].numpy(), coords.numpy(), rtol=1e-6)     # dh down a column
    np.testing.assert_allclose(table[0, 3, :, 1].numpy(), coords.numpy(), rtol=1e-6)     # dw along a row
    assert 'relative_position_bias_table' not in dict(v2.named_parameters())
    assert v2.qkv.bias[4:8].abs().sum().item() == 0          # V2 has no key bias
    mx = maxvit.RelativePositionalMultiHeadAttention(8, 4, 4)
    assert mx.relative_position_index.shape == (4, 4) and mx.relative_position_index.view(-1).tolist() == \
        attn.relative_position_index.tolist()
    assert models.Swin_V2_T_Weights.DEFAULT.meta['min_size'] == (256, 256)
    assert models.MaxVit_T_Weights.IMAGENET1K_V1.meta['num_params'] == 30919624
    with pytest.raises(ValueError, match=r'Input size \(16, 16\) of block 0 is not divisible by partition size 7'):
        models.maxvit_t(input_size=(64, 64))
    with pytest.raises(ValueError, match="'input_size' expected value"):
        models.maxvit_t(weights='DEFAULT', input_size=(448, 448))
