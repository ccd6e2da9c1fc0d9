"""Blocked fusion of pointwise chains (NOTE [blocked fusion]): minGPT's NewGELU, written out in eight pointwise
operators, forward and backward on a 16x64x512 activation, as generated array code with and without the fusion
pass, against ember eager and torch eager, in one process.

    python bench/bench_fusion.py
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def new_gelu(lib, x):
    return 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))


def best(fn, reps=7, inner=5):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        out.append((time.perf_counter() - t0) / inner)
    return min(out)


def main():
    import ember
    import torch
    from ember._functorch.aot_autograd import trace, partition
    from ember._inductor import generate
    from ember.utils import _pytree as pytree
    shape = (16, 64, 512)
    x = ember.randn(*shape, requires_grad=True)
    flat, spec = pytree.tree_flatten(((x,), {}))
    traced = trace(lambda a: new_gelu(ember, a).sum(), flat, spec, True)
    fwd, bwd, _ = partition(traced)
    xs = x.detach().numpy()
    progs = {}
    for fuse in (False, True):
        f, b = generate(fwd, traced.attrs, fuse=fuse), generate(bwd, traced.attrs, fuse=fuse)
        saved = f(xs)[1:]

        def run(f=f, b=b, saved=saved):
            f(xs)
            b(*saved, ember.ones(()).numpy())
        progs['fused' if fuse else 'unfused'] = run
    tx = torch.randn(*shape, requires_grad=True)

    def torch_run():
        new_gelu(torch, tx).sum().backward()

    def ember_run():
        new_gelu(ember, x).sum().backward()
    t = {'torch eager': best(torch_run), 'ember eager': best(ember_run),
         'ember generated, unfused': best(progs['unfused']), 'ember generated, fused': best(progs['fused'])}
    try:                    # what a JIT would give for the same fused forward (measured, not used by ember)
        import numba
        import numpy as np

        @numba.njit(parallel=True, fastmath=False, cache=False)
        def gelu_fwd(a, out):
            c = np.float32(math.sqrt(2.0 / math.pi))
            for i in numba.prange(a.size):
                v = a[i]
                out[i] = np.float32(0.5) * v * (np.float32(1.0) + np.tanh(c * (v + np.float32(0.044715) * v * v * v)))
        flat_x = xs.reshape(-1)
        out = np.empty_like(flat_x)
        t0 = time.perf_counter()
        gelu_fwd(flat_x, out)
        jit_compile = time.perf_counter() - t0
        f_fused = generate(fwd, traced.attrs, fuse=True)
        t['forward only: fused NumPy'] = best(lambda: f_fused(xs))
        t['forward only: numba'] = best(lambda: gelu_fwd(flat_x, out))
        print(f'numba {numba.__version__}: first call (JIT compile) {jit_compile:.2f} s')
    except ImportError:
        print('numba not installed: no JIT comparison')
    for k, v in t.items():
        print(f'{k:26} {v * 1e3:8.2f} ms   {v / t["torch eager"]:5.2f}x torch')


if __name__ == '__main__':
    main()
