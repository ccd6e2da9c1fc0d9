"""Attention's forward + backward, ember's two CPU paths against torch's sdpa, in one process.

    python bench/bench_attention.py                  # q, k, v of (16, 4, 64, 32)
    python bench/bench_attention.py --shape 8 8 128 64

Cases: ``sdpa`` (``F.scaled_dot_product_attention``: ember's CPU flash kernel, torch's), ``math`` (softmax of the
scaled scores times v, written out: what ember's ``multi_head_attention_forward`` ran without weights before it
called sdpa as torch does). Each figure is the best of the rounds (the VM's cores are shared), rounds alternate
the cases so that load hits them alike.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import torch  # noqa: E402

import ember  # noqa: E402


def cases(lib, shape):
    lib.manual_seed(0)
    q, k, v = (lib.randn(*shape, requires_grad=True) for _ in range(3))
    scale = 1.0 / shape[-1] ** 0.5

    def sdpa():
        lib.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()

    def math():
        (((q * scale) @ k.transpose(-2, -1)).softmax(-1) @ v).sum().backward()
    return {'sdpa': sdpa, 'math': math}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--shape', type=int, nargs=4, default=[16, 4, 64, 32])
    ap.add_argument('--rounds', type=int, default=40)
    args = ap.parse_args()
    runs = {(lib.__name__, name): fn for lib in (ember, torch) for name, fn in cases(lib, args.shape).items()}
    best = dict.fromkeys(runs, float('inf'))
    for _ in range(args.rounds):
        for key, fn in runs.items():
            t = time.perf_counter()
            for _ in range(5):
                fn()
            best[key] = min(best[key], (time.perf_counter() - t) / 5)
    print(f'q, k, v {tuple(args.shape)}, forward + backward, best of {args.rounds} rounds (ms)')
    print(f"{'case':8}{'ember':>10}{'torch':>10}{'ratio':>8}")
    for name in ('sdpa', 'math'):
        e, t = best[('ember', name)] * 1e3, best[('torch', name)] * 1e3
        print(f'{name:8}{e:10.2f}{t:10.2f}{e / t:8.2f}')


if __name__ == '__main__':
    main()
