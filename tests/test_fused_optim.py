"""The fused optimizer steps (NOTE [fused optimizer steps] in ember/_ops/optim_ops.py): ``_fused_adam_`` and
``_fused_adamw_`` against torch's, and ``Adam(fused=True)`` against ember's own single-tensor update."""
import numpy as np
import pytest
import torch

import ember


def _both(shape_list, dtype='float32', seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shape_list]
    return [torch.tensor(a) for a in arrays], [ember.tensor(a) for a in arrays]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


@pytest.mark.parametrize('name', ['_fused_adam_', '_fused_adamw_'])
@pytest.mark.parametrize('amsgrad,maximize,weight_decay', [(False, False, 0.0), (True, False, 0.01),
                                                           (False, True, 0.1)])
def test_fused_operator_matches_torch(name, amsgrad, maximize, weight_decay):
    shapes = [(3, 4), (5,), ()]
    tp, ep = _both(shapes, seed=1)
    tg, eg = _both(shapes, seed=2)
    tm, em = _both(shapes, seed=3)
    tv, ev = _both(shapes, seed=4)
    tv, ev = [t.abs() for t in tv], [t.abs() for t in ev]
    tx, ex = ([t.clone() * 2 for t in tv], [t.clone() * 2 for t in ev]) if amsgrad else ([], [])
    ts, es = [torch.tensor(3.)] * 3, [ember.tensor(3.)] * 3
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=weight_decay, eps=1e-8, amsgrad=amsgrad, maximize=maximize)
    assert getattr(torch, name)(tp, tg, tm, tv, tx, ts, **kw) is None
    assert getattr(ember, name)(ep, eg, em, ev, ex, es, **kw) is None
    for t, e in zip(tp + tm + tv + tx, ep + em + ev + ex):
        np.testing.assert_allclose(_np(e), _np(t), rtol=2e-6, atol=1e-7)


def test_fused_operator_writes_in_place_without_bumping_versions_as_torch():
    tp, ep = _both([(4,)])
    tg, eg = _both([(4,)], seed=5)
    state = lambda lib, p: ([lib.zeros(4)], [lib.zeros(4)], [], [lib.tensor(1.)])
    kw = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    before = ep[0].data_ptr()
    torch._fused_adamw_(tp, tg, *state(torch, tp), **kw)
    ember._fused_adamw_(ep, eg, *state(ember, ep), **kw)
    assert ep[0].data_ptr() == before and ep[0]._version == tp[0]._version == 0
    np.testing.assert_allclose(_np(ep[0]), _np(tp[0]), rtol=1e-6)


def test_fused_operator_unscales_and_skips_as_torch():
    kw = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    for found in (0.0, 1.0):
        out = []
        for lib in (torch, ember):
            p, g = [lib.ones(3)], [lib.full((3,), 8.0)]
            getattr(lib, '_fused_adam_')(p, g, [lib.zeros(3)], [lib.zeros(3)], [], [lib.tensor(1.)], **kw,
                                         grad_scale=lib.tensor(4.0), found_inf=lib.tensor(found))
            out.append((_np(p[0]), _np(g[0])))
        np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)     # the gradients, unscaled or not


def test_fused_operator_errors_as_torch():
    kw = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=True, maximize=False)
    msgs = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as e:
            lib._fused_adamw_([lib.randn(3)], [lib.randn(3)], [lib.randn(3)], [lib.randn(3)], [], [lib.tensor(1.)],
                              **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match=r"grads\[0\] must match its parameter"):
        ember._fused_adamw_([ember.randn(3)], [ember.randn(4)], [ember.randn(3)], [ember.randn(3)], [],
                            [ember.tensor(1.)], **dict(kw, amsgrad=False))


