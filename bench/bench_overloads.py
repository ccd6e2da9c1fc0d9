"""Calls that go through an overload group's chooser (ember/_ops/overloads.py), ember beside torch in one
process: µs per call (min of 5 timeit runs) and the ratio.

    python bench/bench_overloads.py
"""
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

CASES = ['x.div(y)', 'x.div(2)', 'x.masked_fill(m, 0.)', 'L.max(x, 1)', 'x.repeat_interleave(2)',
         'L.searchsorted(s, x)']


def per_call(stmt, env, n=20000):
    return min(timeit.repeat(stmt, globals=env, number=n, repeat=5)) / n * 1e6


def main():
    a = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    print(f"{'case':28s} {'ember us':>9s} {'torch us':>9s} {'ratio':>6s}")
    for stmt in CASES:
        times = []
        for L in (ember, torch):
            x = L.tensor(a)
            env = {'L': L, 'x': x, 'y': x + 1, 'm': x > 0, 's': L.linspace(-2, 2, 9)}
            times.append(per_call(stmt, env))
        print(f'{stmt:28s} {times[0]:9.2f} {times[1]:9.2f} {times[0] / times[1]:6.2f}')


if __name__ == '__main__':
    main()
