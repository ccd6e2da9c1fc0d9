"""Autograd benchmark: ember against torch (CPU, one process), forward+backward.

Cases:
  small   ((a*b).sin() + c).sum() on (32, 32): engine and per-node overhead
  mlp     784-512-512-10 ReLU MLP at batch 128: the work is in the kernels
and the bytes still held by saved tensors after backward (must be 0). Times are the best of\nalternating runs (the two libraries see the same machine load).

Run: python bench/bench_autograd.py [--profile] [--torch-threads N]
(--profile: cProfile of ember's small case; --torch-threads: torch.set_num_threads(N), e.g. 1 on a loaded
machine where torch's intra-op threads contend for cores)
Targets: small <= 3x torch, mlp <= 1.5x torch.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember  # noqa: E402
import torch  # noqa: E402
from ember.autograd.graph import saved_tensors_nbytes  # noqa: E402



def bench_pair(fe, ft, min_time=1.0, min_runs=7):
    """Best time of each of two functions, run alternately so that both see the same machine load."""
    for f in (fe, ft, fe, ft):
        f()
    te, tt = [], []
    start = time.perf_counter()
    while len(te) < min_runs or time.perf_counter() - start < min_time:
        for f, acc in ((fe, te), (ft, tt)):
            t0 = time.perf_counter()
            f()
            acc.append(time.perf_counter() - t0)
    return min(te), min(tt)


def _relu(lib):
    f = getattr(lib.nn.functional, 'relu', None) if hasattr(lib, 'nn') else None
    return f if f is not None else (lambda x: lib.where(x > 0, x, lib.zeros_like(x)))


def small_case(lib):
    rng = np.random.default_rng(0)
    a, b, c = (lib.tensor(rng.standard_normal((32, 32)).astype(np.float32), requires_grad=True) for _ in range(3))

    def step():
        out = ((a * b).sin() + c).sum()
        out.backward()
        return out
    return step, (a, b, c)


def mlp_case(lib):
    rng = np.random.default_rng(0)
    f32 = lambda *s: lib.tensor((rng.standard_normal(s) * 0.05).astype(np.float32))
    w1, b1 = f32(512, 784).requires_grad_(), f32(512).requires_grad_()
    w2, b2 = f32(512, 512).requires_grad_(), f32(512).requires_grad_()
    w3, b3 = f32(10, 512).requires_grad_(), f32(10).requires_grad_()
    x = f32(128, 784)
    relu = _relu(lib)
    linear = getattr(lib.nn.functional, 'linear', None) if hasattr(lib.nn, 'functional') else None
    if linear is None:
        linear = lambda x, w, b: x.matmul(w.t()) + b
    params = (w1, b1, w2, b2, w3, b3)

    def step():
        for p in params:
            p.grad = None
        h = relu(linear(x, w1, b1))
        h = relu(linear(h, w2, b2))
        out = linear(h, w3, b3).sum()
        out.backward()
        return out
    return step, params


def mlp_numpy_floor():
    """The same MLP step written directly in NumPy (8 matmuls, ReLU masks): what ember's kernels cost
    without dispatch, autograd or tensors, so that ember's own overhead is visible."""
    rng = np.random.default_rng(0)
    f32 = lambda *s: (rng.standard_normal(s) * 0.05).astype(np.float32)
    w1, w2, w3, x = f32(512, 784), f32(512, 512), f32(10, 512), f32(128, 784)

    def step():
        h1 = np.maximum(x @ w1.T, 0)
        h2 = np.maximum(h1 @ w2.T, 0)
        g = np.ones((128, 10), np.float32)
        gh2 = (g @ w3) * (h2 > 0)
        gh1 = (gh2 @ w2) * (h1 > 0)
        return g.T @ h2, gh2.T @ h1, gh1.T @ x, g.sum(0), gh2.sum(0), gh1.sum(0)
    return step


def saved_after_backward():
    a = ember.ones(32, 32, requires_grad=True)
    y = ((a * a).sin() + a).exp()
    before = saved_tensors_nbytes(y)
    y.sum().backward()
    return before, saved_tensors_nbytes(y)


def main():
    if '--torch-threads' in sys.argv:
        torch.set_num_threads(int(sys.argv[sys.argv.index('--torch-threads') + 1]))
    rows = []
    for name, case in (('small (a*b).sin()+c, 32x32', small_case), ('MLP 784-512-512-10 b128', mlp_case)):
        te, tt = bench_pair(case(ember)[0], case(torch)[0])
        rows.append((name, te, tt))
    tn, _ = bench_pair(mlp_numpy_floor(), mlp_case(ember)[0])
    print(f"{'case':<32} {'ember':>10} {'torch':>10} {'ratio':>7}")
    for name, te, tt in rows:
        print(f'{name:<32} {te * 1e6:>8.1f}us {tt * 1e6:>8.1f}us {te / tt:>6.2f}x')
    print(f"{'MLP in plain NumPy (floor)':<32} {tn * 1e6:>8.1f}us")
    before, after = saved_after_backward()
    print(f'saved-tensor bytes: {before} before backward, {after} after backward (must be 0)')
    if '--profile' in sys.argv:
        import cProfile
        import pstats
        step, _ = small_case(ember)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(2000):
            step()
        pr.disable()
        pstats.Stats(pr).sort_stats('tottime').print_stats(20)


if __name__ == '__main__':
    main()
