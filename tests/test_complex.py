"""Complex tensors from the user's side: the dtype-reinterpreting views (NOTE [complex views]), complex()
and polar(), complex sampling, and training a model with complex parameters, against torch."""
import numpy as np
import pytest
import torch

import ember


def _pair(fn):
    return fn(torch), fn(ember)


def _close(e, t, **kw):
    np.testing.assert_allclose(np.asarray(e.detach()._a) if isinstance(e, ember.Tensor) else e,
                               t.detach().numpy(), **kw)


def test_real_imag_views_share_storage_and_geometry():
    for lib in (torch, ember):
        z = lib.tensor([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]])
        r, i = z.real, z.imag
        assert r.stride() == (4, 2) and i.stride() == (4, 2) and i.storage_offset() == 1
        r[0, 0] = 7.0
        i[1, 1] = -5.0
        assert complex(z[0, 0]) == 7 + 2j and complex(z[1, 1]) == -2 - 5j
        v = lib.view_as_real(z[1:])
        assert tuple(v.shape) == (1, 2, 2) and v.storage_offset() == 4 and v.stride() == (4, 2, 1)
        c = lib.view_as_complex(lib.arange(8.).reshape(2, 2, 2))
        assert c.dtype == lib.complex64 and complex(c[1, 0]) == 4 + 5j


@pytest.mark.parametrize('make,err', [
    (lambda lib: lib.view_as_complex(lib.zeros(3, 3)), 'last dimension of size 2'),
    (lambda lib: lib.view_as_complex(lib.zeros(2, 4)[:, ::2]), 'stride 1'),
    (lambda lib: lib.view_as_complex(lib.zeros(4, 2).t().contiguous().t()), 'stride 1'),
    (lambda lib: lib.view_as_real(lib.zeros(3)), 'complex'),
    (lambda lib: lib.complex(lib.zeros(2), lib.zeros(2, dtype=lib.float64)), 'scalar type Float but got scalar type Double'),
    (lambda lib: lib.complex(lib.zeros(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)), 'Half, Float or Double'),
])
def test_complex_construction_errors(make, err):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=err):
            make(lib)


def test_complex_and_polar_values_and_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.1, 2, (3, 4)), rng.uniform(-3, 3, (4,))
    w = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    res = {}
    for lib in (torch, ember):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        z = lib.complex(x, y) * lib.polar(x, y)
        loss = (z * lib.tensor(w)).abs().sum() + z.angle().sum() + lib.view_as_real(z).pow(2).sum()
        loss.backward()
        res[lib] = (z, x.grad, y.grad)
    for e, t in zip(res[ember], res[torch]):
        _close(e, t, rtol=1e-10)


def test_complex_sampling_matches_torch_moments():
    z = ember.randn(200000, dtype=ember.complex64)
    assert z.dtype == ember.complex64
    assert abs(float(z.real.var()) - 0.5) < 0.01 and abs(float(z.imag.var()) - 0.5) < 0.01
    u = ember.empty(100000, dtype=ember.complex128).uniform_(2, 3)
    assert 2 <= float(u.real.min()) and float(u.imag.max()) <= 3 and float(u.imag.min()) >= 2
    n = ember.empty(100000, dtype=ember.complex128).normal_(1, 2)
    assert abs(float(n.real.mean()) - 1) < 0.03 and abs(float(n.imag.mean()) - 1) < 0.03
    assert abs(float(n.real.var()) - 2) < 0.05       # std / sqrt 2 per part, as torch


def _inplace_complex_view_cases(lib):
    """In-place writes through .real/.imag/view_as_real/view_as_complex while autograd records (neuraloperator's
    ``out_fft[..., 0].imag.zero_()``): the base's history is rebased (CopySlices) in real units."""
    g = lib.Generator().manual_seed(0)
    w = lib.randn(3, 4, dtype=lib.cdouble, generator=g).requires_grad_()
    r = lib.randn(3, 4, 2, dtype=lib.double, generator=g).requires_grad_()
    s = lib.randn(4, dtype=lib.double, generator=g).requires_grad_()
    grad = lambda y, x, **kw: lib.autograd.grad(y, x, **kw)[0]
    out = {}
    x = w * 1
    v = x.real
    v.mul_(3)
    out['real'] = (x.grad_fn.name(), v.grad_fn.name(), grad((x.abs() ** 2).sum(), w))
    x = r * 1
    c = lib.view_as_complex(x)
    c.mul_(2 + 1j)
    out['as_complex'] = (x.grad_fn.name(), c.grad_fn.name(), grad(x.pow(2).sum(), r))
    x = w * 1
    v = x.imag
    x.mul_(2)           # the view is regenerated from its base's new history
    out['stale'] = (v.grad_fn.name(), grad(v.sum(), w))
    x = w * 1
    x[..., 0].imag.zero_()
    x.imag[1:].mul_(x.real[1:].detach() + 1)
    x.real[:, 1] += x.imag[:, 2]
    gw = grad((x.abs() ** 3).sum(), w, create_graph=True)
    out['chain'] = (gw, grad(gw.abs().sum(), w))
    x = lib.zeros(3, 4, dtype=lib.cdouble)
    x[1].real.copy_(s)
    out['copy'] = (x.grad_fn.name(), grad((x * (2 + 1j)).abs().sum(), s))
    x = (w * 1).t()
    lib.view_as_real(x)[1, :, 0] = 5.0
    out['setitem'] = grad(x.abs().sum(), w)
    return out


def test_inplace_on_complex_views_with_autograd_matches_torch():
    e, t = _inplace_complex_view_cases(ember), _inplace_complex_view_cases(torch)
    assert e.keys() == t.keys()
    for k in e:
        for a, b in zip(e[k] if isinstance(e[k], tuple) else (e[k],), t[k] if isinstance(t[k], tuple) else (t[k],)):
            if isinstance(a, str):
                assert a == b, k
            else:
                _close(a, b, rtol=1e-12, atol=1e-12)
    w = ember.randn(3, dtype=ember.complex64, requires_grad=True)
    with pytest.raises(RuntimeError, match='a view of a leaf Variable that requires grad'):
        w.imag.zero_()


@pytest.mark.parametrize('opt', ['Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adamax', 'SGD'])
def test_training_with_complex_parameters_matches_torch(opt):
    """A complex linear layer fitted by each optimizer (torch's update a complex parameter through
    view_as_real, so Adam's squares are per part)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((16, 4)) + 1j * rng.standard_normal((16, 4))
    Y = rng.standard_normal((16, 2)) + 1j * rng.standard_normal((16, 2))
    W0 = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    res = {}
    for lib in (torch, ember):
        W = lib.nn.Parameter(lib.tensor(W0))
        o = getattr(lib.optim, opt)([W], lr=0.05)
        x, y = lib.tensor(X), lib.tensor(Y)
        for _ in range(20):
            o.zero_grad()
            loss = (x @ W - y).abs().pow(2).mean()
            loss.backward()
            o.step()
        res[lib] = (W, loss)
    _close(res[ember][0], res[torch][0], rtol=1e-8, atol=1e-10)
    _close(res[ember][1], res[torch][1], rtol=1e-8)
