"""Per-sample gradients of the 784-512-512-10 MLP over a batch of 64: vmap(grad) vs a Python loop of grad calls in
ember, and torch.func's vmap(grad) when torch is installed; plus jacrev of a 256->256 MLP and the hessian of a
64-parameter function side by side with torch. Best of ``--repeat`` runs, milliseconds.

    python bench/bench_func.py [--repeat 5]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402


def best(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3


def mlp(lib, sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(lib.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def cases(lib, F, repeat):
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    model = mlp(lib, (784, 512, 512, 10))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.from_numpy(rng.standard_normal((64, 784)).astype(np.float32))
    y = lib.from_numpy(rng.integers(0, 10, 64))

    def loss(p, xi, yi):
        return lib.nn.functional.cross_entropy(F.functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    res = {'per-sample grads, vmap(grad)': best(lambda: F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y),
                                                repeat)}
    res['per-sample grads, loop of grad'] = best(lambda: [F.grad(loss)(params, x[i], y[i]) for i in range(64)],
                                                 max(1, repeat // 2))
    net = mlp(lib, (256, 256, 256))
    z = lib.from_numpy(rng.standard_normal(256).astype(np.float32))
    res['jacrev 256->256 MLP'] = best(lambda: F.jacrev(net)(z), repeat)
    w = lib.from_numpy(rng.standard_normal(64).astype(np.float32))
    res['hessian, 64 parameters'] = best(lambda: F.hessian(lambda v: (v.sin() * v.roll(1)).sum() ** 2)(w), repeat)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--repeat', type=int, default=5)
    args = ap.parse_args()
    import ember
    import ember.func
    rows = {'ember': cases(ember, ember.func, args.repeat)}
    try:
        import torch
        import torch.func
        rows['torch'] = cases(torch, torch.func, args.repeat)
    except ImportError:
        pass
    names = list(rows['ember'])
    print(f"{'case':<34}" + ''.join(f'{k:>12}' for k in rows))
    for n in names:
        print(f'{n:<34}' + ''.join(f'{rows[k][n]:>10.1f}ms' for k in rows))
    e = rows['ember']
    print(f"ember vmap(grad) vs its loop: {e['per-sample grads, loop of grad'] / e['per-sample grads, vmap(grad)']:.1f}x")
    if 'torch' in rows:
        print(f"ember vmap(grad) / torch.func vmap(grad): "
              f"{e['per-sample grads, vmap(grad)'] / rows['torch']['per-sample grads, vmap(grad)']:.1f}x")


if __name__ == '__main__':
    main()
