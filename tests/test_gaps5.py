"""Gaps found running captum, pytorch-ignite and torchsde under ``ember run``, each compared with torch 2.13:
torch.Future and Future[T], nn.parallel.scatter_gather, distributed.optim, autograd.grad through non-leaf inputs,
0-d integer tensors for int arguments of overloaded operators, and the ``size=`` keyword of Tensor.new_*."""
import typing

import pytest
import torch

import ember


def same_error(fn):
    """``fn(lib)`` raises the same exception class and first line of message under torch and ember."""
    errs = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib)
        errs.append(info.value)
    theirs, ours = errs
    assert type(ours) is type(theirs), (ours, theirs)
    assert str(ours).split('\n')[0] == str(theirs).split('\n')[0]


# --- 1. Future ------------------------------------------------------------------------------------------------

def test_future_is_generic_and_top_level():
    for lib in (torch, ember):
        alias = lib.futures.Future[lib.Tensor]
        assert typing.get_origin(alias) is lib.futures.Future
        assert typing.get_args(alias) == (lib.Tensor,)
        fut = lib.futures.Future()
        assert isinstance(fut, lib.Future)
        assert not isinstance(lib.tensor(1.), lib.Future)
        fut.set_result(3)
        assert fut.wait() == 3


# --- 6. Tensor.new_* sizes ------------------------------------------------------------------------------------

SIZES = [((), dict(size=(4, 1))), ((), dict(size=[4, 1])), ((), dict(size='Size')), ((4, 1), {}), (((4, 1),), {}),
         (([4, 1],), {}), (('Size',), {}), (((),), {}), (([],), {}), ((), dict(size=(0,)))]


@pytest.mark.parametrize('name', ['new_zeros', 'new_ones', 'new_empty'])
@pytest.mark.parametrize('args,kwargs', SIZES)
def test_new_factories_take_every_size_form(name, args, kwargs):
    got = []
    for lib in (torch, ember):
        a = tuple(lib.Size([4, 1]) if v == 'Size' else v for v in args)
        kw = {k: (lib.Size([4, 1]) if v == 'Size' else v) for k, v in kwargs.items()}
        y = lib.ones(2, 3, dtype=lib.float64)
        r = getattr(y, name)(*a, **kw)
        v = r.tolist() if name != 'new_empty' else None
        got.append((tuple(r.shape), str(r.dtype).split('.')[-1], v))
    assert got[0] == got[1]


def test_new_factories_keywords():
    for lib in (torch, ember):
        y = lib.ones(2, 3)
        r = y.new_ones(size=(2,), dtype=lib.int64, requires_grad=False, layout=lib.strided, pin_memory=False)
        assert tuple(r.shape) == (2,) and r.dtype == lib.int64
        assert y.new_zeros(size=(3,), requires_grad=True).requires_grad
        assert tuple(y.new_full(size=(4, 1), fill_value=2.).shape) == (4, 1)
        assert y.new_zeros(lib.tensor(2)).shape == (2,)


@pytest.mark.parametrize('expr', ["y.new_zeros(size=4)", "y.new_zeros()", "y.new_zeros(2, size=(3,))",
                                  "y.new_ones((2,), 3)", "y.new_full(2, 1)", "y.new_empty(-1)"])
def test_new_factories_errors(expr):
    same_error(lambda lib: eval(expr, {'y': lib.ones(2, 3)}))


# --- 4. autograd.grad through non-leaf inputs (NOTE [grad inputs]) --------------------------------------------

def _chain(lib):
    lib.manual_seed(0)
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = (x * 2).exp()
    return x, h, (h * h).sum()


def test_grad_at_a_non_leaf_input_leaves_the_graph_below_it():
    for lib in (torch, ember):
        x, h, y = _chain(lib)
        gh, = lib.autograd.grad(y, h)
        assert lib.allclose(gh, 2 * h.detach())
        gx, = lib.autograd.grad(h.sum(), x)         # x -> h never ran, so it was not freed
        assert lib.allclose(gx, 2 * h.detach())


