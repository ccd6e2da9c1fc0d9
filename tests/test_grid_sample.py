"""F.affine_grid and F.grid_sample against torch: values and the gradients to the input, the grid and theta,
for every mode (bicubic: tests/test_grid_sample_bicubic.py), padding mode and align_corners; the warnings and
errors torch gives."""
import warnings

import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('align_corners', [False, True])
def test_grid_sample_matches_torch(mode, padding_mode, align_corners):
    rng = np.random.default_rng(0)
    img = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    grid = rng.random((2, 4, 6, 2)).astype(np.float32) * 2.6 - 1.3     # inside and outside [-1, 1]
    grid[0, 0, 0] = [0.0, 0.0]
    outs = []
    for lib in (torch, ember):
        x, g = lib.tensor(img, requires_grad=True), lib.tensor(grid, requires_grad=True)
        o = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        (o * lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape).sin()).sum().backward()
        outs.append((o.detach().numpy(), x.grad.numpy(), g.grad.numpy()))
    for t, e in zip(*outs):
        np.testing.assert_allclose(e, t, atol=2e-5)


@pytest.mark.parametrize('align_corners', [False, True])
def test_affine_grid_and_a_spatial_transformer_match_torch(align_corners):
    rng = np.random.default_rng(1)
    theta = (np.eye(2, 3)[None] + rng.standard_normal((2, 2, 3)) * 0.2).astype(np.float32)
    img = rng.standard_normal((2, 1, 6, 6)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        th = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(th, (2, 1, 6, 6), align_corners=align_corners)
        out = lib.nn.functional.grid_sample(lib.tensor(img), grid, align_corners=align_corners)
        out.pow(2).sum().backward()
        outs.append((grid.detach().numpy(), out.detach().numpy(), th.grad.numpy()))
    for t, e in zip(*outs):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)


def test_grid_sample_warnings_and_errors():
    F = ember.nn.functional
    with pytest.warns(UserWarning, match='align_corners=False since 1.3.0'):
        F.grid_sample(ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2))
    with pytest.warns(UserWarning, match='align_corners=False since 1.3.0'):
        F.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or 'reflection'"):
            F.grid_sample(ember.zeros(1, 1, 2, 2), ember.zeros(1, 1, 1, 2), padding_mode='wrap')
        with pytest.raises(ValueError, match='Expected a batch of 2D affine matrices of shape Nx2x3'):
            F.affine_grid(ember.zeros(1, 3, 3), (1, 1, 2, 2))


@pytest.mark.parametrize('size', [(2, 1, 1, 4), (1, 2, 3, 1), (1, 2, 1, 1, 3), (2, 1, 3, 4, 5), (1, 1, 11, 11)])
@pytest.mark.parametrize('align_corners', [False, True])
def test_affine_grid_unit_sizes_and_warning_match_torch(size, align_corners):
    # a unit-size dim samples its centre, 0 (torch's linspace_from_neg_one), not -1; align_corners warns there
    rng = np.random.default_rng(1)
    th = rng.standard_normal((size[0], len(size) - 2, len(size) - 1))
    got = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            g = lib.nn.functional.affine_grid(lib.tensor(th), size, align_corners=align_corners)
        got.append((g.numpy(), [str(x.message) for x in w]))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12, atol=1e-12)
    assert got[1][0].shape == got[0][0].shape and got[1][1] == got[0][1]
