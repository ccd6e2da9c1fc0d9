"""NOTE [gradient layout]: a leaf's .grad is laid out as torch lays it out (the layout contract of its
AccumulateGrad): the leaf's strides where the leaf is dense, C-contiguous otherwise."""
import pytest
import torch

import ember


def _cases(lib):
    F = lib.nn.functional

    def channels_last_weight():
        w = lib.nn.Parameter(lib.randn(4, 3, 2, 2).to(memory_format=lib.channels_last))
        F.conv2d(lib.randn(1, 3, 5, 5), w).sum().backward()
        return w

    def transposed_leaf():
        v = lib.nn.Parameter(lib.randn(3, 4).t())
        (v * 2).sum().backward()
        return v

    def transposed_gradient_of_a_contiguous_leaf():
        u = lib.nn.Parameter(lib.randn(3, 4))
        (u.t() * lib.randn(4, 3)).sum().backward()
        return u

    def expanded_leaf():
        e = lib.randn(1, 3).expand(2, 3).requires_grad_()
        (e * 2).sum().backward()
        return e

    def broadcast_gradient_of_a_sum():
        x = lib.nn.Parameter(lib.randn(2, 3, 4).permute(2, 0, 1))
        x.sum().backward()
        return x

    def second_gradient_adds_in_place():
        w = lib.nn.Parameter(lib.randn(4, 3, 2, 2).to(memory_format=lib.channels_last))
        for _ in range(2):
            F.conv2d(lib.randn(1, 3, 5, 5), w).sum().backward()
        return w

    def create_graph():
        x = lib.nn.Parameter(lib.randn(3, 4).t())
        lib.autograd.backward([x * x], [lib.randn(3, 4).t().contiguous()], create_graph=True)
        return x
    return [channels_last_weight, transposed_leaf, transposed_gradient_of_a_contiguous_leaf, expanded_leaf,
            broadcast_gradient_of_a_sum, second_gradient_adds_in_place, create_graph]


@pytest.mark.filterwarnings('ignore:Using backward')
@pytest.mark.parametrize('i', range(7))
def test_leaf_gradients_are_laid_out_as_torchs(i):
    want = _cases(torch)[i]()
    got = _cases(ember)[i]()
    assert got.grad.stride() == want.grad.stride(), _cases(torch)[i].__name__
    assert tuple(got.grad.shape) == tuple(want.grad.shape)
    assert (got.grad.grad_fn is None) == (want.grad.grad_fn is None)
