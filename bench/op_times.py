"""Wall time per operator inside ember's training step, through a dispatch mode (the profile
BENCHMARKS.md records for the slowest case):

    python bench/op_times.py gpt        # or mlp, cnn; EMBER_THREADS=1 for one intra-op thread

Each operator call is timed from the Python dispatch key down (kernel, autograd recording included);
the mode itself adds a few microseconds per call, so the forward/backward totals are a little above an
unprofiled step's.
"""
import collections
import os
import sys
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_train import build
import ember
from ember.utils._python_dispatch import TorchDispatchMode
if os.environ.get("EMBER_THREADS"): ember.set_num_threads(int(os.environ["EMBER_THREADS"]))
model, opt, loss_fn = build(ember, sys.argv[1] if len(sys.argv) > 1 else 'gpt')
for _ in range(3):
    l = loss_fn(); opt.zero_grad(); l.backward(); opt.step()
tot = collections.Counter(); cnt = collections.Counter()
class T(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        t = time.perf_counter()
        r = func(*args, **(kwargs or {}))
        tot[str(func)] += time.perf_counter() - t; cnt[str(func)] += 1
        return r
N = 5
wall = {'fwd': 0, 'bwd': 0}
for _ in range(N):
    with T():
        t = time.perf_counter(); l = loss_fn(); wall['fwd'] += time.perf_counter() - t
        opt.zero_grad()
        t = time.perf_counter(); l.backward(); wall['bwd'] += time.perf_counter() - t
    opt.step()
print({k: round(v / N * 1e3, 2) for k, v in wall.items()}, 'ops total', round(sum(tot.values()) / N * 1e3, 2))
for k, v in tot.most_common(25):
    print(f'{k:60s} {cnt[k]//N:4d} {v / N * 1e3:8.3f} ms')
