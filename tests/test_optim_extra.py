"""Adafactor, SparseAdam and Muon against torch: ten-step parameter trajectories on the same start values
and data, state-dict layout and round trip, and torch's errors for invalid options."""
import warnings

import numpy as np
import pytest
import torch

import ember

RTOL = 1e-6
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def _start(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) * 0.5 for s in shapes]


def _loss(lib, ps, x):
    """A small net that uses every parameter: matrices as layers, the rest as scales/shifts."""
    w1, w2 = ps[0], ps[1]
    h = lib.tanh(x @ w1.T)
    out = h @ w2.T
    for extra in ps[2:]:
        out = out + extra.sum() * 0.1
    return (out ** 2).mean()


def _run(lib, opt_cls, arrays, steps=10, kwargs=None, reload_at=None, model=False):
    """Ten steps from ``arrays``. The gradient is ``c * p + d`` (fresh ``c``, ``d`` each step), written with
    elementwise operations so both libraries get it bit for bit and only the optimizers' own arithmetic can
    differ; ``model=True`` takes it from the backward of a small net instead (float32 sums in matmuls and
    reductions then differ in their last bits between the libraries, and the optimizers amplify that)."""
    ps = [lib.nn.Parameter(lib.tensor(a.copy())) for a in arrays]
    opt = opt_cls(ps, **(kwargs or {}))
    xs = _start([(6, arrays[0].shape[1])] * steps, seed=1)
    cs = _start([a.shape for a in arrays] * steps, seed=2)
    ds = _start([a.shape for a in arrays] * steps, seed=3)
    traj = []
    for i, x in enumerate(xs):
        opt.zero_grad()
        if model:
            _loss(lib, ps, lib.tensor(x)).backward()
        else:
            for j, p in enumerate(ps):
                k = i * len(ps) + j
                p.grad = lib.tensor(cs[k]) * p.detach() + lib.tensor(ds[k])
        opt.step()
        traj.append([p.detach().numpy().copy() for p in ps])
        if reload_at == i:       # a fresh optimizer from the state dict continues the same trajectory
            sd = opt.state_dict()
            opt = opt_cls(ps, **(kwargs or {}))
            opt.load_state_dict(sd)
    return traj, opt, ps


def _assert_same(ours, theirs, rtol=RTOL):
    """Equal within ``rtol`` relative to each parameter's scale (its largest magnitude): float32 sums in
    ember's NumPy kernels are not added in torch's order, so a value near zero can differ in the last bits
    of the larger numbers it was computed from."""
    assert len(ours) == len(theirs) > 0
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert len(a) == len(b) > 0
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * np.abs(y).max(), err_msg=f"step {step}")


def _moved(traj, start):
    return any(not np.array_equal(p, s) for p, s in zip(traj[-1], start))


# --- Adafactor -----------------------------------------------------------------------

ADAFACTOR_CASES = [
    {},
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.02, beta2_decay=-0.5, eps=(1e-10, 1e-3), d=2.0, maximize=True),
    dict(lr=0.5),       # rho = 1/sqrt(t) after the first steps: the other branch of min
    dict(eps=(0.3, 1e-3)),      # eps1 large enough that both of its clamps bind
]


@pytest.mark.parametrize('kw', ADAFACTOR_CASES)
def test_adafactor_trajectory(kw):
    arrays = _start([(5, 4), (3, 5), (2, 3, 4), (5,)])      # 2-D, 3-D (batched factors) and 1-D parameters
    ours, _, _ = _run(ember, ember.optim.Adafactor, arrays, kwargs=kw)
    theirs, _, _ = _run(torch, torch.optim.Adafactor, arrays, kwargs=kw)
    assert _moved(ours, arrays)
    _assert_same(ours, theirs)


@pytest.mark.parametrize('kw', ADAFACTOR_CASES)
def test_adafactor_trajectory_through_a_model(kw):
    arrays = _start([(5, 4), (3, 5), (2, 3, 4), (5,)])
    ours, _, _ = _run(ember, ember.optim.Adafactor, arrays, kwargs=kw, model=True)
    theirs, _, _ = _run(torch, torch.optim.Adafactor, arrays, kwargs=kw, model=True)
    assert _moved(ours, arrays)
    _assert_same(ours, theirs)


