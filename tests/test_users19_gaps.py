"""Gaps found running published libraries under `ember run` (2026-11-27 night: lucidrains' libraries, torchani,
MACE, schnetpack, ...), each compared with torch."""
import pytest
import torch

import ember


def _chain(t):
    names, f = [], t.grad_fn
    while f is not None and type(f).__name__ != 'AccumulateGrad':
        names.append(type(f).__name__)
        f = f.next_functions[0][0]
    return names


@pytest.mark.parametrize('make', [lambda a: a.transpose(1, 2).reshape(2, 12), lambda a: a[:, :2].reshape(4, 2, 2),
                                  lambda a: a.transpose(1, 2).flatten(), lambda a: a.reshape(6, 4)])
def test_reshape_that_copies_is_unsafe_view_of_a_clone(make):
    """torch's reshape copies into a clone seen through _unsafe_view: no view of anything (``_base`` None) and
    the graph UnsafeViewBackward0 over CloneBackward0 (vector-quantize's heads, local-attention's padding)."""
    want = make(torch.randn(2, 3, 4, requires_grad=True))
    got = make(ember.randn(2, 3, 4, requires_grad=True))
    assert _chain(got) == _chain(want)
    assert (got._base is None) == (want._base is None) and got._is_view() == want._is_view()


@pytest.mark.parametrize('call', [
    lambda lib, a, w: lib.addmm(lib.zeros(3), a, w), lambda lib, a, w: lib.addmm(lib.zeros(3).bfloat16(), a, w),
    lambda lib, a, w: lib.addmm(lib.zeros(3), a.float(), w.double()), lambda lib, a, w: a @ w,
    lambda lib, a, w: lib.nn.functional.linear(a, w.t(), lib.zeros(3)),
    lambda lib, a, w: lib.nn.functional.linear(a[None], w.t(), lib.zeros(3)),
    lambda lib, a, w: lib.nn.functional.linear(a.float(), w.t(), lib.zeros(3).double()),
    lambda lib, a, w: lib.nn.functional.linear(a.float()[0], w.t(), lib.zeros(3).double()),
    lambda lib, a, w: lib.nn.functional.linear(a, w.t())])
def test_matrix_product_dtype_errors_use_torchs_words(call):
    """addmm and a linear with bias say "mat1 and mat2 must have the same dtype" (mm's words are its own)."""
    with pytest.raises(RuntimeError) as want:
        call(torch, torch.randn(2, 4).bfloat16(), torch.randn(4, 3))
    with pytest.raises(RuntimeError) as got:
        call(ember, ember.randn(2, 4).bfloat16(), ember.randn(4, 3))
    assert str(got.value) == str(want.value)
