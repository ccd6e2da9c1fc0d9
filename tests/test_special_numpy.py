"""The special functions run on NumPy alone (NOTE [special functions without scipy]): accurate against torch
over wide grids, and working in a process where scipy cannot be imported."""
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

GRIDS = {
    'erf': np.linspace(-8, 8, 4001), 'erfc': np.linspace(-8, 26, 4001), 'erfinv': np.linspace(-0.9999, 0.9999, 4001),
    'lgamma': np.concatenate([np.linspace(-20.5, 60, 4001), [0.0, -0.0, -3.0, np.inf, -np.inf, np.nan]]),
    'digamma': np.concatenate([np.linspace(-20.25, 60, 4001), [0.0, -0.0, -3.0, np.inf]]),
}


@pytest.mark.parametrize('name', sorted(GRIDS))
@pytest.mark.parametrize('dtype', ['float64', 'float32'])
def test_special_functions_match_torch_on_wide_grids(name, dtype):
    x = GRIDS[name].astype(dtype)
    mine = getattr(ember, name)(ember.from_numpy(x)).numpy()
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    tol = 1e-10 if dtype == 'float64' else 2e-6
    np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize('n', [1, 2, 3, 5])
def test_polygamma_matches_torch(n):
    x = np.linspace(0.05, 50, 2001)
    np.testing.assert_allclose(ember.polygamma(n, ember.from_numpy(x)).numpy(),
                               torch.polygamma(n, torch.from_numpy(x)).numpy(), rtol=1e-8)


_BLOCKED = '''
import importlib.abc, json, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('scipy', 'torch'):
            raise ImportError(name + ' is blocked')
sys.meta_path.insert(0, Block())
import ember, ember.nn.functional as F
x = ember.linspace(-3, 3, 13, dtype=ember.float64)
p = ember.linspace(0.5, 4, 8, dtype=ember.float64)
out = {'erf': x.erf(), 'erfc': x.erfc(), 'erfinv': (x / 4).erfinv(), 'lgamma': p.lgamma(), 'digamma': p.digamma(),
       'polygamma2': ember.polygamma(2, p), 'gelu': F.gelu(x), 'gelu32': F.gelu(ember.linspace(-3, 3, 4096))}
g = x.clone().requires_grad_()
F.gelu(g).sum().backward()
out['gelu_grad'] = g.grad
print(json.dumps({k: v.tolist() for k, v in out.items()}))
'''


def test_every_special_op_works_with_scipy_blocked():
    r = subprocess.run([sys.executable, '-c', _BLOCKED], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    p = torch.linspace(0.5, 4, 8, dtype=torch.float64)
    g = x.clone().requires_grad_()
    torch.nn.functional.gelu(g).sum().backward()
    want = {'erf': x.erf(), 'erfc': x.erfc(), 'erfinv': (x / 4).erfinv(), 'lgamma': p.lgamma(),
            'digamma': p.digamma(), 'polygamma2': torch.polygamma(2, p), 'gelu': torch.nn.functional.gelu(x),
            'gelu32': torch.nn.functional.gelu(torch.linspace(-3, 3, 4096)), 'gelu_grad': g.grad}
    assert sorted(got) == sorted(want)
    for k, v in want.items():      # gelu32: float32 with the OpInfo records' float32 tolerance
        np.testing.assert_allclose(got[k], v.tolist(), rtol=1e-6, atol=1e-5 if k == 'gelu32' else 1e-6, err_msg=k)


def test_float32_erf_is_within_three_ulps_and_keeps_its_specials():
    """NOTE [float32 erf]: the float32 kernel (two polynomial fits) against the float64 erf, over a dense grid
    across both pieces and the clip at 3.92; signed zeros, infinities and NaN as torch; large arrays (split in
    blocks over the threads) give the same values as small ones."""
    from ember._backends.cpu._special import erf as erf64
    x = np.concatenate([np.linspace(-6, 6, 240001), np.geomspace(1e-38, 1, 2000), -np.geomspace(1e-38, 1, 2000),
                        [0.99999994, 1.0, 1.0000001, 3.9199998, 3.92, 3.9200001]]).astype(np.float32)
    got = ember.erf(ember.from_numpy(x)).numpy()
    ref = erf64(x.astype(np.float64))
    ulps = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 3, (x[ulps.argmax()], got[ulps.argmax()], ref[ulps.argmax()])
    np.testing.assert_allclose(got, torch.erf(torch.from_numpy(x)).numpy(), rtol=1.3e-6, atol=1e-7)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    out = ember.erf(ember.from_numpy(special)).numpy()
    assert out[0] == 0 and not np.signbit(out[0]) and out[1] == 0 and np.signbit(out[1])
    assert out[2] == 1 and out[3] == -1 and np.isnan(out[4])
    small = ember.erf(ember.from_numpy(x[:1000].copy())).numpy()          # below the blocked size
    assert np.array_equal(small, got[:1000])
    half = ember.erf(ember.tensor(0.5))                                    # 0-d
    assert half.shape == () and float(half) == float(ember.erf(ember.tensor([0.5])).numpy()[0])
