"""autograd.grad calls on a long history and resampling, ember against torch in one process (issue 15's users'
cases: torchdiffeq/torchcde's adjoint calls autograd.grad once per solver step on a graph thousands of nodes
deep; segmentation models resize feature maps).

    python bench/bench_grad_calls.py [--repeat 5]

Cases (best of ``--repeat`` rounds, per call):
  grad_long_history  autograd.grad(out, (y, p, h)) where h has a 6,000-node history and out is a fresh small
                     graph on top (the walk for the nodes that run)
  jacrev_256         torch.func.jacrev of a 256->256->256 tanh MLP (only the input's gradients are computed)
  resize_nearest / resize_bilinear / resize_bicubic   F.interpolate (8, 32, 32, 32) x2
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402


def best(fn, number, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times) * 1e3


def cases(lib, repeat):
    import importlib
    func = importlib.import_module(lib.__name__ + '.func')
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.rand(2, requires_grad=True)
    h = x
    for _ in range(3000):
        h = h * 1.0001 + 0.001
    p = lib.rand(2, requires_grad=True)

    def grad_call():
        y = lib.rand(2, requires_grad=True)
        return lib.autograd.grad((y * p + h).sum(), (y, p, h))
    net = lib.nn.Sequential(lib.nn.Linear(256, 256), lib.nn.Tanh(), lib.nn.Linear(256, 256), lib.nn.Tanh(),
                            lib.nn.Linear(256, 256))
    z = lib.from_numpy(np.random.default_rng(0).standard_normal(256).astype(np.float32))
    img = lib.from_numpy(np.random.default_rng(0).random((8, 32, 32, 32)).astype(np.float32))
    res = {'grad_long_history': best(grad_call, 20, repeat),
           'jacrev_256': best(lambda: func.jacrev(net)(z), 10, repeat)}
    for mode in ('nearest', 'bilinear', 'bicubic'):
        res[f'resize_{mode}'] = best(lambda: F.interpolate(img, scale_factor=2, mode=mode), 10, repeat)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--repeat', type=int, default=5)
    args = ap.parse_args()
    import ember
    import torch
    rows = {'ember': cases(ember, args.repeat), 'torch': cases(torch, args.repeat)}
    print(f"{'case':22s}{'ember ms':>10s}{'torch ms':>10s}{'ratio':>8s}")
    for k in rows['ember']:
        e, t = rows['ember'][k], rows['torch'][k]
        print(f"{k:22s}{e:10.2f}{t:10.2f}{e / t:8.2f}")


if __name__ == '__main__':
    main()
