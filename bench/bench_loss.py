"""cross_entropy latency, ember vs torch in one process (NOTE [cross_entropy timings] in
ember/nn/functional/_loss.py).

    taskset -c 1 env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/bench_loss.py

Shapes: the MLP benchmark's (128, 10) logits and the char-GPT's (1024, 65). Each case runs in rounds that
alternate ember and torch; a round times ``--n`` calls one by one, and the figure is the median call.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

torch.set_num_threads(1)


def cases(lib):
    rng = np.random.default_rng(0)
    out = []
    for n, c in ((128, 10), (1024, 65)):
        x = lib.from_numpy(rng.standard_normal((n, c)).astype(np.float32)).requires_grad_(True)
        y = lib.from_numpy(rng.integers(0, c, n))
        F = lib.nn.functional
        out.append((f'cross_entropy ({n}, {c}) forward', lambda x=x, y=y, F=F: F.cross_entropy(x, y)))
        out.append((f'cross_entropy ({n}, {c}) fwd+bwd', lambda x=x, y=y, F=F: F.cross_entropy(x, y).backward()))
    return out


def times(fn, n):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return ts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=300, help='calls per round')
    ap.add_argument('--rounds', type=int, default=10)
    args = ap.parse_args()
    print(f'{"case":<40}{"ember us":>10}{"torch us":>10}{"ratio":>8}')
    for (name, fe), (_, ft) in zip(cases(ember), cases(torch)):
        te, tt = [], []
        for fn in (fe, ft):
            times(fn, 20)      # warm up
        for _ in range(args.rounds):
            te += times(fe, args.n)
            tt += times(ft, args.n)
        me, mt = np.median(te) * 1e6, np.median(tt) * 1e6
        print(f'{name:<40}{me:>10.1f}{mt:>10.1f}{me / mt:>8.2f}')


if __name__ == '__main__':
    main()
