"""Training throughput and peak memory, ember vs torch (issue: nn, optim and serialization, section 6).

    python bench/bench_train.py                 # all cases, table with steps/s, ratio and peak RSS
    python bench/bench_train.py --case gpt --profile   # cProfile of ember's char-GPT step
    python bench/bench_train.py --case gpt --opt-step  # the optimizer's step alone, ember and torch in one process

Cases: (a) MLP 784-512-512-10, batch 128, SGD(momentum); (b) CNN Conv 1->16->32 with 2x2 max pools
and a Linear, batch 64 on 28x28, SGD(momentum); (c) char-GPT (4 layers, 4 heads, n_embd 128,
block 64, batch 16, vocab 65), AdamW. The same model code runs on both libraries. Each
(case, library) runs in a fresh subprocess so that its peak RSS is its own; the parent prints
steps/s, the ratio ember/torch (speed: higher is better) and peak RSS, as medians of
``--repeats`` alternating runs. Both libraries use the machine's default thread counts.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def build(lib, case):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    if case == 'mlp':
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = lib.randn(128, 784), lib.randint(0, 10, (128,))
        return model, opt, lambda: F.cross_entropy(model(x), y)
    if case == 'cnn':
        class CNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.c2 = nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
                self.fc = nn.Linear(32 * 7 * 7, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.c1(x)), 2)
                x = F.max_pool2d(F.relu(self.c2(x)), 2)
                return self.fc(x.flatten(1))
        model = CNN()
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))
        return model, opt, lambda: F.cross_entropy(model(x), y)
    if case == 'gpt':
        import ember.demo as demo_src
        if lib.__name__ == 'torch':     # the same model source, run with torch as `torch`
            import importlib.util
            spec = importlib.util.spec_from_file_location('demo_torch', demo_src.__file__)
            src = open(demo_src.__file__).read().replace('import ember as torch', 'import torch') \
                .replace('import ember.nn as nn', 'import torch.nn as nn') \
                .replace('import ember.nn.functional as F', 'import torch.nn.functional as F')
            mod = type(sys)('demo_torch')
            sys.modules['demo_torch'] = mod         # importable by name: torch.compile's tracer looks modules up
            exec(compile(src, spec.origin, 'exec'), mod.__dict__)
            CharGPT = mod.CharGPT
        else:
            CharGPT = demo_src.CharGPT
        model = CharGPT(65, 64, 4, 4, 128)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = lib.randint(0, 65, (16, 64)), lib.randint(0, 65, (16, 64))
        return model, opt, lambda: model(x, y)[1]
    raise ValueError(case)


def run_one(libname, case, seconds):
    lib = __import__(libname)
    model, opt, loss_fn = build(lib, case)

    def step():
        loss = loss_fn()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for _ in range(3):
        step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < 5:
        step()
        n += 1
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {'steps_per_s': n / dt, 'peak_rss_mb': rss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--case', choices=['mlp', 'cnn', 'gpt'], nargs='*', default=['mlp', 'cnn', 'gpt'])
    ap.add_argument('--seconds', type=float, default=5.0)
    ap.add_argument('--repeats', type=int, default=3, help='alternating runs per library; medians are reported')
    ap.add_argument('--child', nargs=2, metavar=('LIB', 'CASE'))
    ap.add_argument('--profile', action='store_true')
    ap.add_argument('--opt-step', action='store_true', help="time opt.step() alone (after one backward), both libraries")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(run_one(a.child[0], a.child[1], a.seconds)))
        return
    if a.opt_step:
        import ember
        import torch
        for case in a.case:
            ms = {}
            for lib in (ember, torch):
                model, opt, loss_fn = build(lib, case)
                loss_fn().backward()
                for _ in range(3):
                    opt.step()
                ts = []
                for _ in range(30):
                    t0 = time.perf_counter()
                    opt.step()
                    ts.append(time.perf_counter() - t0)
                ms[lib.__name__] = statistics.median(ts) * 1e3
            print(f"{case}: opt.step() ember {ms['ember']:.2f} ms, torch {ms['torch']:.2f} ms, "
                  f"ratio {ms['ember'] / ms['torch']:.2f}")
        return
    if a.profile:
        import cProfile
        import pstats
        import ember
        model, opt, loss_fn = build(ember, a.case[0])

        def step():
            loss = loss_fn()
            opt.zero_grad()
            loss.backward()
            opt.step()
        step()
        cProfile.runctx('for _ in range(5): step()', globals(), {'step': step}, '/tmp/train.prof')
        pstats.Stats('/tmp/train.prof').sort_stats('tottime').print_stats(20)
        return
    # in a subprocess: importing either library here would raise the children's peak RSS (inherited at fork)
    print(subprocess.run([sys.executable, '-c', "import os, ember, torch; print(f\"OpenBLAS kernels: "
                          "{ember.backends.cpu.process_tuning()['blas_core']} (OPENBLAS_CORETYPE="
                          "{os.environ.get('OPENBLAS_CORETYPE', 'unset')}); torch: "
                          "{torch.backends.cpu.get_cpu_capability()}\")"],
                         capture_output=True, text=True, env={**os.environ, 'PYTHONPATH': ROOT}).stdout.strip())
    print(f'{"case":<6}{"ember steps/s":>15}{"torch steps/s":>15}{"speed ratio":>13}{"ember RSS MB":>14}'
          f'{"torch RSS MB":>14}')
    for case in a.case:
        runs = {'ember': [], 'torch': []}
        for _ in range(a.repeats):          # alternate the libraries so drifts in machine speed hit both
            for lib in ('ember', 'torch'):
                out = subprocess.run([sys.executable, __file__, '--child', lib, case, '--seconds', str(a.seconds)],
                                     capture_output=True, text=True, cwd=ROOT)
                if out.returncode:
                    raise SystemExit(out.stderr)
                runs[lib].append(json.loads(out.stdout.strip().splitlines()[-1]))
        e, t = ({'steps_per_s': statistics.median(r['steps_per_s'] for r in runs[lib]),
                 'peak_rss_mb': max(r['peak_rss_mb'] for r in runs[lib])} for lib in ('ember', 'torch'))
        print(f'{case:<6}{e["steps_per_s"]:>15.2f}{t["steps_per_s"]:>15.2f}{e["steps_per_s"] / t["steps_per_s"]:>13.2f}'
              f'{e["peak_rss_mb"]:>14.0f}{t["peak_rss_mb"]:>14.0f}')


if __name__ == '__main__':
    main()
