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


# ---- 2. v2 bounding-box transforms -----------------------------------------------------------------------------

from ember.vision import tv_tensors  # noqa: E402
from ember.vision.transforms import v2  # noqa: E402
from ember.vision.transforms.v2 import functional as F  # noqa: E402

# one box (x1, y1, x2, y2) = (1, 2, 7, 10) in each format (even sides, so integer centres are exact)
BOX = {'XYXY': [1, 2, 7, 10], 'XYWH': [1, 2, 6, 8], 'CXCYWH': [4, 6, 6, 8]}
BOX_FLOAT = {'XYXY': [1., 2., 6., 9.], 'XYWH': [1., 2., 5., 7.], 'CXCYWH': [3.5, 5.5, 5., 7.]}


@pytest.mark.parametrize('old', sorted(BOX))
@pytest.mark.parametrize('new', sorted(BOX))
def test_convert_bounding_box_format_by_hand(old, new):
    out = F.convert_bounding_box_format(ember.tensor([BOX[old]]), old_format=old, new_format=new)
    assert out.dtype == ember.int64 and out.tolist() == [BOX[new]]
    out = F.convert_bounding_box_format(ember.tensor([BOX_FLOAT[old]]), old_format=old, new_format=new)
    assert out.tolist() == [BOX_FLOAT[new]]
    boxes = tv_tensors.BoundingBoxes([BOX[old]], format=old, canvas_size=(10, 12))
    out = v2.ConvertBoundingBoxFormat(new)(boxes)
    assert isinstance(out, tv_tensors.BoundingBoxes) and out.format == tv_tensors.BoundingBoxFormat[new]
    assert out.canvas_size == (10, 12) and out.tolist() == [BOX[new]]


def test_convert_bounding_box_format_rules():
    # integer centres are x + w // 2; integer corners from a centre are computed in floating point and truncated
    assert F.convert_bounding_box_format(ember.tensor([[1, 2, 5, 7]]), old_format='XYWH',
                                         new_format='CXCYWH').tolist() == [[3, 5, 5, 7]]
    assert F.convert_bounding_box_format(ember.tensor([[2, 2, 3, 3]]), old_format='CXCYWH',
                                         new_format='XYXY').tolist() == [[0, 0, 3, 3]]
    assert F.convert_bounding_box_format(ember.tensor([[2, 2, 3, 3]]), old_format='CXCYWH',
                                         new_format='XYWH').tolist() == [[0, 0, 3, 3]]
    boxes = ember.tensor([[1., 2., 5., 7.]], requires_grad=True)
    F.convert_bounding_box_format(boxes, old_format='XYWH', new_format='XYXY').sum().backward()
    assert boxes.grad.tolist() == [[2., 2., 1., 1.]]
    target = ember.tensor([[1, 2, 5, 7]])
    assert F.convert_bounding_box_format(target, old_format='XYWH', new_format='XYXY', inplace=True) is target
    assert target.tolist() == [[1, 2, 6, 9]]
    # the transform passes everything but boxes through
    image, boxes = ember.zeros(3, 4, 4), tv_tensors.BoundingBoxes([1, 2, 5, 7], format='XYWH', canvas_size=(4, 4))
    out_image, out_boxes = v2.ConvertBoundingBoxFormat(tv_tensors.BoundingBoxFormat.XYXY)(image, boxes)
    assert out_image is image and out_boxes.tolist() == [[1, 2, 6, 9]]
    with pytest.raises(ValueError, match='For pure tensor inputs, `old_format` has to be passed.'):
        F.convert_bounding_box_format(ember.zeros(1, 4), new_format='XYXY')
    with pytest.raises(ValueError, match='For bounding box tv_tensor inputs, `old_format` must not be passed.'):
        F.convert_bounding_box_format(boxes, old_format='XYWH', new_format='XYXY')
    with pytest.raises(TypeError, match="missing 1 required argument: 'new_format'"):
        F.convert_bounding_box_format(boxes)


