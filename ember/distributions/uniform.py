"""The continuous Uniform distribution on the half-open interval [low, high)."""
from numbers import Number

import ember
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['Uniform']


class Uniform(Distribution):
    """Uniform distribution on ``[low, high)``, reparameterised as low + u * (high - low).

    >>> import ember
    >>> Uniform(0.0, 4.0).log_prob(ember.tensor(1.0))
    tensor(-1.3863)
    """
    has_rsample = True

    @property
    def arg_constraints(self):
        return {'low': constraints.less_than(self.high), 'high': constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = ember.Size() if isinstance(low, Number) and isinstance(high, Number) else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Uniform, batch_shape, _instance, ('low', 'high'))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float('nan') * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        rand = ember.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return ember.log(lb.mul(ub)) - ember.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return ember.log(self.high - self.low)
