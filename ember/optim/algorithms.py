"""The optimizers: each class validates options and keeps state; a function beside it does the math.

The update rules follow torch.optim's documented algorithms (single-tensor,
non-capturable path), so parameter trajectories match torch's to float
rounding. See NOTE [foreach] in optimizer.py for why there is one variant.
"""
import functools
import math

import ember
from ..overrides import _is_torch_function_mode_enabled
from ..utils._python_dispatch import _get_current_dispatch_mode
from .optimizer import Optimizer, _required, _zeros0, _closure_loss, _check_lr, _check_adam_like, _check_weight_decay


def _lr(group):
    lr = group['lr']
    return lr.item() if isinstance(lr, ember.Tensor) else lr


def _start(p, g, step_t, *, lr, weight_decay, maximize, decoupled=False):
    """The shared start of every update: the gradient's sign for ``maximize``, one more step, and weight
    decay (``decoupled``, as AdamW: shrink p itself; otherwise add weight_decay * p to the gradient)."""
    if maximize:
        g = -g
    if step_t is not None:
        step_t.add_(1)
    if weight_decay:
        if decoupled:
            p.mul_(1 - lr * weight_decay)
        else:
            g = g.add(p, alpha=weight_decay)
    return g


def _real_views(*tensors):
    """A complex parameter is updated as the pairs of reals it is made of, as torch's optimizers do
    (view_as_real of the parameter, its gradient and its state), so squares and square roots are per part."""
    if not tensors[0].is_complex():
        return tensors
    return tuple(None if t is None else ember.view_as_real(t) for t in tensors)


# --- SGD -------------------------------------------------------------------------

def sgd(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize):
    r"""for each p: g = -g if maximize; g += wd*p; b = mu*b + (1-dampening)*g (b = g at first);
    g = g + mu*b if nesterov else b; p -= lr*g"""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, None, lr=lr, weight_decay=weight_decay, maximize=maximize)
        if momentum:
            buf = momentum_buffers[i]
            if buf is None:
                buf = momentum_buffers[i] = g.clone().detach()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(buf, alpha=momentum) if nesterov else buf
        p.add_(g, alpha=-lr)


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params = [p for p in group['params'] if p.grad is not None]
            bufs = [self.state[p].get('momentum_buffer') if p in self.state else None for p in params]
            sgd(params, [p.grad for p in params], bufs, lr=_lr(group), weight_decay=group['weight_decay'],
                momentum=group['momentum'], dampening=group['dampening'], nesterov=group['nesterov'],
                maximize=group['maximize'])
            if group['momentum']:
                for p, b in zip(params, bufs):
                    self.state[p]['momentum_buffer'] = b
        return loss


# --- Adam / AdamW ------------------------------------------------------------------

def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps, weight_decay,
         amsgrad, maximize, decoupled_weight_decay):
    r"""m = lerp(m, g, 1-b1); v = b2*v + (1-b2)*g^2; p -= lr/(1-b1^t) * m / (sqrt(v_or_vmax)/sqrt(1-b2^t) + eps)"""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize,
                   decoupled=decoupled_weight_decay)
        p, g, m, v, vmax = _real_views(p, g, exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i])
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        if amsgrad:
            ember.maximum(vmax, v, out=vmax)
            v = vmax
        if ember.compiler.is_compiling():
            # under ember.compile the step count stays a tensor (reading it with item() would end the graph):
            # the bias corrections are tensor operations, as torch's capturable Adam computes them
            bc1 = 1 - ember.pow(beta1, steps[i])
            bc2 = 1 - ember.pow(beta2, steps[i])
            denom = (v.sqrt() / bc2.sqrt()).add_(eps)
            p.sub_(m / denom * (lr / bc1))
            continue
        step = steps[i].item()
        bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
        denom = (v.sqrt() / math.sqrt(bc2)).add_(eps)
        p.addcdiv_(m, denom, value=-lr / bc1)


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps, weight_decay,
                amsgrad, maximize, decoupled_weight_decay, asked=True):
    """``adam`` as one operator for all the parameters (NOTE [fused optimizer steps] in ember/_ops/optim_ops.py).
    Where the caller did not ask for ``fused=True`` (the CUDA default, standing in for torch's foreach update),
    the version counters move as the foreach operators move them, so a graph that saved a parameter still
    refuses a backward after the step."""
    for s in steps:
        s.add_(1)
    fused = ember._fused_adamw_ if decoupled_weight_decay else ember._fused_adam_
    fused(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [], steps, lr=lr, beta1=beta1,
          beta2=beta2, weight_decay=weight_decay, eps=eps, amsgrad=amsgrad, maximize=maximize)
    if not asked:
        from ..autograd.graph import increment_version
        for t in list(params) + list(exp_avgs) + list(exp_avg_sqs) + (list(max_exp_avg_sqs) if amsgrad else []):
            increment_version(t)


