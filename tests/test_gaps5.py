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
