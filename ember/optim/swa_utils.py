"""Stochastic weight averaging and exponential moving averages of a model (torch.optim.swa_utils).

``AveragedModel`` keeps a copy of a model whose parameters (and, with ``use_buffers``, buffers) are a running
average of the model's: the plain mean by default (SWA), or any ``avg_fn``/``multi_avg_fn`` such as the EMA of
``get_ema_multi_avg_fn(decay)``. ``SWALR`` anneals each group's learning rate to its ``swa_lr``;
``update_bn`` recomputes batch-norm statistics for the averaged weights with one pass over the data.

>>> import ember
>>> model = ember.nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> with ember.no_grad():
...     _ = model.weight.fill_(1.0)
>>> swa.update_parameters(model)
>>> with ember.no_grad():
...     _ = model.weight.fill_(3.0)
>>> swa.update_parameters(model)
>>> swa.module.weight.tolist(), swa.n_averaged.item()
([[2.0, 2.0]], 2)
"""
import copy
import itertools
import math

import ember
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ['AveragedModel', 'update_bn', 'SWALR', 'get_ema_multi_avg_fn', 'get_swa_multi_avg_fn',
           'get_ema_avg_fn', 'get_swa_avg_fn']


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors: averaged = decay * averaged + (1 - decay) * current."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        for ema, current in zip(ema_param_list, current_param_list):
            if ema.is_floating_point() or ema.is_complex():
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The in-place running mean over lists of tensors: averaged += (current - averaged) / (n + 1)."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        for averaged, current in zip(averaged_param_list, current_param_list):
            if averaged.is_floating_point() or averaged.is_complex():
                averaged.lerp_(current, 1 / (num_averaged + 1))
            else:
                averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """One tensor's EMA: decay * ema + (1 - decay) * current."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """One tensor's running mean: averaged + (current - averaged) / (n + 1)."""
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters ``update_parameters(model)`` averages; ``n_averaged`` (a buffer)
    counts the updates, the first of which copies the model. Without ``use_buffers`` the copy's buffers follow the
    model's (call ``update_bn`` for batch-norm statistics that match averaged weights); with it they are averaged
    too. ``forward`` runs the averaged copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer('n_averaged', ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        mine = itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers \
            else self.parameters()
        theirs = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        averaged, current = [], []
        first = self.n_averaged.item() == 0
        with ember.no_grad():
            for p_avg, p_model in zip(mine, theirs):
                p_now = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_now)
                if first:
                    p_avg.detach().copy_(p_now)
            if not first:
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged, current, self.n_averaged)
                else:       # torch's CPU path: the per-tensor function, the running mean by default
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_avg, p_now in zip(averaged, current):
                        p_avg.copy_(avg_fn(p_avg, p_now, self.n_averaged))
            if not self.use_buffers:    # the copy's buffers follow the model's
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute every batch-norm layer's running statistics with one pass over ``loader`` (a batch's first element
    when it is a list or tuple): statistics reset, cumulative averages (momentum None), the model in training mode
    for the pass and restored after."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with ember.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each parameter group's learning rate from its value to ``swa_lr`` over ``anneal_epochs`` steps
    ('cos' or 'linear'), then hold it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1):
        swa_lrs = _format_param('swa_lr', optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = lr
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == 'cos' else self._linear_anneal

    def state_dict(self):
        """The scheduler's attributes but the optimizer and the annealing function (a checkpoint keeps the
        strategy's name, as torch's, so it loads without ember's function)."""
        return {k: v for k, v in self.__dict__.items() if k not in ('optimizer', 'anneal_func')}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # the recursive form: recover the learning rate annealing started from, then step along the schedule
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group['lr'], group['swa_lr'], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group['swa_lr'] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