def test_adafactor_state_layout_and_round_trip():
    arrays = _start([(5, 4), (3, 5), (2, 3, 4), (5,)])
    ours, opt, _ = _run(ember, ember.optim.Adafactor, arrays, kwargs=dict(lr=0.05), reload_at=4)
    theirs, topt, _ = _run(torch, torch.optim.Adafactor, arrays, kwargs=dict(lr=0.05), reload_at=4)
    _assert_same(ours, theirs)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd['param_groups'] == tsd['param_groups']
    assert sorted(sd['state']) == sorted(tsd['state']) == [0, 1, 2, 3]
    for k in tsd['state']:
        assert sorted(sd['state'][k]) == sorted(tsd['state'][k])
        for name, tv in tsd['state'][k].items():
            v = sd['state'][k][name]
            assert tuple(v.shape) == tuple(tv.shape), name
            assert str(v.dtype).split('.')[-1] == str(tv.dtype).split('.')[-1], name
            np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-8)
    assert float(sd['state'][0]['step']) == 10.0


@pytest.mark.parametrize('kw, msg', [
    (dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    (dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    (dict(eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-0.1), "weight_decay should be >= 0 but is: -0.1"),
])
def test_adafactor_invalid_options(kw, msg):
    with pytest.raises(ValueError, match=msg) as theirs:
        torch.optim.Adafactor([torch.nn.Parameter(torch.ones(2))], **kw)
    with pytest.raises(ValueError) as ours:
        ember.optim.Adafactor([ember.nn.Parameter(ember.ones(2))], **kw)
    assert str(ours.value) == str(theirs.value)


def test_adafactor_rejects_complex():
    p = ember.nn.Parameter(ember.ones(2, dtype=ember.complex64))
    p.grad = ember.ones(2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        ember.optim.Adafactor([p]).step()


# --- SparseAdam ----------------------------------------------------------------------

def _sparse_run(lib, steps=10, kwargs=None, reload_at=None, maximize=False):
    """An embedding table updated from sparse gradients (repeated indices included: coalescing matters)."""
    rng = np.random.default_rng(3)
    table = rng.standard_normal((8, 3)).astype(np.float32)
    w = lib.nn.Parameter(lib.tensor(table))
    kw = dict(lr=0.05, maximize=maximize, **(kwargs or {}))
    opt = lib.optim.SparseAdam([w], **kw)
    traj = []
    for i in range(steps):
        idx = rng.integers(0, 8, size=5)
        vals = rng.standard_normal((5, 3)).astype(np.float32)
        w.grad = lib.sparse_coo_tensor(lib.tensor(idx[None, :]), lib.tensor(vals), (8, 3))
        opt.step()
        traj.append([w.detach().numpy().copy()])
        if reload_at == i:
            sd = opt.state_dict()
            opt = lib.optim.SparseAdam([w], **kw)
            opt.load_state_dict(sd)
    return traj, opt, table


@pytest.mark.parametrize('kw', [{}, dict(maximize=True), dict(kwargs=dict(betas=(0.5, 0.9), eps=1e-3))])
def test_sparse_adam_trajectory(kw):
    ours, _, table = _sparse_run(ember, **kw)
    theirs, _, _ = _sparse_run(torch, **kw)
    assert _moved(ours, [table])
    _assert_same(ours, theirs)


def test_sparse_adam_untouched_rows_and_state():
    rng_table = _start([(6, 2)])[0]
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.tensor(rng_table.copy()))
        w.grad = lib.sparse_coo_tensor(lib.tensor([[1, 4, 1]]), lib.ones(3, 2), (6, 2))
        opt = lib.optim.SparseAdam([w], lr=0.1)
        opt.step()
        changed = (w.detach().numpy() != rng_table).any(axis=1)
        assert changed.tolist() == [False, True, False, False, True, False]
        sd = opt.state_dict()['state'][0]
        assert sd['step'] == 1 and isinstance(sd['step'], int)
    ours, _, _ = _sparse_run(ember, reload_at=3)
    theirs, _, _ = _sparse_run(torch, reload_at=3)
    _assert_same(ours, theirs)


def test_sparse_adam_errors():
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.ones(3, 2))
        w.grad = lib.ones(3, 2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam "
                                               "instead"):
            lib.optim.SparseAdam([w]).step()
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 0\]\]: SparseAdam does not support "
                                             "complex parameters"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])


@pytest.mark.parametrize('kw, msg', [
    (dict(lr=0.0), "Invalid learning rate: 0.0"),
    (dict(eps=0.0), "Invalid epsilon value: 0.0"),
    (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
])
def test_sparse_adam_invalid_options(kw, msg):
    with pytest.raises(ValueError, match=msg) as theirs:
        torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(2))], **kw)
    with pytest.raises(ValueError) as ours:
        ember.optim.SparseAdam([ember.nn.Parameter(ember.ones(2))], **kw)
    assert str(ours.value) == str(theirs.value)


# --- Muon --------------------------------------------------------------------------------

MUON_CASES = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False, weight_decay=0.0),
    dict(lr=0.01, adjust_lr_fn='match_rms_adamw', momentum=0.9),
    dict(lr=0.01, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5)),
]


