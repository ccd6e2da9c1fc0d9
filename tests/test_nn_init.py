"""nn.init: every initialiser's distribution (mean, std, bounds) compared with torch's on the same
shapes, torch's fan computation and gains, no_grad behaviour, generator= reproducibility, errors."""
import math

import numpy as np
import pytest
import torch

import ember
from test_nn_util import e2n

TI, EI = torch.nn.init, ember.nn.init


def _stats(a):
    a = np.asarray(a, np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


CASES = [
    ('uniform_', (200, 300), {'a': -0.5, 'b': 2.0}),
    ('normal_', (200, 300), {'mean': 1.0, 'std': 3.0}),
    ('trunc_normal_', (200, 300), {'mean': 0.5, 'std': 1.0, 'a': -1.0, 'b': 1.5}),
    ('trunc_normal_', (200, 300), {'mean': 0.0, 'std': 5.0, 'a': 0.0, 'b': 0.5}),
    ('xavier_uniform_', (200, 300), {'gain': 2.0}),
    ('xavier_normal_', (64, 32, 3, 3), {}),
    ('kaiming_uniform_', (200, 300), {'a': math.sqrt(5)}),
    ('kaiming_uniform_', (64, 32, 3, 3), {'mode': 'fan_out', 'nonlinearity': 'relu'}),
    ('kaiming_normal_', (200, 300), {}),
    ('kaiming_normal_', (64, 32, 5), {'a': 0.2, 'mode': 'fan_out'}),
    ('orthogonal_', (100, 150), {'gain': 2.0}),
    ('orthogonal_', (150, 20), {}),
    ('sparse_', (300, 200), {'sparsity': 0.3, 'std': 0.5}),
]


@pytest.mark.parametrize('name,shape,kw', CASES, ids=[f'{c[0]}{c[1]}' for c in CASES])
def test_distribution_like_torch(name, shape, kw):
    e = ember.empty(shape)
    t = torch.empty(shape)
    re = getattr(EI, name)(e, **kw)
    getattr(TI, name)(t, **kw)
    assert re is e
    em, es, emin, emax = _stats(e2n(e))
    tm, ts, tmin, tmax = _stats(t.numpy())
    n = e.numel()
    assert abs(em - tm) < 6 * ts / math.sqrt(n) + 1e-9, (em, tm)
    # two independent sample stds differ by about ts / sqrt(n) (one standard error): 6 of them, as for the means
    # (a fixed 3% was a 3-sigma bound at n = 10240 and failed about one run in 300)
    assert abs(es - ts) < 6 * ts / math.sqrt(n), (es, ts)
    span = tmax - tmin
    if name in ('uniform_', 'trunc_normal_', 'xavier_uniform_', 'kaiming_uniform_'):
        assert tmin - 0.01 * span <= emin and emax <= tmax + 0.01 * span
    if name == 'sparse_':
        zeros = (e2n(e) == 0).sum(0)
        k = math.ceil(0.3 * 300)        # per column; a normal draw may itself be 0.0 in float32 (rarely)
        assert np.all(zeros >= k) and zeros.mean() < k + 0.1


def test_orthogonal_is_orthogonal():
    w = EI.orthogonal_(ember.empty(6, 10))
    a = e2n(w)
    np.testing.assert_allclose(a @ a.T, np.eye(6), atol=1e-5)
    w = EI.orthogonal_(ember.empty(4, 2, 3), gain=3.0)
    a = e2n(w).reshape(4, 6)
    np.testing.assert_allclose(a @ a.T, 9 * np.eye(4), atol=1e-4)


def test_constant_family_and_identity():
    for name, args in [('constant_', (0.3,)), ('ones_', ()), ('zeros_', ()), ('eye_', ())]:
        e, t = ember.empty(3, 4), torch.empty(3, 4)
        getattr(EI, name)(e, *args)
        getattr(TI, name)(t, *args)
        np.testing.assert_array_equal(e2n(e), t.numpy())
    for shape, groups in [((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((2, 4, 3, 3, 3), 1)]:
        e, t = ember.empty(shape), torch.empty(shape)
        EI.dirac_(e, groups)
        TI.dirac_(t, groups)
        np.testing.assert_array_equal(e2n(e), t.numpy())


def test_in_place_on_parameters_without_recording():
    p = ember.nn.Parameter(ember.empty(3, 4))
    for fn in (EI.uniform_, EI.normal_, EI.xavier_uniform_, EI.kaiming_normal_, EI.zeros_, EI.trunc_normal_):
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad


def test_generator_reproducible():
    for fn in (EI.uniform_, EI.normal_, EI.xavier_normal_, EI.kaiming_uniform_, EI.trunc_normal_, EI.orthogonal_):
        a = fn(ember.empty(5, 6), generator=ember.Generator().manual_seed(3))
        b = fn(ember.empty(5, 6), generator=ember.Generator().manual_seed(3))
        np.testing.assert_array_equal(e2n(a), e2n(b))


@pytest.mark.parametrize('nl,param', [('linear', None), ('conv2d', None), ('sigmoid', None), ('tanh', None),
                                      ('relu', None), ('leaky_relu', None), ('leaky_relu', 0.3), ('selu', None),
                                      ('conv_transpose3d', None)])
def test_calculate_gain(nl, param):
    assert EI.calculate_gain(nl, param) == TI.calculate_gain(nl, param)


def test_fans_and_errors_like_torch():
    for shape in [(3, 4), (8, 3, 5), (8, 3, 5, 2)]:
        assert EI._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
            TI._calculate_fan_in_and_fan_out(torch.empty(shape))
    cases = [('xavier_uniform_', (5,), {}), ('kaiming_uniform_', (3, 4), {'mode': 'fan_avg'}),
             ('calculate_gain', None, {'nonlinearity': 'swish'}), ('eye_', (2, 2, 2), {}), ('dirac_', (2, 2), {}),
             ('orthogonal_', (3,), {}), ('sparse_', (2, 2, 2), {'sparsity': 0.1})]
    for name, shape, kw in cases:
        targs = () if shape is None else (torch.empty(shape),)
        eargs = () if shape is None else (ember.empty(shape),)
        with pytest.raises(ValueError) as te:
            getattr(TI, name)(*targs, **kw)
        with pytest.raises(ValueError) as ee:
            getattr(EI, name)(*eargs, **kw)
        assert str(ee.value) == str(te.value)
    with pytest.warns(UserWarning, match='zero-element'):
        EI.kaiming_uniform_(ember.empty(0, 3))
    with pytest.warns(FutureWarning):
        EI.normal(ember.empty(2))
