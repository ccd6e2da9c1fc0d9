"""ember.vision.models against the same architectures built here from torch's own nn layers.

Each torch twin is written from torchvision's published structure (module names, layer order), so
matching state_dict keys one to one checks the names, and matching outputs and gradients (train and
eval mode) checks the wiring. A checkpoint that torch writes from its twin loads into the ember model.
"""
import math
from collections import OrderedDict
from functools import partial

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
from ember.vision import models


# --- torch twins (test code) -----------------------------------------------------------

class TBasic(tnn.Module):
    expansion = 1

    def __init__(self, inp, planes, stride=1, down=None):
        super().__init__()
        self.conv1 = tnn.Conv2d(inp, planes, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.downsample = down

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(out + (self.downsample(x) if self.downsample is not None else x))


class TBottle(tnn.Module):
    expansion = 4

    def __init__(self, inp, planes, stride=1, down=None):
        super().__init__()
        self.conv1 = tnn.Conv2d(inp, planes, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.conv2 = tnn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.conv3 = tnn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = tnn.BatchNorm2d(planes * 4)
        self.relu = tnn.ReLU(inplace=True)
        self.downsample = down

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + (self.downsample(x) if self.downsample is not None else x))


class TResNet(tnn.Module):
    def __init__(self, block, layers, num_classes):
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = tnn.BatchNorm2d(64)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(3, 2, 1)
        inp = 64
        for i, (planes, n) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if i == 0 else 2
            blocks = []
            for k in range(n):
                down = None
                if k == 0 and (stride != 1 or inp != planes * block.expansion):
                    down = tnn.Sequential(tnn.Conv2d(inp, planes * block.expansion, 1, stride, bias=False),
                                          tnn.BatchNorm2d(planes * block.expansion))
                blocks.append(block(inp, planes, stride if k == 0 else 1, down))
                inp = planes * block.expansion
            setattr(self, f'layer{i + 1}', tnn.Sequential(*blocks))
        self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
        self.fc = tnn.Linear(512 * block.expansion, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def t_vgg(cfg, bn, num_classes):
    layers, c = [], 3
    for v in cfg:
        if v == 'M':
            layers.append(tnn.MaxPool2d(2, 2))
        else:
            layers += [tnn.Conv2d(c, v, 3, padding=1)] + ([tnn.BatchNorm2d(v)] if bn else []) + [tnn.ReLU(True)]
            c = v
    m = tnn.Module()
    m.features = tnn.Sequential(*layers)
    m.avgpool = tnn.AdaptiveAvgPool2d((7, 7))
    m.classifier = tnn.Sequential(tnn.Linear(25088, 4096), tnn.ReLU(True), tnn.Dropout(), tnn.Linear(4096, 4096),
                                  tnn.ReLU(True), tnn.Dropout(), tnn.Linear(4096, num_classes))
    m.forward = lambda x: m.classifier(torch.flatten(m.avgpool(m.features(x)), 1))
    return m


def t_alexnet(num_classes):
    m = tnn.Module()
    m.features = tnn.Sequential(tnn.Conv2d(3, 64, 11, 4, 2), tnn.ReLU(True), tnn.MaxPool2d(3, 2),
                                tnn.Conv2d(64, 192, 5, padding=2), tnn.ReLU(True), tnn.MaxPool2d(3, 2),
                                tnn.Conv2d(192, 384, 3, padding=1), tnn.ReLU(True), tnn.Conv2d(384, 256, 3, padding=1),
                                tnn.ReLU(True), tnn.Conv2d(256, 256, 3, padding=1), tnn.ReLU(True), tnn.MaxPool2d(3, 2))
    m.avgpool = tnn.AdaptiveAvgPool2d((6, 6))
    m.classifier = tnn.Sequential(tnn.Dropout(), tnn.Linear(9216, 4096), tnn.ReLU(True), tnn.Dropout(),
                                  tnn.Linear(4096, 4096), tnn.ReLU(True), tnn.Linear(4096, num_classes))
    m.forward = lambda x: m.classifier(torch.flatten(m.avgpool(m.features(x)), 1))
    return m


class TFire(tnn.Module):
    def __init__(self, inp, s, e1, e3):
        super().__init__()
        self.squeeze = tnn.Conv2d(inp, s, 1)
        self.expand1x1 = tnn.Conv2d(s, e1, 1)
        self.expand3x3 = tnn.Conv2d(s, e3, 3, padding=1)

    def forward(self, x):
        x = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.expand1x1(x)), torch.relu(self.expand3x3(x))], 1)


