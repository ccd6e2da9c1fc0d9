"""An MLP classifier in ordinary PyTorch style, on ember.

    python examples/mlp_classifier.py            # or: ember run examples/mlp_classifier.py

Swap the first import for `import torch` and the script runs on PyTorch unchanged.
"""
import argparse

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset
from ember.data.shapes import make_shapes


class MLP(nn.Module):
    def __init__(self, hidden=512, classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.numel()
    model.train()
    return correct / total


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--epochs', type=int, default=3)
    ap.add_argument('--n', type=int, default=6000)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    xtr, ytr = make_shapes(args.n, seed=0)
    xte, yte = make_shapes(1000, seed=1)
    train = DataLoader(TensorDataset(torch.from_numpy(xtr), torch.from_numpy(ytr)), batch_size=128, shuffle=True)
    test = DataLoader(TensorDataset(torch.from_numpy(xte), torch.from_numpy(yte)), batch_size=256)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        for x, y in train:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f'epoch {epoch}: loss {loss.item():.4f}, test accuracy {evaluate(model, test):.3f}')
    return evaluate(model, test)


if __name__ == '__main__':
    main()
