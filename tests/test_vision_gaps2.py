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


# ---- 3. torchvision.ops: box_convert, sigmoid_focal_loss, roi_pool, deform_conv2d ------------------------------

from ember.vision import ops  # noqa: E402


def test_box_convert_against_torch_formulas_and_gradient():
    rs = np.random.RandomState(0)
    xyxy = np.concatenate([rs.rand(2, 5, 2) * 10, rs.rand(2, 5, 2) * 10 + 10], -1).astype(np.float32)
    t = torch.tensor(xyxy)
    ref = {'xyxy': t, 'xywh': torch.cat([t[..., :2], t[..., 2:] - t[..., :2]], -1),
           'cxcywh': torch.cat([(t[..., :2] + t[..., 2:]) / 2, t[..., 2:] - t[..., :2]], -1)}
    for a in ref:
        for b in ref:
            out = ops.box_convert(ember.tensor(ref[a].numpy()), a, b)
            np.testing.assert_allclose(out.numpy(), ref[b].numpy(), rtol=1e-6, atol=1e-5)
    assert ops.box_convert(ember.tensor([[1, 2, 5, 7]]), 'xywh', 'xyxy').tolist() == [[1, 2, 6, 9]]
    assert ops.box_convert(ember.tensor([[1, 2, 6, 9]]), 'xyxy', 'cxcywh').tolist() == [[3.5, 5.5, 5.0, 7.0]]
    boxes = ember.tensor([[3., 5., 4., 6.]], requires_grad=True)
    ops.box_convert(boxes, 'cxcywh', 'xyxy').mul(ember.tensor([1., 2., 3., 4.])).sum().backward()
    assert boxes.grad.tolist() == [[4., 6., 1., 1.]]     # d(x2 - x1)/dw = 1.5 - 0.5; d(y2 - y1)/dh = 2 - 1
    with pytest.raises(ValueError, match='Unsupported Bounding Box Conversions for given in_fmt xyxy and out_fmt xy'):
        ops.box_convert(boxes, 'xyxy', 'xy')


@pytest.mark.parametrize('alpha,gamma,reduction', [(0.25, 2, 'none'), (-1, 1.5, 'mean'), (0.7, 0, 'sum')])
def test_sigmoid_focal_loss_against_torch(alpha, gamma, reduction):
    rs = np.random.RandomState(1)
    x, y = rs.randn(3, 7), (rs.rand(3, 7) > 0.5).astype(np.float64)
    tx = torch.tensor(x, requires_grad=True)
    p = torch.sigmoid(tx)
    p_t = p * torch.tensor(y) + (1 - p) * (1 - torch.tensor(y))
    ref = torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor(y), reduction='none') * (1 - p_t) ** gamma
    if alpha >= 0:
        ref = (alpha * torch.tensor(y) + (1 - alpha) * (1 - torch.tensor(y))) * ref
    ref = {'none': ref, 'mean': ref.mean(), 'sum': ref.sum()}[reduction]
    ex = ember.tensor(x, requires_grad=True)
    out = ops.sigmoid_focal_loss(ex, ember.tensor(y), alpha, gamma, reduction)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-8)
    with pytest.raises(ValueError, match='Invalid alpha value: 2'):
        ops.sigmoid_focal_loss(ex, ember.tensor(y), alpha=2)


def _roi_pool_loop(x, rois, ph, pw, scale):
    """Fast R-CNN's rule, pixel by pixel: corners rounded half away from zero, inclusive ends, bins floored and
    ceiled and clipped to the map, strict > (the first maximum wins), empty bins 0."""
    def rnd(v):
        return int(np.sign(v) * np.floor(abs(v) + 0.5))
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    arg = np.full(out.shape, -1)
    H, W = x.shape[2:]
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy, ex, ey = rnd(x1 * scale), rnd(y1 * scale), rnd(x2 * scale), rnd(y2 * scale)
        bh, bw = max(ey - sy + 1, 1) / ph, max(ex - sx + 1, 1) / pw
        for c in range(x.shape[1]):
            for i in range(ph):
                for j in range(pw):
                    h0, h1 = [min(max(v + sy, 0), H) for v in (int(np.floor(i * bh)), int(np.ceil((i + 1) * bh)))]
                    w0, w1 = [min(max(v + sx, 0), W) for v in (int(np.floor(j * bw)), int(np.ceil((j + 1) * bw)))]
                    best = -np.inf
                    for r in range(h0, h1):
                        for s in range(w0, w1):
                            if x[int(b), c, r, s] > best:
                                best, arg[k, c, i, j] = x[int(b), c, r, s], r * W + s
                    out[k, c, i, j] = best if h1 > h0 and w1 > w0 else 0.0
    return out, arg


