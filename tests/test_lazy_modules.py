"""Lazy modules (LazyLinear, LazyConv*/LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*) against torch's: the
first forward infers the sizes, the module becomes its ordinary class, seeded parameters equal torch's, an
optimizer built before the first forward trains the materialized parameters, and state dicts load into a
module that has not run yet."""
import copy

import numpy as np
import pytest
import torch

import ember

CASES = [
    ('LazyLinear', (3,), {}, (4, 5)),
    ('LazyLinear', (3,), {'bias': False}, (2, 6, 5)),
    ('LazyConv1d', (4, 3), {'padding': 1}, (2, 3, 7)),
    ('LazyConv2d', (4, 3), {'stride': 2, 'groups': 2}, (2, 6, 7, 7)),
    ('LazyConv2d', (4, 3), {}, (2, 5, 5)),                  # unbatched: in_channels from dim 0
    ('LazyConv3d', (2, 2), {'bias': False}, (1, 3, 4, 4, 4)),
    ('LazyConvTranspose1d', (4, 3), {'stride': 2}, (2, 3, 5)),
    ('LazyConvTranspose2d', (6, 3), {'groups': 3, 'output_padding': 1, 'stride': 2}, (2, 3, 4, 4)),
    ('LazyConvTranspose3d', (2, 2), {}, (1, 2, 3, 3, 3)),
    ('LazyBatchNorm1d', (), {}, (8, 3)),
    ('LazyBatchNorm2d', (), {'momentum': None}, (4, 3, 5, 5)),
    ('LazyBatchNorm3d', (), {'affine': False}, (2, 3, 2, 2, 2)),
    ('LazyBatchNorm1d', (), {'affine': False, 'track_running_stats': False}, (8, 3)),
    ('LazyInstanceNorm1d', (), {}, (2, 3, 6)),
    ('LazyInstanceNorm2d', (), {'affine': False, 'track_running_stats': False}, (2, 3, 4, 4)),
    ('LazyInstanceNorm3d', (), {}, (2, 3, 2, 3, 2)),
]


def _run(lib, name, args, kwargs, shape):
    lib.manual_seed(3)
    m = getattr(lib.nn, name)(*args, **kwargs)
    before = (type(m).__name__, repr(m), m.has_uninitialized_params(),
              sorted(k for k in m.state_dict()), [type(p).__name__ for p in m.parameters()])
    x = lib.randn(*shape)
    y = m(x)
    after = (type(m).__name__, repr(m), hasattr(m, 'has_uninitialized_params'),
             [type(p).__name__ for p in m.parameters()])
    state = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    return before, after, y.detach().numpy(), state


@pytest.mark.parametrize('name,args,kwargs,shape', CASES, ids=[f'{c[0]}-{i}' for i, c in enumerate(CASES)])
def test_first_forward_matches_torch(name, args, kwargs, shape):
    tb, ta, ty, ts = _run(torch, name, args, kwargs, shape)
    eb, ea, ey, es = _run(ember, name, args, kwargs, shape)
    assert eb == tb
    assert ea == ta
    np.testing.assert_allclose(ey, ty, rtol=1e-5, atol=1e-6)
    assert es.keys() == ts.keys()
    for k in ts:
        np.testing.assert_allclose(es[k], ts[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_uninitialized_parameter_refuses_shape():
    p = ember.nn.parameter.UninitializedParameter()
    assert repr(p) == '<UninitializedParameter>' and ember.nn.parameter.is_lazy(p)
    assert isinstance(p, ember.nn.Parameter) and p.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        p.share_memory_()
    assert p.size() == ember.Size([0])
    b = ember.nn.parameter.UninitializedBuffer()
    assert repr(b) == '<UninitializedBuffer>' and not b.requires_grad
    b.materialize((2, 3), dtype=ember.float64)
    assert type(b) is ember.Tensor and b.shape == (2, 3) and b.dtype == ember.float64


def _train(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.LazyConv2d(4, 3, padding=1), lib.nn.LazyBatchNorm2d(), lib.nn.ReLU(),
                              lib.nn.Flatten(), lib.nn.LazyLinear(5))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)     # built before the parameters exist
    x, y = lib.randn(6, 2, 5, 5), lib.randint(0, 5, (6,))
    losses = []
    for _ in range(4):
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [type(m).__name__ for m in model]


def test_training_with_optimizer_built_before_first_forward():
    tl, tn = _train(torch)
    el, en = _train(ember)
    assert en == tn == ['Conv2d', 'BatchNorm2d', 'ReLU', 'Flatten', 'Linear']
    np.testing.assert_allclose(el, tl, rtol=1e-5)
    assert el[-1] < el[0]


def test_state_dict_materializes_an_unrun_module():
    ember.manual_seed(1)
    src = ember.nn.Sequential(ember.nn.LazyLinear(3), ember.nn.LazyBatchNorm1d())
    src(ember.randn(4, 7))
    dst = ember.nn.Sequential(ember.nn.LazyLinear(3), ember.nn.LazyBatchNorm1d())
    assert dst[0].has_uninitialized_params()
    dst.load_state_dict(src.state_dict())
    assert not dst[0].has_uninitialized_params() and dst[0].weight.shape == (3, 7)
    for a, b in zip(src.state_dict().values(), dst.state_dict().values()):
        assert ember.equal(a, b)
    x = ember.randn(2, 7)
    src.eval(), dst.eval()
    assert ember.equal(src(x), dst(x))
    assert type(dst[0]).__name__ == 'Linear'      # the first forward still ends the lazy phase
    # an unrun module's state dict holds the uninitialized parameters, and loads into another unrun one
    fresh, other = ember.nn.LazyLinear(2), ember.nn.LazyLinear(2)
    other.load_state_dict(fresh.state_dict())
    assert other.has_uninitialized_params()


def test_conversions_and_copies_stay_lazy():
    m = ember.nn.LazyLinear(3).double()
    assert ember.nn.parameter.is_lazy(m.weight) and m.weight.dtype == ember.float64
    bn = ember.nn.LazyBatchNorm1d().to(ember.float64)
    assert ember.nn.parameter.is_lazy(bn.running_mean) and bn.running_mean.dtype == ember.float64
    c = copy.deepcopy(m)
    assert c.has_uninitialized_params() and c.weight is not m.weight
    assert m(ember.randn(2, 4, dtype=ember.float64)).dtype == ember.float64
    assert not ember.nn.parameter.is_lazy(m.weight) and c.has_uninitialized_params()


def test_errors_as_torch():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=r'Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d'):
            lib.nn.LazyConv2d(4, 3)(lib.randn(5, 5))
        with pytest.raises(ValueError, match='in_channels must be divisible by groups'):
            lib.nn.LazyConv2d(4, 3, groups=2)(lib.randn(1, 3, 5, 5))
        with pytest.raises(NotImplementedError, match='initialize_parameters is not implemented for Mine'):
            class Mine(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
                def forward(self, x):
                    return x
            Mine()(lib.randn(2))


def test_instance_norm_feature_check_as_torch():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(5\), but got: 3"):
            lib.nn.InstanceNorm2d(5, affine=True)(lib.randn(2, 3, 4, 4))
        with pytest.warns(UserWarning, match="input's size at dim=0 does not match num_features"):
            lib.nn.InstanceNorm1d(5)(lib.randn(3, 4))