def t_squeezenet(num_classes):
    m = tnn.Module()
    pool = partial(tnn.MaxPool2d, 3, 2, ceil_mode=True)
    m.features = tnn.Sequential(tnn.Conv2d(3, 96, 7, 2), tnn.ReLU(True), pool(), TFire(96, 16, 64, 64),
                                TFire(128, 16, 64, 64), TFire(128, 32, 128, 128), pool(), TFire(256, 32, 128, 128),
                                TFire(256, 48, 192, 192), TFire(384, 48, 192, 192), TFire(384, 64, 256, 256), pool(),
                                TFire(512, 64, 256, 256))
    m.classifier = tnn.Sequential(tnn.Dropout(), tnn.Conv2d(512, num_classes, 1), tnn.ReLU(True),
                                  tnn.AdaptiveAvgPool2d((1, 1)))
    m.forward = lambda x: torch.flatten(m.classifier(m.features(x)), 1)
    return m


def t_cna(i, o, k=3, s=1, g=1):
    return tnn.Sequential(tnn.Conv2d(i, o, k, s, (k - 1) // 2, groups=g, bias=False), tnn.BatchNorm2d(o),
                          tnn.ReLU6(inplace=True))


class TInvRes(tnn.Module):
    def __init__(self, inp, oup, stride, t):
        super().__init__()
        hid = int(round(inp * t))
        self.res = stride == 1 and inp == oup
        layers = ([t_cna(inp, hid, 1)] if t != 1 else []) + [t_cna(hid, hid, 3, stride, hid),
                                                            tnn.Conv2d(hid, oup, 1, 1, 0, bias=False),
                                                            tnn.BatchNorm2d(oup)]
        self.conv = tnn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.res else self.conv(x)


def t_mobilenet_v2(num_classes):
    feats, c = [t_cna(3, 32, 3, 2)], 32
    for t, o, n, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                       [6, 320, 1, 1]]:
        for i in range(n):
            feats.append(TInvRes(c, o, s if i == 0 else 1, t))
            c = o
    feats.append(t_cna(c, 1280, 1))
    m = tnn.Module()
    m.features = tnn.Sequential(*feats)
    m.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, num_classes))
    m.forward = lambda x: m.classifier(torch.flatten(tnn.functional.adaptive_avg_pool2d(m.features(x), 1), 1))
    return m


class TEncBlock(tnn.Module):
    def __init__(self, heads, dim, mlp):
        super().__init__()
        self.ln_1 = tnn.LayerNorm(dim, eps=1e-6)
        self.self_attention = tnn.MultiheadAttention(dim, heads, batch_first=True)
        self.dropout = tnn.Dropout(0.0)
        self.ln_2 = tnn.LayerNorm(dim, eps=1e-6)
        self.mlp = tnn.Sequential(tnn.Linear(dim, mlp), tnn.GELU(), tnn.Dropout(0.0), tnn.Linear(mlp, dim),
                                  tnn.Dropout(0.0))

    def forward(self, inp):
        x = self.ln_1(inp)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + inp
        return x + self.mlp(self.ln_2(x))


