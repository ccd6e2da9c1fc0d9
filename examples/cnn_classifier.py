"""A small CNN classifier (Conv 1->16->32, pools, Linear) in ordinary PyTorch style, on ember.

    python examples/cnn_classifier.py            # or: ember run examples/cnn_classifier.py
"""
import argparse

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset
from ember.data.shapes import make_shapes


class CNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 7 * 7, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--epochs', type=int, default=2)
    ap.add_argument('--n', type=int, default=4000)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    xtr, ytr = make_shapes(args.n, seed=0)
    xte, yte = make_shapes(500, seed=1)
    train = DataLoader(TensorDataset(torch.from_numpy(xtr), torch.from_numpy(ytr)), batch_size=64, shuffle=True)
    model = CNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for x, y in train:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(torch.from_numpy(xte)).argmax(1) == torch.from_numpy(yte)).float().mean().item()
        model.train()
        print(f'epoch {epoch}: loss {loss.item():.4f}, test accuracy {acc:.3f}')
    return acc


if __name__ == '__main__':
    main()
