"""Optimizer API that libraries reach for (pytorch_optimizer, heavyball), compared with torch: the state-dict and
step hooks, _patch_step_function, state entries that are not parameters, LBFGS's state layout, the schedulers'
state dicts, and the torch._dynamo / torch.backends names heavyball imports."""
import collections
import importlib
import io
import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember


def _tensor_to_list(v):
    return v.detach().cpu().numpy().tolist() if hasattr(v, 'detach') else v


def _same(a, b, path='sd', tol=(1e-5, 1e-6)):
    """``a`` (torch's) and ``b`` (ember's) hold the same structure, types and values (tensors by value, to
    ``tol`` = (rtol, atol))."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, ember.Tensor), (path, type(b))
        assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1] and tuple(a.shape) == tuple(b.shape), path
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol[0], atol=tol[1], err_msg=path)
    elif isinstance(a, dict):
        assert type(a) is type(b) and sorted(map(str, a)) == sorted(map(str, b)), (path, list(a), list(b))
        for k in a:
            _same(a[k], b[k], f'{path}[{k!r}]', tol)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f'{path}[{i}]', tol)
    elif isinstance(a, float):
        assert type(b) is float and (a == b or math.isclose(a, b, rel_tol=1e-6)), (path, a, b)
    elif callable(a):
        assert callable(b), path
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


# --- 1. hooks ------------------------------------------------------------------------------------------------------
def _hook_log(lib):
    log = []
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.register_state_dict_pre_hook(lambda o: log.append(('sd_pre_a', o is opt)))
    opt.register_state_dict_pre_hook(lambda o: log.append(('sd_pre_b', o is opt)), prepend=True)

    def post_inplace(o, sd):
        log.append(('sd_post_inplace', sorted(sd)))
        sd['extra'] = 1

    def post_replace(o, sd):
        log.append(('sd_post_replace', sorted(sd)))
        return {**sd, 'replaced': True}
    opt.register_state_dict_post_hook(post_inplace)
    opt.register_state_dict_post_hook(post_replace)
    h = opt.register_state_dict_post_hook(lambda o, sd: log.append(('never', 0)), prepend=True)
    h.remove()

    passed = {}

    def load_pre(o, sd):
        log.append(('load_pre', sorted(sd), sd is passed['sd']))
        sd = dict(sd)
        sd.pop('extra')
        sd.pop('replaced')
        return sd

    def load_pre_first(o, sd):
        log.append(('load_pre_first', sorted(sd)))
    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_pre_hook(load_pre_first, prepend=True)
    opt.register_load_state_dict_post_hook(lambda o: log.append(('load_post_a', sorted(o.state_dict()))))
    opt.register_load_state_dict_post_hook(lambda o: log.append(('load_post_b',)), prepend=True)
    p.grad = lib.ones(3)
    opt.step()
    sd = opt.state_dict()
    log.append(('state_dict', sorted(sd)))
    passed['sd'] = sd
    opt.load_state_dict(sd)
    log.append(('after', sorted(sd)))       # the dict passed in is not changed by the pre hooks
    return log


def test_state_dict_hooks_order_arguments_and_results():
    t = _hook_log(torch)
    assert ('sd_pre_b', True) == t[0]
    assert _hook_log(ember) == t


def _args(o, a):
    # torch passes step's positional arguments with the optimizer first
    return ('self',) + a[1:] if a and a[0] is o else a


def _step_hook_log(lib):
    log = []
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1)
    g = importlib.import_module(lib.__name__ + '.optim.optimizer')
    handles = [
        g.register_optimizer_step_pre_hook(lambda o, a, k: log.append(('global_pre', _args(o, a), k))),
        g.register_optimizer_step_post_hook(lambda o, a, k: log.append(('global_post', _args(o, a), k))),
    ]
    try:
        opt.register_step_pre_hook(lambda o, a, k: log.append(('pre', o is opt, _args(o, a), k)))

        def rewrite(o, a, k):
            log.append(('rewrite', _args(o, a), k))
            return a[:1], {'closure': None}
        h = opt.register_step_pre_hook(rewrite)
        opt.register_step_post_hook(lambda o, a, k: log.append(('post', _args(o, a), k)))
        p.grad = lib.ones(2)
        opt.step()
        h.remove()
        # hooks survive load_state_dict (torch's __setstate__ keeps them)
        opt.load_state_dict(opt.state_dict())
        opt.step(None)
        opt.register_step_pre_hook(lambda o, a, k: 'bad')
        with pytest.raises(RuntimeError, match='must return None or a tuple'):
            opt.step()
    finally:
        for h in handles:
            h.remove()
    return log


def test_step_hooks_global_and_own_match_torch():
    assert _step_hook_log(ember) == _step_hook_log(torch)


def test_patch_step_function_and_profile_hook_step():
    for lib in (torch, ember):
        class Wrapper(lib.optim.Optimizer):
            """As pytorch_optimizer's Lookahead: wraps an optimizer, never calls Optimizer.__init__."""

            def __init__(self, base):
                self.base = base
                self.param_groups = base.param_groups
                self.state = collections.defaultdict(dict)
                self.defaults = base.defaults
                self._optimizer_step_pre_hooks = collections.OrderedDict()
                self._optimizer_step_post_hooks = collections.OrderedDict()
                self._patch_step_function()

            def step(self, closure=None):
                return self.base.step(closure)

        p = lib.nn.Parameter(lib.ones(2))
        w = Wrapper(lib.optim.SGD([p], lr=0.5))
        assert getattr(type(w).step, 'hooked', None) is True
        assert w._zero_grad_profile_name == 'Optimizer.zero_grad#Wrapper.zero_grad'
        seen = []
        w.register_step_post_hook(lambda o, a, k: seen.append(o is w))
        p.grad = lib.ones(2)
        w.step()
        assert seen == [True]
        assert p.detach().numpy().tolist() == [0.5, 0.5]
        w._patch_step_function()            # a second call does not wrap again
        w.step()
        assert seen == [True, True]
        assert isinstance(lib.optim.Optimizer.__dict__['profile_hook_step'], staticmethod)
        assert w._optimizer_step_code() is None
        wrapped = lib.optim.Optimizer.profile_hook_step(lambda self, x: x * 2)
        assert wrapped(w, 3) == 6


