"""Gaps found by running published programs and libraries' test suites in the session of 2026-11-28 (third):
each test compares ember with torch in the same process."""
import numpy as np
import pytest
import torch

import ember


def test_clip_grad_norm_computes_as_torch():
    """torch's get_total_norm: each gradient's vector_norm, then the norm of their stack (not a sum of squares)."""
    rng = np.random.default_rng(1)
    shapes = [(64, 32), (512,), (65, 12), (7,), (3, 5, 2)]
    grads = [(rng.standard_normal(s) * 1e-2).astype('float32') for s in shapes]
    out = []
    for lib in (torch, ember):
        ps = [lib.nn.Parameter(lib.zeros(s)) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(ps, 0.5)
        norms = [lib.nn.utils.get_total_norm([p.grad for p in ps], q).item() for q in (1, float('inf'), 0, 3.5)]
        out.append((total.item(), norms, [p.grad.numpy().copy() for p in ps]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)
    for a, b in zip(out[0][2], out[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9)
    assert ember.nn.utils.get_total_norm([]).item() == torch.nn.utils.get_total_norm([]).item() == 0.0
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match='non-finite'):
            lib.nn.utils.get_total_norm([lib.tensor([float('inf')]), lib.ones(2)], error_if_nonfinite=True)
