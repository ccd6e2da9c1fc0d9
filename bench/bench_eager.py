"""Issue 15 (eager speed): the small-operator and pointwise cases, ember against torch in one process.

    python bench/bench_eager.py               # the four cases, ratio ember / torch (lower is better)
    python bench/bench_eager.py --profile     # adds cProfiles of the requires_grad add and of the fwd+bwd chain
    python bench/bench_eager.py --repeats 60  # more rounds (default 30)

Cases (float32):
  add             a + b on (32, 32)                                    target <= 1.6
  add_grad        a + b on (32, 32), both requiring grad (recording)   target <= 2.0
  chain_fwd_bwd   ((a*b).sin() + c).sum() then .backward(), (32, 32)    target <= 2.0
  add_big         a + b on (1024, 1024)                                target <= 1.0

Timing: every round times a short batch of ember calls and then one of torch calls of the same case (2,000 small
adds, 100 fwd+bwd chains, 10 big adds), so machine load (the VM's two cores are shared with other jobs) hits both
libraries alike; each library's figure is the minimum over the rounds (30 by default), which finds the quiet
moments of a loaded machine. Both run with their default intra-op threads (torch's OpenMP pool and ember's
``set_num_threads`` pool, one thread per core).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402

TARGETS = {'add': 1.6, 'add_grad': 2.0, 'chain_fwd_bwd': 2.0, 'add_big': 1.0}


def make_cases(lib):
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    a, b = lib.tensor(f32(32, 32)), lib.tensor(f32(32, 32))
    ga, gb, gc = (lib.tensor(f32(32, 32), requires_grad=True) for _ in range(3))
    big_a, big_b = lib.tensor(f32(1024, 1024)), lib.tensor(f32(1024, 1024))

    def chain():
        ((ga * gb).sin() + gc).sum().backward()

    return {
        'add': (lambda: a + b, 2000),
        'add_grad': (lambda: ga + gb, 2000),
        'chain_fwd_bwd': (chain, 100),
        'add_big': (lambda: big_a + big_b, 10),
    }


def timed(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def measure(name, fe, ft, number, repeats):
    """Min time per call of each library over ``repeats`` interleaved rounds (µs)."""
    for f in (fe, ft):
        timed(f, max(1, number // 10))       # warm up (caches, first-split process settings)
    te, tt = [], []
    for _ in range(repeats):
        te.append(timed(fe, number))
        tt.append(timed(ft, number))
    return min(te) * 1e6, min(tt) * 1e6


def profile(fn, number, path, top=18):
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(number):
        fn()
    pr.disable()
    pstats.Stats(pr).sort_stats('tottime').print_stats(top)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--repeats', type=int, default=30)
    ap.add_argument('--profile', action='store_true')
    ap.add_argument('--only', nargs='*', default=None)
    args = ap.parse_args()
    ce, ct = make_cases(ember), make_cases(torch)
    print(f'{"case":<16}{"ember us":>12}{"torch us":>12}{"ratio":>8}{"target":>8}')
    for name, (fe, number) in ce.items():
        if args.only and name not in args.only:
            continue
        te, tt = measure(name, fe, ct[name][0], number, args.repeats)
        print(f'{name:<16}{te:>12.2f}{tt:>12.2f}{te / tt:>8.2f}{TARGETS[name]:>8.1f}')
    try:
        print(f'load average: {os.getloadavg()[0]:.2f}')
    except OSError:
        pass
    if args.profile:
        for name in ('add_grad', 'chain_fwd_bwd'):
            fn, number = ce[name]
            print(f'--- cProfile of {name}, {number * 50} calls')
            profile(fn, number * 50, name)


if __name__ == '__main__':
    main()
