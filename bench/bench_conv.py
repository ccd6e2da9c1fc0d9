"""Kernel-level timings of the CNN benchmark's convolution and max-pool work, ember's NumPy kernels beside torch.

Each row is one kernel call on the shapes `bench_train.py --case cnn` runs (batch 64, 1x28x28 input,
Conv2d(1,16,3,p=1) -> max_pool2d(2) -> Conv2d(16,32,3,p=1) -> max_pool2d(2)); median ms of interleaved
repetitions. Pin it for stable figures:

    taskset -c 1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/bench_conv.py

``--shapes`` adds a few other shapes (strided, grouped, dilated, float64, 1d/3d) to check for regressions;
``--base FILE`` times another copy of the kernel module in the same interleaved loop (A/B of a change:
``git show HEAD~1:ember/_backends/cpu/nn_ops.py > /tmp/old.py; ... --base /tmp/old.py``).
"""
import importlib.util
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ember._backends.cpu import nn_ops as K  # noqa: E402


CLOCK = time.perf_counter


def median_ms(fns, reps):
    """Interleave the callables `reps` times; median ms of each."""
    ts = [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            t = CLOCK()
            f()
            ts[i].append(CLOCK() - t)
    return [sorted(t)[len(t) // 2] * 1e3 for t in ts]


def load_module(path):
    spec = importlib.util.spec_from_file_location('nn_ops_base', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cases(rng, extra, K, B, resnet=False):
    """(name, ember callable, base callable, torch callable) for each kernel call; B is the base module or K."""
    import torch
    A = torch.ops.aten
    out = []

    def conv(name, N, C, O, HW, k, s=1, p=1, d=1, g=1, dtype=np.float32):
        nd = len(HW)
        x = rng.standard_normal((N, C) + HW).astype(dtype)
        w = rng.standard_normal((O, C // g) + (k,) * nd).astype(dtype)
        b = rng.standard_normal(O).astype(dtype)
        S, P, D = (s,) * nd, (p,) * nd, (d,) * nd
        y = K.convolution(x, w, b, S, P, D, False, (0,) * nd, g)
        gy = rng.standard_normal(y.shape).astype(dtype)
        tx, tw, tb, tg = (torch.from_numpy(a) for a in (x, w, b, gy))
        out.append((f'{name} fwd', *(lambda M=M: M.convolution(x, w, b, S, P, D, False, (0,) * nd, g) for M in (K, B)),
                    lambda: A.convolution(tx, tw, tb, S, P, D, False, (0,) * nd, g)))
        out.append((f'{name} grad w', *(lambda M=M: M.convolution_backward_weight(gy, x, w.shape, S, P, D, g)
                                        for M in (K, B)),
                    lambda: A.convolution_backward(tg, tx, tw, None, S, P, D, False, (0,) * nd, g,
                                                   (False, True, False))))
        if C > 1:
            opad = tuple(int(v) for v in np.array(x.shape[2:]) - K.convolution(gy, w, None, S, P, D, True, (0,) * nd,
                                                                                 g).shape[2:])
            out.append((f'{name} grad x', *(lambda M=M: M.convolution(gy, w, None, S, P, D, True, opad, g)
                                            for M in (K, B)),
                        lambda: A.convolution_backward(tg, tx, tw, None, S, P, D, False, (0,) * nd, g,
                                                       (True, False, False))))

    def pool(name, N, C, HW, k, s=None, p=0, d=1, ceil=False, dtype=np.float32):
        nd = len(HW)
        x = rng.standard_normal((N, C) + HW).astype(dtype)
        kk, ss, pp, dd = (k,) * nd, (s or k,) * nd, (p,) * nd, (d,) * nd
        v, i = K.KERNELS[f'max_pool{nd}d_with_indices'](x, kk, ss, pp, dd, ceil)
        gy = rng.standard_normal(v.shape).astype(dtype)
        tx, tg, ti = (torch.from_numpy(a) for a in (x, gy, i))
        tf = getattr(A, f'max_pool{nd}d_with_indices')
        tb = getattr(A, f'max_pool{nd}d_with_indices_backward')
        out.append((f'{name} fwd', *(lambda M=M: M.KERNELS[f'max_pool{nd}d_with_indices'](x, kk, ss, pp, dd, ceil)
                                     for M in (K, B)), lambda: tf(tx, kk, ss, pp, dd, ceil)))
        out.append((f'{name} bwd', *(lambda M=M: M.KERNELS[f'max_pool{nd}d_with_indices_backward'](gy, x, kk, ss, pp,
                                                                                                    dd, ceil, i)
                                     for M in (K, B)), lambda: tb(tg, tx, kk, ss, pp, dd, ceil, ti)))

    if resnet:      # bench_vision.py's resnet18 step: batch 16, 64x64 images
        conv('rn stem 3->64 k7 s2', 16, 3, 64, (64, 64), 7, s=2, p=3)
        pool('rn pool 3x3 s2 p1', 16, 64, (32, 32), 3, s=2, p=1)
        for c, hw in ((64, 16), (128, 8), (256, 4), (512, 2)):
            if c > 64:
                conv(f'rn {c // 2}->{c} s2 @{hw * 2}', 16, c // 2, c, (hw * 2, hw * 2), 3, s=2)
                conv(f'rn {c // 2}->{c} 1x1 s2 @{hw * 2}', 16, c // 2, c, (hw * 2, hw * 2), 1, s=2, p=0)
            conv(f'rn {c}->{c} @{hw}', 16, c, c, (hw, hw), 3)
        return out
    conv('conv1 1->16 28x28', 64, 1, 16, (28, 28), 3)
    pool('pool1 16x28x28', 64, 16, (28, 28), 2)
    conv('conv2 16->32 14x14', 64, 16, 32, (14, 14), 3)
    pool('pool2 32x14x14', 64, 32, (14, 14), 2)
    if extra:
        conv('conv 3->64 32x32 s2', 32, 3, 64, (32, 32), 3, s=2)
        conv('conv 32->32 g4 16x16', 32, 32, 32, (16, 16), 3, g=4)
        conv('conv 16->16 d2 16x16', 32, 16, 16, (16, 16), 3, p=2, d=2)
        conv('conv 64->64 1x1 16x16', 32, 64, 64, (16, 16), 1, p=0)
        conv('conv 16->32 14x14 f64', 64, 16, 32, (14, 14), 3, dtype=np.float64)
        conv('conv1d 16->32 L256', 32, 16, 32, (256,), 5, p=2)
        conv('conv3d 4->8 8^3', 8, 4, 8, (8, 8, 8), 3)
        pool('pool 3x3 s2 p1 32x32', 32, 16, (32, 32), 3, s=2, p=1)
        pool('pool 2x2 ceil 15x15', 64, 16, (15, 15), 2, ceil=True)
        pool('pool 2x2 odd 15x15', 64, 16, (15, 15), 2)
        pool('pool 2x2 f64', 64, 16, (28, 28), 2, dtype=np.float64)
        pool('pool3d 2 8^3', 8, 8, (8, 8, 8), 2)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reps', type=int, default=60)
    ap.add_argument('--shapes', action='store_true', help='also time other shapes (regression check)')
    ap.add_argument('--resnet', action='store_true', help="the resnet18 step's shapes instead (bench_vision.py)")
    ap.add_argument('--cpu', action='store_true', help='CPU time of all threads instead of wall time (a loaded '
                    'machine; torch\'s spinning OpenMP threads then count too)')
    ap.add_argument('--base', help='another nn_ops.py to time side by side (A/B)')
    a = ap.parse_args()
    global CLOCK
    if a.cpu:
        CLOCK = time.process_time
    import torch
    torch.set_num_threads(int(os.environ.get('OMP_NUM_THREADS', torch.get_num_threads())))
    B = load_module(a.base) if a.base else K
    rows = cases(np.random.default_rng(0), a.shapes, K, B, a.resnet)
    print(f'{"kernel":28s} {"ember ms":>9s}' + (f' {"base ms":>9s}' if a.base else '') + f' {"torch ms":>9s}')
    tot = [0.0, 0.0, 0.0]
    for name, fe, fb, ft in rows:
        fns = [fe, fb, ft] if a.base else [fe, ft]
        for f in fns:
            f()
        ts = median_ms(fns, a.reps)
        if not a.base:
            ts.insert(1, float('nan'))
        if name.startswith(('conv1 ', 'conv2 ', 'pool1 ', 'pool2 ', 'rn ')):
            tot = [u + v for u, v in zip(tot, ts)]
        print(f'{name:28s} {ts[0]:9.3f}' + (f' {ts[1]:9.3f}' if a.base else '') + f' {ts[2]:9.3f}')
    print(f'{"resnet18 kernels (each once)" if a.resnet else "CNN benchmark total":28s} {tot[0]:9.3f}' + (f' {tot[1]:9.3f}' if a.base else '') + f' {tot[2]:9.3f}')


if __name__ == '__main__':
    main()