def test_roi_pool_against_a_loop_and_by_hand():
    # by hand: the box (0, 0)-(3, 3) covers the 4 x 4 map, 2 x 2 bins of 2 x 2 pixels
    x = ember.arange(16.).view(1, 1, 4, 4)
    assert ops.roi_pool(x, ember.tensor([[0., 0., 0., 3., 3.]]), 2).view(-1).tolist() == [5., 7., 13., 15.]
    # (1.5, 0.5) rounds to (2, 1): one column 2..3, rows 1..3 in 3 bins of one row
    assert ops.roi_pool(x, [ember.tensor([[1.5, 0.5, 3.4, 3.]])], (3, 1)).view(-1).tolist() == [7., 11., 15.]
    rs = np.random.RandomState(2)
    feats = rs.randn(2, 3, 9, 11).astype(np.float32)
    feats[1, :, 2:5, 2:5] = 1.0                        # ties: the first maximum takes the gradient
    rois = np.array([[0, 1.0, 1.5, 7.0, 6.0], [1, -2.0, 0.5, 4.0, 12.0], [1, 2.5, 2.5, 9.4, 9.5],
                     [0, 30.0, 30.0, 40.0, 40.0], [1, 4.0, 3.0, 4.0, 3.0]], dtype=np.float32)
    ex = ember.tensor(feats, requires_grad=True)
    out = ops.RoIPool((3, 2), 0.5)(ex, ember.tensor(rois))
    ref, arg = _roi_pool_loop(feats, rois, 3, 2, 0.5)
    np.testing.assert_array_equal(out.detach().numpy(), ref)
    weights = rs.rand(*out.shape).astype(np.float32)
    (out * ember.tensor(weights)).sum().backward()
    grad = np.zeros((2, 3, 99), dtype=np.float32)
    for k, c, i, j in np.ndindex(*arg.shape):
        if arg[k, c, i, j] >= 0:
            grad[int(rois[k, 0]), c, arg[k, c, i, j]] += weights[k, c, i, j]
    np.testing.assert_allclose(ex.grad.numpy().reshape(2, 3, 99), grad, rtol=1e-6)
    assert ops.roi_pool(ex, ember.zeros(0, 5), 2).shape == (0, 3, 2, 2)
    with pytest.raises(AssertionError, match=r'The boxes tensor shape is not correct as Tensor\[K, 5\]'):
        ops.roi_pool(ex, ember.zeros(2, 4), 2)
    with pytest.raises(AssertionError, match=r'The boxes tensor shape is not correct as Tensor\[K, 5\]'):
        ops.roi_align(ex, ember.zeros(2, 4), 2)