def test_grad_twice_through_a_non_leaf_input():
    for lib in (torch, ember):
        x, h, _ = _chain(lib)
        g1, = lib.autograd.grad((h * h).sum(), h)
        g2, = lib.autograd.grad((h * 3).sum(), h)
        assert lib.allclose(g1, 2 * h.detach()) and lib.allclose(g2, lib.full((3,), 3.))
    same_error(lambda lib: [lib.autograd.grad(y, h) for x, h, y in [_chain(lib)] for _ in range(2)])


def test_grad_wrt_a_non_leaf_and_the_leaf_behind_it_frees_the_graph():
    for lib in (torch, ember):
        x, h, y = _chain(lib)
        gh, gx = lib.autograd.grad(y, [h, x])
        assert lib.allclose(gh, 2 * h.detach()) and lib.allclose(gx, 4 * h.detach() ** 2)
    same_error(lambda lib: [lib.autograd.grad(h.sum(), x) for x, h, y in [_chain(lib)]
                            for _ in [lib.autograd.grad(y, [h, x])]])


def _hook_trace(lib):
    """The hooks that fire, and the captured gradients (divided by their value without hooks), for grad() at h
    alone, at h and x, and for backward(inputs=[h])."""
    x, h, _ = _chain(lib)
    w = lib.tensor([1., 2., 3.], requires_grad=True)
    z = w.exp()
    seen = []
    h.register_hook(lambda g: seen.append('h') or g * 10)
    h.grad_fn.register_prehook(lambda g: seen.append('pre'))
    h.grad_fn.register_hook(lambda gi, go: seen.append('post'))
    x.register_hook(lambda g: seen.append('x'))
    w.register_hook(lambda g: seen.append('w'))
    z.register_hook(lambda g: seen.append('z'))
    out = []
    y = (h * h).sum() + (z * 2).sum()
    gh, = lib.autograd.grad(y, h, retain_graph=True)
    out += [list(seen), (gh / (2 * h)).tolist()]
    seen.clear()
    gh, gx = lib.autograd.grad(y, [h, x], retain_graph=True)
    out += [list(seen), (gh / (2 * h)).tolist(), (gx / (2 * h) ** 2).tolist()]
    seen.clear()
    y.backward(inputs=[h])
    out += [list(seen), x.grad is None, w.grad is None]
    return out


def test_hooks_at_grad_inputs_fire_as_in_torch():
    ours, theirs = _hook_trace(ember), _hook_trace(torch)
    assert len(ours) == len(theirs) == 8
    for o, t in zip(ours, theirs):
        if isinstance(t, list) and t and isinstance(t[0], float):
            assert o == pytest.approx(t, rel=1e-5)
        else:
            assert o == t


def test_retain_grad_on_a_grad_input():
    got = []
    for lib in (torch, ember):
        x, h, y = _chain(lib)
        h.retain_grad()
        lib.autograd.grad(y, h)
        got.append(h.grad.tolist())
    assert got[0] == pytest.approx(got[1])


# --- 5. integer-like values for int / SymInt arguments of overloaded operators (NOTE [integer-like arguments]) ---

class _Two:
    def __index__(self):
        return 2


INT_LIKE = {'tensor': lambda lib: lib.tensor(2), 'uint8': lambda lib: lib.tensor(2, dtype=lib.uint8),
            'int16': lambda lib: lib.tensor(2, dtype=lib.int16), 'one_element': lambda lib: lib.tensor([2]),
            'index': lambda lib: _Two()}
