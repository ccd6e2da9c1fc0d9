"""Fractional max pooling (2-D and 3-D), adaptive_max_pool3d, LPPool3d, MaxUnpool3d and NLLLoss2d against torch:
values, indices and gradients bit for bit (the same window positions from the same uniform samples, and from
the same seeded stream when the module draws them), and torch's argument errors."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((2, 3, 9, 10)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 7, 8, 9)).astype(np.float32)
S2 = RNG.random((2, 3, 2)).astype(np.float32)
S3 = RNG.random((2, 3, 3)).astype(np.float32)


def _pool(lib, fn, x, *args, **kwargs):
    X = lib.tensor(x, requires_grad=True)
    out, idx = getattr(lib.nn.functional, fn)(X, *args, return_indices=True, **kwargs)
    (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return out.detach().numpy(), idx.numpy(), X.grad.numpy()


CASES = [
    ('fractional_max_pool2d', X2, (2,), {'output_size': 4, 'samples': S2}),
    ('fractional_max_pool2d', X2, (3,), {'output_ratio': (0.5, 0.7), 'samples': S2}),
    ('fractional_max_pool2d', X2, ((2, 3),), {'output_size': (5, 4), 'samples': S2}),
    ('fractional_max_pool2d', X2[0], (2,), {'output_size': (8, 1), 'samples': S2[:1]}),       # unbatched
    ('fractional_max_pool3d', X3, (2,), {'output_size': (4, 5, 3), 'samples': S3}),
    ('fractional_max_pool3d', X3, ((1, 2, 3),), {'output_ratio': (0.5, 0.5, 0.5), 'samples': S3}),
    ('adaptive_max_pool3d', X3, ((3, None, 4),), {}),
    ('adaptive_max_pool3d', X3[0], (2,), {}),
    ('adaptive_max_pool3d', X3, ((7, 3, 1),), {}),
]


@pytest.mark.parametrize('fn,x,args,kwargs', CASES, ids=[f'{c[0]}-{i}' for i, c in enumerate(CASES)])
def test_pooling_matches_torch(fn, x, args, kwargs):
    res = []
    for lib in (torch, ember):
        kw = dict(kwargs)
        if 'samples' in kw:
            kw['_random_samples'] = lib.tensor(kw.pop('samples'))
        res.append(_pool(lib, fn, x, *args, **kw))
    for name, a, b in zip(('output', 'indices', 'grad'), *res):
        np.testing.assert_array_equal(b, a, err_msg=name)


def test_seeded_modules_match_torch():
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        x = lib.arange(2 * 3 * 6 * 7, dtype=lib.float32).reshape(2, 3, 6, 7)
        m2 = lib.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
        m3 = lib.nn.FractionalMaxPool3d((2, 1, 2), output_size=(1, 2, 2))
        lp = lib.nn.LPPool3d(2, (2, 2, 1), stride=1)
        o, i = lib.nn.functional.max_pool3d(lib.randn(1, 2, 4, 4, 6), 2, return_indices=True)
        out.append([t.detach().numpy() for t in (*m2(x), m3(x.unsqueeze(0)), lp(x.unsqueeze(0)),
                                                 lib.nn.MaxUnpool3d(2)(o, i))] + [repr(m2), repr(lp)])
    for a, b in zip(*out):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(b, a, rtol=1e-6)


def test_nll_loss2d_is_nll_loss_with_torch_warning():
    lp = np.log(RNG.dirichlet(np.ones(3), (2, 4, 5)).transpose(0, 3, 1, 2)).astype(np.float32)
    tg = RNG.integers(0, 3, (2, 4, 5))
    vals = []
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match='`NLLLoss2d` has been deprecated'):
            m = lib.nn.NLLLoss2d(reduction='sum')
        vals.append(m(lib.tensor(lp), lib.tensor(tg)).item())
    assert vals[1] == pytest.approx(vals[0], rel=1e-6)


def test_errors_as_torch():
    for lib in (torch, ember):
        F = lib.nn.functional
        with pytest.raises(RuntimeError, match=r'fractional_max_pool2d\(\): pool height 3 too large relative to '
                                               r'input height 5'):
            F.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 3, output_size=4)
        with pytest.raises(RuntimeError, match=r'fractional_max_pool3d_out\(\): pool time 3 too large'):
            F.fractional_max_pool3d(lib.randn(1, 1, 5, 5, 5), 3, output_size=4)
        with pytest.raises(RuntimeError, match=r'fractional_max_pool3d_out\(\): pool height 2 too large'):
            F.fractional_max_pool3d(lib.randn(1, 1, 5, 3, 5), 2, output_size=2)
        assert F.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 3, output_size=3).shape == (1, 1, 3, 3)
        with pytest.raises(ValueError, match='fractional_max_pool2d requires specifying either an output_size or '
                                             'an output_ratio'):
            F.fractional_max_pool2d(lib.randn(1, 1, 5, 5), 3)
        with pytest.raises(ValueError, match=r'output_ratio must be between 0 and 1 \(got 1.5\)'):
            lib.nn.FractionalMaxPool2d(3, output_ratio=1.5)
        with pytest.raises(ValueError, match='only one of output_size and output_ratio may be specified'):
            lib.nn.FractionalMaxPool2d(3, output_size=2, output_ratio=0.5)
        with pytest.raises(ValueError, match='FractionalMaxPool3d requires specifying either an output size, or a '
                                             'pooling ratio'):
            lib.nn.FractionalMaxPool3d(3)
        with pytest.raises(RuntimeError, match=r'adaptive_max_pool3d\(\): Expected 4D or 5D tensor, but got: \[5, 5\]'):
            F.adaptive_max_pool3d(lib.randn(5, 5), 3)
