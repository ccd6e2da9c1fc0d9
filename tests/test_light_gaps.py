"""Gaps pytorch-lightning's suite found: the non-full (deprecated) Module.register_backward_hook, compared with
torch in the same process (grads the hook sees, FutureWarnings, mixing errors, returned grads)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def _non_full_trace(lib, make, replace=False):
    lib.manual_seed(0)
    m = make(lib)
    seen = []

    def hook(mod, gi, go):
        seen.append(([None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go]))
        if replace:
            return tuple(None if g is None else g * 10 for g in gi)

    x = lib.ones(2, 4, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        m.register_backward_hook(hook)
        reg_warnings = len(w)
        m(x).sum().backward()
    msgs = [(type(a.message).__name__, str(a.message)) for a in w]
    return reg_warnings, msgs, seen, x.grad.tolist()


class _Double:
    def __new__(cls, lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return x * 2
        return M()


@pytest.mark.parametrize('make', [lambda lib: lib.nn.Linear(4, 3), _Double])
@pytest.mark.parametrize('replace', [False, True])
def test_non_full_backward_hook_like_torch(make, replace):
    e, t = _non_full_trace(ember, make, replace), _non_full_trace(torch, make, replace)
    assert e[0] == t[0] == 0                 # silent at registration
    assert e[1] == t[1] and t[1]             # the forward's FutureWarning, same text
    assert e[2] == t[2] and t[2]
    np.testing.assert_allclose(e[3], t[3], rtol=1e-6)


def test_non_full_hook_single_node_no_warning():
    def run(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return x.exp()
        m, seen = M(), []
        m.register_backward_hook(lambda mod, gi, go: seen.append(len(gi)))
        x = lib.ones(3, requires_grad=True) * 1     # non-leaf: its grad_fn is exp's next function
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            m(x).sum().backward()
        return seen, len(w)
    assert run(ember) == run(torch) == ([1], 0)


def _mix_errors(lib):
    out = []
    m = lib.nn.Linear(2, 2)
    m.register_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError) as e1:
        m.register_full_backward_hook(lambda *a: None)
    m2 = lib.nn.Linear(2, 2)
    m2.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError) as e2:
        m2.register_backward_hook(lambda *a: None)
    mod = lib.nn.modules.module
    h = mod.register_module_backward_hook(lambda *a: None)
    try:
        with pytest.raises(RuntimeError) as e3:
            mod.register_module_full_backward_hook(lambda *a: None)
    finally:
        h.remove()
        mod._global_is_full_backward_hook = None     # torch keeps the flag after removal; reset for other tests
    return [str(e1.value), str(e2.value), str(e3.value)]


def test_backward_hook_mixing_errors_like_torch():
    assert _mix_errors(ember) == _mix_errors(torch)


def test_node_hook_wrong_count_raises_like_torch():
    def run(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return x * 2
        m = M()
        m.register_backward_hook(lambda mod, gi, go: (gi[0],))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            y = m(lib.ones(3, requires_grad=True)).sum()
        with pytest.raises(RuntimeError) as e:
            y.backward()
        return str(e.value)
    assert run(ember) == run(torch)


# --- torch.distributed.utils' local helpers and _get_default_group before init, in-process against torch -------

def _dist_utils_trace(lib):
    import dataclasses
    from collections import OrderedDict, namedtuple
    from importlib import import_module
    u = import_module(f'{lib.__name__}.distributed.utils')
    c10d = import_module(f'{lib.__name__}.distributed.distributed_c10d')
    out = []
    flat, keys = u._pack_kwargs(1, 2, a=3, b=4)
    out.append((flat, keys, u._unpack_kwargs(flat, keys), u._unpack_kwargs((1,), ())))
    with pytest.raises(AssertionError) as e:
        u._unpack_kwargs((1,), ('a', 'b'))
    out.append(str(e.value))

    @dataclasses.dataclass
    class DC:
        x: object
        n: int
    NT = namedtuple('NT', 'a b')
    tree = {'l': [lib.ones(2), 3], 'o': OrderedDict(k=lib.ones(1)), 't': (lib.ones(1),), 'nt': NT(lib.ones(1), 'z'),
            'dc': DC(lib.ones(2), 5)}
    doubled = u._apply_to_tensors(lambda t: t * 2, tree)
    out.append((type(doubled['o']).__name__, type(doubled['nt']).__name__, doubled['dc'].n,
                doubled['l'][0].tolist(), doubled['nt'].a.tolist(), doubled['dc'].x.tolist()))
    args, kwargs = u._cast_forward_inputs(lib.float64, lib.ones(2), lib.arange(2), x=lib.ones(1))
    out.append(([str(a.dtype) for a in args], str(kwargs['x'].dtype), u._cast_forward_inputs(None, 1) == ((1,), {})))
    moved = u._to_kwargs((lib.ones(2), 'a'), {'k': lib.ones(1)}, lib.device('cpu'), False)
    out.append((len(moved), len(moved[0]), moved[0][0][1], sorted(moved[1][0])))
    sd = {'layer.a': 1, 'layer.b': 2, 'other': 3}
    u._replace_by_prefix(sd, 'layer.', 'module.layer.')
    out.append(sorted(sd))
    with pytest.raises(ValueError) as e:
        u._replace_by_prefix(sd, 'x', 'x')
    out.append(str(e.value))
    inner = lib.nn.Linear(1, 1)
    outer = lib.nn.Sequential(inner)
    other = lib.nn.ReLU()
    out.append([m is outer or m is other for m in u._get_root_modules([inner, outer, other])])
    with pytest.raises(ValueError) as e:
        c10d._get_default_group()
    out.append(str(e.value))
    return out


def test_distributed_utils_helpers_like_torch():
    got, want = _dist_utils_trace(ember), _dist_utils_trace(torch)
    assert len(want) == len(got) == 9
    for g, w in zip(got, want):
        assert str(g).replace('ember', 'torch') == str(w)