CALLS = {
    'kthvalue': (lambda lib, x, k: lib.kthvalue(x, k), ('tensor', 'uint8', 'int16', 'one_element', 'index')),
    'kthvalue_kw': (lambda lib, x, k: lib.kthvalue(x, k=k, dim=0), ('tensor', 'one_element', 'index')),
    'topk': (lambda lib, x, k: x.topk(k), ('tensor', 'uint8', 'one_element', 'index')),
    'topk_dim': (lambda lib, x, k: x.topk(1, k - 1 if isinstance(k, int) else k * 0), ('tensor', 'int16')),
    'mode_dim': (lambda lib, x, k: x.mode(k * 0), ('tensor', 'uint8')),
    'max_dim_kw': (lambda lib, x, k: lib.max(x, dim=k - 2), ('tensor',)),
    'repeat_interleave': (lambda lib, x, k: x.repeat_interleave(k), ('index',)),
}


@pytest.mark.parametrize('case,kind', [(c, k) for c, (_, kinds) in CALLS.items() for k in kinds])
def test_int_like_values_bind_int_arguments(case, kind):
    fn = CALLS[case][0]
    got = []
    for lib in (torch, ember):
        x = lib.tensor([[3., 1., 2., 5.], [0., 4., 7., 1.]])
        r = fn(lib, x, INT_LIKE[kind](lib))
        got.append([t.tolist() for t in (r if isinstance(r, tuple) else (r,))])
    assert got[0] == got[1]


