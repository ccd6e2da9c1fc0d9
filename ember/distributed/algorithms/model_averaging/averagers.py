"""Model averagers (torch's ``model_averaging.averagers``): ``PeriodicModelAverager`` averages the parameters
every ``period`` steps after ``warmup_steps``, run after ``optimizer.step()`` in post-local SGD.

>>> # averager = PeriodicModelAverager(period=4, warmup_steps=100)
>>> # for step in range(200):
>>> #     loss_fn(ddp(x), y).backward(); opt.step(); averager.average_parameters(model.parameters())
"""
from ember._warn import warnings
from abc import ABC, abstractmethod

import ember.distributed as dist
from . import utils

__all__ = ['ModelAverager', 'PeriodicModelAverager']


class ModelAverager(ABC):
    """Base class of the averagers: a process group (None: the default one) and a step count."""

    def __init__(self, process_group=None):
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.step = 0

    @abstractmethod
    def average_parameters(self, params):
        raise NotImplementedError


class PeriodicModelAverager(ModelAverager):
    """Average parameters (or an optimizer's parameter groups) at steps ``warmup_steps + k * period``."""

    def __init__(self, period, warmup_steps=0, process_group=None):
        super().__init__(process_group)
        if warmup_steps < 0:
            raise ValueError("Arg ``warmup_steps`` must be a non-negative number.")
        self.warmup_steps = warmup_steps
        if period < 1:
            raise ValueError("Arg ``period`` must be a positive value.")
        elif period == 1:
            warnings.warn("When period is 1, no need to use model averaging because the communication cost of "
                          "all-reducing parameters will be no less than the cost of all-reducing gradients by "
                          "DistributedDataParallel in the backward pass. Therefore, only DistributedDataParallel "
                          "should be used for this case.", stacklevel=2)
        self.period = period

    def average_parameters(self, params):
        """Average ``params`` if this step is due, then count the step."""
        if self.step >= self.warmup_steps and (self.step - self.warmup_steps) % self.period == 0:
            utils.average_parameters_or_parameter_groups(params, self.process_group)
        self.step += 1
