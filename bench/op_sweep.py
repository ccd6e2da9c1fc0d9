"""Kernel throughput sweep: ~70 common operators on 256K-element float32 tensors, ember and torch side by side
in one process, sorted by the time ratio (ember / torch, highest first). It finds the operators whose NumPy
formulation is far off torch's vectorised kernel (pow(x, 3.0) through powf, a float64 erf, a select where
one clip does), which per-op overhead benchmarks (bench_ops.py, small tensors) do not show.

    python bench/op_sweep.py                 # both libraries on one intra-op thread
    python bench/op_sweep.py --threads 2     # their default threading on this machine
    python bench/op_sweep.py --all           # every row, not the 30 slowest

Each row is the median of 15 calls after one warm-up; the inputs are x ~ 2 N(0, 1), p = |x| + 0.1 and
u = clip(x / 5, -0.99, 0.99) (the same arrays for both libraries).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

N = 1 << 18
OPS = {    # name: f(library, x, p, u)
    'exp': lambda L, x, p, u: L.exp(x),
    'log': lambda L, x, p, u: L.log(p),
    'tanh': lambda L, x, p, u: L.tanh(x),
    'sigmoid': lambda L, x, p, u: L.sigmoid(x),
    'sqrt': lambda L, x, p, u: L.sqrt(p),
    'rsqrt': lambda L, x, p, u: L.rsqrt(p),
    'sin': lambda L, x, p, u: L.sin(x),
    'cos': lambda L, x, p, u: L.cos(x),
    'erf': lambda L, x, p, u: L.erf(x),
    'log1p': lambda L, x, p, u: L.log1p(p),
    'expm1': lambda L, x, p, u: L.expm1(x),
    'atan': lambda L, x, p, u: L.atan(x),
    'asin': lambda L, x, p, u: L.asin(u),
    'abs': lambda L, x, p, u: L.abs(x),
    'sign': lambda L, x, p, u: L.sign(x),
    'floor': lambda L, x, p, u: L.floor(x),
    'round': lambda L, x, p, u: L.round(x),
    'clamp': lambda L, x, p, u: L.clamp(x, -1, 1),
    'relu': lambda L, x, p, u: L.relu(x),
    'gelu': lambda L, x, p, u: L.nn.functional.gelu(x),
    'gelu tanh': lambda L, x, p, u: L.nn.functional.gelu(x, approximate='tanh'),
    'silu': lambda L, x, p, u: L.nn.functional.silu(x),
    'softplus': lambda L, x, p, u: L.nn.functional.softplus(x),
    'elu': lambda L, x, p, u: L.nn.functional.elu(x),
    'leaky_relu': lambda L, x, p, u: L.nn.functional.leaky_relu(x),
    'hardswish': lambda L, x, p, u: L.nn.functional.hardswish(x),
    'mish': lambda L, x, p, u: L.nn.functional.mish(x),
    'logsigmoid': lambda L, x, p, u: L.nn.functional.logsigmoid(x),
    'pow 2': lambda L, x, p, u: L.pow(x, 2),
    'pow 0.5': lambda L, x, p, u: L.pow(p, 0.5),
    'pow 1.5': lambda L, x, p, u: L.pow(p, 1.5),
    'pow t': lambda L, x, p, u: L.pow(p, u),
    'div': lambda L, x, p, u: x / p,
    'remainder': lambda L, x, p, u: L.remainder(x, 0.7),
    'fmod': lambda L, x, p, u: L.fmod(x, 0.7),
    'atan2': lambda L, x, p, u: L.atan2(x, p),
    'maximum': lambda L, x, p, u: L.maximum(x, p),
    'where': lambda L, x, p, u: L.where(x > 0, x, p),
    'lerp': lambda L, x, p, u: L.lerp(x, p, 0.3),
    'sum': lambda L, x, p, u: x.sum(),
    'mean': lambda L, x, p, u: x.mean(),
    'var': lambda L, x, p, u: x.var(),
    'max': lambda L, x, p, u: x.max(),
    'argmax': lambda L, x, p, u: x.argmax(),
    'norm': lambda L, x, p, u: x.norm(),
    'cumsum': lambda L, x, p, u: x.cumsum(0),
    'sort': lambda L, x, p, u: x.sort()[0],
    'topk': lambda L, x, p, u: x.topk(10)[0],
    'softmax': lambda L, x, p, u: L.softmax(x.reshape(512, -1), -1),
    'log_softmax': lambda L, x, p, u: L.log_softmax(x.reshape(512, -1), -1),
    'logsumexp': lambda L, x, p, u: L.logsumexp(x.reshape(512, -1), -1),
    'layer_norm': lambda L, x, p, u: L.nn.functional.layer_norm(x.reshape(512, -1), (512,)),
    'to half': lambda L, x, p, u: x.half(),
    'to int': lambda L, x, p, u: x.int(),
    'to double': lambda L, x, p, u: x.double(),
    'gt': lambda L, x, p, u: x > p,
    'isnan': lambda L, x, p, u: L.isnan(x),
    'nan_to_num': lambda L, x, p, u: L.nan_to_num(x),
    'dropout eval-ish': lambda L, x, p, u: L.nn.functional.dropout(x, 0.1),
    'bernoulli': lambda L, x, p, u: L.bernoulli(u.abs()),
    'randn': lambda L, x, p, u: L.randn(N),
    'rand': lambda L, x, p, u: L.rand(N),
    'multinomial': lambda L, x, p, u: L.multinomial(p.reshape(512,-1), 1),
    'index_select': lambda L, x, p, u: x.reshape(512, -1).index_select(0, L.arange(0, 512, 2)),
    'gather': lambda L, x, p, u: x.reshape(512,-1).gather(1, L.zeros(512, 64, dtype=L.long)),
    'embedding': lambda L, x, p, u: L.nn.functional.embedding(L.arange(256) % 64, x.reshape(512, -1)[:64]),
    'cross_entropy': lambda L, x, p, u: L.nn.functional.cross_entropy(x.reshape(512, -1), L.zeros(512, dtype=L.long)),
    'mse': lambda L, x, p, u: L.nn.functional.mse_loss(x, p),
    'tril': lambda L, x, p, u: x.reshape(512, -1).tril(),
    'masked_fill': lambda L, x, p, u: x.masked_fill(x > 0, 0.0),
    'transpose copy': lambda L, x, p, u: x.reshape(512, -1).t().contiguous(),
    'cat': lambda L, x, p, u: L.cat([x, p]),
    'flip': lambda L, x, p, u: x.flip(0),
    'roll': lambda L, x, p, u: x.roll(3),
    'unique': lambda L, x, p, u: L.unique((x * 10).int()),
    'bincount': lambda L, x, p, u: L.bincount((p * 10).long()),
}


def median_time(lib, f, args, reps=15):
    f(lib, *args)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f(lib, *args)
        ts.append(time.perf_counter() - t)
    return sorted(ts)[reps // 2]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--all', action='store_true')
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    ember.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    xn = (rng.standard_normal(N) * 2).astype(np.float32)
    pn = np.abs(xn) + np.float32(0.1)
    un = np.clip(xn / 5, -0.99, 0.99)
    ea = [ember.from_numpy(v.copy()) for v in (xn, pn, un)]
    ta = [torch.from_numpy(v.copy()) for v in (xn, pn, un)]
    rows = []
    for name, f in OPS.items():
        te, tt = median_time(ember, f, ea), median_time(torch, f, ta)
        rows.append((te / tt, name, te * 1e6, tt * 1e6))
    rows.sort(reverse=True)
    print(f'{len(rows)} operators, {N} float32 elements, {a.threads} thread(s); OpenBLAS kernels '
          f'{ember.backends.cpu.process_tuning()["blas_core"]}')
    print(f'{"operator":18s} {"ember us":>10s} {"torch us":>10s} {"ratio":>7s}')
    for r, name, te, tt in rows if a.all else rows[:30]:
        print(f'{name:18s} {te:10.1f} {tt:10.1f} {r:7.2f}')


if __name__ == '__main__':
    main()
