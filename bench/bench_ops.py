"""Per-operator latency, ember vs torch in one process (issue: foundation, section 6).

    python bench/bench_ops.py            # prints a table: case, ember us, torch us, ratio
    python bench/bench_ops.py --profile  # adds a cProfile of ember's (32,32) add

Each case is timed with timeit (best of 5 repeats); the ratio is ember/torch.
"""
import argparse
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

torch.set_num_threads(1)


def best(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def cases(lib):
    rng = np.random.default_rng(0)
    a32 = lib.from_numpy(rng.random((32, 32), dtype=np.float32))
    b32 = lib.from_numpy(rng.random((32, 32), dtype=np.float32))
    a64 = lib.from_numpy(rng.random((64, 64), dtype=np.float32))
    b64 = lib.from_numpy(rng.random((64, 64), dtype=np.float32))
    big_a = lib.from_numpy(rng.random((1024, 1024), dtype=np.float32))
    big_b = lib.from_numpy(rng.random((1024, 1024), dtype=np.float32))
    x = lib.from_numpy(rng.random((8, 16, 32), dtype=np.float32))
    c1 = lib.from_numpy(rng.random((1, 1024, 512), dtype=np.float32))
    c2 = lib.from_numpy(rng.random((1024, 512), dtype=np.float32))
    return [
        ('a + b (32,32) f32', lambda: a32 + b32, 20000),
        ('a @ b (64,64) f32', lambda: a64 @ b64, 5000),
        ('x.view(128,32).transpose(0,1)', lambda: x.view(128, 32).transpose(0, 1), 20000),
        ('x.view(8,512).t().reshape(-1)[...]', lambda: x.view(8, 512).transpose(0, 1).unsqueeze(0), 20000),
        ('x.sum(1) (8,16,32)', lambda: x.sum(1), 20000),
        ('add (1024,1024) f32', lambda: big_a + big_b, 100),
        # NOTE [fused multiply-add in float32]: one rounding, as torch's, through float64 blocks
        ('lerp_(b, 0.1) (1024,1024) f32', lambda: big_a.lerp_(big_b, 0.1), 100),
        ('addcmul_(b, b, value=1e-3) (1024,1024)', lambda: big_a.addcmul_(big_b, big_b, value=1e-3), 100),
        ('tanh (1024,1024) f32 (rounded once)', lambda: big_a.tanh(), 20),
        ('tanh (32,32) f32', lambda: a32.tanh(), 20000),
        # torch's matrix-product path for p=2 with more than 25 rows (vector-quantize's codebook distances)
        ('cdist (1,1024,512) x (1024,512) p=2', lambda: lib.cdist(c1, c2), 5),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--profile', action='store_true')
    args = ap.parse_args()
    print(f'{"case":<40}{"ember us":>12}{"torch us":>12}{"ratio":>8}')
    for (name, fe, n), (_, ft, _) in zip(cases(ember), cases(torch)):
        te, tt = best(fe, n), best(ft, n)
        print(f'{name:<40}{te:>12.2f}{tt:>12.2f}{te / tt:>8.2f}')
    if args.profile:
        import cProfile
        import pstats
        a, b = ember.ones(32, 32), ember.ones(32, 32)
        cProfile.runctx('for _ in range(200000): a + b', globals(), {'a': a, 'b': b}, '/tmp/ember_add.prof')
        pstats.Stats('/tmp/ember_add.prof').sort_stats('tottime').print_stats(8)


if __name__ == '__main__':
    main()