def test_clamp_bounding_boxes():
    # canvas (H, W) = (5, 8): x to [0, 8], y to [0, 5], in each box's own format
    boxes = tv_tensors.BoundingBoxes([[-2, 1, 4, 7], [3, -1, 10, 4]], format='XYWH', canvas_size=(5, 8))
    out = v2.ClampBoundingBoxes()(boxes)
    assert isinstance(out, tv_tensors.BoundingBoxes) and out.format == tv_tensors.BoundingBoxFormat.XYWH
    assert out.dtype == ember.int64 and out.tolist() == [[0, 1, 2, 4], [3, 0, 5, 3]]
    assert F.clamp_bounding_boxes(boxes, clamping_mode=None).tolist() == boxes.tolist()
    plain = F.clamp_bounding_boxes(ember.tensor([[4., 4., 12., 2.]]), format='CXCYWH', canvas_size=(5, 8),
                                   clamping_mode='hard')
    assert plain.tolist() == [[4., 4., 8., 2.]]    # corners (-2, 3, 10, 5) clamped to (0, 3, 8, 5)
    with pytest.raises(ValueError, match='`format`, `canvas_size` and `clamping_mode` have to be passed'):
        F.clamp_bounding_boxes(ember.zeros(1, 4), format='XYXY', canvas_size=(5, 8))
    with pytest.raises(ValueError, match='`format` and `canvas_size` must not be passed'):
        F.clamp_bounding_boxes(boxes, canvas_size=(5, 8))
    with pytest.raises(ValueError, match='clamping_mode must be soft, hard, auto or None, got tight'):
        F.clamp_bounding_boxes(boxes, clamping_mode='tight')
    with pytest.raises(TypeError, match='plain tensor or a bounding box tv_tensor'):
        F.clamp_bounding_boxes([[0, 0, 1, 1]])


def test_sanitize_bounding_boxes():
    boxes = tv_tensors.BoundingBoxes([[0, 0, 4, 4],      # kept
                                      [2, 2, 2, 6],      # zero width
                                      [1, 1, 9, 3],      # x2 beyond the canvas width 8
                                      [-1, 0, 3, 3],     # negative x1
                                      [5, 5, 6, 6]],     # 1 x 1: kept by default, dropped by min_area=2
                                     format='XYXY', canvas_size=(8, 8))
    masks = tv_tensors.Mask(ember.arange(5).view(5, 1, 1).expand(5, 8, 8))
    semantic = tv_tensors.Mask(ember.zeros(8, 8))
    image = tv_tensors.Image(ember.zeros(3, 8, 8))
    labels = ember.tensor([10, 11, 12, 13, 14])
    out_image, target = v2.SanitizeBoundingBoxes()(
        image, {'boxes': boxes, 'masks': masks, 'semantic': semantic, 'labels': labels, 'image_id': 7})
    assert out_image is image and target['image_id'] == 7 and target['semantic'] is semantic
    assert target['boxes'].tolist() == [[0, 0, 4, 4], [5, 5, 6, 6]] and target['labels'].tolist() == [10, 14]
    assert isinstance(target['boxes'], tv_tensors.BoundingBoxes) and isinstance(target['masks'], tv_tensors.Mask)
    assert target['masks'][:, 0, 0].tolist() == [0, 4]
    out = v2.SanitizeBoundingBoxes(min_area=2, labels_getter=lambda s: (s['labels'], s['area']))(
        {'boxes': boxes, 'labels': labels, 'area': ember.arange(5.)})
    assert out['labels'].tolist() == [10] and out['area'].tolist() == [0.] and out['boxes'].shape == (1, 4)
    kept, valid = F.sanitize_bounding_boxes(boxes.as_subclass(ember.Tensor), format='XYXY', canvas_size=(8, 8))
    assert valid.tolist() == [True, False, False, False, True] and kept.shape == (2, 4)
    with pytest.raises(ValueError, match='Could not infer where the labels are in the sample'):
        v2.SanitizeBoundingBoxes()({'boxes': boxes})
    with pytest.raises(ValueError, match='Number of boxes .* and must match the number of labels'):
        v2.SanitizeBoundingBoxes()({'boxes': boxes, 'labels': labels[:3]})
    with pytest.raises(ValueError, match='No bounding boxes were found in the sample'):
        v2.SanitizeBoundingBoxes(labels_getter=None)(image)
    with pytest.raises(ValueError, match='min_size must be >= 1, got 0.5.'):
        v2.SanitizeBoundingBoxes(min_size=0.5)
