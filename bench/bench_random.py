"""Normal draws, ember vs torch in one process: randn, normal_ and nn.init.trunc_normal_, which draw torch's
exact values (NOTE [float32 Box-Muller passes] in ember/_backends/cpu/_box_muller32.py).

    python bench/bench_random.py [--rounds 7] [--threads N]

Each case runs in rounds that alternate ember and torch; a round times ``--n`` calls, and the figure is the
best call over all rounds (the machine may be shared: the best is the least disturbed). torch runs on one
thread (its normal_ fill is serial); ember on ``--threads`` intra-op threads (default: its own default).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch  # noqa: E402

import ember  # noqa: E402

torch.set_num_threads(1)


def cases(lib):
    w, w64, wl = lib.empty(512, 512), lib.empty(512, 512, dtype=lib.float64), lib.empty(768, 3072)
    init = lib.nn.init
    return [
        ('randn(1M) float32', lambda: lib.randn(1_000_000)),
        ('randn(1M) float64', lambda: lib.randn(1_000_000, dtype=lib.float64)),
        ('randn(1M) bfloat16', lambda: lib.randn(1_000_000, dtype=lib.bfloat16)),
        ('randn(64, 3, 32, 32)', lambda: lib.randn(64, 3, 32, 32)),
        ('randn(8) (pairs)', lambda: lib.randn(8)),
        ('(512, 512).normal_() float32', lambda: w.normal_()),
        ('(512, 512).normal_() float64', lambda: w64.normal_()),
        ('(768, 3072).normal_(0, 0.02)', lambda: wl.normal_(0, 0.02)),
        ('trunc_normal_((768, 3072), std=.02)', lambda: init.trunc_normal_(wl, std=0.02)),
        ('trunc_normal_((512, 512), .5, .3, -1, 2)', lambda: init.trunc_normal_(w, 0.5, 0.3, -1.0, 2.0)),
    ]


def best(fn, n):
    b = float('inf')
    for _ in range(n):
        t = time.perf_counter()
        fn()
        b = min(b, time.perf_counter() - t)
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=3, help='calls per round')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--threads', type=int, default=None, help="ember's intra-op threads")
    args = ap.parse_args()
    if args.threads:
        ember.set_num_threads(args.threads)
    print(f'ember threads: {ember.get_num_threads()}')
    print(f'{"case":<42}{"ember ms":>10}{"torch ms":>10}{"ratio":>8}')
    for (name, fe), (_, ft) in zip(cases(ember), cases(torch)):
        fe(), ft()                  # warm up
        te = tt = float('inf')
        for _ in range(args.rounds):
            te, tt = min(te, best(fe, args.n)), min(tt, best(ft, args.n))
        print(f'{name:<42}{te * 1e3:>10.3f}{tt * 1e3:>10.3f}{te / tt:>8.1f}', flush=True)


if __name__ == '__main__':
    main()
