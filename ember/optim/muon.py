"""Muon (torch.optim.Muon): momentum SGD whose update of a 2-D parameter is orthogonalised first.

The momentum-averaged gradient is pushed towards the nearest semi-orthogonal matrix by a few quintic
Newton-Schulz iterations run in bfloat16, with the coefficients of Keller Jordan's Muon post (torch's
defaults); the step size is then scaled by the matrix's shape (``adjust_lr_fn``). ``muon()`` follows
torch's single-tensor algorithm operation for operation.
"""
import math

import ember
from .optimizer import Optimizer, _closure_loss

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """X <- X / |X|_F, then ns_steps times X <- a X + (b A + c A^2) X with A = X X^T (on the wide side)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        x = ember.addmm(x, ember.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """'original' (the default): lr * sqrt(max(1, A/B)); 'match_rms_adamw': lr * 0.2 * sqrt(max(A, B))."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == 'original':
        return lr * math.sqrt(max(1, A / B))
    if adjust_lr_fn == 'match_rms_adamw':
        return lr * 0.2 * math.sqrt(max(A, B))
    return lr


def muon(params, grads, muon_momentum_bufs, *, foreach=None, lr, weight_decay, momentum, nesterov,
         ns_coefficients, ns_steps, eps, adjust_lr_fn, has_complex=False):
    r"""B = lerp(B, g, 1-mu); U = lerp(g, B, mu) if nesterov else B; O = NS(U);
    p *= 1 - lr*wd; p -= adjust_lr(lr, shape) * O"""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    if isinstance(lr, ember.Tensor):
        lr = lr.item()
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for p, g, buf in zip(params, grads, muon_momentum_bufs):
        if g.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(g, 1 - momentum)
        update = g.lerp(buf, momentum) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, ns_coefficients, ns_steps, eps)
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, p.shape)
        p.mul_(1 - lr * weight_decay)
        p.add_(update, alpha=-adjusted_lr)


class Muon(Optimizer):
    """Muon for 2-D parameters (hidden-layer weights); give biases and embeddings to AdamW.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.eye(2))
    >>> opt = Muon([w], lr=0.02); w.sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['momentum_buffer']
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, ember.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ('original', 'match_rms_adamw'):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group['params']:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = []
            for p in group['params']:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                params.append(p)
                st = self.state[p]
                if 'momentum_buffer' not in st:
                    st['momentum_buffer'] = ember.zeros_like(p.grad)
            muon(params, [p.grad for p in params], [self.state[p]['momentum_buffer'] for p in params],
                 lr=group['lr'], weight_decay=group['weight_decay'], momentum=group['momentum'],
                 nesterov=group['nesterov'], ns_coefficients=group['ns_coefficients'], eps=group['eps'],
                 ns_steps=group['ns_steps'], adjust_lr_fn=group['adjust_lr_fn'])
        return loss


Muon.__module__ = 'ember.optim'     # torch's is torch.optim.Muon (NOTE [torch's module paths])
