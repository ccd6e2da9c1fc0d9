"""API gaps found by running torch programs: cat/stack layouts of channels_last inputs, random ranges and their
errors, tensor subclasses set by ``__class__``, small torch namespaces, and the control-flow operators
``cond``/``while_loop``. Each is checked against torch 2.13."""
import numpy as np
import pytest
import torch

import ember


# --- cat / stack keep a common channels_last layout (NOTE [output strides]) ---------------------------------------

def _laid_out(lib, shape, layout, device):
    t = lib.arange(float(np.prod(shape))).reshape(shape).to(device)
    if layout == 'channels_last':
        return t.to(memory_format=lib.channels_last)
    if layout == 'channels_last_3d':
        return t.to(memory_format=lib.channels_last_3d)
    if layout == 'transposed':
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    return t


_LAYOUTS = [((2, 3, 4, 5), ('channels_last', 'channels_last')),
            ((2, 3, 4, 5), ('channels_last', 'contiguous')),
            ((2, 3, 4, 5), ('contiguous', 'channels_last')),
            ((2, 3, 4, 5), ('transposed', 'transposed')),
            ((2, 3, 4, 5, 6), ('channels_last_3d', 'channels_last_3d')),
            ((2, 3, 4, 5, 6), ('channels_last_3d', 'contiguous')),
            ((2, 1, 4, 5), ('channels_last', 'channels_last')),     # size-1 channels: torch's ambiguous cases
            ((2, 3, 1, 1), ('channels_last', 'channels_last'))]


@pytest.mark.parametrize('device', ['cpu', 'meta'])
@pytest.mark.parametrize('op', ['cat', 'stack'])
@pytest.mark.parametrize('shape,layouts', _LAYOUTS)
def test_cat_stack_strides(shape, layouts, op, device):
    for dim in range(-1, len(shape) + (op == 'stack')):
        ours = getattr(ember, op)([_laid_out(ember, shape, lay, device) for lay in layouts], dim)
        theirs = getattr(torch, op)([_laid_out(torch, shape, lay, device) for lay in layouts], dim)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.stride() == theirs.stride(), (dim, ours.stride(), theirs.stride())
        if device == 'cpu':
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_cat_channels_last_mixed_dtypes_and_empty():
    for lib in (ember, torch):
        a = lib.randn(2, 3, 4, 5).to(memory_format=lib.channels_last)
        lib.r1 = lib.cat([a, a.double()], 1)
        lib.r2 = lib.cat([a, lib.empty(0)], 0)      # a legacy empty input suggests contiguous
    assert ember.r1.stride() == torch.r1.stride() and ember.r1.dtype == ember.float64
    assert ember.r2.stride() == torch.r2.stride()


@pytest.mark.parametrize('fmt', ['channels_last', 'contiguous_format'])
@pytest.mark.parametrize('shape,layout', [((2, 3, 4, 5), 'contiguous'), ((2, 1, 4, 5), 'contiguous'),
                                          ((2, 3, 1, 1), 'contiguous'), ((2, 3, 4, 5), 'channels_last'),
                                          ((2, 3, 4, 5), 'transposed')])
def test_to_memory_format(shape, layout, fmt):
    """``to(memory_format=)`` returns the tensor itself when its strides suggest the format, else an exact copy."""
    for dtype in (None, 'float64'):
        got = []
        for lib in (ember, torch):
            t = _laid_out(lib, shape, layout, 'cpu')
            args = (getattr(lib, dtype),) if dtype else ()
            r = t.to(*args, memory_format=getattr(lib, fmt))
            got.append((r.stride(), r.data_ptr() == t.data_ptr()))
        assert got[0] == got[1]
