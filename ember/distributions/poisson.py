"""The Poisson distribution with ``rate``."""
from numbers import Number

import ember
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Poisson']


class Poisson(ExponentialFamily):
    """Poisson distribution, P(k) = rate^k e^-rate / k!.

    >>> import ember
    >>> Poisson(2.0).log_prob(ember.tensor(0.0))
    tensor(-2.)
    """
    arg_constraints = {'rate': constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = ember.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, ('rate',))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
