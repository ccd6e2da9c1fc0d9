"""The Exponential distribution with ``rate``."""
from numbers import Number

import ember
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Exponential']


class Exponential(ExponentialFamily):
    """Exponential distribution, density rate * exp(-rate * x).

    >>> import ember
    >>> Exponential(2.0).log_prob(ember.tensor(1.0))
    tensor(-1.3069)
    """
    arg_constraints = {'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = ember.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance, ('rate',))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return ember.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        e = ember.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value):
        return -ember.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ember.log(self.rate)
