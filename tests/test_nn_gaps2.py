"""nn and autograd gaps found by running published libraries: the legacy CrossMapLRN2d (lightly), per-sample
gradients through ExpandedWeights (opacus), and the saved attributes of backward nodes (torch-pruning)."""
import numpy as np
import pytest
import torch

import ember


# --- CrossMapLRN2d ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize('shape,size', [((2, 7, 3, 4), 5), ((2, 3, 2, 2), 3), ((1, 6, 2, 3), 2), ((2, 9, 1, 2), 4),
                                        ((1, 2, 2, 2), 7)])
def test_cross_map_lrn2d_values_and_torch_gradient(shape, size):
    # torch's backward is its own formula (a window other than the forward's): compare the gradient with torch's
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    got = []
    for lib in (torch, ember):
        m = lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)
        t = lib.tensor(x, requires_grad=True)
        out = m(t)
        out.backward(lib.tensor(g))
        got.append((out.detach().numpy(), t.grad.numpy(), repr(m), out.grad_fn.name()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5, atol=1e-6)
    assert got[1][2:] == got[0][2:]


def test_cross_map_lrn2d_defaults_paths_and_errors():
    assert ember.nn.modules.CrossMapLRN2d is ember.nn.CrossMapLRN2d
    assert ember.nn.modules.normalization.CrossMapLRN2d is ember.nn.CrossMapLRN2d
    m, tm = ember.nn.CrossMapLRN2d(3), torch.nn.CrossMapLRN2d(3)
    assert (m.size, m.alpha, m.beta, m.k) == (tm.size, tm.alpha, tm.beta, tm.k)
    x = np.random.default_rng(1).standard_normal((2, 5, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(m(ember.tensor(x)).numpy(), tm(torch.tensor(x)).numpy(), rtol=1e-5)
    for lib, mod in ((torch, tm), (ember, m)):
        with pytest.raises(ValueError) as e:
            mod(lib.ones(2, 3, 4))
        assert str(e.value) == "CrossMapLRN2d: Expected input to be 4D, got 3D instead."
