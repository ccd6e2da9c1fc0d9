"""Overload groups (ember/_ops/overloads.py): one public name chooses among operator overloads by the arguments'
types, as torch's python_arg_parser does. Each call below runs in ember and torch and must agree."""
import numpy as np
import pytest
import torch

import ember
from ember._ops.overloads import GROUPS

X = np.array([[3., -1., 2.], [0., 5., -4.]], np.float32)
M = np.array([[True, False, True], [False, False, True]])

CALLS = {
    'masked_fill scalar': lambda L, x, m: L.masked_fill(x, m, 0.5),
    'masked_fill tensor': lambda L, x, m: x.masked_fill(m, L.tensor(7.)),
    'masked_fill_ int': lambda L, x, m: x.clone().masked_fill_(m, 2),
    'index_fill scalar': lambda L, x, m: x.index_fill(1, L.tensor([0, 2]), -1.),
    'index_fill_ tensor': lambda L, x, m: x.clone().index_fill_(0, L.tensor([1]), L.tensor(9.)),
    'scatter src': lambda L, x, m: L.zeros(2, 3).scatter(1, L.tensor([[2], [0]]), x),
    'scatter value': lambda L, x, m: L.zeros(2, 3).scatter(1, L.tensor([[2], [0]]), 4.),
    'scatter value kw': lambda L, x, m: L.zeros(2, 3).scatter(1, L.tensor([[1], [0]]), value=3.),
    'scatter_ reduce': lambda L, x, m: L.ones(2, 3).scatter_(1, L.tensor([[2], [0]]), x, reduce='multiply'),
    'repeat_interleave int': lambda L, x, m: L.repeat_interleave(x, 2, dim=1),
    'repeat_interleave tensor': lambda L, x, m: x.repeat_interleave(L.tensor([1, 2]), dim=0),
    'repeat_interleave repeats only': lambda L, x, m: L.repeat_interleave(L.tensor([2, 0, 1])),
    'searchsorted tensor': lambda L, x, m: L.searchsorted(L.tensor([-1., 0., 3.]), x),
    'searchsorted scalar right': lambda L, x, m: L.searchsorted(L.tensor([-1., 0., 3.]), 0., right=True),
    'searchsorted out': lambda L, x, m: L.searchsorted(L.tensor([-1., 0., 3.]), x, out=L.empty(0, dtype=L.int64)),
    'div': lambda L, x, m: x.div(2),
    'div floor': lambda L, x, m: L.div(x, 2, rounding_mode='floor'),
    'div None mode': lambda L, x, m: L.div(x, x + 10, rounding_mode=None),
    'divide_ trunc': lambda L, x, m: x.clone().divide_(3, rounding_mode='trunc'),
    'true_divide out': lambda L, x, m: L.true_divide(x, 4, out=L.empty(2, 3)),
    'fill_ tensor': lambda L, x, m: x.clone().fill_(x.max()),
    'fill': lambda L, x, m: L.fill(x, 1.5),
    'max all': lambda L, x, m: L.max(x),
    'max dim': lambda L, x, m: tuple(x.max(1)),
    'max dim kw keepdim': lambda L, x, m: tuple(L.max(x, dim=0, keepdim=True)),
    'max other': lambda L, x, m: L.max(x, -x),
    'min other kw': lambda L, x, m: L.min(x, other=L.zeros(3)),
    'min dim out': lambda L, x, m: tuple(L.min(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))),
    'sort stable kw': lambda L, x, m: tuple(x.sort(stable=True, dim=0, descending=True)),
    'sort out': lambda L, x, m: tuple(L.sort(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))),
    'topk': lambda L, x, m: tuple(x.topk(2, largest=False)),
    'median all': lambda L, x, m: L.median(x),
    'median dim': lambda L, x, m: tuple(x.median(1, keepdim=True)),
    'cummin': lambda L, x, m: tuple(L.cummin(x, 0)),
    'kthvalue': lambda L, x, m: tuple(L.kthvalue(x, 2, 1)),
}


@pytest.mark.parametrize('name', list(CALLS))
def test_group_calls_match_torch(name):
    def run(L):
        r = CALLS[name](L, L.tensor(X), L.tensor(M))
        return [t.numpy() for t in (r if isinstance(r, tuple) else (r,))]
    for e, t in zip(run(ember), run(torch)):
        np.testing.assert_array_equal(e, t)
        assert e.dtype == t.dtype


def test_named_returns_are_return_types():
    r = ember.max(ember.tensor(X), 1)
    assert type(r) is ember.return_types.max and r._fields == ('values', 'indices')
    assert repr(r).startswith('ember.return_types.max(')


@pytest.mark.parametrize('call', [
    lambda L, x, m: L.masked_fill(x, m, 'a'),
    lambda L, x, m: L.max(x, keepdim=True),
    lambda L, x, m: x.scatter(0, L.tensor([[0]])),
    lambda L, x, m: L.repeat_interleave(x, 2.5),
    lambda L, x, m: L.median(x, dim=None),
    lambda L, x, m: L.sort(x, 0, True, True),
])
def test_no_binding_overload_is_torchs_type_error(call):
    for L in (torch, ember):
        with pytest.raises(TypeError) as info:
            call(L, L.tensor(X), L.tensor(M))
        if L is ember:
            assert 'received an invalid combination of arguments - got (' in str(info.value)
            assert 'but expected one of:\n * (Tensor input' in str(info.value)


def test_groups_are_not_overridden_by_hand_written_functions():
    """The public names of the groups are the generated choosers, not hand-written code."""
    for name, g in GROUPS.items():
        if g.function:
            assert getattr(ember, name)._overloads, name
        if g.method:
            assert getattr(ember.Tensor, name)._overloads, name
    assert len(GROUPS) >= 9
