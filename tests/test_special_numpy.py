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
