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
