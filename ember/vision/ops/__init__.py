"""``torchvision.ops`` used by programs: box conversion, IoU and non-maximum suppression, RoIAlign and RoIPool,
the sigmoid focal loss, deformable convolution, and the layers torchvision's models share (``misc``).

Box coordinates are ``(x1, y1, x2, y2)`` unless a format says otherwise. ``nms`` is a greedy loop over boxes
sorted by score (NumPy; its output is indices, with no gradient, as torchvision's). ``roi_align`` builds, per
region, the two separable bilinear sampling matrices of torchvision's kernel with NumPy and applies them with
ember matmuls, so the gradient with respect to the feature map comes from autograd (boxes get no gradient, as in
torchvision); ``roi_pool`` (``roi_pool.py``) and ``deform_conv2d`` (``deform_conv.py``) likewise find indices
with NumPy or without gradient and compute values in ember ops.
"""
import math

import numpy as np

import ember
import ember.nn as nn

from ._utils import rois_with_batch_index
from .deform_conv import deform_conv2d, DeformConv2d
from .focal_loss import sigmoid_focal_loss
from .misc import (FrozenBatchNorm2d, Conv2dNormActivation, Conv3dNormActivation, SqueezeExcitation, MLP, Permute,
                   stochastic_depth, StochasticDepth)
from .roi_pool import roi_pool, RoIPool
from .feature_pyramid_network import FeaturePyramidNetwork
from . import feature_pyramid_network  # noqa: F401  (torchvision.ops.feature_pyramid_network)

__all__ = ['box_convert', 'box_area', 'box_iou', 'nms', 'batched_nms', 'roi_align', 'RoIAlign', 'roi_pool',
           'RoIPool', 'sigmoid_focal_loss', 'deform_conv2d', 'DeformConv2d', 'FrozenBatchNorm2d',
           'Conv2dNormActivation', 'Conv3dNormActivation', 'SqueezeExcitation', 'MLP', 'Permute', 'stochastic_depth',
           'StochasticDepth', 'FeaturePyramidNetwork']

_BOX_FORMATS = ('xyxy', 'xywh', 'cxcywh')


def _to_xyxy(boxes, fmt):
    a, b, c, d = boxes.unbind(-1)
    if fmt == 'xywh':
        return ember.stack([a, b, a + c, b + d], dim=-1)
    if fmt == 'cxcywh':
        return ember.stack([a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d], dim=-1)
    return boxes


def _from_xyxy(boxes, fmt):
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == 'xywh':
        return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    if fmt == 'cxcywh':
        return ember.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)
    return boxes


def box_convert(boxes, in_fmt, out_fmt):
    """``boxes`` ``[..., 4]`` from ``in_fmt`` to ``out_fmt``: ``'xyxy'`` (corners), ``'xywh'`` (corner and size)
    or ``'cxcywh'`` (centre and size), through xyxy; differentiable (DETR's losses convert predicted boxes).
    Centres and halves are true divisions, so integer boxes give floating results there.

    >>> box_convert(ember.tensor([[1., 2., 4., 6.]]), 'xywh', 'cxcywh').tolist()
    [[3.0, 5.0, 4.0, 6.0]]
    """
    if in_fmt not in _BOX_FORMATS or out_fmt not in _BOX_FORMATS:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    return _from_xyxy(_to_xyxy(boxes, in_fmt), out_fmt)


