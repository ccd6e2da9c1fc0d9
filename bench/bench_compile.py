"""ember.compile against eager ember, torch eager (and optionally torch.compile), in one process.

    python bench/bench_compile.py                      # the three training cases and MLP inference
    python bench/bench_compile.py --case gpt --torch-compile   # also torch.compile (slow to compile cold)
    python bench/bench_compile.py --profile gpt        # cProfile of the compiled ember step (loss and optimizer)
    python bench/bench_compile.py --rss                # peak RSS per variant, each in a fresh process

Cases as bench/bench_train.py: MLP 784-512-512-10 batch 128 SGD(momentum); small CNN batch 64; char-GPT
(4 layers, 4 heads, 128 wide, block 64, batch 16) AdamW; and inference of the MLP at batch 1. A training step
is ``loss = f(); opt.zero_grad(); loss.backward(); opt.step()`` with ``f`` compiled (the model and the loss:
``ember.compile(loss_fn)``), and in the ``+ compiled step`` variant ``opt.step`` compiled as well. Runs of the variants alternate (``--rounds``) so load affects all alike; the
table gives the best round's steps/s and ratios. Compile time: the first call of the compiled function
(capture, partition, code generation, one step).
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, 'bench'))

from bench_train import build  # noqa: E402


def _stepper(lib, case, compiled, torch_compile=False):
    model, opt, loss_fn = build(lib, case)
    f = loss_fn
    opt_step = opt.step
    t0 = time.perf_counter()
    if compiled:
        f = lib.compile(loss_fn)
        f()
        if compiled == 'all':          # the optimizer's step compiled too
            opt_step = lib.compile(opt.step)
    first = time.perf_counter() - t0

    def step():
        loss = f()
        opt.zero_grad()
        loss.backward()
        opt_step()
    return step, first


def _infer(lib, compiled):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    x = lib.randn(1, 784)
    f = lib.compile(model) if compiled else model
    t0 = time.perf_counter()
    with lib.no_grad():
        f(x)
    first = time.perf_counter() - t0

    def step():
        with lib.no_grad():
            f(x)
    return step, first


def _rate(step, seconds):
    step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < 3:
        step()
        n += 1
    return n / (time.perf_counter() - t0)


def _one_rss(libname, case, compiled):
    import resource
    lib = __import__(libname)
    step, _ = _stepper(lib, case, compiled == '1')
    for _ in range(20):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _rss_table(case):
    import subprocess
    cases = ['mlp', 'cnn', 'gpt'] if case in ('all', 'infer') else [case]
    print(f'{"case":6} {"torch eager MB":>15} {"ember eager MB":>15} {"ember compile MB":>17}')
    for c in cases:
        row = []
        for lib, comp in (('torch', '0'), ('ember', '0'), ('ember', '1')):
            out = subprocess.run([sys.executable, __file__, '--_one', lib, c, comp], capture_output=True, text=True,
                                 env=dict(os.environ, PYTHONPATH=ROOT))
            row.append(float(out.stdout.strip().splitlines()[-1]))
        print(f'{c:6} {row[0]:15.0f} {row[1]:15.0f} {row[2]:17.0f}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--case', default='all', choices=['all', 'mlp', 'cnn', 'gpt', 'infer'])
    ap.add_argument('--seconds', type=float, default=1.0)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--torch-compile', action='store_true')
    ap.add_argument('--profile', choices=['mlp', 'cnn', 'gpt'])
    ap.add_argument('--rss', action='store_true')
    ap.add_argument('--_one', nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._one:
        return _one_rss(*args._one)
    if args.rss:
        return _rss_table(args.case)
    import ember
    import torch
    if args.profile:
        import cProfile
        import pstats
        step, _ = _stepper(ember, args.profile, 'all')
        for _ in range(3):
            step()
        cProfile.runctx('for _ in range(20): step()', globals(), {'step': step}, '/tmp/compile.prof')
        pstats.Stats('/tmp/compile.prof').sort_stats('tottime').print_stats(25)
        return
    cases = ['mlp', 'cnn', 'gpt', 'infer'] if args.case == 'all' else [args.case]
    print(f"OpenBLAS kernels: {ember.backends.cpu.process_tuning()['blas_core']} (OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}); torch: {torch.backends.cpu.get_cpu_capability()}")
    print(f'{"case":6} {"variant":16} {"steps/s":>9} {"vs torch":>9} {"first call s":>12}')
    for case in cases:
        variants = {}
        if case == 'infer':
            variants['torch eager'] = _infer(torch, False)
            variants['ember eager'] = _infer(ember, False)
            variants['ember compile'] = _infer(ember, True)
        else:
            variants['torch eager'] = _stepper(torch, case, False)
            if args.torch_compile:
                variants['torch.compile'] = _stepper(torch, case, True)
            variants['ember eager'] = _stepper(ember, case, False)
            variants['ember compile'] = _stepper(ember, case, True)
            variants['+ compiled step'] = _stepper(ember, case, 'all')
        best = {k: 0.0 for k in variants}
        for _ in range(args.rounds):
            for k, (step, _) in variants.items():
                best[k] = max(best[k], _rate(step, args.seconds))
        for k, (step, first) in variants.items():
            print(f'{case:6} {k:16} {best[k]:9.1f} {best[k] / best["torch eager"]:8.2f}x {first:12.3f}')
        if case == 'infer':
            print(f'{"":6} compiled / ember eager: {best["ember compile"] / best["ember eager"]:.2f}x')


if __name__ == '__main__':
    main()