def test_group_tensors_by_device_and_dtype():
    def groups(lib):
        a = [lib.zeros(1), lib.zeros(1, dtype=lib.float64), lib.zeros(2)]
        b = [lib.ones(1), lib.ones(1, dtype=lib.float64), None]
        out = {}
        for wi in (False, True):
            g = lib.optim.Optimizer._group_tensors_by_device_and_dtype([a, b], with_indices=wi)
            out[wi] = {str(k[1]).split('.')[-1]: ([[None if t is None else _tensor_to_list(t) for t in lst]
                                                   for lst in v[0]], list(v[1])) for k, v in g.items()}
        return out
    assert groups(ember) == groups(torch)


# --- 3. state entries that are not parameters ------------------------------------------------------------------------
def _adam_with_extra_state(lib):
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.Adam([p], lr=0.1)
    p.grad = lib.ones(2)
    opt.step()
    opt.state['current_step'] = 7
    opt.state['k'] = lib.tensor([3])
    return opt


def test_state_dict_keeps_non_parameter_keys():
    t, e = _adam_with_extra_state(torch).state_dict(), _adam_with_extra_state(ember).state_dict()
    assert list(t['state']) == list(e['state']) == [0, 'current_step', 'k']
    _same(t, e)


def test_torch_saved_state_with_non_parameter_keys_loads_into_ember():
    t = _adam_with_extra_state(torch)
    buf = io.BytesIO()
    torch.save(t.state_dict(), buf)
    buf.seek(0)
    sd = ember.load(buf)
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.Adam([p], lr=0.1)
    opt.load_state_dict(sd)
    assert opt.state['current_step'] == 7
    assert opt.state['k'].tolist() == [3] and opt.state['k'].dtype == ember.int64     # kept as it is, not cast
    t2 = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    t2.load_state_dict(t.state_dict())
    _same(t2.state_dict(), opt.state_dict())
    # and back: ember's state dict, pickled, loads into torch with the same entries
    buf = io.BytesIO()
    ember.save(opt.state_dict(), buf)
    buf.seek(0)
    t3 = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    t3.load_state_dict(torch.load(buf))
    assert t3.state['current_step'] == 7 and t3.state['k'].tolist() == [3]


def test_load_state_dict_casts_like_torch():
    """Loaded state tensors take a floating parameter's dtype (integer ones too), ``step`` keeps its own; the saved
    param_groups are deep-copied."""
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.SGD([p], lr=0.1)
        sd = {'state': {0: {'step': lib.tensor(2.), 'buf': lib.tensor([1, 2]), 'nested': {'x': lib.tensor([1.])},
                            'lst': [lib.tensor(1.)], 'tup': (lib.tensor([1]), 5)}},
              'param_groups': [dict(opt.state_dict()['param_groups'][0], custom=[1])]}
        opt.load_state_dict(sd)
        sd['param_groups'][0]['custom'].append(2)
        st = opt.state[p]
        return ({k: (str(v.dtype).split('.')[-1] if hasattr(v, 'dtype') else
                     [str(x.dtype).split('.')[-1] if hasattr(x, 'dtype') else x for x in v]
                     if isinstance(v, (list, tuple)) else {kk: str(vv.dtype).split('.')[-1] for kk, vv in v.items()})
                 for k, v in st.items()}, type(st['tup']).__name__, opt.param_groups[0]['custom'])
    assert run(ember) == run(torch)


