"""F.grid_sample(mode='bicubic') against torch's CPU kernel: values and the gradients to the input and the grid,
float32 and float64, every padding mode and align_corners, several shapes (one-pixel and one-row inputs,
non-contiguous input and grid, empty batches), grids inside and far outside [-1, 1] and on pixel centres;
5-D inputs refuse bicubic with torch's error."""
import warnings

import numpy as np
import pytest
import torch

import ember

SHAPES = [((2, 3, 5, 7), (2, 4, 6, 2)), ((1, 1, 1, 1), (1, 3, 2, 2)), ((1, 2, 1, 4), (1, 2, 5, 2)),
          ((3, 1, 4, 4), (3, 1, 9, 2))]
TOL = {'float32': dict(rtol=1e-4, atol=1e-4), 'float64': dict(rtol=1e-10, atol=1e-10)}


def _grid(shape, rng, dtype):
    g = rng.random(shape) * 3.0 - 1.5                           # inside and outside [-1, 1]
    flat = g.reshape(-1, 2)
    flat[0] = [0.0, 0.0]
    if len(flat) > 3:
        flat[1], flat[2], flat[3] = [-1.0, 1.0], [7.5, -6.25], [-1e3, 2e3]   # corners, far away
    return g.astype(dtype)


def _run(lib, img, grid, weights, permute=False, **kw):
    x, g = lib.tensor(img, requires_grad=True), lib.tensor(grid, requires_grad=True)
    xi, gi = x, g
    if permute:                                                 # non-contiguous input and grid, same values
        xi = x.transpose(2, 3).contiguous().transpose(2, 3)
        gi = g.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)
    o = lib.nn.functional.grid_sample(xi, gi, mode='bicubic', **kw)
    (o * lib.tensor(weights)).sum().backward()
    return o, o.detach().numpy(), x.grad.numpy(), g.grad.numpy()


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('align_corners', [False, True])
@pytest.mark.parametrize('shapes', SHAPES, ids=str)
def test_bicubic_values_and_gradients_match_torch(shapes, align_corners, padding_mode, dtype):
    ishape, gshape = shapes
    rng = np.random.default_rng(sum(ishape) + sum(gshape))
    img = rng.standard_normal(ishape).astype(dtype)
    grid = _grid(gshape, rng, dtype)
    weights = rng.standard_normal((ishape[0], ishape[1]) + gshape[1:3]).astype(dtype)
    kw = dict(padding_mode=padding_mode, align_corners=align_corners)
    for permute in (False, True):
        t_out, *t = _run(torch, img, grid, weights, permute, **kw)
        e_out, *e = _run(ember, img, grid, weights, permute, **kw)
        assert str(e_out.dtype).split('.')[-1] == dtype and tuple(e_out.shape) == tuple(t_out.shape)
        assert len(e) == len(t) == 3
        for a, b in zip(e, t):
            np.testing.assert_allclose(a, b, **TOL[dtype])


def test_bicubic_spatial_transformer_matches_torch():
    """The tutorial's use: an affine grid, border padding; the gradient reaches theta through the grid."""
    rng = np.random.default_rng(3)
    img = rng.random((2, 2, 6, 7)).astype(np.float32)
    theta = np.array([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]], [[1.2, -0.2, 0.1], [0.3, 0.8, -0.2]]], np.float32)
    outs = []
    for lib in (torch, ember):
        x, th = lib.tensor(img, requires_grad=True), lib.tensor(theta, requires_grad=True)
        F = lib.nn.functional
        y = F.grid_sample(x, F.affine_grid(th, x.size(), align_corners=False), mode='bicubic',
                          padding_mode='border', align_corners=False)
        y.pow(2).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy(), th.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_bicubic_interpolates_pixel_centres_exactly():
    img = ember.arange(20.).reshape(1, 1, 4, 5)
    ys, xs = ember.meshgrid(ember.linspace(-1, 1, 4), ember.linspace(-1, 1, 5), indexing='ij')
    out = ember.nn.functional.grid_sample(img, ember.stack([xs, ys], -1)[None], mode='bicubic', align_corners=True)
    np.testing.assert_allclose(out.numpy(), img.numpy(), atol=1e-5)


@pytest.mark.parametrize('ishape, gshape', [((0, 1, 2, 2), (0, 1, 1, 2)), ((1, 0, 2, 2), (1, 1, 1, 2)),
                                            ((1, 1, 2, 2), (1, 0, 3, 2))])
def test_bicubic_empty_shapes_match_torch(ishape, gshape):
    t = torch.nn.functional.grid_sample(torch.zeros(ishape), torch.zeros(gshape), mode='bicubic', align_corners=False)
    e = ember.nn.functional.grid_sample(ember.zeros(ishape), ember.zeros(gshape), mode='bicubic', align_corners=False)
    assert tuple(e.shape) == tuple(t.shape)


def test_bicubic_refuses_5d_input_as_torch():
    with pytest.raises(RuntimeError) as t:
        torch.nn.functional.grid_sample(torch.zeros(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3), mode='bicubic',
                                        align_corners=False)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(RuntimeError) as e:
            ember.nn.functional.grid_sample(ember.zeros(1, 1, 2, 2, 2), ember.zeros(1, 1, 1, 1, 3), mode='bicubic',
                                            align_corners=False)
    assert str(e.value) == str(t.value) == "grid_sampler(): bicubic interpolation only supports 4D input"
