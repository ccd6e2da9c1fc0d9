"""Relaxed Bernoulli (Concrete, Maddison et al. 2017): a continuous, reparameterisable stand-in for Bernoulli at a
``temperature``. ``LogitRelaxedBernoulli`` lives in logit space, where its density is simple; ``RelaxedBernoulli``
maps it onto (0, 1) with a sigmoid.

>>> import ember
>>> RelaxedBernoulli(ember.tensor(0.5), probs=ember.tensor([0.3])).rsample().shape
ember.Size([1])
"""
from numbers import Number

import ember
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['LogitRelaxedBernoulli', 'RelaxedBernoulli']


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli sample, with ``temperature`` and ``probs`` or ``logits``."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError('Either `probs` or `logits` must be specified, but not both.')
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(ember.Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, _instance, ('probs', 'logits'))
        new.temperature = self.temperature
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ember.rand(tuple(shape), dtype=probs.dtype, device=probs.device))
        # logistic noise plus the logits, sharpened by 1 / temperature
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Relaxed Bernoulli on (0, 1): sigmoid of a LogitRelaxedBernoulli; reparameterisable."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
