"""Node names as torch's: ``type(t.grad_fn).__name__``, ``t.grad_fn.name()`` and the repr printed in
``grad_fn=<...>`` (NOTE [node names by arguments] in ember/autograd/kernels.py). Tutorials print them, and code
tests them (``'Addmm' in str(t.grad_fn)``). Where one ember operator stands for several torch overloads, the
node's class is chosen from the call's arguments."""
import pytest
import torch

import ember

CALLS = {
    'sum': lambda L, a, b: a.sum(), 'sum_dim': lambda L, a, b: a.sum(1), 'sum_keepdim': lambda L, a, b: a.sum(-1, keepdim=True),
    'sum_dims': lambda L, a, b: a.sum((0, 1)), 'mean': lambda L, a, b: a.mean(), 'mean_dim': lambda L, a, b: a.mean(0),
    'prod': lambda L, a, b: a.prod(), 'prod_dim': lambda L, a, b: a.prod(1),
    'squeeze': lambda L, a, b: a[None].squeeze(), 'squeeze_int': lambda L, a, b: a[None].squeeze(0),
    'squeeze_dims': lambda L, a, b: a[None, None].squeeze((0, 1)),
    'rsub_scalar': lambda L, a, b: 1 - a, 'rsub_alpha': lambda L, a, b: L.rsub(a, 1, alpha=2), 'sub': lambda L, a, b: a - b,
    'pow_scalar': lambda L, a, b: a ** 2, 'pow_tensor': lambda L, a, b: a ** b, 'rpow': lambda L, a, b: 2 ** a,
    'clamp_scalars': lambda L, a, b: a.clamp(0, 1), 'clamp_max_only': lambda L, a, b: a.clamp(max=1.0),
    'clamp_tensor': lambda L, a, b: a.clamp(min=b), 'clamp_min': lambda L, a, b: a.clamp_min(0.),
    'clamp_min_tensor': lambda L, a, b: a.clamp_min(b), 'clamp_max': lambda L, a, b: a.clamp_max(0.),
    'clamp_max_tensor': lambda L, a, b: a.clamp_max(b),
    'remainder_scalar': lambda L, a, b: a.remainder(1.5), 'remainder_tensor': lambda L, a, b: a.remainder(b),
    'lerp_scalar': lambda L, a, b: a.lerp(b, 0.5), 'lerp_tensor': lambda L, a, b: a.lerp(b, L.full((3, 4), 0.5)),
    'div_mode': lambda L, a, b: L.div(a, b, rounding_mode='floor'), 'div': lambda L, a, b: a / b,
    'scatter_value': lambda L, a, b: a.scatter(1, L.tensor([[0], [1], [2]]), 2.0),
    'scatter_src': lambda L, a, b: a.scatter(1, L.tensor([[0], [1], [2]]), b),
    'masked_fill_scalar': lambda L, a, b: a.masked_fill(a.detach() > 1, 0.0),
    'masked_fill_tensor': lambda L, a, b: a.masked_fill(a.detach() > 1, L.tensor(1.0)),
    'index_fill_tensor': lambda L, a, b: a.index_fill(1, L.tensor([0]), L.tensor(1.0)),
    'fill_scalar': lambda L, a, b: a.clone().fill_(1.0), 'fill_tensor': lambda L, a, b: a.clone().fill_(L.tensor(1.0)),
    't': lambda L, a, b: a.t(), 't_1d': lambda L, a, b: a[0].t(), 'transpose': lambda L, a, b: a.transpose(0, 1),
    'log1p': lambda L, a, b: a.log1p(), 'deg2rad': lambda L, a, b: a.deg2rad(),
    'max_pool2d': lambda L, a, b: L.nn.functional.max_pool2d(a[None, None], 2),
    'avg_pool2d': lambda L, a, b: L.nn.functional.avg_pool2d(a[None, None], 2),
    'mm': lambda L, a, b: a @ b.T, 'mv': lambda L, a, b: a @ b[0], 'dot': lambda L, a, b: a[0] @ b[0],
    'linear': lambda L, a, b: L.nn.functional.linear(a, b), 'linear_bias': lambda L, a, b: L.nn.functional.linear(a, b, b[0, :3]),
    'inv': lambda L, a, b: L.linalg.inv(a[:3, :3] + 3 * L.eye(3)),
    'solve': lambda L, a, b: L.linalg.solve(a[:3, :3] + 3 * L.eye(3), b[:, :1]),
    'cholesky': lambda L, a, b: L.linalg.cholesky(a[:3] @ a[:3].T + L.eye(3)),
}


@pytest.mark.parametrize('call', sorted(CALLS))
def test_node_names_match_torch(call):
    got = []
    for L in (torch, ember):
        L.manual_seed(0)
        a = L.rand(3, 4, requires_grad=True)
        b = L.rand(3, 4, requires_grad=True)
        fn = CALLS[call](L, a, b).grad_fn
        got.append((type(fn).__name__, fn.name(), repr(fn).split(' object at ')[0]))
    assert got[1] == got[0]


def test_chosen_node_classes_are_the_operators_node():
    """The per-call classes are subclasses of the operator's node: they carry its formulas and saved values."""
    a = ember.rand(3, 4, requires_grad=True)
    s0, s1 = a.sum().grad_fn, a.sum(1).grad_fn
    assert type(s1).__bases__ == type(s0).__bases__ and type(s1).__bases__[0].__name__ == 'SumBackward0'
    assert type(a.sum(0).grad_fn) is type(s1)        # made once per name
    a.sum(1).sum().backward()
    assert a.grad.tolist() == [[1.0] * 4] * 3