_PLAIN = (ember.Tensor, ember.nn.Parameter)
_CPU_FUSED_DTYPES = (ember.float32, ember.float64)
_FUSED_DEVICES = ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone']     # torch's list, for its message


def _check_fused(fused, foreach, differentiable):
    if fused:
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")


def _fused(group, params):
    """Whether a group's step runs the fused operator: when asked (``fused=True``), and by default (NOTE [foreach]
    in optimizer.py) where every parameter is a floating-point tensor on a CUDA device, whose kernel launches the
    per-tensor operators would multiply, or a plain float32/float64 CPU tensor with a dense gradient of its dtype,
    where the fused kernel gives the single-tensor update's bits without its ~8 dispatched operators per
    parameter. Not while ember.compile traces the step, nor under a dispatch or function mode or for a
    ``__torch_function__`` subclass: those see the single-tensor update's operators, as under torch."""
    if ember.compiler.is_compiling() or group['differentiable'] or not params:
        return False
    fused = group['fused']
    if fused:
        for p in params:
            if not p.is_floating_point():
                raise RuntimeError(f"`fused=True` requires all the params to be floating point Tensors of supported "
                                   f"devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}")
        return True
    if fused is not None or group['foreach'] is False:
        return False
    if all(p.device.type == 'cuda' and p.is_floating_point() for p in params):
        return True
    if _get_current_dispatch_mode() is not None or _is_torch_function_mode_enabled():
        return False
    for p in params:
        g = p.grad
        if (p.__class__ not in _PLAIN or g.__class__ is not ember.Tensor or p.dtype not in _CPU_FUSED_DTYPES
                or g.dtype is not p.dtype or g.layout is not ember.strided or p.device.type != 'cpu'):
            return False
    return True


