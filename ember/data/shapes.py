"""A small synthetic image dataset, made on the fly (no download): 28x28 grey images of four shapes.

Classes: 0 circle, 1 square, 2 triangle, 3 cross; random size, position, brightness
and noise, so a classifier has something to learn. Used by the MLP and CNN examples
and the training benchmarks.
"""
import numpy as np

CLASSES = ('circle', 'square', 'triangle', 'cross')


def make_shapes(n, seed=0, size=28):
    """``(images, labels)``: float32 ``(n, 1, size, size)`` in [0, 1] and int64 ``(n,)``."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    labels = rng.integers(0, 4, n)
    r = rng.uniform(size * 0.15, size * 0.32, n).astype(np.float32)
    cx = rng.uniform(size * 0.42, size * 0.58, n).astype(np.float32)
    cy = rng.uniform(size * 0.42, size * 0.58, n).astype(np.float32)
    dx, dy = xx[None] - cx[:, None, None], yy[None] - cy[:, None, None]
    rr = r[:, None, None]
    masks = np.stack([
        dx ** 2 + dy ** 2 <= rr ** 2,
        (np.abs(dx) <= rr * 0.85) & (np.abs(dy) <= rr * 0.85),
        (dy <= rr * 0.8) & (dy >= -rr) & (np.abs(dx) <= (dy + rr) * 0.6),
        ((np.abs(dx) <= rr * 0.25) | (np.abs(dy) <= rr * 0.25)) & (np.abs(dx) <= rr) & (np.abs(dy) <= rr),
    ], 1)[np.arange(n), labels]
    bright = rng.uniform(0.6, 1.0, n).astype(np.float32)[:, None, None]
    img = masks * bright + rng.normal(0, 0.05, masks.shape).astype(np.float32)
    return np.clip(img, 0, 1).astype(np.float32)[:, None], labels.astype(np.int64)
