"""Adafactor (torch.optim.Adafactor): Adam-like steps whose second moment of a matrix is kept as a row
factor and a column factor, so its memory is O(rows + cols) instead of O(rows * cols).

``adafactor()`` is torch's single-tensor algorithm, operation for operation, so trajectories match torch's
to rounding; ``Adafactor`` validates the options and keeps the state under torch's keys (``step``, and
``row_var``/``col_var`` for parameters of two or more dimensions, ``variance`` for the others).
"""
import ember
from .optimizer import Optimizer, _zeros0, _closure_loss


def _scalar(x):
    return x.item() if isinstance(x, ember.Tensor) else x


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, *, d, lr, beta2_decay, weight_decay,
              eps1, eps2, maximize, foreach=None):
    r"""for each p (step t): beta2_hat = 1 - t^decay; rho = min(lr, 1/sqrt(t)); alpha = max(eps2, RMS(p)) * rho;
    p *= 1 - lr*wd; matrices: R = lerp(R, mean_cols(g^2), 1-beta2_hat), C likewise over rows,
    V = R @ C / max(mean(R), eps1); vectors: V = lerp(V, g^2, 1-beta2_hat);
    U = g / sqrt(max(V, eps1^2)); p -= alpha * U / max(1, RMS(U)/d)"""
    lr = _scalar(lr)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        e1 = ember.finfo(p.dtype).eps if eps1 is None else eps1
        state_steps[i].add_(1)
        t = state_steps[i].item()
        one_minus_beta2 = t ** beta2_decay
        rho = min(lr, 1 / (t ** 0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if weight_decay != 0:
            p.mul_(1 - lr * weight_decay)
        if g.dim() > 1:
            row_var, col_var = row_vars[i], col_vars[i]
            row_var.lerp_(ember.norm(g, dim=-1, keepdim=True).square_().div_(g.size(-1)), one_minus_beta2)
            col_var.lerp_(ember.norm(g, dim=-2, keepdim=True).square_().div_(g.size(-2)), one_minus_beta2)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
        else:
            variances[i].lerp_(g * g, one_minus_beta2)
            var_estimate = variances[i].clone()
        update = var_estimate.clamp_(min=e1 * e1).rsqrt_()
        update.mul_(g)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        p.add_(update, alpha=-alpha / denom)


class Adafactor(Optimizer):
    """Adafactor with torch's options: ``lr`` caps the relative step size and scales decoupled weight decay.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.ones(2, 3))
    >>> opt = Adafactor([w]); w.sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    @staticmethod
    def _init_state(p, group):
        g = p.grad
        if g.dim() > 1:
            return {'step': _zeros0(), 'row_var': g.new_zeros(list(g.shape[:-1]) + [1]),
                    'col_var': g.new_zeros(list(g.shape[:-2]) + [1, g.shape[-1]])}
        return {'step': _zeros0(), 'variance': ember.zeros_like(g)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is not None and p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if p.grad is not None and p.grad.is_sparse:
                    raise RuntimeError("Adafactor does not support sparse gradients")
        for group, params, sts in self._groups_with_state(self._init_state):
            eps1, eps2 = group['eps']
            adafactor(params, [p.grad for p in params], [s.get('row_var') for s in sts],
                      [s.get('col_var') for s in sts], [s.get('variance') for s in sts], [s['step'] for s in sts],
                      d=group['d'], lr=group['lr'], beta2_decay=group['beta2_decay'],
                      weight_decay=group['weight_decay'], eps1=eps1, eps2=eps2, maximize=group['maximize'])
        return loss


Adafactor.__module__ = 'ember.optim'     # torch's is torch.optim.Adafactor (NOTE [torch's module paths])
