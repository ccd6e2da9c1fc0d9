"""The Gamma distribution (shape ``concentration``, ``rate``). rsample differentiates the sample through the
concentration with ``ember._standard_gamma``'s implicit-reparameterisation gradient."""
from numbers import Number

import ember
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ['Gamma']


def _standard_gamma(concentration):
    return ember._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Gamma distribution with density rate^a x^(a-1) e^(-rate x) / Gamma(a).

    >>> import ember
    >>> Gamma(2.0, 1.0).log_prob(ember.tensor(1.0))
    tensor(-1.)
    """
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = ember.Size()
        else:
            batch_shape = self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, ('concentration', 'rate'))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=ember.finfo(value.dtype).tiny)      # a 0 sample would give log_prob -inf
        return value

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ember.xlogy(self.concentration, self.rate) + ember.xlogy(self.concentration - 1, value)
                - self.rate * value - ember.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        special = getattr(ember, 'special', None)
        if special is None or not hasattr(special, 'gammainc'):
            raise NotImplementedError('Gamma.cdf needs ember.special.gammainc, which this ember lacks')
        return special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - ember.log(self.rate) + ember.lgamma(self.concentration)
                + (1.0 - self.concentration) * ember.digamma(self.concentration))
