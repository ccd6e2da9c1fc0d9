"""Graph capture benchmark: tracing a 12-layer transformer with ember and with torch, side by side.

The model is a GPT-style stack written once for both libraries (LayerNorm, a fused qkv Linear, causal
attention by matmul/softmax, a GELU MLP, residuals), d_model 64, 4 heads, batch 2 x 16 tokens, so the time is
the tracer's own per-node cost rather than the kernels'. Cases:
  symbolic_trace   torch.fx / ember.fx symbolic tracing (Proxies above the dispatcher)
  make_fx real     dispatcher-level capture running the real kernels
  make_fx fake     the same on fake tensors (torch's FakeTensorMode / ember's meta tensors)
  export           torch.export.export / ember.export.export (fake tensors, graph signature)
Each time is the best of alternating runs (both libraries see the same machine load).

Run: python bench/bench_fx.py [--layers N] [--torch-threads N]
Target (issue 11): no slower than torch.
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember  # noqa: E402
import ember.fx  # noqa: E402
import ember.export  # noqa: E402
from ember.fx.experimental.proxy_tensor import make_fx as ember_make_fx  # noqa: E402
import torch  # noqa: E402
import torch.fx  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402

warnings.filterwarnings('ignore')


def build(lib, layers, d=64, heads=4):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q = q.view(b, t, heads, c // heads).transpose(1, 2)
            k = k.view(b, t, heads, c // heads).transpose(1, 2)
            v = v.view(b, t, heads, c // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (c // heads) ** 0.5)
            att = att.masked_fill(self.mask == 0, float('-inf')).softmax(-1)     # mask: (t, t) already
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.proj(y)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            for blk in self.blocks:
                blk.register_buffer('mask', lib.tril(lib.ones(16, 16)))

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            return self.ln(x)
    return GPT().eval()


def best_pair(fe, ft, min_time=2.0, min_runs=3):
    fe(), ft()
    te, tt = [], []
    start = time.perf_counter()
    while len(te) < min_runs or time.perf_counter() - start < min_time:
        for f, acc in ((fe, te), (ft, tt)):
            t0 = time.perf_counter()
            f()
            acc.append(time.perf_counter() - t0)
    return min(te), min(tt)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--layers', type=int, default=12)
    p.add_argument('--torch-threads', type=int, default=None)
    a = p.parse_args()
    if a.torch_threads:
        torch.set_num_threads(a.torch_threads)
    em, tm = build(ember, a.layers), build(torch, a.layers)
    xe, xt = ember.randn(2, 16, 64), torch.randn(2, 16, 64)
    cases = {
        'symbolic_trace': (lambda: ember.fx.symbolic_trace(em), lambda: torch.fx.symbolic_trace(tm)),
        'make_fx real': (lambda: ember_make_fx(em)(xe), lambda: torch_make_fx(tm)(xt)),
        'make_fx fake': (lambda: ember_make_fx(em, tracing_mode='fake')(xe),
                         lambda: torch_make_fx(tm, tracing_mode='fake', _allow_non_fake_inputs=True)(xt)),
        'export': (lambda: ember.export.export(em, (xe,)), lambda: torch.export.export(tm, (xt,))),
    }
    print(f'{a.layers}-layer transformer (d_model 64, 4 heads, input 2x16x64); ms, best of alternating runs')
    print(f'{"case":<16} {"nodes e/t":>11} {"ember":>9} {"torch":>9} {"ember/torch":>12}')
    for name, (fe, ft) in cases.items():
        ge, gt = fe(), ft()
        ne = len((ge.graph if hasattr(ge, 'graph') else ge.graph_module.graph).nodes)
        nt = len((gt.graph if hasattr(gt, 'graph') else gt.graph_module.graph).nodes)
        te, tt = best_pair(fe, ft)
        print(f'{name:<16} {f"{ne}/{nt}":>11} {te * 1e3:9.1f} {tt * 1e3:9.1f} {te / tt:11.2f}x')


if __name__ == '__main__':
    main()