def box_area(boxes):
    """Area of each ``(x1, y1, x2, y2)`` box."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    """``(N, M)`` intersection-over-union of two sets of boxes.

    >>> box_iou(ember.tensor([[0., 0., 2., 2.]]), ember.tensor([[1., 0., 3., 2.]])).item()
    0.3333333432674408
    """
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = ember.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = ember.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes kept by greedy non-maximum suppression, highest score first.

    A box is dropped when its IoU with a kept, higher-scoring box exceeds ``iou_threshold``.

    >>> nms(ember.tensor([[0., 0., 2., 2.], [0., 0., 2., 2.1], [5., 5., 6., 6.]]), ember.tensor([.9, .8, .7]), .5).tolist()
    [0, 2]
    """
    if boxes.dim() != 2 or boxes.size(-1) != 4:
        raise RuntimeError(f"boxes should have 2 dimensions and 4 columns, got {tuple(boxes.shape)}")
    if scores.dim() != 1 or scores.size(0) != boxes.size(0):
        raise RuntimeError("boxes and scores should have the same number of elements in dimension 0, got "
                           f"{boxes.size(0)} and {scores.size(0) if scores.dim() else 0}")
    b = boxes.detach().numpy().astype(np.float64)
    s = scores.detach().numpy()
    order = np.argsort(-s, kind='stable')
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    for i in order:
        if suppressed[i]:
            continue
        keep.append(i)
        w = np.clip(np.minimum(x2[i], x2[order]) - np.maximum(x1[i], x1[order]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[order]) - np.maximum(y1[i], y1[order]), 0, None)
        inter = w * h
        iou = inter / (areas[i] + areas[order] - inter)
        suppressed[order[iou > iou_threshold]] = True
    return ember.as_tensor(np.array(keep, dtype=np.int64))


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category ``idxs``: boxes of different categories never suppress each other."""
    if boxes.numel() == 0:
        return ember.empty((0,), dtype=ember.int64)
    offsets = idxs.to(boxes.dtype) * (boxes.max() + 1)    # move each category to its own region of the plane
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _sampling_matrix(start, bin_size, pooled, grid, size):
    """(pooled × size) summed bilinear weights of the sampling points along one axis (torchvision's rule)."""
    W = np.zeros((pooled, size), dtype=np.float64)
    for p in range(pooled):
        for i in range(grid):
            v = start + p * bin_size + (i + 0.5) * bin_size / grid
            if v < -1.0 or v > size:
                continue          # outside the map: contributes zero
            v = max(v, 0.0)
            low = int(v)
            if low >= size - 1:
                low = high = size - 1
                v = float(low)
            else:
                high = low + 1
            frac = v - low
            W[p, low] += 1 - frac
            W[p, high] += frac
    return W


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """Bilinearly pooled ``output_size`` features of each region: ``(K, C, PH, PW)``.

    ``boxes`` is a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)`` or a list of ``(L, 4)``
    tensors, one per image; coordinates are scaled by ``spatial_scale`` into the feature map.

    >>> roi_align(ember.arange(16.).view(1, 1, 4, 4), [ember.tensor([[0., 0., 3., 3.]])], 1).item()
    7.5
    """
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    rois = rois_with_batch_index(boxes).detach().numpy().astype(np.float64)
    H, W = input.shape[-2], input.shape[-1]
    offset = 0.5 if aligned else 0.0
    outs = []
    for b, x1, y1, x2, y2 in rois:
        sw, sh = x1 * spatial_scale - offset, y1 * spatial_scale - offset
        rw, rh = x2 * spatial_scale - offset - sw, y2 * spatial_scale - offset - sh
        if not aligned:       # legacy behaviour: regions at least one pixel wide
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw))
        count = max(gh * gw, 1)
        Wy = ember.as_tensor(_sampling_matrix(sh, rh / ph, ph, gh, H) / count, dtype=input.dtype)
        Wx = ember.as_tensor(_sampling_matrix(sw, rw / pw, pw, gw, W), dtype=input.dtype)
        outs.append(ember.matmul(ember.matmul(Wy, input[int(b)]), Wx.t()))
    if not outs:
        return input.new_zeros((0, input.shape[1], ph, pw))
    return ember.stack(outs, dim=0)


class RoIAlign(nn.Module):
    """Module form of :func:`roi_align`."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size, self.spatial_scale = output_size, spatial_scale
        self.sampling_ratio, self.aligned = sampling_ratio, aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned})")
