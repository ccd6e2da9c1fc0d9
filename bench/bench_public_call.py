"""Per-call cost of public functions on small tensors: generated entry points (ember.add, ember.relu), a Tensor
operator, and hand-written functions wrapped for __torch_function__ (F.relu, ember.where, ember.cat).
Run from the repository root before and after a change to the call path: ``python bench/bench_public_call.py``."""
import sys
import timeit

sys.path.insert(0, '.')
import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402

a, b = ember.randn(32, 32), ember.randn(32, 32)
mask = a > 0
CASES = {'ember.add(a, b)': lambda: ember.add(a, b), 'a + b': lambda: a + b,
         'ember.relu(a)': lambda: ember.relu(a), 'F.relu(a)': lambda: F.relu(a),
         'ember.where(a>0,a,b)': lambda: ember.where(mask, a, b), 'ember.cat([a, b])': lambda: ember.cat([a, b])}

if __name__ == '__main__':
    for name, fn in CASES.items():
        fn()
        best = min(timeit.repeat(fn, number=20000, repeat=7)) / 20000 * 1e6
        print(f'{name:<24} {best:7.2f} us')