class Adam(Optimizer):
    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"
    """Adam (and, with ``decoupled_weight_decay=True``, AdamW)."""
    _decoupled_default = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=None):
        _check_adam_like(lr, eps, betas, weight_decay)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        _check_fused(fused, foreach, differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @staticmethod
    def _init_state(p, group):
        st = {'step': _zeros0(), 'exp_avg': ember.zeros_like(p), 'exp_avg_sq': ember.zeros_like(p)}
        if group['amsgrad']:
            st['max_exp_avg_sq'] = ember.zeros_like(p)
        return st

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            update = (functools.partial(_fused_adam, asked=bool(group['fused'])) if _fused(group, params)
                      else adam)
            update(params, [p.grad for p in params], [s['exp_avg'] for s in sts], [s['exp_avg_sq'] for s in sts],
                   [s.get('max_exp_avg_sq') for s in sts], [s['step'] for s in sts], lr=_lr(group),
                   beta1=group['betas'][0], beta2=group['betas'][1], eps=group['eps'],
                   weight_decay=group['weight_decay'], amsgrad=group['amsgrad'], maximize=group['maximize'],
                   decoupled_weight_decay=group['decoupled_weight_decay'])
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""
    _decoupled_default = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, **hyperparameters):
    """``adam`` with decoupled weight decay (torch.optim.adamw.adamw)."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, decoupled_weight_decay=True, **hyperparameters)


# --- RMSprop ------------------------------------------------------------------------

def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, *, lr, alpha, eps, weight_decay,
            momentum, centered, maximize):
    r"""v = a*v + (1-a)*g^2; avg = sqrt(v - gbar^2 if centered else v) + eps; p -= lr * (buf or g/avg)"""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize)
        p, g, sq, ga, buf = _real_views(p, g, square_avgs[i], grad_avgs[i], momentum_buffers[i])
        sq.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        if centered:
            ga.lerp_(g, 1 - alpha)
            avg = sq.addcmul(ga, ga, value=-1).sqrt_()
        else:
            avg = sq.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf.mul_(momentum).addcdiv_(g, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(g, avg, value=-lr)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        _check_weight_decay(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        st = {'step': _zeros0(), 'square_avg': ember.zeros_like(p)}
        if group['momentum'] > 0:
            st['momentum_buffer'] = ember.zeros_like(p)
        if group['centered']:
            st['grad_avg'] = ember.zeros_like(p)
        return st

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            rmsprop(params, [p.grad for p in params], [s['square_avg'] for s in sts], [s.get('grad_avg') for s in sts],
                    [s.get('momentum_buffer') for s in sts], [s['step'] for s in sts], lr=_lr(group),
                    alpha=group['alpha'], eps=group['eps'], weight_decay=group['weight_decay'],
                    momentum=group['momentum'], centered=group['centered'], maximize=group['maximize'])
        return loss


# --- Adagrad ------------------------------------------------------------------------

def adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize):
    r"""s += g^2; p -= lr/(1+(t-1)*lr_decay) * g / (sqrt(s)+eps)"""
    for i, (p, g) in enumerate(zip(params, grads)):
        if weight_decay and g.is_sparse:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize)
        step = steps[i].item()
        clr = lr / (1 + (step - 1) * lr_decay)
        if g.is_sparse:         # an Embedding(sparse=True) gradient: only the rows it names change (torch's)
            g = g.coalesce()
            idx, vals = g._indices(), g._values()
            ssum = state_sums[i]
            ssum.add_(ember.sparse_coo_tensor(idx, vals.pow(2), g.shape))
            std = ssum.sparse_mask(g)._values().sqrt().add_(eps)
            p.add_(ember.sparse_coo_tensor(idx, vals / std, g.shape), alpha=-clr)
            continue
        p, g, ssum = _real_views(p, g, state_sums[i])
        ssum.addcmul_(g, g, value=1)
        p.addcdiv_(g, ssum.sqrt().add_(eps), value=-clr)


class Adagrad(Optimizer):
    _sparse_ok = True
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        _check_weight_decay(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:      # torch creates Adagrad's state eagerly
            for p in group['params']:
                self.state[p].update(self._init_state(p, group))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'sum': ember.full_like(p, group['initial_accumulator_value'])}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            adagrad(params, [p.grad for p in params], [s['sum'] for s in sts], [s['step'] for s in sts],
                    lr=_lr(group), weight_decay=group['weight_decay'], lr_decay=group['lr_decay'], eps=group['eps'],
                    maximize=group['maximize'])
        return loss


# --- Adamax -------------------------------------------------------------------------

def adamax(params, grads, exp_avgs, exp_infs, steps, *, lr, beta1, beta2, eps, weight_decay, maximize):
    r"""m = lerp(m, g, 1-b1); u = max(b2*u, |g|+eps); p -= lr/(1-b1^t) * m/u"""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize)
        p, g, m, u = _real_views(p, g, exp_avgs[i], exp_infs[i])
        m.lerp_(g, 1 - beta1)
        ember.maximum(u.mul_(beta2), g.abs().add_(eps), out=u)
        clr = lr / (1 - beta1 ** steps[i].item())
        p.addcdiv_(m, u, value=-clr)


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'exp_avg': ember.zeros_like(p), 'exp_inf': ember.zeros_like(p)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            adamax(params, [p.grad for p in params], [s['exp_avg'] for s in sts], [s['exp_inf'] for s in sts],
                   [s['step'] for s in sts], lr=_lr(group), beta1=group['betas'][0], beta2=group['betas'][1],
                   eps=group['eps'], weight_decay=group['weight_decay'], maximize=group['maximize'])
        return loss


# --- NAdam --------------------------------------------------------------------------

def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, *, lr, beta1, beta2, eps, weight_decay,
          momentum_decay, decoupled_weight_decay, maximize):
    r"""Adam with Nesterov momentum and the momentum schedule mu_t = b1*(1 - 0.5*0.96^(t*psi))."""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize,
                   decoupled=decoupled_weight_decay)
        step = steps[i].item()
        bc2 = 1 - beta2 ** step
        mu = beta1 * (1. - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_products[i].mul_(mu)
        mu_product = mu_products[i].item()
        exp_avgs[i].lerp_(g, 1 - beta1)
        exp_avg_sqs[i].mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = exp_avg_sqs[i].div(bc2).sqrt().add_(eps)
        p.addcdiv_(g, denom, value=-lr * (1. - mu) / (1. - mu_product))
        p.addcdiv_(exp_avgs[i], denom, value=-lr * mu_next / (1. - mu_product * mu_next))


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'mu_product': ember.tensor(1., dtype=ember.float32),
                'exp_avg': ember.zeros_like(p), 'exp_avg_sq': ember.zeros_like(p)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            nadam(params, [p.grad for p in params], [s['exp_avg'] for s in sts], [s['exp_avg_sq'] for s in sts],
                  [s['mu_product'] for s in sts], [s['step'] for s in sts], lr=_lr(group), beta1=group['betas'][0],
                  beta2=group['betas'][1], eps=group['eps'], weight_decay=group['weight_decay'],
                  momentum_decay=group['momentum_decay'], decoupled_weight_decay=group['decoupled_weight_decay'],
                  maximize=group['maximize'])
        return loss


# --- RAdam --------------------------------------------------------------------------

def radam(params, grads, exp_avgs, exp_avg_sqs, steps, *, lr, beta1, beta2, eps, weight_decay,
          decoupled_weight_decay, maximize):
    r"""Adam whose adaptive term is used only once the variance estimate is tractable (rho_t > 5)."""
    rho_inf = 2 / (1 - beta2) - 1
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize,
                   decoupled=decoupled_weight_decay)
        step = steps[i].item()
        exp_avgs[i].lerp_(g, 1 - beta1)
        exp_avg_sqs[i].mul_(beta2).addcmul_(g, g, value=1 - beta2)
        bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
        corrected = exp_avgs[i] / bc1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
        if rho_t > 5.:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bc2) / exp_avg_sqs[i].sqrt().add_(eps)
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam_like(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'exp_avg': ember.zeros_like(p), 'exp_avg_sq': ember.zeros_like(p)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            radam(params, [p.grad for p in params], [s['exp_avg'] for s in sts], [s['exp_avg_sq'] for s in sts],
                  [s['step'] for s in sts], lr=_lr(group), beta1=group['betas'][0], beta2=group['betas'][1],
                  eps=group['eps'], weight_decay=group['weight_decay'],
                  decoupled_weight_decay=group['decoupled_weight_decay'], maximize=group['maximize'])
        return loss


# --- Adadelta ------------------------------------------------------------------------

def adadelta(params, grads, square_avgs, acc_deltas, steps, *, lr, rho, eps, weight_decay, maximize):
    r"""v = rho*v + (1-rho)*g^2; d = sqrt(u+eps)/sqrt(v+eps) * g; u = rho*u + (1-rho)*d^2; p -= lr*d"""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize)
        square_avgs[i].mul_(rho).addcmul_(g, g, value=1 - rho)
        std = square_avgs[i].add(eps).sqrt_()
        delta = acc_deltas[i].add(eps).sqrt_().div_(std).mul_(g)
        acc_deltas[i].mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)


class Adadelta(Optimizer):
    """ADADELTA (Zeiler 2012), torch.optim.Adadelta's options, defaults and state layout.

    Example::

        >>> w = ember.zeros(2, requires_grad=True)
        >>> opt = ember.optim.Adadelta([w], lr=1.0)
        >>> (w - 1).pow(2).sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['acc_delta', 'square_avg', 'step']
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'square_avg': ember.zeros_like(p), 'acc_delta': ember.zeros_like(p)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            adadelta(params, [p.grad for p in params], [s['square_avg'] for s in sts], [s['acc_delta'] for s in sts],
                     [s['step'] for s in sts], lr=_lr(group), rho=group['rho'], eps=group['eps'],
                     weight_decay=group['weight_decay'], maximize=group['maximize'])
        return loss


