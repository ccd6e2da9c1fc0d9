"""Accuracy and speed of ember's NumPy special functions (NOTE [special functions without scipy]) against
scipy.special and torch, side by side in one process: max relative error over a grid, and time per element.

    python bench/special_accuracy.py
"""
import math
import time

import numpy as np
import scipy.special as sp
import torch

from ember._backends.cpu import _special as S


def rel(a, b, floor=1e-300):
    m = np.isfinite(b) & (np.abs(b) > floor)
    return float(np.max(np.abs(a[m] - b[m]) / np.abs(b[m])))


def timed(fn, x, n=5):
    best = math.inf
    for _ in range(n):
        t = time.perf_counter()
        fn(x)
        best = min(best, time.perf_counter() - t)
    return best / x.size * 1e9


x = np.linspace(-30, 30, 200001)
pos = np.linspace(0.01, 40, 200001)
y = np.linspace(-0.999999, 0.999999, 200001)
cases = [('erf', S.erf, sp.erf, torch.erf, x), ('erfc', S.erfc, sp.erfc, torch.erfc, x[x < 26]),
         ('erfinv', S.erfinv, sp.erfinv, torch.erfinv, y),
         ('lgamma', S.lgamma, sp.gammaln, torch.lgamma, pos),
         ('digamma', S.digamma, sp.psi, torch.digamma, pos),
         ('polygamma(1)', lambda a: S.polygamma(1, a), lambda a: sp.polygamma(1, a),
          lambda t: torch.polygamma(1, t), pos),
         ('polygamma(3)', lambda a: S.polygamma(3, a), lambda a: sp.polygamma(3, a),
          lambda t: torch.polygamma(3, t), pos)]
print(f"{'function':14s} {'max rel err vs scipy':>21s} {'vs torch':>10s} {'ns/elem ember':>14s} {'scipy':>7s} {'ratio':>6s}")
for name, mine, ref, tref, grid in cases:
    e, r = mine(grid), ref(grid)
    t = tref(torch.from_numpy(grid)).numpy()
    te, ts = timed(mine, grid), timed(ref, grid)
    print(f'{name:14s} {rel(e, r):21.1e} {rel(e, t):10.1e} {te:14.1f} {ts:7.1f} {te / ts:6.1f}')
