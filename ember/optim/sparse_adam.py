"""SparseAdam (torch.optim.SparseAdam): Adam that touches only the rows a sparse COO gradient names.

A dense parameter with a sparse gradient (``p.grad.is_sparse``) has its moments and values updated only at
the gradient's coalesced indices; everything else keeps its value. Where torch adds a sparse tensor built
on those indices to the dense state, ember writes the same sums with ``index_put_`` at the same indices:
the numbers are identical, and it needs no dense-plus-sparse kernel. ``step`` is a plain int here, as in
torch's SparseAdam state.
"""
import math

import ember
from .optimizer import Optimizer, _closure_loss


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr, maximize):
    r"""at the gradient's indices only: m += (g - m)(1-b1); v += (g^2 - v)(1-b2);
    p -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps)"""
    for i, p in enumerate(params):
        g = grads[i].coalesce()      # the update is non-linear: each index once
        index = tuple(g._indices())
        values = -g._values() if maximize else g._values()
        if values.numel() == 0:
            continue
        m, v, t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        old_m, old_v = m[index], v[index]
        m_update = values.sub(old_m).mul_(1 - beta1)
        m.index_put_(index, old_m + m_update)
        v_update = values.pow(2).sub_(old_v).mul_(1 - beta2)
        v.index_put_(index, old_v + v_update)
        numer = m_update.add_(old_m)
        denom = v_update.add_(old_v).sqrt_().add_(eps)
        step_size = lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        p.index_put_(index, p[index] + (-step_size * numer.div_(denom)))


class SparseAdam(Optimizer):
    """Adam for dense parameters whose gradients are sparse (``nn.Embedding(sparse=True)`` in torch).

    >>> import ember
    >>> w = ember.nn.Parameter(ember.zeros(4, 2))
    >>> w.grad = ember.sparse_coo_tensor(ember.tensor([[1]]), ember.ones(1, 2), (4, 2))
    >>> SparseAdam([w], lr=0.1).step(); w
    Parameter containing:
    tensor([[ 0.0000,  0.0000],
            [-0.1000, -0.1000],
            [ 0.0000,  0.0000],
            [ 0.0000,  0.0000]], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse = [[gi, pi] for gi, g in enumerate(self.param_groups) for pi, p in enumerate(g['params']) if p.is_sparse]
        cplx = [[gi, pi] for gi, g in enumerate(self.param_groups) for pi, p in enumerate(g['params'])
                if p.is_complex()]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if cplx:
            raise ValueError(f"Complex params at indices {cplx}: SparseAdam does not support complex parameters")

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, steps = [], []
            for p in group['params']:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                params.append(p)
                st = self.state[p]
                if not st:
                    st.update(step=0, exp_avg=ember.zeros_like(p), exp_avg_sq=ember.zeros_like(p))
                st['step'] += 1
                steps.append(st['step'])
            lr = group['lr']
            sparse_adam(params, [p.grad for p in params], [self.state[p]['exp_avg'] for p in params],
                        [self.state[p]['exp_avg_sq'] for p in params], steps, eps=group['eps'],
                        beta1=group['betas'][0], beta2=group['betas'][1],
                        lr=lr.item() if isinstance(lr, ember.Tensor) else lr, maximize=group.get('maximize', False))
        return loss
