"""NOTE [channels_last outputs]: convolutions, batch/group norm, pooling, upsampling and padding lay their results out
in the memory format their input (a convolution: or its weight) suggests, as torch's CPU kernels do, so a network
fed permuted NHWC images runs channels_last, and seeded draws over its activations (dropout) fall as torch's."""
import numpy as np
import pytest
import torch

import ember


def _layouts(lib, dtype_name):
    F = lib.nn.functional
    dt = getattr(lib, dtype_name)
    lib.manual_seed(0)
    x = lib.randn(2, 5, 6, 4, dtype=dt).permute(0, 3, 1, 2)          # NHWC data seen as NCHW: channels_last
    x5 = lib.randn(2, 3, 4, 5, 4, dtype=dt).to(memory_format=lib.channels_last_3d)
    w = lib.randn(6, 4, 3, 3, dtype=dt)
    bn_stats = (lib.zeros(4, dtype=dt), lib.ones(4, dtype=dt))
    cases = {
        'conv2d': lambda: F.conv2d(x, w, padding=1),
        'conv2d weight channels_last': lambda: F.conv2d(x.contiguous(), w.to(memory_format=lib.channels_last)),
        'conv2d groups': lambda: F.conv2d(x, lib.randn(8, 1, 3, 3, dtype=dt), groups=4),
        'conv2d 1x1': lambda: F.conv2d(x, lib.randn(3, 4, 1, 1, dtype=dt)),
        'conv_transpose2d': lambda: F.conv_transpose2d(x, lib.randn(4, 3, 3, 3, dtype=dt), stride=2),
        'conv3d': lambda: F.conv3d(x5, lib.randn(2, 3, 2, 2, 2, dtype=dt)),
        'conv1d': lambda: F.conv1d(x[:, :, 0], lib.randn(3, 4, 2, dtype=dt)),
        'contiguous conv2d': lambda: F.conv2d(x.contiguous(), w),
        'batch_norm': lambda: F.batch_norm(x, None, None, training=True),
        'batch_norm eval': lambda: F.batch_norm(x, *bn_stats),
        'batch_norm 3d': lambda: F.batch_norm(x5, None, None, training=True),
        'group_norm': lambda: F.group_norm(x, 2),
        'layer_norm': lambda: F.layer_norm(x, (6,)),
        'instance_norm': lambda: F.instance_norm(x),
        'max_pool2d': lambda: F.max_pool2d(x, 2),
        'max_pool2d indices': lambda: F.max_pool2d(x, 2, return_indices=True)[1],
        'max_pool3d': lambda: F.max_pool3d(x5, 2),
        'avg_pool2d': lambda: F.avg_pool2d(x, 3, 1, 1),
        'avg_pool3d': lambda: F.avg_pool3d(x5, 2),
        'adaptive_avg_pool2d': lambda: F.adaptive_avg_pool2d(x, 3),
        'adaptive_avg_pool3d': lambda: F.adaptive_avg_pool3d(x5, 2),
        'adaptive_max_pool2d': lambda: F.adaptive_max_pool2d(x, 3, return_indices=True)[0],
        'adaptive_max_pool2d indices': lambda: F.adaptive_max_pool2d(x, 3, return_indices=True)[1],
        'interpolate nearest': lambda: F.interpolate(x, scale_factor=2),
        'interpolate bilinear': lambda: F.interpolate(x, scale_factor=2, mode='bilinear'),
        'interpolate bicubic': lambda: F.interpolate(x, size=(4, 7), mode='bicubic'),
        'interpolate trilinear': lambda: F.interpolate(x5, scale_factor=2, mode='trilinear'),
        'pad constant': lambda: F.pad(x, (1, 1, 1, 1)),
        'pad reflect': lambda: F.pad(x, (1, 1, 1, 1), mode='reflect'),
        'pad replicate': lambda: F.pad(x, (1, 1, 1, 1), mode='replicate'),
        'dropout after conv': lambda: F.dropout(F.conv2d(x, w), 0.5),
    }
    out = {}
    for name, f in cases.items():
        r = f()
        out[name] = (tuple(r.shape), r.stride())
    return out


@pytest.mark.parametrize('dtype_name', ['float32', 'float64'])
def test_layouts_match_torch(dtype_name):
    got, want = _layouts(ember, dtype_name), _layouts(torch, dtype_name)
    assert got == want


def _grad_layouts(lib):
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(2, 5, 6, 4).permute(0, 3, 1, 2).requires_grad_()
    out = {}
    for name, f in {'max_pool2d': lambda t: F.max_pool2d(t, 2), 'avg_pool2d': lambda t: F.avg_pool2d(t, 2),
                    'adaptive_avg_pool2d': lambda t: F.adaptive_avg_pool2d(t, 3),
                    'adaptive_max_pool2d': lambda t: F.adaptive_max_pool2d(t, 3),
                    'batch_norm': lambda t: F.batch_norm(t, None, None, training=True),
                    'conv2d squared': lambda t: F.conv2d(t, lib.ones(3, 4, 3, 3)).square()}.items():
        g, = lib.autograd.grad(f(x).square().sum(), x)
        out[name] = g.stride()
    return out