def _deform_conv_loop(x, offset, weight, bias, stride, pad, dil, mask):
    """Deformable convolution written out tap by tap with scalar bilinear reads (zero outside the map)."""
    N, C, H, W = x.shape
    O, Cg, kh, kw = weight.shape
    OH, OW = offset.shape[2:]
    G = offset.shape[1] // (2 * kh * kw)

    def read(plane, y, x_):
        if y <= -1 or y >= H or x_ <= -1 or x_ >= W:
            return 0.0
        y0, x0 = int(np.floor(y)), int(np.floor(x_))
        total = 0.0
        for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
            for xx, wx in ((x0, 1 - (x_ - x0)), (x0 + 1, x_ - x0)):
                if 0 <= yy < H and 0 <= xx < W:
                    total += wy * wx * plane[yy, xx]
        return total
    out = np.zeros((N, O, OH, OW))
    groups = C // Cg
    for n, o, oy, ox in np.ndindex(N, O, OH, OW):
        total = bias[o]
        for ci in range(Cg):
            c = (o // (O // groups)) * Cg + ci
            g = c // (C // G)
            for i, j in np.ndindex(kh, kw):
                tap = i * kw + j
                y = oy * stride[0] - pad[0] + i * dil[0] + offset[n, g * 2 * kh * kw + 2 * tap, oy, ox]
                x_ = ox * stride[1] - pad[1] + j * dil[1] + offset[n, g * 2 * kh * kw + 2 * tap + 1, oy, ox]
                m = 1.0 if mask is None else mask[n, g * kh * kw + tap, oy, ox]
                total += weight[o, ci, i, j] * m * read(x[n, c], y, x_)
        out[n, o, oy, ox] = total
    return out


DEFORM_CASES = [  # (N, C, H, W), (O, kh, kw), stride, padding, dilation, weight groups, offset groups, mask
    ((2, 4, 6, 7), (6, 3, 3), (1, 1), (1, 1), (1, 1), 2, 2, True),
    ((1, 3, 7, 6), (2, 2, 3), (2, 1), (0, 2), (1, 2), 1, 1, False),
    ((1, 2, 5, 5), (4, 3, 2), (1, 2), (2, 1), (2, 1), 2, 1, True),
]


@pytest.mark.parametrize('case', DEFORM_CASES)
def test_deform_conv2d_against_a_loop(case):
    (N, C, H, W), (O, kh, kw), stride, pad, dil, groups, ogroups, with_mask = case
    rs = np.random.RandomState(3)
    OH = (H + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    OW = (W + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    x, weight, bias = rs.randn(N, C, H, W), rs.randn(O, C // groups, kh, kw), rs.randn(O)
    offset = rs.uniform(-2.5, 2.5, (N, 2 * ogroups * kh * kw, OH, OW))     # some taps land outside the map
    mask = rs.rand(N, ogroups * kh * kw, OH, OW) if with_mask else None
    ref = _deform_conv_loop(x, offset, weight, bias, stride, pad, dil, mask)
    args = [ember.tensor(a, requires_grad=True) for a in (x, offset, weight, bias)]
    m = ember.tensor(mask, requires_grad=True) if with_mask else None
    out = ops.deform_conv2d(*args, stride=stride, padding=pad, dilation=dil, mask=m)
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-10, atol=1e-10)
    # gradients of all five inputs against finite differences (offsets away from whole pixels)
    inputs = tuple(args) + ((m,) if with_mask else ())
    assert ember.autograd.gradcheck(
        lambda *a: ops.deform_conv2d(a[0], a[1], a[2], a[3], stride=stride, padding=pad, dilation=dil,
                                     mask=a[4] if with_mask else None), inputs, eps=1e-6, atol=1e-5)


def test_deform_conv2d_with_zero_offsets_is_conv2d():
    rs = np.random.RandomState(4)
    x, w, b = rs.randn(2, 4, 8, 9).astype(np.float32), rs.randn(6, 2, 3, 2).astype(np.float32), rs.randn(6)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ref = torch.nn.functional.conv2d(tx, tw, torch.tensor(b, dtype=torch.float32), stride=(2, 1), padding=(1, 2),
                                     dilation=(1, 2), groups=2)
    module = ops.DeformConv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    module.weight.data.copy_(ember.tensor(w))
    module.bias.data.copy_(ember.tensor(b, dtype=ember.float32))
    ex = ember.tensor(x, requires_grad=True)
    offset = ember.zeros(2, 2 * 6, *ref.shape[2:])
    out = module(ex, offset, ember.ones(2, 6, *ref.shape[2:]))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(module(ex, offset).detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rs.randn(*ref.shape).astype(np.float32)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(module.weight.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)
    with pytest.raises(RuntimeError, match=r'Got offset.shape\[1\]=4, while 2 \* weight.size\[2\] \* '
                                           r'weight.size\[3\]=12'):
        module(ex, ember.zeros(2, 4, *ref.shape[2:]))
    with pytest.raises(RuntimeError, match=r'offset output dims: \(3, 3\) - computed output dims: \(4, 11\)'):
        module(ex, ember.zeros(2, 12, 3, 3))
    with pytest.raises(RuntimeError, match='invalid batch size of offset'):
        module(ex, ember.zeros(1, 12, 4, 11))
    with pytest.raises(ValueError, match='in_channels must be divisible by groups'):
        ops.DeformConv2d(3, 6, 3, groups=2)
