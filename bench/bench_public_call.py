"""Per-call cost of public functions on small tensors: a generated entry point (ember.add, ember.relu), a Tensor
operator, and hand-written functions wrapped for __torch_function__ (F.relu, ember.where, ember.cat).
Run from the repository root before and after a change to the call path: ``python bench/bench_public_call.py``."""
import sys
import timeit
sys.path.insert(0, '.')
import ember
import ember.nn.functional as F
a, b = ember.randn(32, 32), ember.randn(32, 32)
cases = {'ember.add(a, b)': lambda: ember.add(a, b), 'a + b': lambda: a + b,
         'ember.relu(a)': lambda: ember.relu(a), 'F.relu(a)': lambda: F.relu(a),
         'ember.where(a>0,a,b)': None, 'ember.cat([a, b])': lambda: ember.cat([a, b])}
m = a > 0
cases['ember.where(a>0,a,b)'] = lambda: ember.where(m, a, b)
for name, fn in cases.items():
    for _ in range(3): fn()
    best = min(timeit.repeat(fn, number=20000, repeat=7)) / 20000 * 1e6
    print(f'{name:<24} {best:7.2f} us')
