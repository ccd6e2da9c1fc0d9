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


def _gn_backward_samples(dt):
    rng = np.random.default_rng(5)
    for (N, C, HxW), group, affine, mask in [((2, 6, 4), 3, True, (True, True, True)), ((3, 4, 5), 2, False, (True, False, False)),
                                           ((2, 4, 3), 4, True, (False, True, True)), ((0, 4, 3), 2, True, (True, True, True))]:
        x = rng.standard_normal((N, C, HxW)).astype(dt) + 2     # an offset mean: ds - db * mean cancels
        # (not weight=None with output_mask[2]: torch 2.13 fails "tensor does not have a device")
        mean, rstd = _stats(x.reshape(N, group, C // group * HxW), 1)
        w = Arg((C,)) if affine else None
        yield S(Arg((N, C, HxW)), x, mean.reshape(N, group), rstd.reshape(N, group), w, N, C, HxW, group, list(mask))
    # (no non-contiguous sample: torch's CPU kernel reads its inputs' memory as contiguous; its autograd formula
    # passes contiguous ones)


op('native_group_norm_backward', _gn_backward_samples, torch_name='ops.aten.native_group_norm_backward', grad=False,
   gradgrad=False)      # differentiated only through native_group_norm's own formulas (create_graph)


def _bn_backward_samples(dt):
    rng = np.random.default_rng(4)
    for shape, affine, train, mask in [((4, 3, 5), True, True, (True, True, True)), ((2, 3, 8, 9), True, True, (True, True, True)), ((2, 3, 4, 4), False, True, (True, False, False)),
                                       ((5, 2), True, True, (False, True, True)), ((2, 3, 2, 2, 2), True, False, (True, True, True)),
                                       ((3, 4, 6), True, False, (True, False, True))]:   # (torch 2.13 dies of SIGFPE on an empty batch)
        x = rng.standard_normal(shape).astype(dt) + 3      # an offset mean: dot = sum(g*x) - mean*sum(g) cancels
        axes = (0,) + tuple(range(2, len(shape)))
        w = Arg((shape[1],)) if affine else None
        rm = rng.standard_normal(shape[1]).astype(dt)
        rv = rng.uniform(0.5, 2, shape[1]).astype(dt)
        if train:
            sm = x.mean(axes).astype(dt)
            si = (1 / np.sqrt(x.var(axes) + 1e-5)).astype(dt)
        else:
            sm = si = None
        yield S(Arg(shape), x, w, rm, rv, sm, si, train, 1e-5, list(mask))
    # (no error samples: torch 2.13's kernel crashes the process on mismatched shapes or missing statistics)


op('native_batch_norm_backward', _bn_backward_samples, torch_name='ops.aten.native_batch_norm_backward', grad=False,
   gradgrad=False, atol=1e-4, rtol=1e-4)    # differentiated only through native_batch_norm's own formulas
