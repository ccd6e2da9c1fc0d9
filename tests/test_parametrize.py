"""ember.nn.utils.parametrize and parametrizations.weight_norm against torch's: the same module classes and
state_dict keys, values and gradients through the parametrization, right_inverse at registration and on
assignment (the original keeps its identity), several parametrizations on one name, caching, removal, the
errors of unsafe parametrizations, and checkpoints loading both ways."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import parametrize as P
import torch.nn.utils.parametrize as TP


def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(lib, k):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * k

        def right_inverse(self, y):
            return y / k
    return Scale()


def _pair(seed=0):
    em, tm = ember.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    w = np.random.default_rng(seed).standard_normal((4, 4)).astype(np.float32)
    b = np.random.default_rng(seed + 1).standard_normal(4).astype(np.float32)
    em.load_state_dict({'weight': ember.from_numpy(w.copy()), 'bias': ember.from_numpy(b.copy())})
    tm.load_state_dict({'weight': torch.from_numpy(w.copy()), 'bias': torch.from_numpy(b.copy())})
    return em, tm


def test_register_values_gradients_state_dict_and_class():
    em, tm = _pair()
    e_orig = em.weight
    P.register_parametrization(em, 'weight', _sym(ember))
    TP.register_parametrization(tm, 'weight', _sym(torch))
    assert type(em).__name__ == type(tm).__name__ == 'ParametrizedLinear'
    assert isinstance(em, ember.nn.Linear) and P.type_before_parametrizations(em) is ember.nn.Linear
    assert list(em.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert em.parametrizations.weight.original is e_orig          # right_inverse ran in place
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    em(ember.from_numpy(x)).pow(2).sum().backward()
    tm(torch.from_numpy(x)).pow(2).sum().backward()
    np.testing.assert_allclose(em.parametrizations.weight.original.grad.numpy(),
                               tm.parametrizations.weight.original.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert P.is_parametrized(em) and P.is_parametrized(em, 'weight') and not P.is_parametrized(em, 'bias')


def test_assignment_chains_caching_and_removal():
    em, tm = _pair(1)
    for lib, m, reg in ((ember, em, P.register_parametrization), (torch, tm, TP.register_parametrization)):
        reg(m, 'weight', _sym(lib))
        reg(m, 'weight', _scale(lib, 2.0))                    # applied after the first one
        with lib.no_grad():
            m.weight = lib.eye(4) * 3                           # right_inverse, last to first
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(em.parametrizations.weight.original.detach().numpy(),
                               tm.parametrizations.weight.original.detach().numpy(), rtol=1e-6)
    calls = []
    em.parametrizations.weight[1].register_forward_hook(lambda *a: calls.append(1))
    with P.cached():
        a, b = em.weight, em.weight
    assert a is b and len(calls) == 1
    em.weight
    assert len(calls) == 2                                      # the cache ends with the block
    value = em.weight.detach().numpy()
    P.remove_parametrizations(em, 'weight')
    TP.remove_parametrizations(tm, 'weight')
    assert type(em) is ember.nn.Linear and not hasattr(em, 'parametrizations')
    assert list(em.state_dict()) == list(tm.state_dict()) == ['bias', 'weight']
    np.testing.assert_allclose(em.weight.detach().numpy(), value)
    assert isinstance(em.weight, ember.nn.Parameter)


def test_remove_without_leaving_the_value_and_buffers():
    m = ember.nn.BatchNorm1d(3)
    P.register_parametrization(m, 'running_var', _scale(ember, 2.0))
    assert 'parametrizations.running_var.original' in m.state_dict()
    assert [n for n, _ in m.named_buffers()][:1] == ['running_mean']
    np.testing.assert_allclose(m.running_var.numpy(), np.ones(3))        # original = 1/2 after right_inverse
    P.remove_parametrizations(m, 'running_var', leave_parametrized=False)
    np.testing.assert_allclose(m.running_var.numpy(), np.full(3, 0.5))
    assert 'running_var' in dict(m.named_buffers())


def test_errors_as_torch():
    class Shrink(ember.nn.Module):
        def forward(self, x):
            return x[:2]
    m = ember.nn.Linear(3, 3)
    with pytest.raises(ValueError, match='may not change the shape'):
        P.register_parametrization(m, 'weight', Shrink())
    assert type(m) is ember.nn.Linear and 'weight' in m._parameters          # nothing half-done
    P.register_parametrization(m, 'weight', Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (2, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(ember.nn.Linear(2, 2), 'nope', Shrink())
    with pytest.raises(ValueError, match='does not have a parametrization on'):
        P.remove_parametrizations(ember.nn.Linear(2, 2), 'weight')
    with pytest.raises(RuntimeError, match='does not implement right_inverse'):
        with ember.no_grad():
            m.weight = ember.zeros(2, 3)
    with pytest.raises(RuntimeError, match='only supported through state_dict'):
        pickle.dumps(m)
    c = copy.deepcopy(m)
    assert type(c).__name__ == 'ParametrizedLinear' and c.parametrizations.weight.original is not \
        m.parametrizations.weight.original


@pytest.mark.parametrize('dim', [0, 1, None])
def test_weight_norm_matches_torch_and_loads_old_checkpoints(dim):
    from ember.nn.utils.parametrizations import weight_norm
    em, tm = _pair(2)
    weight_norm(em, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(em.state_dict()[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-7)
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    em(ember.from_numpy(x)).tanh().sum().backward()
    tm(torch.from_numpy(x)).tanh().sum().backward()
    for i in (0, 1):
        np.testing.assert_allclose(getattr(em.parametrizations.weight, f'original{i}').grad.numpy(),
                                   getattr(tm.parametrizations.weight, f'original{i}').grad.numpy(),
                                   rtol=1e-5, atol=1e-6)
    # torch's own state dict loads into ember's module, and the older weight_g / weight_v layout too
    em2 = weight_norm(ember.nn.Linear(4, 4), dim=dim)
    em2.load_state_dict({k: ember.from_numpy(v.numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(em2.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    old = {'weight_g': tm.parametrizations.weight.original0.detach().numpy() * 2,
           'weight_v': tm.parametrizations.weight.original1.detach().numpy(), 'bias': tm.bias.detach().numpy()}
    em2.load_state_dict({k: ember.from_numpy(np.asarray(v)) for k, v in old.items()})
    np.testing.assert_allclose(em2.weight.detach().numpy(), tm.weight.detach().numpy() * 2, rtol=1e-6)


def test_optimizer_built_before_registration_still_trains_the_original():
    m = ember.nn.Linear(3, 3)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    P.register_parametrization(m, 'weight', _sym(ember))
    before = m.parametrizations.weight.original.detach().clone()
    m(ember.ones(2, 3)).sum().backward()
    opt.step()
    assert not np.allclose(m.parametrizations.weight.original.detach().numpy(), before.numpy())
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)


@pytest.mark.parametrize('make, shape', [('Linear', (4, 6)), ('Conv2d', (3, 2, 3, 3)), ('ConvTranspose2d', (2, 3, 3, 3))])
def test_spectral_norm_matches_torch(make, shape):
    """parametrizations.spectral_norm: the same buffers and keys as torch's; with u, v and the weight set equal,
    the weight, one training step of power iteration (buffers updated in place) and eval mode (none) agree,
    and so do the gradients."""
    from ember.nn.utils.parametrizations import spectral_norm
    args = {'Linear': (6, 4), 'Conv2d': (2, 3, 3), 'ConvTranspose2d': (2, 3, 3)}[make]
    em, tm = getattr(ember.nn, make)(*args), getattr(torch.nn, make)(*args)
    w = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with ember.no_grad():
        em.weight.copy_(ember.from_numpy(w))
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(w))
        tm.bias.copy_(torch.from_numpy(em.bias.detach().numpy()))
    spectral_norm(em)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    for b in ('_u', '_v'):      # torch's random start, then both run the same iterations
        getattr(em.parametrizations.weight[0], b).copy_(ember.from_numpy(
            getattr(tm.parametrizations.weight[0], b).numpy()))
    x = np.random.default_rng(1).standard_normal((2,) + ((6,) if make == 'Linear' else (2, 5, 5))).astype(np.float32)
    for mode in ('train', 'eval'):
        getattr(em, mode)()
        getattr(tm, mode)()
        ew, tw = em.weight, tm.weight
        np.testing.assert_allclose(ew.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
        for b in ('_u', '_v'):
            np.testing.assert_allclose(getattr(em.parametrizations.weight[0], b).numpy(),
                                       getattr(tm.parametrizations.weight[0], b).numpy(), rtol=1e-5, atol=1e-6)
    em.train()
    tm.train()
    em(ember.from_numpy(x)).pow(2).sum().backward()
    tm(torch.from_numpy(x)).pow(2).sum().backward()
    np.testing.assert_allclose(em.parametrizations.weight.original.grad.numpy(),
                               tm.parametrizations.weight.original.grad.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match='has no parameter or buffer'):
        spectral_norm(ember.nn.Linear(2, 2), name='nope')


def test_hook_based_weight_norm_and_spectral_norm_as_torch():
    """The older nn.utils.weight_norm / spectral_norm (forward pre-hooks): torch's parameter and buffer
    names, the weight recomputed before each call (power iteration v then u, in training mode only), gradients,
    removal to a plain parameter, and the errors."""
    x = np.random.default_rng(2).standard_normal((2, 3, 9)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((4, 3, 3)).astype(np.float32)
    mods = {}
    for lib in (ember, torch):
        m = lib.nn.Conv1d(3, 4, 3)
        with lib.no_grad():
            m.weight.copy_(lib.from_numpy(w.copy()))
            m.bias.zero_()
        with pytest.warns(FutureWarning, match='deprecated'):
            lib.nn.utils.weight_norm(m)
        mods[lib] = m
    em, tm = mods[ember], mods[torch]
    assert list(em.state_dict()) == list(tm.state_dict()) == ['bias', 'weight_g', 'weight_v']
    em(ember.from_numpy(x)).pow(2).sum().backward()
    tm(torch.from_numpy(x)).pow(2).sum().backward()
    for n in ('weight_g', 'weight_v'):
        np.testing.assert_allclose(getattr(em, n).grad.numpy(), getattr(tm, n).grad.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match='Cannot register two weight_norm hooks'), pytest.warns(FutureWarning):
        ember.nn.utils.weight_norm(em)
    ember.nn.utils.remove_weight_norm(em)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-6)
    assert isinstance(em.weight, ember.nn.Parameter) and not em._forward_pre_hooks
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        ember.nn.utils.remove_weight_norm(em)

    em, tm = ember.nn.Linear(5, 4), torch.nn.Linear(5, 4)
    w = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    for lib, m in ((ember, em), (torch, tm)):
        with lib.no_grad():
            m.weight.copy_(lib.from_numpy(w.copy()))
            m.bias.zero_()
        lib.nn.utils.spectral_norm(m)
    assert list(em.state_dict()) == list(tm.state_dict()) == ['bias', 'weight_orig', 'weight_u', 'weight_v']
    em.weight_u.copy_(ember.from_numpy(tm.weight_u.numpy()))
    em.weight_v.copy_(ember.from_numpy(tm.weight_v.numpy()))
    x = np.random.default_rng(5).standard_normal((3, 5)).astype(np.float32)
    for mode in ('train', 'train', 'eval'):
        getattr(em, mode)()
        getattr(tm, mode)()
        eo, to = em(ember.from_numpy(x)), tm(torch.from_numpy(x))
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(em.weight_u.numpy(), tm.weight_u.numpy(), rtol=1e-5, atol=1e-6)
    eo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(em.weight_orig.grad.numpy(), tm.weight_orig.grad.numpy(), rtol=1e-4, atol=1e-6)
    ember.nn.utils.remove_spectral_norm(em)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(em.state_dict()) == list(tm.state_dict()) == ['bias', 'weight']
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
