"""The calls a program makes outside its models' big operators: indexing, iterating a tensor, views and reshapes,
cat/stack, tensors from Python lists, element assignment. ember against torch in one process.

    python bench/bench_small_ops.py               # every case: µs per call, ember, torch, ratio (lower is better)
    python bench/bench_small_ops.py --only 'a[3]' 'list(v)'

Timing: each case's figure is the minimum over rounds of a loop's CPU time (``time.thread_time``), per call. CPU
time, not wall time: on a shared machine another job's time slices are not counted, so the figures hold under load
(the cache effects of sharing remain; compare ratios, and a base tree on the same machine in the same minutes).
To compare two ember trees, copy this file into the other tree's ``bench/`` and run both (each imports the
ember beside it).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

# (label, statement, calls per round): names a (64, 10), v (100,), m (8, 8, 8), s 0-d, idx, L (1000 x 100 floats)
CASES = [
    ('a[3]', 'a[3]', 5000), ('a[3, 4]', 'a[3, 4]', 5000), ('a[1:5]', 'a[1:5]', 5000), ('a[:, 2]', 'a[:, 2]', 5000),
    ('m[1, 2]', 'm[1, 2]', 5000), ('a[None]', 'a[None]', 5000), ('v[idx]', 'v[idx]', 5000),
    ('a[3] = 1.0', 'a.__setitem__(3, 1.0)', 5000), ('v[5].item()', 'v[5].item()', 5000),
    ('a.shape', 'a.shape', 20000), ('a.size()', 'a.size()', 20000),
    ('list(v) (100 rows)', 'list(v)', 200), ('v.unbind(0)', 'v.unbind(0)', 200),
    ('a.view(-1)', 'a.view(-1)', 5000), ('a.reshape(10, 64)', 'a.reshape(10, 64)', 5000),
    ('cat([v, v])', 'lib.cat([v, v])', 5000), ('stack([v, v])', 'lib.stack([v, v])', 5000),
    ('stack(64 x (784,))', 'lib.stack(rows)', 500),
    ('tensor([1., 2.])', 'lib.tensor([1., 2.])', 5000), ('tensor(1000 x 100 list)', 'lib.tensor(L)', 5),
    ('q + q (2,3,4,5)', 'q + q', 5000), ('s.squeeze(0)', 's.squeeze(0)', 5000), ('zeros(3)', 'lib.zeros(3)', 5000),
    ('cumsum (1M float32)', 'lib.cumsum(big, 0)', 10),
    ('Generator().manual_seed(1) + randn(4)', 'lib.randn(4, generator=lib.Generator().manual_seed(1))', 500),
]


def namespace(lib):
    g = lib.Generator().manual_seed(0)
    return {'lib': lib, 'a': lib.randn(64, 10, generator=g), 'v': lib.randn(100, generator=g),
            'm': lib.randn(8, 8, 8, generator=g), 'idx': lib.tensor([1, 5, 7]),
            'rows': [lib.randn(784, generator=g) for _ in range(64)],
            'L': [[float(i * j) for j in range(100)] for i in range(1000)],
            'q': lib.randn(2, 3, 4, 5, generator=g), 's': lib.zeros(1, 1, 3), 'big': lib.randn(1 << 20, generator=g)}


def per_call(stmt, ns, n, rounds):
    code = compile(f'for _ in range({n}):\n    {stmt}', '<case>', 'exec')
    best = float('inf')
    for _ in range(rounds):
        t = time.thread_time()
        exec(code, ns)
        best = min(best, time.thread_time() - t)
    return best / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--only', nargs='*')
    ap.add_argument('--rounds', type=int, default=7)
    args = ap.parse_args()
    spaces = {'ember': namespace(ember), 'torch': namespace(torch)}
    print(f'ember {ember.__file__}')
    print(f'{"case":26s} {"ember us":>10s} {"torch us":>10s} {"ratio":>7s}')
    for label, stmt, n in CASES:
        if args.only and label not in args.only:
            continue
        e = per_call(stmt, spaces['ember'], n, args.rounds)
        t = per_call(stmt, spaces['torch'], n, args.rounds)
        print(f'{label:26s} {e:10.2f} {t:10.2f} {e / t:7.2f}')


if __name__ == '__main__':
    np.seterr(all='ignore')
    main()