def test_input_gradients_take_the_input_layout():
    assert _grad_layouts(ember) == _grad_layouts(torch)


def _dropout_after_permuted_conv(lib):
    lib.manual_seed(0)
    x = lib.randn(2, 5, 6, 3).permute(0, 3, 1, 2)
    conv = lib.nn.Conv2d(3, 4, 3, padding=1)
    lib.manual_seed(1)
    return lib.nn.functional.dropout(conv(x), 0.5).detach().numpy()


def test_seeded_dropout_over_a_channels_last_activation_draws_torchs_mask():
    import numpy as np
    got, want = _dropout_after_permuted_conv(ember), _dropout_after_permuted_conv(torch)
    assert np.array_equal(got == 0, want == 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_is_contiguous_in_a_format_of_another_rank_is_false():
    for lib in (ember, torch):
        assert lib.zeros(2, 3, 4).is_contiguous(memory_format=lib.channels_last) is False
        assert lib.zeros(2, 3, 4, 5).is_contiguous(memory_format=lib.channels_last_3d) is False


def test_suggest_memory_format():
    from ember._prims_common import suggest_memory_format
    assert suggest_memory_format(ember.zeros(2, 5, 6, 3).permute(0, 3, 1, 2)) == ember.channels_last
    assert suggest_memory_format(ember.zeros(2, 3, 5, 6)) == ember.contiguous_format
    assert suggest_memory_format(ember.zeros(2, 3, 4, 5, 6).to(memory_format=ember.channels_last_3d)) == \
        ember.channels_last_3d


@pytest.mark.parametrize('dtype_name', ['bfloat16', 'float16'])
def test_max_pools_of_half_floats(dtype_name):
    import numpy as np
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32) * 10
    for lib in (ember, torch):
        t = lib.from_numpy(x).to(getattr(lib, dtype_name))
        F = lib.nn.functional
        r = [F.max_pool2d(t, 2, padding=1), F.adaptive_max_pool2d(t, 3)]
        if lib is ember:
            got = [v.float().numpy() for v in r]
        else:
            want = [v.float().numpy() for v in r]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_adaptive_max_pool2d_refuses_integers_as_torch():
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError, match="\"adaptive_max_pool2d\" not implemented for 'Long'"):
            lib.nn.functional.adaptive_max_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.int64), 2)


def test_pow_backward_rounds_as_torch():
    """torch's pow_backward multiplies grad by (exponent * self ** (exponent - 1)), in that order."""
    import numpy as np
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(10000).astype(np.float32), rng.standard_normal(10000).astype(np.float32)
    res = []
    for lib in (ember, torch):
        t = lib.from_numpy(x).requires_grad_()
        res.append([lib.autograd.grad(t.pow(e), t, lib.from_numpy(g))[0].numpy() for e in (2, 3)])
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('case', [(2, 4, 7, 6, 5, 3, 1, 1, 1, True, 'float32'), (3, 3, 9, 9, 8, 3, 2, 0, 1, False, 'float32'),
                                  (1, 6, 5, 5, 4, 1, 1, 0, 1, True, 'float32'), (2, 5, 8, 7, 3, 3, 1, 2, 2, True, 'float64')])
def test_channels_last_convolution_values_and_gradients(case):
    """A channels-last input runs ember's channels-last kernel (the result is a view of its GEMM): values, layout
    and gradients as torch's."""
    N, C, H, W, O, k, st, pad, dil, bias, dt = case
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((N, H, W, C)).astype(dt)
    ws = rng.standard_normal((O, C, k, k)).astype(dt)
    bs = rng.standard_normal(O).astype(dt)
    res = []
    for lib in (ember, torch):
        x = lib.from_numpy(xs).permute(0, 3, 1, 2).requires_grad_()
        w = lib.from_numpy(ws).requires_grad_()
        y = lib.nn.functional.conv2d(x, w, lib.from_numpy(bs) if bias else None, stride=st, padding=pad, dilation=dil)
        y.square().sum().backward()
        res.append((y.detach().numpy(), y.stride(), x.grad.numpy(), w.grad.numpy()))
    (ye, se, gxe, gwe), (yt, st_, gxt, gwt) = res
    assert se == st_
    tol = 1e-4 if dt == 'float32' else 1e-10
    np.testing.assert_allclose(ye, yt, rtol=tol, atol=tol)
    np.testing.assert_allclose(gxe, gxt, rtol=tol, atol=tol)
    np.testing.assert_allclose(gwe, gwt, rtol=tol, atol=tol)
