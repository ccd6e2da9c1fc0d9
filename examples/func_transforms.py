"""ember.func in four short programs, as torch.func's tutorials show them:

  1. per-sample gradients of a small CNN with vmap(grad(...)) and functional_call, checked against a loop;
  2. model ensembling: stack_module_state + vmap over the stacked parameters;
  3. a Hessian-vector product by forward-over-reverse (jvp of grad), checked against the full hessian;
  4. a MAML-style inner loop: the outer gradient differentiates through an inner gradient step.

    python examples/func_transforms.py          # or: ember run examples/func_transforms.py (with torch names)
"""
import argparse

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.func import functional_call, grad, hessian, jvp, stack_module_state, vmap


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, 4)

    def forward(self, x):
        return self.fc(torch.flatten(F.max_pool2d(F.relu(self.conv(x)), 2), 1))


def per_sample_gradients(batch):
    model = CNN()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(batch, 1, 14, 14), torch.randint(0, 4, (batch,))

    def loss(p, xi, yi):        # one sample: add the batch dimension the module expects
        return F.cross_entropy(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    loop = [grad(loss)(params, x[i], y[i]) for i in range(batch)]
    return max((per_sample[k][i] - loop[i][k]).abs().max().item() for i in range(batch) for k in params)


def ensemble(n_models):
    models = [nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 2)) for _ in range(n_models)]
    params, buffers = stack_module_state(models)
    x = torch.randn(8, 5)
    out = vmap(lambda p, b: functional_call(models[0], (p, b), (x,)))(params, buffers)
    return max((out[i] - m(x)).abs().max().item() for i, m in enumerate(models))


def hvp():
    f = lambda w: (w.sin() * w.roll(1)).sum() ** 2
    w, v = torch.randn(16), torch.randn(16)
    _, hv = jvp(grad(f), (w,), (v,))
    return (hv - hessian(f)(w) @ v).abs().max().item()


def maml(steps):
    net = nn.Linear(3, 1)
    params = {k: v.detach().requires_grad_() for k, v in net.named_parameters()}
    x, y = torch.randn(10, 3), torch.randn(10, 1)
    task_loss = lambda p, xx, yy: F.mse_loss(functional_call(net, p, (xx,)), yy)
    opt = torch.optim.SGD(params.values(), lr=0.1)
    losses = []
    for _ in range(steps):
        g = grad(task_loss)(params, x[:5], y[:5])          # inner step, differentiable in params
        adapted = {k: params[k] - 0.1 * g[k] for k in params}
        outer = task_loss(adapted, x[5:], y[5:])
        opt.zero_grad()
        outer.backward()
        opt.step()
        losses.append(outer.item())
    return losses


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--steps', type=int, default=20)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    res = {'per-sample grads vs loop (max abs diff)': per_sample_gradients(args.batch),
           'ensemble vs each model (max abs diff)': ensemble(3),
           'jvp(grad) vs hessian @ v (max abs diff)': hvp()}
    losses = maml(args.steps)
    res['MAML outer loss first -> last'] = (losses[0], losses[-1])
    for k, v in res.items():
        print(f'{k}: {v}')
    return res


if __name__ == '__main__':
    main()