def test_a_tensor_overload_comes_before_an_int_one():
    got = []
    for lib in (torch, ember):
        x = lib.tensor([[3., 1.], [0., 4.]])
        got.append((x.max(lib.tensor(1)).tolist(), lib.min(x, lib.tensor(2)).tolist(),
                    x.repeat_interleave(lib.tensor(2), dim=0).tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize('expr', ["x.topk(lib.tensor(2.))", "lib.kthvalue(x, True)", "lib.kthvalue(x, 2.0)",
                                  "x.mode(lib.tensor([0]))", "x.topk(1, lib.tensor(0.))"])
def test_non_integer_values_are_refused(expr):
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            eval(expr, {'lib': lib, 'x': lib.tensor([[3., 1.], [0., 4.]])})


# --- 2. nn.parallel.scatter_gather ----------------------------------------------------------------------------

_P = __import__('collections').namedtuple('_P', 'a b')
SG_VALUES = {
    'scatter_list': lambda sg, lib: sg.scatter([1, 'a'], [0, 1]), 'scatter_int': lambda sg, lib: sg.scatter(5, [0, 1]),
    'scatter_empty_list': lambda sg, lib: sg.scatter([], [0, 1]),
    'scatter_dict': lambda sg, lib: sg.scatter({'a': 1}, [0, 1]),
    'scatter_tuple': lambda sg, lib: sg.scatter((1, 2), [0, 1]),
    'scatter_namedtuple': lambda sg, lib: sg.scatter(_P(1, 2), [0, 1]),
    'scatter_kwargs': lambda sg, lib: sg.scatter_kwargs((1, 2), {'a': 3}, [0, 1]),
    'scatter_kwargs_more_kwargs': lambda sg, lib: sg.scatter_kwargs((), {'a': 3}, [0, 1]),
    'scatter_kwargs_none': lambda sg, lib: sg.scatter_kwargs((), None, [0]),
    'gather_none': lambda sg, lib: sg.gather([None, None], 0),
}


@pytest.mark.parametrize('case', SG_VALUES)
def test_scatter_gather_python_values(case):
    import torch.nn.parallel.scatter_gather as tsg
    import ember.nn.parallel.scatter_gather as esg
    assert SG_VALUES[case](esg, ember) == SG_VALUES[case](tsg, torch)


SG_ERRORS = ["sg.scatter(x, [0])", "sg.scatter(x, [])", "sg.scatter(x, ['cpu'])",
             "sg.scatter([x], [lib.device('cpu')])",
             "sg.scatter(x, ['cuda'])", "sg.scatter({'k': x}, [1.5])", "sg.scatter_kwargs((x,), None, [0])",
             "sg.gather([x, x], 0)", "sg.gather([[x], [x]], 'cpu')", "sg.gather([[1, 2], [3, 4]], 0)",
             "sg.gather([{'a': 1}, {'a': 2, 'b': 3}], 0)", "sg.gather([], 0)", "sg.gather([(1, None), (2, None)], 0)"]


@pytest.mark.parametrize('expr', SG_ERRORS)
def test_scatter_gather_tensors_raise_as_cpu_torch(expr):
    import torch.nn.parallel.scatter_gather as tsg
    import ember.nn.parallel.scatter_gather as esg
    same_error(lambda lib: eval(expr, {'lib': lib, 'sg': tsg if lib is torch else esg,
                                       'x': lib.arange(6.).reshape(3, 2)}))


def test_scatter_gather_names():
    for lib in (torch, ember):
        assert lib.nn.parallel.scatter is lib.nn.parallel.scatter_gather.scatter
        assert lib.nn.parallel.gather is lib.nn.parallel.scatter_gather.gather
        assert lib.nn.parallel.scatter_gather.__all__ == ['scatter', 'scatter_kwargs', 'gather']


# --- 3. distributed.optim.ZeroRedundancyOptimizer (two ranks: tests/_dist_worker.py, run_ddp) ---------------

_ZERO_SCRIPT = r'''
import copy, os, sys, torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
m = torch.nn.Linear(3, 2)
try:
    ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.SGD, lr=0.1)
except ValueError as e:
    print('uninitialized', e)
os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=sys.argv[1])
dist.init_process_group('gloo', rank=0, world_size=1)
try:
    ZeroRedundancyOptimizer([], optimizer_class=torch.optim.SGD, lr=0.1)
except ValueError as e:
    print('empty', e)
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
opt = ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.Adam, lr=0.1)
g = opt.param_groups[0]
print('groups', len(opt.param_groups), g['lr'], g['betas'], type(opt.optim).__name__)
sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
for _ in range(3):
    opt.zero_grad()
    m(torch.ones(4, 3)).pow(2).sum().backward()
    opt.step()
    sched.step()
print('weights', [round(float(p.sum()), 5) for p in m.parameters()])
try:
    opt.state_dict()
except RuntimeError as e:
    print('not consolidated', e)
opt.consolidate_state_dict()
sd = opt.state_dict()
print('state', sorted(sd['state']), [round(float(s['exp_avg'].sum()), 5) for s in sd['state'].values()])
print('param_groups', [g['params'] for g in sd['param_groups']], sd['param_groups'][0]['lr'])
torch.manual_seed(1)
m2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
m2.load_state_dict(m.state_dict())
opt2 = ZeroRedundancyOptimizer(m2.parameters(), optimizer_class=torch.optim.Adam, lr=0.5)
opt2.load_state_dict(copy.deepcopy(sd))      # (torch's own rank's consolidated state aliases its live one)
for model, o in ((m, opt), (m2, opt2)):       # resumed: the same step as the original
    o.zero_grad()
    model(torch.ones(4, 3)).pow(2).sum().backward()
    o.step()
print('resumed', [round(float(p.sum()), 5) for p in m2.parameters()] == [round(float(p.sum()), 5) for p in m.parameters()],
      opt2.param_groups[0]['lr'], opt2.optim.param_groups[0]['lr'], [float(s['step']) for s in opt2.optim.state.values()])
dist.destroy_process_group()
'''


def test_zero_redundancy_optimizer_world_size_one(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    script = tmp_path / 'zero.py'
    script.write_text(_ZERO_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for cmd in ([sys.executable, str(script)], [sys.executable, '-m', 'ember', 'run', str(script)]):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = str(s.getsockname()[1])
        env = {k: v for k, v in os.environ.items() if k not in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT')}
        p = subprocess.run(cmd + [port], capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                           env=dict(env, PYTHONPATH=root))
        assert p.returncode == 0, p.stderr[-3000:]
        outs.append([line for line in p.stdout.splitlines() if not line.startswith('ember.distributed:')])
    assert len(outs[0]) == 8 and outs[0] == outs[1]