@pytest.mark.parametrize('kw', MUON_CASES)
def test_muon_trajectory(kw):
    # a tall (5x4) and a wide (3x5) matrix: both branches of the transpose
    arrays = _start([(5, 4), (3, 5)])
    ours, _, _ = _run(ember, ember.optim.Muon, arrays, kwargs=kw)
    theirs, _, _ = _run(torch, torch.optim.Muon, arrays, kwargs=kw)
    assert _moved(ours, arrays)
    _assert_same(ours, theirs)


@pytest.mark.parametrize('kw', MUON_CASES)
def test_muon_trajectory_through_a_model(kw):
    # gradients from backward differ from torch's in their last float32 bits; Newton-Schulz runs in
    # bfloat16 (8 significant bits), where such a difference occasionally rounds an element the other way:
    # 1e-4 of the parameter's scale allows that and still catches a wrong coefficient, sign or lr scaling
    arrays = _start([(5, 4), (3, 5)])
    ours, _, _ = _run(ember, ember.optim.Muon, arrays, kwargs=kw, model=True)
    theirs, _, _ = _run(torch, torch.optim.Muon, arrays, kwargs=kw, model=True)
    assert _moved(ours, arrays)
    _assert_same(ours, theirs, rtol=1e-4)


def test_muon_newton_schulz_matches_torch():
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs
    from ember.optim.muon import _zeropower_via_newtonschulz as ours
    for shape in [(7, 3), (3, 7), (4, 4)]:
        g = _start([shape], seed=5)[0]
        a = ours(ember.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        b = theirs(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        assert a.dtype == ember.bfloat16 and tuple(a.shape) == shape
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())


def test_muon_state_round_trip():
    arrays = _start([(5, 4), (3, 5)])
    ours, opt, _ = _run(ember, ember.optim.Muon, arrays, kwargs=dict(lr=0.02), reload_at=4)
    theirs, topt, _ = _run(torch, torch.optim.Muon, arrays, kwargs=dict(lr=0.02), reload_at=4)
    _assert_same(ours, theirs)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd['param_groups'] == tsd['param_groups']
    assert {k: sorted(v) for k, v in sd['state'].items()} == {k: sorted(v) for k, v in tsd['state'].items()}


@pytest.mark.parametrize('kw, msg', [
    (dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    (dict(momentum=-0.5), "momentum should be >= 0 but is: -0.5"),
    (dict(weight_decay=-0.5), "weight decay should be >= 0 but is: -0.5"),
    (dict(adjust_lr_fn='bogus'), "Adjust learning rate function bogus is not supported"),
])
def test_muon_invalid_options(kw, msg):
    with pytest.raises(ValueError, match=msg) as theirs:
        torch.optim.Muon([torch.nn.Parameter(torch.ones(2, 2))], **kw)
    with pytest.raises(ValueError) as ours:
        ember.optim.Muon([ember.nn.Parameter(ember.ones(2, 2))], **kw)
    assert str(ours.value) == str(theirs.value)


def test_muon_only_2d_and_ns_checks():
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter with "
                                             r"size: \w+\.Size\(\[3\]\)") as e:
            lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2)), lib.nn.Parameter(lib.ones(3))])
        msgs.append(str(e.value).replace(lib.__name__ + '.', ''))
        w = lib.nn.Parameter(lib.ones(2, 2))
        w.grad = lib.ones(2, 2)
        with pytest.raises(ValueError, match="Number of steps must be less than 100 for computational efficiency"):
            lib.optim.Muon([w], ns_steps=100).step()
        with pytest.raises(ValueError, match="Coefficients must be a tuple of exactly 3 values"):
            lib.optim.Muon([w], ns_coefficients=(1.0, 2.0)).step()
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match="Foreach is not supported for Muon yet"):
        ember.optim.muon.muon([], [], [], foreach=True, lr=0.1, weight_decay=0, momentum=0.9, nesterov=True,
                              ns_coefficients=(1, 1, 1), ns_steps=1, eps=1e-7, adjust_lr_fn=None)


def test_muon_adjust_lr_scales_with_shape():
    from ember.optim.muon import _adjust_lr
    from torch.optim._muon import _adjust_lr as theirs
    for fn in (None, 'original', 'match_rms_adamw'):
        for shape in [(8, 2), (2, 8), (4, 4)]:
            assert _adjust_lr(0.1, fn, shape) == theirs(0.1, fn, torch.Size(shape))
    assert _adjust_lr(0.1, None, (8, 2)) == pytest.approx(0.2)


def test_exported_names():
    for name in ('Adafactor', 'SparseAdam', 'Muon'):
        assert name in ember.optim.__all__ and name in torch.optim.__all__
        assert isinstance(getattr(ember.optim, name)([ember.nn.Parameter(ember.ones(2, 2))]), ember.optim.Optimizer)
