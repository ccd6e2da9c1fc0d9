"""Optimizers and schedulers: parameter trajectories and learning-rate sequences against torch."""
import io

import numpy as np
import pytest
import torch

import ember


def _problem(lib, seed=0):
    rng = np.random.default_rng(seed)
    w = lib.from_numpy(rng.normal(size=(4, 3))).requires_grad_()
    b = lib.from_numpy(rng.normal(size=(3,))).requires_grad_()
    x = lib.from_numpy(rng.normal(size=(8, 4)))
    y = lib.from_numpy(rng.normal(size=(8, 3)))
    return [w, b], x, y


def _loss(params, x, y):
    w, b = params
    return ((x.matmul(w) + b - y) ** 2).mean() + (w * w).sum() * 0.01


OPTIMS = [
    ('SGD', dict(lr=0.1)), ('SGD', dict(lr=0.1, momentum=0.9)), ('SGD', dict(lr=0.1, momentum=0.9, nesterov=True)),
    ('SGD', dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, maximize=False)),
    ('SGD', dict(lr=0.05, momentum=0.5, maximize=True)),
    ('Adam', dict(lr=0.05)), ('Adam', dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ('Adam', dict(lr=0.05, maximize=True)), ('AdamW', dict(lr=0.05)), ('AdamW', dict(lr=0.05, amsgrad=True)),
    ('RMSprop', dict(lr=0.01)), ('RMSprop', dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ('Adagrad', dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)), ('Adamax', dict(lr=0.05)),
    ('Adamax', dict(lr=0.05, weight_decay=0.1)), ('NAdam', dict(lr=0.05)),
    ('NAdam', dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)), ('RAdam', dict(lr=0.05)),
    ('RAdam', dict(lr=0.05, weight_decay=0.1)),
    ('Adadelta', dict()), ('Adadelta', dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ('Adadelta', dict(lr=0.5, maximize=True)),
    ('Rprop', dict()), ('Rprop', dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 1))),
    ('Rprop', dict(lr=0.05, maximize=True)),
    ('ASGD', dict(lr=0.05)), ('ASGD', dict(lr=0.05, t0=4, lambd=1e-3, weight_decay=0.1)),
    ('ASGD', dict(lr=0.05, maximize=True)),
]


def _run(lib, name, kw, steps=12):
    params, x, y = _problem(lib)
    opt = getattr(lib.optim, name)(params, **kw)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(params, x, y).backward()
        opt.step()
        traj.append([p.detach().numpy().copy() for p in params])
    return traj, opt


@pytest.mark.parametrize('name,kw', OPTIMS, ids=[f'{n}-{i}' for i, (n, _) in enumerate(OPTIMS)])
def test_trajectory_matches_torch(name, kw):
    te, eo = _run(ember, name, kw)
    tt, to = _run(torch, name, kw)
    for step, (a, b) in enumerate(zip(te, tt)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=1e-9, atol=1e-10, err_msg=f'{name} step {step}')
    se, st = eo.state_dict(), to.state_dict()
    assert [sorted(g) for g in se['param_groups']] == [sorted(g) for g in st['param_groups']]
    assert set(se['state']) == set(st['state'])
    for k in st['state']:
        assert set(se['state'][k]) == set(st['state'][k])


def test_lbfgs_matches_torch():
    for ls in (None, 'strong_wolfe'):
        res = {}
        for lib in (ember, torch):
            params, x, y = _problem(lib)
            opt = lib.optim.LBFGS(params, lr=0.5, max_iter=10, history_size=5, line_search_fn=ls)

            def closure():
                opt.zero_grad()
                loss = _loss(params, x, y)
                loss.backward()
                return loss
            for _ in range(3):
                opt.step(closure)
            res[lib] = [p.detach().numpy().copy() for p in params]
        for a, b in zip(res[ember], res[torch]):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def test_state_dict_roundtrip_with_torch():
    _, eo = _run(ember, 'Adam', dict(lr=0.05), steps=3)
    buf = io.BytesIO()
    ember.save(eo.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    params, x, y = _problem(torch)
    to = torch.optim.Adam(params, lr=0.05)
    to.load_state_dict(sd)                  # torch accepts ember's layout
    assert float(to.state_dict()['state'][0]['step']) == 3.0
    buf = io.BytesIO()
    torch.save(to.state_dict(), buf)
    buf.seek(0)
    params2, _, _ = _problem(ember)
    e2 = ember.optim.Adam(params2, lr=0.05)
    e2.load_state_dict(ember.load(buf))
    np.testing.assert_allclose(e2.state[params2[0]]['exp_avg'].numpy(), eo.state[eo.param_groups[0]['params'][0]]
                               ['exp_avg'].numpy())


def test_param_groups_add_and_errors():
    w = ember.zeros(2, requires_grad=True)
    b = ember.zeros(2, requires_grad=True)
    opt = ember.optim.SGD([{'params': [w]}, {'params': [b], 'lr': 0.5}], lr=0.1, momentum=0.9)
    assert [g['lr'] for g in opt.param_groups] == [0.1, 0.5]
    with pytest.raises(ValueError, match='more than one parameter group'):
        opt.add_param_group({'params': [w]})
    with pytest.raises(ValueError, match='Invalid learning rate'):
        ember.optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match='empty parameter list'):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf"):
        ember.optim.SGD([w * 2], lr=0.1)


