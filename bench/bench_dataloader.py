"""DataLoader throughput, ember vs torch, side by side: samples per second.

A map-style dataset of 60,000 28x28 float32 images with int labels (MNIST-sized),
held in preallocated NumPy arrays; ``__getitem__`` returns ``(image, label)``
(also with ``__getitems__``, and as each library's TensorDataset over the same
arrays). Both loaders read the same data and collate with their own
default_collate; batch 128, shuffled, num_workers 0 and 2 (persistent); the best
of ``--epochs`` epochs after a warm-up batch. Run: ``python bench/bench_dataloader.py``.
"""
import argparse
import time

import numpy as np

N, BATCH = 60_000, 128


class Images:
    """``(image, label)`` per index from preallocated arrays (a plain map-style dataset)."""

    def __init__(self, n=N):
        rng = np.random.default_rng(0)
        self.x = rng.random((n, 28, 28), dtype=np.float32)
        self.y = rng.integers(0, 10, n)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


class BatchedImages(Images):
    """The same data with ``__getitems__``: one call per batch instead of one per sample."""

    def __getitems__(self, indices):
        x = self.x
        return [(x[i], y) for i, y in zip(indices, self.y[indices].tolist())]


def throughput(DataLoader, dataset, workers, epochs, **kw):
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=workers, **kw)
    for _ in loader:   # warm-up epoch: starts workers, faults pages in
        break
    best = 0.0
    for _ in range(epochs):
        t = time.perf_counter()
        n = 0
        for x, y in loader:
            n += x.shape[0]
        best = max(best, n / (time.perf_counter() - t))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--epochs', type=int, default=2)
    args = ap.parse_args()
    import torch
    import torch.utils.data as tud
    import ember
    import ember.utils.data as eud
    torch.set_num_threads(1)
    print(f"{'dataset':<16}{'workers':>8}{'torch samples/s':>18}{'ember samples/s':>18}{'ember/torch':>13}")
    imgs = Images()
    cases = [('getitem', imgs, imgs), ('getitems', BatchedImages(), BatchedImages()),
             ('TensorDataset', tud.TensorDataset(torch.from_numpy(imgs.x), torch.from_numpy(imgs.y)),
              eud.TensorDataset(ember.from_numpy(imgs.x), ember.from_numpy(imgs.y)))]
    for name, tds, eds in cases:
        for workers in (0, 2):
            kw = {'persistent_workers': True} if workers else {}
            tt = throughput(tud.DataLoader, tds, workers, args.epochs, **kw)
            et = throughput(eud.DataLoader, eds, workers, args.epochs, **kw)
            print(f"{name:<16}{workers:>8}{tt:>18,.0f}{et:>18,.0f}{et / tt:>13.2f}")


if __name__ == '__main__':
    main()
