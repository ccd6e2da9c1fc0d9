"""Records for the fused normalisation backwards, against torch's own kernels."""
import numpy as np

from .core import op, S, Arg


def _stats(x, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(x.var(axes, keepdims=True) + eps)
    return mean.astype(x.dtype), rstd.astype(x.dtype)


def _ln_backward_samples(dt):
    rng = np.random.default_rng(3)
    for shape, k, affine, mask in [((4, 5, 8), 1, True, (True, True, True)), ((3, 4, 6), 2, True, (True, False, True)),
                                   ((2, 7), 1, False, (True, False, False)), ((5, 3), 1, True, (False, True, True)),
                                   ((0, 4), 1, True, (True, True, True))]:
        x = rng.standard_normal(shape).astype(dt)
        mean, rstd = _stats(x, k)
        ns = shape[len(shape) - k:]
        w = Arg(ns) if affine else None
        b = Arg(ns) if affine else None
        yield S(Arg(shape), x, list(ns), mean, rstd, w, b, list(mask))
    x = rng.standard_normal((3, 4)).astype(dt)
    xf = np.asfortranarray(x)           # non-contiguous input and gradient
    yield S(Arg((3, 4), noncontig=True), xf, [4], *_stats(xf, 1), Arg((4,)), None, [True, True, False])
    yield S(Arg((3, 4)), x, [3], *_stats(x, 1), None, None, [True, False, False])     # error: normalized_shape


op('native_layer_norm_backward', _ln_backward_samples, torch_name='ops.aten.native_layer_norm_backward', grad=False,
   gradgrad=False)      # differentiated only through native_layer_norm's own formulas (create_graph)