def test_pickled_optimizer_gets_empty_hooks():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: None)
    opt2 = pickle.loads(pickle.dumps(opt))
    assert not opt2._optimizer_state_dict_post_hooks and not opt2._optimizer_step_pre_hooks


# --- 4. LBFGS --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize('line_search_fn', [None, 'strong_wolfe'])
@pytest.mark.parametrize("seed", [0, 2, 3])
def test_lbfgs_state_matches_torch_key_for_key(line_search_fn, seed):
    rng = np.random.default_rng(seed)
    w0, x0 = rng.normal(size=5).astype(np.float32), rng.normal(size=5).astype(np.float32)

    def run(lib):
        w = lib.nn.Parameter(lib.from_numpy(w0.copy()))
        x = lib.from_numpy(x0.copy())
        # small steps under strong_wolfe are left out: along so short a line the loss is all but quadratic, and
        # whether the cubic fit's discriminant rounds to >= 0 (its (g1 - g2)**2 / 4 is ~1e-6 of its terms) decides
        # the step, in float32 either way
        opt = lib.optim.LBFGS([w], lr=0.5 if seed == 0 or line_search_fn else 0.01, max_iter=4, history_size=3,
                              line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((w - x) ** 2).sum() + (w ** 4).sum()
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        return opt.state_dict(), w
    (t, tw), (e, ew) = run(torch), run(ember)
    assert list(t['state'][0]) == list(e['state'][0])
    # the curvature scalars (al: dot products of nearly orthogonal float32 vectors) cancel, so their last digits
    # follow each library's dot-product rounding; the parameters agree closely
    _same(t, e, tol=(1e-3, 1e-3))
    np.testing.assert_allclose(tw.detach().numpy(), ew.detach().numpy(), rtol=1e-5, atol=1e-6)


# --- 5. schedulers -----------------------------------------------------------------------------------------------------
class _ScaleFn:
    """A callable object: CyclicLR saves its __dict__."""

    def __init__(self):
        self.factor = 1.0

    def __call__(self, x):
        return self.factor


SCHEDULERS = {
    'LambdaLR': lambda S, o: S.LambdaLR(o, lambda e: 0.9 ** e),
    'MultiplicativeLR': lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    'StepLR': lambda S, o: S.StepLR(o, 3),
    'MultiStepLR': lambda S, o: S.MultiStepLR(o, [2, 4]),
    'ConstantLR': lambda S, o: S.ConstantLR(o),
    'LinearLR': lambda S, o: S.LinearLR(o),
    'ExponentialLR': lambda S, o: S.ExponentialLR(o, 0.9),
    'CosineAnnealingLR': lambda S, o: S.CosineAnnealingLR(o, 5),
    'CosineAnnealingWarmRestarts': lambda S, o: S.CosineAnnealingWarmRestarts(o, 3, 2),
    'CyclicLR': lambda S, o: S.CyclicLR(o, 1e-3, 0.1, step_size_up=2),
    'CyclicLR_function': lambda S, o: S.CyclicLR(o, 1e-3, 0.1, scale_fn=lambda c: 1.),
    'CyclicLR_object': lambda S, o: S.CyclicLR(o, 1e-3, 0.1, scale_fn=_ScaleFn()),
    'OneCycleLR': lambda S, o: S.OneCycleLR(o, 0.1, total_steps=10),
    'OneCycleLR_linear': lambda S, o: S.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy='linear'),
    'SequentialLR': lambda S, o: S.SequentialLR(o, [S.ConstantLR(o), S.ExponentialLR(o, 0.9)], [2]),
    'ChainedScheduler': lambda S, o: S.ChainedScheduler([S.ConstantLR(o), S.ExponentialLR(o, 0.9)]),
    'ReduceLROnPlateau': lambda S, o: S.ReduceLROnPlateau(o, patience=1),
    'ReduceLROnPlateau_max': lambda S, o: S.ReduceLROnPlateau(o, mode='max'),
    'PolynomialLR': lambda S, o: S.PolynomialLR(o),
}


def test_scheduler_table_covers_torch():
    S = torch.optim.lr_scheduler
    torch_classes = {n for n in dir(S) if isinstance(getattr(S, n), type) and issubclass(getattr(S, n), S.LRScheduler)
                     and n not in ('LRScheduler', '_LRScheduler')}
    assert torch_classes <= {k.split('_')[0] for k in SCHEDULERS}


