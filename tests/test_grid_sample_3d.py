"""Volumetric F.grid_sample (input (N, C, D, H, W), grid (N, Do, Ho, Wo, 3)) against torch's grid_sampler_3d:
values and the gradients to the input and the grid for every mode, padding mode and align_corners, grid points
outside the volume and exactly on its borders (where torch's backward counts the border as outside), float32 and
float64, a 3-D affine_grid round trip with theta's gradient, and torch's errors."""
import itertools
import warnings

import numpy as np
import pytest
import torch

import ember


def _sample_both(vol, grid, **kw):
    """(output, input grad, grid grad) from torch and from ember, with a non-uniform upstream gradient."""
    outs = []
    for lib in (torch, ember):
        x, g = lib.tensor(vol, requires_grad=True), lib.tensor(grid, requires_grad=True)
        o = lib.nn.functional.grid_sample(x, g, **kw)
        (o * lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape).sin()).sum().backward()
        outs.append((o.detach().numpy(), x.grad.numpy(), g.grad.numpy()))
    return outs


def _grid(rng, shape, dtype):
    grid = (rng.random(shape) * 2.6 - 1.3).astype(dtype)       # inside and outside [-1, 1]
    grid[0, 0, 0, 0] = [0.0, 0.0, 0.0]
    grid[0, 0, 0, 1] = [1.0, -1.0, 1.0]                         # the corners' centres with align_corners
    grid[-1, -1, -1, -1] = [-1.0, 1.0, 0.25]
    return grid


@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('align_corners', [False, True])
def test_grid_sample_3d_matches_torch(mode, padding_mode, align_corners):
    rng = np.random.default_rng(0)
    vol = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    grid = _grid(rng, (2, 3, 4, 5, 3), np.float32)
    (t_out, t_gx, t_gg), (e_out, e_gx, e_gg) = _sample_both(vol, grid, mode=mode, padding_mode=padding_mode,
                                                              align_corners=align_corners)
    assert e_out.shape == t_out.shape == (2, 3, 3, 4, 5) and e_out.dtype == t_out.dtype
    np.testing.assert_allclose(e_out, t_out, atol=2e-5)
    np.testing.assert_allclose(e_gx, t_gx, atol=2e-5)
    np.testing.assert_allclose(e_gg, t_gg, atol=2e-5)
    if mode == 'nearest':
        assert not e_gg.any()                                   # torch's zero gradient to the grid


@pytest.mark.parametrize('mode, padding_mode', itertools.product(['bilinear', 'nearest'],
                                                                 ['zeros', 'border', 'reflection']))
def test_grid_sample_3d_float64_and_far_outside(mode, padding_mode):
    rng = np.random.default_rng(2)
    vol = rng.standard_normal((1, 2, 3, 4, 2))
    grid = rng.standard_normal((1, 2, 3, 4, 3)) * 4            # many points several volumes away
    (t_out, t_gx, t_gg), (e_out, e_gx, e_gg) = _sample_both(vol, grid, mode=mode, padding_mode=padding_mode,
                                                              align_corners=False)
    assert e_out.dtype == t_out.dtype == np.float64
    for e, t in ((e_out, t_out), (e_gx, t_gx), (e_gg, t_gg)):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('padding_mode', ['border', 'reflection'])
def test_grid_gradient_is_zero_on_the_border_as_torch(padding_mode):
    """torch's clip_coordinates_set_grad counts a point exactly on the border as outside: no gradient to it,
    in 2-D and 3-D (a clamp would pass one)."""
    for shape in ((1, 1, 3, 4), (1, 1, 2, 3, 4)):
        k = len(shape) - 2
        vol = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) ** 1.5
        grid = np.array([[-1.0] * k, [1.0] * k, [0.3] + [-1.0] * (k - 1)]).reshape((1,) * k + (3, k))
        (t_out, t_gx, t_gg), (e_out, e_gx, e_gg) = _sample_both(vol, grid, padding_mode=padding_mode,
                                                                  align_corners=True)
        np.testing.assert_allclose(e_out, t_out, rtol=1e-12)
        np.testing.assert_allclose(e_gg, t_gg, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(e_gx, t_gx, rtol=1e-12)
        assert t_gg.reshape(3, k)[0].tolist() == [0.0] * k      # the case is the one meant


@pytest.mark.parametrize('align_corners', [False, True])
def test_affine_grid_3d_round_trip_matches_torch(align_corners):
    rng = np.random.default_rng(1)
    theta = (np.eye(3, 4)[None] + rng.standard_normal((2, 3, 4)) * 0.2).astype(np.float32)
    vol = rng.standard_normal((2, 2, 4, 5, 6)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        th, x = lib.tensor(theta, requires_grad=True), lib.tensor(vol, requires_grad=True)
        grid = lib.nn.functional.affine_grid(th, (2, 2, 4, 5, 6), align_corners=align_corners)
        out = lib.nn.functional.grid_sample(x, grid, padding_mode='border', align_corners=align_corners)
        out.pow(2).sum().backward()
        outs.append((grid.detach().numpy(), out.detach().numpy(), th.grad.numpy(), x.grad.numpy()))
    for t, e in zip(*outs):
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)
    # the identity transform gives the volume back
    ident = ember.tensor(np.eye(3, 4, dtype=np.float32)[None].repeat(2, 0))
    grid = ember.nn.functional.affine_grid(ident, (2, 2, 4, 5, 6), align_corners=align_corners)
    back = ember.nn.functional.grid_sample(ember.tensor(vol), grid, align_corners=align_corners)
    np.testing.assert_allclose(back.numpy(), vol, atol=1e-5)


def test_grid_sample_3d_empty_shapes_match_torch():
    for vshape, gshape in (((0, 1, 2, 2, 2), (0, 1, 1, 1, 3)), ((1, 0, 2, 2, 2), (1, 1, 1, 1, 3)),
                           ((1, 1, 2, 2, 2), (1, 0, 1, 1, 3))):
        t = torch.nn.functional.grid_sample(torch.zeros(vshape), torch.zeros(gshape), align_corners=False)
        e = ember.nn.functional.grid_sample(ember.zeros(vshape), ember.zeros(gshape), align_corners=False)
        assert tuple(e.shape) == tuple(t.shape)


@pytest.mark.parametrize('vshape, gshape, kw', [
    ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), dict(mode='bicubic')),
    ((1, 1, 2, 2, 2), (1, 1, 1, 1, 2), {}),
    ((1, 1, 2, 2, 2), (1, 1, 1, 3), {}),
    ((1, 1, 2, 2), (1, 1, 1, 1, 3), {}),
    ((2, 1, 2, 2, 2), (1, 1, 1, 1, 3), {}),
    ((1, 1, 0, 2, 2), (1, 1, 1, 1, 3), {}),
    ((1, 1, 2, 2, 2, 2), (1, 1, 1, 1, 1, 4), {}),
])
def test_grid_sample_3d_errors_match_torch(vshape, gshape, kw):
    with pytest.raises(RuntimeError) as t:
        torch.nn.functional.grid_sample(torch.zeros(vshape), torch.zeros(gshape), align_corners=False, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(RuntimeError) as e:
            ember.nn.functional.grid_sample(ember.zeros(vshape), ember.zeros(gshape), align_corners=False, **kw)
    assert str(e.value) == str(t.value)
