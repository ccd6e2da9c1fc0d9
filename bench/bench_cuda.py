"""The CUDA backend (NOTE [cuda backend]) against torch on the same GPU, in one process.

    python bench/bench_cuda.py [--seconds 3] [--profile 20]

Training steps/s of bench_train.py's three cases (MLP, CNN, char-GPT), built under ``with lib.device('cuda')``
by both libraries, and the time of single operators (a (1024, 1024) add, a 4096^2 matmul, a (32, 32) add,
which measures the per-call cost). Every timing ends with a device synchronize. It prints which operators
ran on the host during the training steps (the fallback), since those are where ember's GPU time goes first.
With ``--profile N`` it then runs 20 more of ember's steps of each case under cProfile and prints the N
functions with the most time of their own (where the host time of a step goes). Needs a GPU, CuPy and
torch with CUDA.
"""
import argparse
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, 'bench'))

import ember  # noqa: E402
import torch  # noqa: E402
from bench_train import build  # noqa: E402


def sync(lib):
    lib.cuda.synchronize()


def rate(lib, fn, seconds, min_calls=5):
    for _ in range(3):
        fn()
    sync(lib)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < min_calls:
        fn()
        n += 1
    sync(lib)
    return n / (time.perf_counter() - t0)


def train_step(lib, case):
    with lib.device('cuda'):
        model, opt, loss_fn = build(lib, case)
        model = model.cuda()

    def step():
        loss = loss_fn()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def train_case(lib, case, seconds):
    return rate(lib, train_step(lib, case), seconds)


def profile_case(case, top):
    import cProfile
    import pstats
    step = train_step(ember, case)
    for _ in range(3):
        step()
    sync(ember)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20):
        step()
    sync(ember)
    prof.disable()
    print(f'--- {case}: 20 ember steps under cProfile, by own time')
    pstats.Stats(prof).sort_stats('tottime').print_stats(top)


def op_case(lib, name, seconds):
    with lib.device('cuda'):
        lib.manual_seed(0)
        if name == 'add 32x32':
            a, b = lib.randn(32, 32), lib.randn(32, 32)
            fn = lambda: a + b
        elif name == 'add 1024x1024':
            a, b = lib.randn(1024, 1024), lib.randn(1024, 1024)
            fn = lambda: a + b
        else:
            a = lib.randn(4096, 4096)
            fn = lambda: a @ a
        return 1e6 / rate(lib, fn, seconds, 20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=float, default=3.0)
    ap.add_argument('--cases', default='mlp,cnn,gpt')
    ap.add_argument('--profile', type=int, default=0, metavar='N')
    args = ap.parse_args()
    print(f'device: {ember.cuda.get_device_name()}  (torch {torch.__version__}, '
          f'CuPy {ember.cuda._cp().__version__})')
    print(f'{"training case":16s} {"ember steps/s":>14s} {"torch steps/s":>14s} {"ember/torch":>12s}')
    from ember._backends import cuda as backend
    for case in args.cases.split(','):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            e = train_case(ember, case, args.seconds)
        t = train_case(torch, case, args.seconds)
        print(f'{case:16s} {e:14.1f} {t:14.1f} {e / t:12.2f}')
    print(f'{"operator":16s} {"ember us":>14s} {"torch us":>14s} {"ember/torch":>12s}')
    for name in ('add 32x32', 'add 1024x1024', 'matmul 4096'):
        e, t = op_case(ember, name, 1.0), op_case(torch, name, 1.0)
        print(f'{name:16s} {e:14.1f} {t:14.1f} {e / t:12.2f}')
    print('operators run on the host (fallback calls):', dict(sorted(backend.FALLBACKS.items())) or 'none')
    for name, why in sorted(backend.REASONS.items()):
        print(f'  {name}: {why}')
    if args.profile:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            for case in args.cases.split(','):
                profile_case(case, args.profile)


if __name__ == '__main__':
    main()
