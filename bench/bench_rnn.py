"""nn.LSTM / nn.GRU forward + backward, ember vs torch in one process.

    python bench/bench_rnn.py [--rounds 5]

ember's recurrent layers loop over time in Python (nn/modules/rnn.py: one input projection per layer, a cell
step per time step); torch runs one fused ``_VF.lstm``. Cases: d2l's character LSTM/GRU (T=32, B=1024, H=32,
one-hot inputs of 28) and a char-RNN language model layer (T=64, B=32, 256 -> 256, 2 layers). Each round times
one fwd+bwd of each library in turn; the figure is the median round.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402


def cases(lib):
    rng = np.random.default_rng(0)
    out = []
    for kind in ('LSTM', 'GRU'):
        for T, B, I, H, L in ((32, 1024, 28, 32, 1), (64, 32, 256, 256, 2)):
            lib.manual_seed(0)
            m = getattr(lib.nn, kind)(I, H, L)
            x = lib.from_numpy(rng.standard_normal((T, B, I)).astype(np.float32))
            out.append((f'{kind} T={T} B={B} {I}->{H} x{L}', lambda m=m, x=x: m(x)[0].sum().backward()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=5)
    args = ap.parse_args()
    print(f'{"case (fwd+bwd)":<36}{"ember ms":>10}{"torch ms":>10}{"ratio":>8}')
    for (name, fe), (_, ft) in zip(cases(ember), cases(torch)):
        fe(), ft()          # warm up
        te, tt = [], []
        for _ in range(args.rounds):
            for fn, ts in ((fe, te), (ft, tt)):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
        me, mt = np.median(te) * 1e3, np.median(tt) * 1e3
        print(f'{name:<36}{me:>10.1f}{mt:>10.1f}{me / mt:>8.2f}')


if __name__ == '__main__':
    main()
