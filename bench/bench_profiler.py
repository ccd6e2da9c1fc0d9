"""What the profiler costs, ember beside torch in one process: µs per call (min of 5 timeit runs) of
``add`` on (32, 32) float32 and of one small training step (Linear-ReLU-Linear, MSE, SGD), with no profiler
active and inside ``profiler.profile()`` (CPU activity, defaults otherwise).

With no profiler active the dispatcher runs the same generated entry points and cached kernels as before the
profiler existed (NOTE [record function] in ember/_dispatch/dispatcher.py), so the "off" column is the cost of
dispatch alone.

    python bench/bench_profiler.py           # both libraries, off and on
    python bench/bench_profiler.py --off     # ember only, profiler off (also runs where ember.profiler is absent)

Both libraries run on one intra-op thread: these shapes are too small to split, and on a loaded 2-core machine
torch's idle worker threads made its training-step time vary fivefold between runs.
"""
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402

import ember  # noqa: E402


def per_call(stmt, env, n, repeat=5):
    return min(timeit.repeat(stmt, globals=env, number=n, repeat=repeat)) / n * 1e6


def _env(L):
    a = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(32, 64), L.nn.ReLU(), L.nn.Linear(64, 8))
    opt = L.optim.SGD(model.parameters(), lr=0.01)
    x, y = L.tensor(a), L.tensor(a[:, :8].copy())

    def step():
        opt.zero_grad()
        L.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return {'L': L, 'x': x, 'step': step}


CASES = [('add (32,32)', 'L.add(x, x)', 20000), ('train step', 'step()', 300)]


def measure(L, on):
    env = _env(L)
    out = []
    for _, stmt, n in CASES:
        if on:
            with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU]):
                out.append(per_call(stmt, env, n // 10 or 1))    # events accumulate: fewer calls
        else:
            out.append(per_call(stmt, env, n))
    return out


def main():
    ember.set_num_threads(1)
    if '--off' in sys.argv:
        for (name, _, _), t in zip(CASES, measure(ember, False)):
            print(f'{name:14s} ember off {t:8.2f} us')
        return
    import torch
    torch.set_num_threads(1)
    res = {(lib.__name__, on): measure(lib, on) for lib in (ember, torch) for on in (False, True)}
    print(f"{'case':14s} {'ember off':>10s} {'ember on':>10s} {'torch off':>10s} {'torch on':>10s}   (us per call)")
    for i, (name, _, _) in enumerate(CASES):
        print(f'{name:14s} ' + ' '.join(f'{res[(lib, on)][i]:10.2f}' for lib in ('ember', 'torch')
                                       for on in (False, True)))


if __name__ == '__main__':
    main()