# --- Rprop ------------------------------------------------------------------------

def rprop(params, grads, prevs, step_sizes, steps, *, etaminus, etaplus, step_size_min, step_size_max, maximize):
    r"""Resilient backpropagation: each weight's step grows by etaplus while its gradient keeps its sign and
    shrinks by etaminus when the sign flips (that step then skips the update); p -= sign(g) * step."""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=0, weight_decay=0, maximize=maximize)
        p_, g, prev, step_size = _real_views(p, g, prevs[i], step_sizes[i])
        sign = g.mul(prev).sign()
        factor = ember.ones_like(sign)          # in the gradient's dtype, as torch overwrites ``sign``
        factor[sign > 0] = etaplus
        factor[sign < 0] = etaminus
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        g = g.masked_fill(factor == etaminus, 0)
        p_.addcmul_(g.sign(), step_size, value=-1)
        prev.copy_(g)


class Rprop(Optimizer):
    """Rprop, torch.optim.Rprop's options, defaults and state layout (``step``, ``prev``, ``step_size``).

    Example::

        >>> w = ember.zeros(2, requires_grad=True)
        >>> opt = ember.optim.Rprop([w], lr=0.1)
        >>> (w - 1).pow(2).sum().backward(); opt.step()
        >>> w.tolist()
        [0.10000000149011612, 0.10000000149011612]
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'prev': ember.zeros_like(p), 'step_size': ember.full_like(p, _lr(group))}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            (etaminus, etaplus), (smin, smax) = group['etas'], group['step_sizes']
            rprop(params, [p.grad for p in params], [s['prev'] for s in sts], [s['step_size'] for s in sts],
                  [s['step'] for s in sts], etaminus=etaminus, etaplus=etaplus, step_size_min=smin,
                  step_size_max=smax, maximize=group['maximize'])
        return loss


# --- ASGD -------------------------------------------------------------------------

def asgd(params, grads, axs, mus, etas, steps, *, lambd, lr, t0, alpha, weight_decay, maximize):
    r"""Averaged SGD: p = p*(1 - lambd*eta) - eta*g; ax averages p from step t0 on (mu = 1/max(1, t - t0));
    eta = lr / (1 + lambd*lr*t)^alpha."""
    for i, (p, g) in enumerate(zip(params, grads)):
        g = _start(p, g, steps[i], lr=lr, weight_decay=weight_decay, maximize=maximize)
        p_, g, ax = _real_views(p, g, axs[i])
        eta = etas[i].item()
        p_.mul_(1 - lambd * eta)
        p_.add_(g, alpha=-eta)
        if mus[i].item() != 1:
            ax.add_(p_.sub(ax).mul_(mus[i]))
        else:
            ax.copy_(p_)
        step = steps[i].item()
        etas[i].fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mus[i].fill_(1 / max(1, step - t0))


class ASGD(Optimizer):
    """Averaged SGD (Polyak and Juditsky), torch.optim.ASGD's options, defaults and state layout (``step``,
    ``eta``, ``mu``, ``ax``: the running average of the parameter).

    Example::

        >>> w = ember.zeros(2, requires_grad=True)
        >>> opt = ember.optim.ASGD([w], lr=0.1)
        >>> (w - 1).pow(2).sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['ax', 'eta', 'mu', 'step']
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    @staticmethod
    def _init_state(p, group):
        return {'step': _zeros0(), 'eta': ember.tensor(_lr(group), dtype=ember.float32),
                'mu': ember.ones((), dtype=ember.float32), 'ax': ember.zeros_like(p)}

    @ember.no_grad()
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group, params, sts in self._groups_with_state(self._init_state):
            asgd(params, [p.grad for p in params], [s['ax'] for s in sts], [s['mu'] for s in sts],
                 [s['eta'] for s in sts], [s['step'] for s in sts], lambd=group['lambd'], lr=_lr(group),
                 t0=group['t0'], alpha=group['alpha'], weight_decay=group['weight_decay'], maximize=group['maximize'])
        return loss


# the modules of torch's that these optimizers live in (NOTE [torch's module paths] in nn/modules/normalization.py):
# a pickled optimizer names torch.optim.sgd.SGD, which torch finds
for _cls in (SGD, Adam, AdamW, Adagrad, Adadelta, ASGD, RMSprop, Rprop, Adamax, NAdam, RAdam):
    _cls.__module__ = f'ember.optim.{_cls.__name__.lower()}'
