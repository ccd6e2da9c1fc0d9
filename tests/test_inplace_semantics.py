"""In-place writes as torch judges them: what a backward saved (only what a running formula reads), views
made before an in-place write of their base, and writes into tensors whose elements share memory."""
import pytest
import torch

import ember


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_a_view_made_before_its_base_is_written_in_place_sees_the_write(lib):
    leaf = lib.ones(3, requires_grad=True)
    x = leaf.clone()
    v = x[:2]
    x.mul_(2)                 # v's value is now 2 * leaf: its gradient must go through the mul
    v.sum().backward()
    assert leaf.grad.tolist() == [2.0, 2.0, 0.0]
    assert type(v.grad_fn).__name__ == 'AsStridedBackward0'


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_a_split_piece_after_its_base_is_written_in_place_raises(lib):
    x = lib.ones(4, requires_grad=True).clone()
    a, b = x.split(2)
    x.mul_(2)
    with pytest.raises(RuntimeError, match='its base or another view of its base has been modified inplace'):
        a.sum().backward()


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_an_input_no_running_formula_reads_is_not_saved(lib):
    leaf = lib.ones(3, requires_grad=True)
    a = leaf.clone()
    z = a * lib.full((3,), 3.0)     # only a needs grad, and a's formula reads the other operand: a is not saved
    a.add_(1)
    z.sum().backward()
    assert leaf.grad.tolist() == [3.0, 3.0, 3.0]
    b = leaf.clone()
    w = b * lib.full((3,), 3.0, requires_grad=True)     # now the other operand's formula reads b: saved
    b.add_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        w.sum().backward()


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_a_saved_output_is_checked_even_when_its_formula_does_not_run(lib):
    x = lib.ones(3, dtype=lib.float64, requires_grad=True).clone()
    y = lib.ldexp(x, lib.tensor([1, 2, 3]))     # the integer exponent needs no grad, the result is saved anyway
    y.mul_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        y.sum().backward()


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
@pytest.mark.parametrize('write', ['mul_', 'copy_', 'out=', 'add_ grad'])
def test_writing_into_an_expanded_tensor_raises(lib, write):
    x = lib.randn(3, 1).expand(3, 4)
    with pytest.raises(RuntimeError, match='more than one element of the written-to tensor refers to a single'):
        if write == 'mul_':
            x.mul_(2)
        elif write == 'copy_':
            x.copy_(lib.ones(3, 4))
        elif write == 'out=':
            lib.add(lib.ones(3, 4), 1, out=x)
        else:
            lib.randn(3, 1, requires_grad=True).clone().expand(3, 4).add_(1)


@pytest.mark.parametrize('lib', [torch, ember], ids=['torch', 'ember'])
def test_fill_and_zero_may_write_into_an_expanded_tensor(lib):
    base = lib.zeros(3, 1)
    x = base.expand(3, 4)
    x.fill_(5)
    assert base.tolist() == [[5.0], [5.0], [5.0]]
    x.zero_()
    assert base.tolist() == [[0.0], [0.0], [0.0]]


@pytest.mark.parametrize('device', ['cpu', 'meta'])
def test_view_replay_runs_in_operators(device):
    """Rebasing a base after an in-place write into its view (CopySlices) computes the region and the gradient
    maps with operators: it works on Meta, and a dispatch mode sees the backward's index_fill/index_select."""
    from ember.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    x = ember.randn(4, 4, device=device, requires_grad=True)
    b = x.clone()
    b[1:3, ::2].mul_(3)
    with Log() as log:
        b.sum().backward()
    assert x.grad.device.type == device and tuple(x.grad.shape) == (4, 4)
    # the view's region of the base's gradient is replaced by what mul_'s node gives it (index_copy)
    assert 'aten.index_copy.default' in log.ops and 'aten.index_select.default' in log.ops
    if device == 'cpu':
        want = [[1., 1., 1., 1.], [3., 1., 3., 1.], [3., 1., 3., 1.], [1., 1., 1., 1.]]
        assert x.grad.tolist() == want
    if device == 'cpu':
        expected = ember.ones(4, 4)
        expected[1:3, ::2] = 3
        assert ember.equal(x.grad, expected)