def test_zero_grad_and_hooks():
    w = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append('pre'))
    opt.register_step_post_hook(lambda o, a, k: calls.append('post'))
    (w * w).sum().backward()
    opt.step()
    assert calls == ['pre', 'post']
    h1.remove()
    opt.step()
    assert calls == ['pre', 'post', 'post']
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0., 0.]
    opt.zero_grad()
    assert w.grad is None


SCHEDULERS = [
    ('StepLR', dict(step_size=3, gamma=0.5)), ('MultiStepLR', dict(milestones=[2, 5, 5], gamma=0.3)),
    ('ExponentialLR', dict(gamma=0.9)), ('CosineAnnealingLR', dict(T_max=5, eta_min=0.01)),
    ('CosineAnnealingWarmRestarts', dict(T_0=3, T_mult=2, eta_min=0.001)),
    ('LinearLR', dict(start_factor=0.25, total_iters=4)), ('ConstantLR', dict(factor=0.5, total_iters=3)),
    ('PolynomialLR', dict(total_iters=6, power=2.0)),
    ('OneCycleLR', dict(max_lr=1.0, total_steps=20)),
    ('OneCycleLR', dict(max_lr=1.0, total_steps=20, anneal_strategy='linear', three_phase=True)),
    ('CyclicLR', dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ('CyclicLR', dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode='triangular2')),
    ('CyclicLR', dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode='exp_range', gamma=0.9)),
]


def _lrs(lib, name, kw, steps=18, opt_name='SGD'):
    w = lib.zeros(2, requires_grad=True)
    opt = getattr(lib.optim, opt_name)([w], lr=0.1, momentum=0.9) if opt_name == 'SGD' else \
        getattr(lib.optim, opt_name)([w], lr=0.1)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr()[0], opt.param_groups[0].get('momentum', opt.param_groups[0].get('betas'))))
    return out


@pytest.mark.parametrize('name,kw', SCHEDULERS, ids=[f'{n}-{i}' for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_matches_torch(name, kw):
    steps = 19 if name == 'OneCycleLR' else 18
    e, t = _lrs(ember, name, kw, steps), _lrs(torch, name, kw, steps)
    for i, ((le, me), (lt, mt)) in enumerate(zip(e, t)):
        assert le == pytest.approx(lt, rel=1e-10, abs=1e-12), f'{name} step {i}'
        assert me == pytest.approx(mt), f'{name} momentum step {i}'


def test_lambda_multiplicative_sequential_chained_plateau():
    def run(lib):
        w = lib.zeros(1, requires_grad=True)
        opt = lib.optim.SGD([w], lr=1.0)
        s = lib.optim.lr_scheduler
        seq = s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=3),
                                   s.ExponentialLR(opt, gamma=0.9)], milestones=[3])
        out = []
        for _ in range(8):
            opt.step()
            seq.step()
            out.append(seq.get_last_lr()[0])
        opt2 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        ch = s.ChainedScheduler([s.ConstantLR(opt2, factor=0.5, total_iters=2), s.ExponentialLR(opt2, gamma=0.9)])
        for _ in range(5):
            opt2.step()
            ch.step()
            out.append(ch.get_last_lr()[0])
        opt3 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        la = s.LambdaLR(opt3, lambda e: 1 / (e + 1))
        mu = s.MultiplicativeLR(opt3, lambda e: 0.95)
        for _ in range(4):
            opt3.step()
            la.step()
            mu.step()
            out.append(opt3.param_groups[0]['lr'])
        opt4 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        pl = s.ReduceLROnPlateau(opt4, patience=1, factor=0.5, cooldown=1)
        for m in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8]:
            pl.step(m)
            out.append(opt4.param_groups[0]['lr'])
        return out
    assert run(ember) == pytest.approx(run(torch))


def test_scheduler_state_dict():
    w = ember.zeros(1, requires_grad=True)
    opt = ember.optim.SGD([w], lr=1.0)
    s = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert sd['last_epoch'] == 3 and 'optimizer' not in sd
    s2 = ember.optim.lr_scheduler.StepLR(ember.optim.SGD([w], lr=1.0), step_size=2)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 3 and s2.get_last_lr() == s.get_last_lr()
