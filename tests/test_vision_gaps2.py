"""torchvision pieces that library runs found missing: ViT's convolutional stem and larger builders,
the v2 bounding-box transforms, and ``torchvision.ops`` box conversion, focal loss, RoI pooling and
deformable convolution. Compared with torch twins, torchvision's published numbers and hand-computed values.
"""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from ember.vision import models
from ember.vision.models.vision_transformer import ConvStemConfig


def _to_torch(state):
    return {k: torch.tensor(v.numpy()) for k, v in state.items()}


# ---- 1. ViT: conv stem and the larger builders -----------------------------------------------------------------

def test_vit_conv_stem_matches_a_torch_twin():
    ember.manual_seed(0)
    configs = [ConvStemConfig(8, 3, 2), ConvStemConfig(16, 3, 2, norm_layer=ember.nn.BatchNorm2d,
                                                       activation_layer=ember.nn.SiLU)]
    model = models.VisionTransformer(16, 4, num_layers=1, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=5,
                                     conv_stem_configs=configs).eval()
    stem = model.conv_proj
    assert [k for k in stem.state_dict() if k.endswith('weight')] == [
        'conv_bn_relu_0.0.weight', 'conv_bn_relu_0.1.weight', 'conv_bn_relu_1.0.weight', 'conv_bn_relu_1.1.weight',
        'conv_last.weight']
    assert stem.conv_bn_relu_0[0].bias is None and stem.conv_last.bias is not None
    assert not stem.conv_last.bias.detach().any()
    twin = torch.nn.Sequential(OrderedDict(
        conv_bn_relu_0=torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1, bias=False), torch.nn.BatchNorm2d(8),
                                           torch.nn.ReLU()),
        conv_bn_relu_1=torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, 2, 1, bias=False), torch.nn.BatchNorm2d(16),
                                           torch.nn.SiLU()),
        conv_last=torch.nn.Conv2d(16, 32, 1))).eval()
    twin.load_state_dict(_to_torch(stem.state_dict()))
    x = np.random.RandomState(0).randn(2, 3, 16, 16).astype(np.float32)
    np.testing.assert_allclose(stem(ember.tensor(x)).detach().numpy(), twin(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    # 16 / 4 = 4 x 4 patches and the class token; the whole model trains through the stem
    assert model.encoder.pos_embedding.shape == (1, 17, 32)
    model.train()
    model(ember.tensor(x)).sum().backward()
    assert stem.conv_bn_relu_0[0].weight.grad is not None
    with pytest.raises(AssertionError, match='Wrong image width! Expected 16 but got 8!'):
        model(ember.zeros(1, 3, 16, 8))


def test_vit_builders_and_weights_follow_torchvision(tmp_path, monkeypatch):
    assert models.vit_b_32 is models.get_model_builder('vit_b_32')
    assert models.get_model_weights('vit_h_14') is models.ViT_H_14_Weights
    assert models.ViT_H_14_Weights.DEFAULT is models.ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1
    assert models.ViT_L_16_Weights.DEFAULT is models.ViT_L_16_Weights.IMAGENET1K_V1
    assert models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1.meta['min_size'] == (384, 384)
    assert models.ViT_L_32_Weights.IMAGENET1K_V1.meta['num_params'] == 306535400
    assert models.ViT_B_32_Weights.DEFAULT.url.endswith('vit_b_32-d86f8d99.pth')
    # published weights fix the image size they were trained at
    with pytest.raises(ValueError, match="'image_size' expected value 518 but got 224 instead"):
        models.vit_h_14(weights='DEFAULT', image_size=224)
    monkeypatch.setenv('TORCH_HOME', str(tmp_path))
    with pytest.raises(RuntimeError, match=r'vit_l_16_swag-4f3808c9\.pth.*does not download'):
        models.vit_l_16(weights='IMAGENET1K_SWAG_E2E_V1')
    with ember.device('meta'):
        e2e = models.vit_b_16(image_size=384)
    assert sum(p.numel() for p in e2e.parameters()) == models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1.meta['num_params']
    model = models.vit_b_32(image_size=64, num_classes=3)
    assert model.encoder.pos_embedding.shape == (1, 5, 768) and model(ember.zeros(1, 3, 64, 64)).shape == (1, 3)
