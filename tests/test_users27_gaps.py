"""Gaps found this session (2026-11-28, fifth session), each compared with torch."""
import pickle

import numpy as np
import pytest
import torch

import ember


def test_functions_that_are_also_methods_bind_no_self_as_class_attributes():
    """``act = torch.tanh`` in a class body: torch's functions are builtins and bind no ``self``; ember's
    functions that are also Tensor methods did (``tanh() takes 1 positional argument but 2 were given``)."""
    for lib in (torch, ember):
        class Block:
            act = lib.tanh
            add = lib.add
            total = lib.sum
            biggest = lib.max
            relu_ = lib.relu_
        b = Block()
        x = lib.tensor([-1., 0.5, 2.])
        assert np.allclose(b.act(x).tolist(), np.tanh([-1., 0.5, 2.]))
        assert b.add(x, 1).tolist() == [0., 1.5, 3.]
        assert b.total(x).item() == 1.5 and b.biggest(x).item() == 2.
        assert b.relu_(x.clone()).tolist() == [0., 0.5, 2.]
        assert type(lib.tanh).__name__ == 'builtin_function_or_method'
    # the methods still bind, and the functions still pickle by name
    x = ember.tensor([1., -2.])
    assert x.abs().tolist() == [1., 2.] and x.max().item() == 1.
    assert pickle.loads(pickle.dumps(ember.tanh)) is ember.tanh
    assert pickle.loads(pickle.dumps(ember.max)) is ember.max


@pytest.mark.parametrize('name', ['add', 'relu', 'abs', 'sum', 'max', 'tanh', 'matmul'])
def test_torch_function_receives_the_public_function(name):
    def seen(lib):
        calls = []

        class T(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(func)
                return super().__torch_function__(func, types, args, kwargs or {})
        x = lib.ones(2).as_subclass(T)
        f = getattr(lib, name)
        f(x, x) if name in ('add', 'matmul') else f(x)
        return calls[0] is f
    assert seen(ember) == seen(torch) is True
