"""A leaf's ``.grad`` never aliases a tensor the user holds (NOTE [gradient ownership]): later accumulation
adds into ``.grad`` in place, which must not change the user's tensor. Checked side by side with torch."""
import pytest
import torch

import ember

LIBS = pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])


@LIBS
def test_a_gradient_passed_to_backward_is_never_modified(lib):
    w = lib.zeros(3, requires_grad=True)
    g = lib.ones(3)
    (w + 0).backward(g)              # add passes the incoming gradient straight through
    (w + 0).backward(g)
    assert g.tolist() == [1.0, 1.0, 1.0] and w.grad.tolist() == [2.0, 2.0, 2.0]


@LIBS
def test_a_hook_return_value_the_user_keeps_is_never_modified(lib):
    w = lib.zeros(3, requires_grad=True)
    kept = []

    def hook(g):
        r = g * 1
        kept.append(r)
        return r
    w.register_hook(hook)
    for _ in range(3):
        (w * 2).sum().backward()
    assert [k.tolist() for k in kept] == [[2.0] * 3] * 3 and w.grad.tolist() == [6.0] * 3


@LIBS
def test_a_gradient_a_hook_only_looks_at_is_never_modified(lib):
    w = lib.zeros(3, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    assert seen[0].tolist() == [2.0] * 3 and w.grad.tolist() == [4.0] * 3


@LIBS
def test_one_gradient_flowing_to_two_leaves_gives_two_grads(lib):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    (a + b).sum().backward()         # the same tensor reaches both leaves
    a.grad.add_(10)
    assert b.grad.tolist() == [1.0, 1.0]


@LIBS
def test_a_custom_function_returning_its_saved_tensor(lib):
    keep = lib.full((2,), 5.0)

    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return keep               # a tensor the user holds
    w = lib.zeros(2, requires_grad=True)
    F.apply(w).sum().backward()
    F.apply(w).sum().backward()
    assert keep.tolist() == [5.0, 5.0] and w.grad.tolist() == [10.0, 10.0]


def test_fresh_gradients_are_still_taken_without_a_copy():
    m = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    m(ember.randn(5, 4)).sum().backward()
    # each .grad is a tensor the engine made and handed over, not a copy of one (NOTE [gradient ownership])
    assert all(p.grad._grad_owner is True for p in m.parameters())
