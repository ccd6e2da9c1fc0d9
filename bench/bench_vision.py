"""ember.vision against torch, side by side in one process (issue: the torchvision that programs import).

1. A resnet18 training step (batch 16, 64x64 images, SGD): ember.vision.models.resnet18 against the same
   architecture built from torch.nn layers (torchvision itself cannot be imported beside the CPU torch wheel).
2. An MNIST epoch's input pipeline (ToTensor + Normalize, batch 64, 2 workers): ember.vision.datasets.MNIST
   with ember's DataLoader against the same reading and normalisation written for torch's DataLoader.

    python bench/bench_vision.py [--steps N] [--rounds R]

ember's process settings (NOTE [process settings]: glibc malloc keeping freed memory) apply to the whole
process once ember's thread pool first runs, so the torch model here runs with them too; measured alone in a
process, the same torch step is slower (its backward pays page faults on freed memory).
"""
import argparse
import gzip
import os
import struct
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as tnn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ember  # noqa: E402
import ember.vision as ev  # noqa: E402


class _Block(tnn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = tnn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(cout)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = tnn.Sequential(tnn.Conv2d(cin, cout, 1, stride, bias=False), tnn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + idt)


def torch_resnet18(num_classes=1000):
    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(inplace=True),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers.append(tnn.Sequential(_Block(cin, cout, stride), _Block(cout, cout, 1)))
        cin = cout
    return tnn.Sequential(*layers, tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, num_classes))


def _stepper(lib, model):
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(16, 3, 64, 64)
    y = lib.randint(0, 1000, (16,))

    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _median_step(step, steps):
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _step_times(steps, rounds):
    """Median step time of each library in each round, the libraries alternating round by round (after two
    warm-up steps each), so that a drift in the machine's speed hits both."""
    runs = {'ember': _stepper(ember, ev.models.resnet18()), 'torch': _stepper(torch, torch_resnet18())}
    for step in runs.values():
        step()
        step()
    per_round = []
    for _ in range(rounds):
        per_round.append({name: _median_step(step, steps) for name, step in runs.items()})
    return per_round


def _write_mnist(root, n):
    raw = os.path.join(root, 'MNIST', 'raw')
    os.makedirs(raw)
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    for prefix, count in (('train', n), ('t10k', n)):
        with gzip.open(os.path.join(raw, f'{prefix}-images-idx3-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>IIII', 2051, count, 28, 28) + imgs[:count].tobytes())
        with gzip.open(os.path.join(raw, f'{prefix}-labels-idx1-ubyte.gz'), 'wb') as f:
            f.write(struct.pack('>II', 2049, count) + labels[:count].tobytes())
    return imgs, labels


class _TorchMNIST(torch.utils.data.Dataset):
    """torchvision's MNIST item on the same arrays, for torch's DataLoader: a PIL image per item (as
    torchvision's MNIST returns), then ToTensor (to float in [0, 1], channel first) and Normalize."""

    def __init__(self, imgs, labels):
        self.imgs, self.labels = imgs, labels

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, i):
        from PIL import Image
        img = Image.fromarray(self.imgs[i], mode='L')
        x = torch.from_numpy(np.array(img, np.uint8, copy=True)).view(1, 28, 28).float().div(255)
        return (x - 0.1307) / 0.3081, int(self.labels[i])


def _epoch(lib, ds):
    loader = lib.utils.data.DataLoader(ds, batch_size=64, num_workers=2)
    t = time.perf_counter()
    n = sum(int(x.shape[0]) for x, _ in loader)
    return n / (time.perf_counter() - t)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--steps', type=int, default=5, help='steps per library per round')
    ap.add_argument('--rounds', type=int, default=4)
    ap.add_argument('--samples', type=int, default=20000)
    a = ap.parse_args(argv)
    ember.manual_seed(0)
    torch.manual_seed(0)
    per_round = _step_times(a.steps, a.rounds)
    ratios = sorted(r['torch'] / r['ember'] for r in per_round)
    te = float(np.median([r['ember'] for r in per_round]))
    tt = float(np.median([r['torch'] for r in per_round]))
    print(f"OpenBLAS kernels: {ember.backends.cpu.process_tuning()['blas_core']} (OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')}); torch: {torch.backends.cpu.get_cpu_capability()}")
    print(f'resnet18 train step (batch 16, 64x64), {a.rounds} alternating rounds of {a.steps} steps: ember '
          f'{te * 1e3:.0f} ms, torch {tt * 1e3:.0f} ms; speed ember/torch per round '
          f'{", ".join(f"{r:.2f}" for r in ratios)}; median {float(np.median(ratios)):.2f}x')
    with tempfile.TemporaryDirectory() as root:
        imgs, labels = _write_mnist(root, a.samples)
        tf = ev.transforms.Compose([ev.transforms.ToTensor(), ev.transforms.Normalize((0.1307,), (0.3081,))])
        se = _epoch(ember, ev.datasets.MNIST(root, train=True, transform=tf))
        st = _epoch(torch, _TorchMNIST(imgs, labels))
    print(f'MNIST pipeline (ToTensor + Normalize, batch 64, 2 workers): ember {se:.0f} samples/s, '
          f'torch {st:.0f} samples/s, ember/torch {se / st:.2f}x')


if __name__ == '__main__':
    main()
