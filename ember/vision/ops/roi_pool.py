"""``torchvision.ops.roi_pool`` (Fast R-CNN's RoI max pooling) and its module ``RoIPool``.

Each region's corners are scaled by ``spatial_scale`` and rounded to whole pixels; the region (at least one
pixel, its end inclusive) is cut into ``output_size`` bins whose edges are floored and ceiled, so neighbouring
bins may share a row; each bin gives its maximum per channel, an empty one (wholly outside the map) zero. The
argmax of every bin is found with NumPy and the maxima are read with an ember gather, so the gradient goes to
the first maximal pixel of each bin, as torchvision's kernel; boxes get no gradient.
"""
import math

import numpy as np

import ember
import ember.nn as nn

from ._utils import rois_with_batch_index

__all__ = ['roi_pool', 'RoIPool']


def _round(v):
    """C's round: halves away from zero (Python's round goes to even)."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def _bin_edges(start, length, pooled, size):
    """``pooled`` (begin, end) pixel ranges along one axis, clipped to ``[0, size]``."""
    step = length / pooled
    return [(min(max(math.floor(p * step) + start, 0), size), min(max(math.ceil((p + 1) * step) + start, 0), size))
            for p in range(pooled)]


def roi_pool(input, boxes, output_size, spatial_scale=1.0):
    """Max-pooled ``output_size`` features of each region: ``(K, C, PH, PW)``.

    ``boxes`` is a ``(K, 5)`` tensor of ``(batch index, x1, y1, x2, y2)`` or a list of ``(L, 4)`` tensors, one per
    image.

    >>> roi_pool(ember.arange(16.).view(1, 1, 4, 4), [ember.tensor([[0., 0., 3., 3.]])], 2).view(-1).tolist()
    [5.0, 7.0, 13.0, 15.0]
    """
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    rois = rois_with_batch_index(boxes).detach().numpy().astype(np.float64)
    n, c, h, w = input.shape
    x = input.detach().numpy()
    index = np.zeros((len(rois), c, ph, pw), dtype=np.int64)      # flat h * w position of each bin's maximum
    filled = np.zeros((len(rois), 1, ph, pw), dtype=bool)
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy, ex, ey = (_round(v * spatial_scale) for v in (x1, y1, x2, y2))
        rows = _bin_edges(sy, max(ey - sy + 1, 1), ph, h)
        cols = _bin_edges(sx, max(ex - sx + 1, 1), pw, w)
        for i, (r0, r1) in enumerate(rows):
            for j, (c0, c1) in enumerate(cols):
                if r1 <= r0 or c1 <= c0:
                    continue
                first = x[int(b), :, r0:r1, c0:c1].reshape(c, -1).argmax(axis=1)
                index[k, :, i, j] = (r0 + first // (c1 - c0)) * w + c0 + first % (c1 - c0)
                filled[k, 0, i, j] = True
    if len(rois) == 0:
        return input.new_zeros((0, c, ph, pw))
    batch = ember.as_tensor(rois[:, 0].astype(np.int64)).view(-1, 1, 1, 1)
    channel = ember.arange(c).view(1, -1, 1, 1)
    pooled = input.reshape(n, c, h * w)[batch, channel, ember.as_tensor(index)]
    return ember.where(ember.as_tensor(filled), pooled, pooled.new_zeros(()))


class RoIPool(nn.Module):
    """Module form of :func:`roi_pool`."""

    def __init__(self, output_size, spatial_scale):
        super().__init__()
        self.output_size, self.spatial_scale = output_size, spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self):
        return f"{self.__class__.__name__}(output_size={self.output_size}, spatial_scale={self.spatial_scale})"