def _scheduler(lib, name, adam=False, steps=3):
    p = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.Adam([p], lr=0.1) if adam else lib.optim.SGD([p], lr=0.1, momentum=0.9)
    s = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
    for i in range(steps):
        opt.step()
        s.step(1.0 + i % 2) if name.startswith('ReduceLROnPlateau') else s.step()
    return s, opt


@pytest.mark.parametrize('adam', [False, True])
@pytest.mark.parametrize('name', sorted(SCHEDULERS))
def test_scheduler_state_dict_matches_torch(name, adam):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for steps in (0, 3):
            t, _ = _scheduler(torch, name, adam, steps)
            e, _ = _scheduler(ember, name, adam, steps)
            td, ed = t.state_dict(), e.state_dict()
            assert sorted(td) == sorted(ed)
            _same(td, ed)


# the schedulers whose state holds functions (LambdaLR's, MultiplicativeLR's lambdas) or other schedulers
# (SequentialLR, ChainedScheduler) cannot go through torch.save; their keys are compared above
_PICKLABLE = sorted(n for n in SCHEDULERS if not n.startswith(('LambdaLR', 'MultiplicativeLR', 'SequentialLR',
                                                                 'ChainedScheduler')))


@pytest.mark.parametrize('name', _PICKLABLE)
def test_torch_scheduler_state_loads_into_ember(name):
    """torch's pickled scheduler state dict loads into ember's scheduler and the schedules go on the same."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t, topt = _scheduler(torch, name, steps=3)
        e, eopt = _scheduler(ember, name, steps=1)
        sd = t.state_dict()
        assert 'lr_lambdas' not in sd
        buf = io.BytesIO()
        torch.save(sd, buf)
        buf.seek(0)
        e.load_state_dict(ember.load(buf, weights_only=False))
        eopt.param_groups[0]['lr'] = topt.param_groups[0]['lr']
        if 'momentum' in topt.param_groups[0]:
            eopt.param_groups[0]['momentum'] = topt.param_groups[0]['momentum']
        _same(t.state_dict(), e.state_dict())
        for i in range(3):
            args = (2.0 + i,) if name.startswith('ReduceLROnPlateau') else ()
            t.step(*args)
            e.step(*args)
            assert math.isclose(topt.param_groups[0]['lr'], eopt.param_groups[0]['lr'], rel_tol=1e-9)


def test_onecycle_loads_the_old_ember_key():
    p = ember.nn.Parameter(ember.zeros(1))
    s = ember.optim.lr_scheduler.OneCycleLR(ember.optim.SGD([p], lr=0.1, momentum=0.9), 0.1, total_steps=10)
    sd = s.state_dict()
    sd['_anneal_strategy'] = sd.pop('_anneal_func_type')
    sd['_anneal_strategy'] = 'linear'
    s.load_state_dict(sd)
    assert s._anneal_func_type == 'linear'


# --- 6. names heavyball imports ----------------------------------------------------------------------------------------
def test_dynamo_exc_and_utils():
    from ember._dynamo.exc import TorchDynamoException, Unsupported, BackendCompilerFailed, UserError
    assert TorchDynamoException.__mro__[1] is RuntimeError
    for cls in (Unsupported, BackendCompilerFailed, UserError):
        assert issubclass(cls, TorchDynamoException)
    import ember._dynamo.utils as du
    from ember._dynamo import config
    before = config.cache_size_limit
    with du.disable_cache_limit():
        assert config.cache_size_limit > 10 ** 9
    assert config.cache_size_limit == before


def test_backends_opt_einsum():
    from ember.backends import opt_einsum as oe
    # torch answers from the opt_einsum package (absent here); ember's einsum always has NumPy's path search
    assert oe.is_available() is True and oe.enabled is True and oe.strategy == 'auto'
    a, b, c = (ember.randn(20, 30), ember.randn(30, 40), ember.randn(40, 5))
    ref = (a @ b @ c).numpy()
    with oe.flags(strategy='optimal'):
        assert oe.strategy == 'optimal'
        np.testing.assert_allclose(ember.einsum('ij,jk,kl->il', a, b, c).numpy(), ref, rtol=1e-4, atol=1e-4)
    assert oe.strategy == 'auto'
    with pytest.raises(ValueError, match='must be one of'):
        oe.strategy = 'auto-hq'
    prev = oe.set_flags(False)
    try:
        assert prev == (True, 'auto') and oe.enabled is False
        np.testing.assert_allclose(ember.einsum('ij,jk,kl->il', a, b, c).numpy(), ref, rtol=1e-4, atol=1e-4)
        with pytest.raises(ValueError, match='not enabled'):
            oe.strategy = 'greedy'
    finally:
        oe.set_flags(True)
    assert oe.enabled is True