def t_vit_b_16(num_classes, image_size=32):
    m = tnn.Module()
    m.conv_proj = tnn.Conv2d(3, 768, 16, 16)
    m.class_token = tnn.Parameter(torch.zeros(1, 1, 768))
    enc = tnn.Module()
    enc.pos_embedding = tnn.Parameter(torch.zeros(1, (image_size // 16) ** 2 + 1, 768))
    enc.dropout = tnn.Dropout(0.0)
    enc.layers = tnn.Sequential(OrderedDict((f'encoder_layer_{i}', TEncBlock(12, 768, 3072)) for i in range(12)))
    enc.ln = tnn.LayerNorm(768, eps=1e-6)
    m.encoder = enc
    m.heads = tnn.Sequential(OrderedDict(head=tnn.Linear(768, num_classes)))

    def forward(x):
        n = x.shape[0]
        x = m.conv_proj(x).reshape(n, 768, -1).permute(0, 2, 1)
        x = torch.cat([m.class_token.expand(n, -1, -1), x], 1)
        x = enc.ln(enc.layers(enc.dropout(x + enc.pos_embedding)))
        return m.heads(x[:, 0])
    m.forward = forward
    return m


CASES = {
    'resnet18': (lambda n: TResNet(TBasic, [2, 2, 2, 2], n), 64, {}),
    'resnet34': (lambda n: TResNet(TBasic, [3, 4, 6, 3], n), 64, {}),
    'resnet50': (lambda n: TResNet(TBottle, [3, 4, 6, 3], n), 64, {}),
    'vgg11': (lambda n: t_vgg(models.vgg.cfgs['A'], False, n), 32, {}),
    'vgg11_bn': (lambda n: t_vgg(models.vgg.cfgs['A'], True, n), 32, {}),
    'vgg16': (lambda n: t_vgg(models.vgg.cfgs['D'], False, n), 32, {}),
    'vgg16_bn': (lambda n: t_vgg(models.vgg.cfgs['D'], True, n), 32, {}),
    'alexnet': (t_alexnet, 64, {}),
    'squeezenet1_0': (t_squeezenet, 48, {}),
    'mobilenet_v2': (t_mobilenet_v2, 64, {}),   # BN on 2x2 maps at the end: 1x1 maps with batch 2 are too ill-conditioned to compare
    'vit_b_16': (t_vit_b_16, 32, {'image_size': 32}),
}


def _zero_dropout(module, dropout_cls):
    for m in module.modules():
        if isinstance(m, dropout_cls):
            m.p = 0.0


def _np(t):
    return t.detach().numpy()


def _assert_close(a, b, what):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(np.abs(b).max(), 1e-6)
    err = np.abs(a - b).max() / scale
    assert err < 1e-7, f'{what}: max error {err:.2e} relative to {scale:.2e}'


@pytest.mark.parametrize('name', sorted(CASES))
def test_model_matches_torch_twin(name, tmp_path):
    build_t, size, kw = CASES[name]
    ember.manual_seed(0)
    em = getattr(models, name)(num_classes=7, **kw)
    with torch.device('meta'):      # the twin's own initialisation is overwritten below: skip it
        tm = build_t(7)
    tm.to_empty(device='cpu')
    esd, tsd = em.state_dict(), tm.state_dict()
    assert list(esd) == list(tsd), 'state_dict keys differ from torchvision names'
    for k in esd:
        assert tuple(esd[k].shape) == tuple(tsd[k].shape), k
    if any(k.endswith('num_batches_tracked') for k in tsd):
        assert all(esd[k].dtype == ember.int64 for k in esd if k.endswith('num_batches_tracked'))
    tm.load_state_dict({k: torch.from_numpy(_np(v).copy()) for k, v in esd.items()})
    if name == 'vit_b_16':     # the head starts at zero: give it values so the gradients below are not all zero
        with ember.no_grad():
            em.heads.head.weight.normal_(0, 0.02)
        tm.heads.head.weight.data = torch.from_numpy(_np(em.heads.head.weight).copy())
    _zero_dropout(em, ember.nn.Dropout)
    _zero_dropout(tm, tnn.Dropout)
    # float64 on both sides: train-mode batch norm on batch 2 amplifies float32 rounding through deep nets,
    # so a float32 comparison could only use loose tolerances; in float64 the wiring is checked tightly
    em.double()
    tm.double()
    x = np.random.RandomState(0).randn(2, 3, size, size)
    for train in (True, False):
        em.train(train)
        tm.train(train)
        em.zero_grad()
        tm.zero_grad()
        ex = ember.from_numpy(x.copy()).requires_grad_()
        tx = torch.from_numpy(x.copy()).requires_grad_()
        eo, to = em(ex), tm(tx)
        _assert_close(_np(eo), _np(to), f'{name} output (train={train})')
        w = np.random.RandomState(1).randn(*to.shape)
        (eo * ember.from_numpy(w)).sum().backward()
        (to * torch.from_numpy(w)).sum().backward()
        _assert_close(_np(ex.grad), _np(tx.grad), f'{name} input grad (train={train})')
        eparams, tparams = dict(em.named_parameters()), dict(tm.named_parameters())
        assert list(eparams) == list(tparams)
        for k in ('conv1.weight', 'features.0.weight', 'features.0.0.weight', 'conv_proj.weight', 'fc.weight',
                  'classifier.6.weight', 'heads.head.weight'):
            if k in tparams:
                _assert_close(_np(eparams[k].grad), _np(tparams[k].grad), f'{name} {k}.grad (train={train})')
    for k, v in tm.state_dict().items():     # running statistics updated alike by the train-mode pass
        _assert_close(_np(em.state_dict()[k]), v.numpy(), f'{name} {k} after training pass')

    # a checkpoint written by torch (float32, as published) loads into the ember model, also through weights=<path>
    path = str(tmp_path / f'{name}.pth')
    tm.float().eval()
    torch.save(tm.state_dict(), path)
    em.float().eval()
    em.load_state_dict(ember.load(path))
    via_weights = getattr(models, name)(weights=path, num_classes=7, **kw).eval()
    x32 = x.astype(np.float32)
    with torch.no_grad():
        ref = tm(torch.from_numpy(x32)).numpy()
    for m, what in ((em, 'loaded checkpoint'), (via_weights, 'weights=path')):
        out = _np(m(ember.from_numpy(x32)))
        assert np.abs(out - ref).max() <= 1e-4 * max(np.abs(ref).max(), 1e-6), f'{name} {what}'


def test_resnet_init_follows_torchvision():
    m = models.resnet18()
    w = m.conv1.weight
    fan_out = w.shape[0] * w.shape[2] * w.shape[3]
    assert abs(w.std().item() - math.sqrt(2.0 / fan_out)) < 0.1 * math.sqrt(2.0 / fan_out)
    assert m.bn1.weight.eq(1).all() and m.bn1.bias.eq(0).all()


def test_weights_enum_without_cache_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv('TORCH_HOME', str(tmp_path))
    with pytest.raises(RuntimeError, match=r'resnet18-f37072fd\.pth.*does not download'):
        models.resnet18(weights=models.ResNet18_Weights.IMAGENET1K_V1)
    with pytest.raises(RuntimeError, match='does not download'):
        models.resnet18(weights='DEFAULT')
    with pytest.warns(UserWarning, match="'pretrained' is deprecated"), pytest.raises(RuntimeError):
        models.resnet18(pretrained=True)
    with pytest.raises(ValueError, match="num_classes' expected value 1000"):
        models.resnet18(weights='IMAGENET1K_V1', num_classes=10)
    with pytest.raises(ValueError, match='Invalid Weights'):
        models.resnet18(weights='nope')
    # a checkpoint in the cache is used
    ckpt = tmp_path / 'hub' / 'checkpoints'
    ckpt.mkdir(parents=True)
    src = models.squeezenet1_0()
    ember.save(src.state_dict(), str(ckpt / 'squeezenet1_0-b66bff10.pth'))
    m = models.squeezenet1_0(weights=models.SqueezeNet1_0_Weights.DEFAULT)
    assert ember.equal(m.features[0].weight, src.features[0].weight)


def test_get_model_and_list():
    assert 'resnet18' in models.list_models() and 'densenet121' in models.list_models()
    assert models.get_model('resnet18', num_classes=3).fc.out_features == 3
    with pytest.raises(ValueError, match='Unknown model'):
        models.get_model('nope')
