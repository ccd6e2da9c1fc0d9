"""F.grid_sample with NaN / inf in the grid and with reduced-precision inputs, against torch's CPU kernels
(NOTE [grid_sample non-finite grid]): values, the input's and the grid's gradients, every mode, padding mode and
align_corners, 4-D and 5-D; bf16 / fp16 images whose flat gather index passes what bf16 holds exactly."""
import warnings

import numpy as np
import pytest
import torch

import ember

NAN, INF = float('nan'), float('inf')
POINTS_2D = [(NAN, 0.), (0., NAN), (NAN, NAN), (NAN, 0.9), (0.9, NAN), (-0.9, NAN), (INF, 0.), (-INF, 0.3),
             (0.2, INF), (0.3, -0.4)]
POINTS_3D = [(NAN, 0., 0.), (0., NAN, 0.), (0., 0., NAN), (NAN, NAN, NAN), (0.5, NAN, -0.5), (INF, 0., 0.),
             (-INF, 0.2, 0.), (0.1, 0.2, -INF), (0.3, -0.4, 0.6)]
CASES = [(k, mode, pm) for k in (2, 3) for mode in ('bilinear', 'nearest', 'bicubic') for pm in
         ('zeros', 'border', 'reflection') if not (k == 3 and mode == 'bicubic')]


def _sample(lib, k, mode, padding_mode, align_corners, dtype, backward):
    dt = getattr(lib, dtype)
    if k == 2:
        x, g = lib.arange(12., dtype=dt).reshape(1, 1, 4, 3), lib.tensor(POINTS_2D, dtype=dt).reshape(1, 2, 5, 2)
    else:
        x, g = lib.arange(24., dtype=dt).reshape(1, 1, 2, 4, 3), lib.tensor(POINTS_3D, dtype=dt).reshape(1, 1, 3, 3, 3)
    x = (x + 1).repeat(1, 2, *[1] * k).requires_grad_(backward)
    g = g.requires_grad_(backward)
    out = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    if not backward:
        return [out.float().numpy()]
    (out * lib.arange(1, out.numel() + 1, dtype=dt).reshape(out.shape)).sum().backward()
    return [out.detach().numpy(), x.grad.numpy(), g.grad.numpy()]


@pytest.mark.parametrize('k,mode,padding_mode', CASES)
@pytest.mark.parametrize('align_corners', [False, True])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_non_finite_grid_matches_torch(k, mode, padding_mode, align_corners, dtype):
    # torch's own 2-D bilinear backward under border / reflection crashes (segfault) on a NaN grid: values only
    backward = not (k == 2 and mode == 'bilinear' and padding_mode != 'zeros')
    want = _sample(torch, k, mode, padding_mode, align_corners, dtype, backward)
    with warnings.catch_warnings():
        warnings.simplefilter('error')          # no NumPy "invalid value" warning from the NaN coordinates
        got = _sample(ember, k, mode, padding_mode, align_corners, dtype, backward)
    assert len(got) == len(want) == (3 if backward else 1)
    for e, t in zip(got, want):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5, equal_nan=True)


# not compared: zeros padding with nearest or in 3-D, where torch's bf16 kernels differ from its fp32 ones (nearest
# reads a NaN point's pixel, 3-D trilinear gives NaN, not 0); ember keeps the fp32 semantics (COMPAT.md)
@pytest.mark.parametrize('k,mode,padding_mode', [c for c in CASES if not (c[2] == 'zeros' and (c[1] == 'nearest' or
                                                                                                c[0] == 3))])
def test_non_finite_grid_reduced_precision_values_match_torch(k, mode, padding_mode):
    want = _sample(torch, k, mode, padding_mode, False, 'bfloat16', False)
    got = _sample(ember, k, mode, padding_mode, False, 'bfloat16', False)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-2, equal_nan=True)


def test_nan_grid_2d_border_backward_runs():
    # torch crashes here; ember gives the gradient of what it computed: none to the grid at the clipped NaN
    x = ember.ones(1, 1, 4, 3, requires_grad=True)
    g = ember.tensor([[[[NAN, 0.], [0.2, 0.3]]]], requires_grad=True)
    ember.nn.functional.grid_sample(x, g, padding_mode='border', align_corners=False).sum().backward()
    assert ember.isfinite(x.grad).all() and g.grad[0, 0, 0].tolist() == [0., 0.]


@pytest.mark.parametrize('dtype', ['bfloat16', 'float16'])
@pytest.mark.parametrize('k,mode', [(2, 'bilinear'), (2, 'nearest'), (2, 'bicubic'), (3, 'bilinear'), (3, 'nearest')])
def test_reduced_precision_index_past_bf16_integers_matches_torch(dtype, mode, k):
    rng = np.random.default_rng(0)
    img = rng.random((1, 2) + (3,) * (k - 2) + (32, 40)).astype(np.float32)     # flat index up to 1279 / 3839
    grid = (rng.random((1,) + (2,) * (k - 2) + (6, 7, k)) * 2.2 - 1.1).astype(np.float32)
    grid.reshape(-1, k)[0] = 1.0                                                  # the last pixel, exactly
    outs = []
    for lib in (torch, ember):
        dt = getattr(lib, dtype)
        x, g = lib.tensor(img).to(dt), lib.tensor(grid).to(dt)
        o = lib.nn.functional.grid_sample(x, g, mode=mode, align_corners=True)
        assert o.dtype == dt
        outs.append(o.float().numpy())
    np.testing.assert_allclose(outs[1], outs[0], atol=0.04 if dtype == 'bfloat16' else 5e-3)