@pytest.mark.parametrize('cls', ['Adam', 'AdamW'])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('options', [{}, {'amsgrad': True}, {'maximize': True, 'weight_decay': 0.1}])
def test_fused_true_gives_the_single_tensor_update_bit_for_bit(cls, dtype, options):
    """``foreach=False`` runs the single-tensor update; ``fused=True`` and the CPU default (NOTE [foreach] in
    optim/optimizer.py) the fused operator, which must give its bits."""
    results = []
    for kw in (dict(foreach=False), dict(fused=True), {}):
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(6, 5), ember.nn.Tanh(), ember.nn.Linear(5, 2)).to(getattr(ember, dtype))
        opt = getattr(ember.optim, cls)(model.parameters(), lr=0.05, **kw, **options)
        x = ember.randn(8, 6, dtype=getattr(ember, dtype))
        for _ in range(4):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in model.parameters()] +
                       [opt.state[p]['exp_avg_sq'].numpy().copy() for p in model.parameters()])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_fused_true_trains_as_torch_fused():
    out = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
        opt = lib.optim.AdamW([w], lr=0.1, fused=True)
        x = lib.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
        for _ in range(5):
            opt.zero_grad()
            (x @ w.T).sin().sum().backward()
            opt.step()
        out.append(_np(w))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_half_precision_parameters_update_in_float32_as_torch():
    out = []
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32)).to(lib.float16))
        w.grad = lib.tensor(np.linspace(0.5, -0.3, 6, dtype=np.float32)).to(lib.float16)
        opt = lib.optim.Adam([w], lr=0.01, fused=True)
        for _ in range(3):
            opt.step()
        out.append(_np(w.float()))
    np.testing.assert_array_equal(out[1], out[0])


def test_fused_option_errors_as_torch():
    for kw in (dict(fused=True, foreach=True), dict(fused=True, differentiable=True)):
        msgs = []
        for lib in (torch, ember):
            with pytest.raises(RuntimeError) as e:
                lib.optim.AdamW([lib.nn.Parameter(lib.randn(3))], **kw)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    msgs = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.randn(3, dtype=lib.complex64))
        p.grad = lib.ones_like(p)
        opt = lib.optim.AdamW([p], fused=True)
        with pytest.raises(RuntimeError) as e:
            opt.step()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1].replace('ember.', 'torch.')      # ember names its dtypes ember.* outside `ember run`


def test_the_fused_step_standing_in_for_foreach_moves_version_counters():
    """On a CUDA device Adam runs the fused step by default, standing in for torch's foreach update, which bumps
    the versions of what it writes: a graph that saved a parameter must still refuse a backward after the step.
    ``fused=True`` keeps torch's fused behaviour (no bump, checked above)."""
    from ember.optim.algorithms import _fused_adam
    for asked, moved in ((False, True), (True, False)):
        w = ember.nn.Parameter(ember.randn(3))
        y = (w * w).sum()                     # saves w
        w.grad = ember.ones(3)
        state = dict(exp_avgs=[ember.zeros(3)], exp_avg_sqs=[ember.zeros(3)], max_exp_avg_sqs=[None],
                     steps=[ember.tensor(0.)])
        _fused_adam([w], [w.grad], **state, lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.0,
                    amsgrad=False, maximize=False, decoupled_weight_decay=True, asked=asked)
        if moved:
            with pytest.raises(RuntimeError, match='modified by an inplace operation'):
                y.backward()
        else:
            y.backward()


def _step_ops(opt):
    """The operators an optimizer step dispatches, as the profiler lists them."""
    with ember.profiler.profile() as prof:
        opt.step()
    return {e.key for e in prof.key_averages()}


def test_the_cpu_default_runs_the_fused_operator_for_plain_float_tensors():
    """NOTE [foreach] in optim/optimizer.py: plain float32/float64 parameters take the fused operator by default;
    ``foreach=False``, float16 parameters and a dispatch mode keep the single-tensor operators torch's CPU update
    runs."""
    from ember.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    def opt_for(dtype=ember.float32, **kw):
        m = ember.nn.Linear(3, 2).to(dtype)
        m(ember.randn(4, 3, dtype=dtype)).sum().backward()
        return ember.optim.AdamW(m.parameters(), lr=0.1, **kw)

    assert 'aten::_fused_adamw_' in _step_ops(opt_for())
    assert 'aten::_fused_adamw_' in _step_ops(opt_for(ember.float64))
    for opt in (opt_for(foreach=False), opt_for(ember.float16)):
        ops = _step_ops(opt)
        assert 'aten::_fused_adamw_' not in ops and 'aten::lerp_' in ops
    opt = opt_for()
    with Names() as mode:
        opt.step()
    assert '_fused_adamw_' not in mode.names and mode.names.count('lerp_') == 2
