"""Wall time per operator inside ember's training step, through a dispatch mode (the profile
BENCHMARKS.md records for the slowest case):

    python bench/op_times.py gpt        # or mlp, cnn, resnet; EMBER_THREADS=1 for one intra-op thread
    CPU_TIME=1 python bench/op_times.py resnet   # CPU time of all threads instead of wall time (a loaded machine)

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
clock = time.process_time if os.environ.get("CPU_TIME") else time.perf_counter
case = sys.argv[1] if len(sys.argv) > 1 else 'gpt'
if case == 'resnet':        # bench_vision.py's step: resnet18, batch 16, 64x64 images, SGD momentum
    import ember.vision
    ember.manual_seed(0)
    model = ember.vision.models.resnet18()
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    _x, _y = ember.randn(16, 3, 64, 64), ember.randint(0, 1000, (16,))
    loss_fn = lambda: ember.nn.functional.cross_entropy(model(_x), _y)  # noqa: E731
else:
    model, opt, loss_fn = build(ember, case)
for _ in range(3):
    l = loss_fn(); opt.zero_grad(); l.backward(); opt.step()
tot = collections.Counter(); cnt = collections.Counter()
class T(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        t = clock()
        r = func(*args, **(kwargs or {}))
        tot[str(func)] += clock() - t; cnt[str(func)] += 1
        return r
N = 5
wall = {'fwd': 0, 'bwd': 0, 'opt': 0}
for _ in range(N):
    with T():
        t = clock(); l = loss_fn(); wall['fwd'] += clock() - t
        opt.zero_grad()
        t = clock(); l.backward(); wall['bwd'] += clock() - t
    t = clock(); opt.step(); wall['opt'] += clock() - t
print({k: round(v / N * 1e3, 2) for k, v in wall.items()}, 'ops total', round(sum(tot.values()) / N * 1e3, 2))
for k, v in tot.most_common(25):
    print(f'{k:60s} {cnt[k]//N:4d} {v / N * 1e3:8.3f} ms')
