"""The Geometric distribution: the number of failures before the first success in Bernoulli(probs) trials.
Sampling is floor(log(u) / log(1 - p)) with u from ``uniform_(tiny, 1)``, torch's draw."""
from numbers import Number

import ember
import ember.nn.functional as F
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Geometric']


class Geometric(Distribution):
    """Geometric distribution on {0, 1, 2, ...} with success probability ``probs`` (or ``sigmoid(logits)``).

    >>> import ember
    >>> Geometric(probs=ember.tensor(0.5)).log_prob(ember.tensor(1.0))
    tensor(-1.3863)
    """
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError('Either `probs` or `logits` must be specified, but not both.')
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = ember.Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # unit_interval admits 0, where the distribution is undefined; torch checks it separately
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f'Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) '
                                 f'of distribution {self!r} to be positive but found invalid values:\n'
                                 f'{value.detach()[~valid]}')

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Geometric, batch_shape, _instance, ('probs', 'logits'))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.probs.dtype).tiny
        with ember.no_grad():
            u = ember.empty(tuple(shape), dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: 0 * log(0) would be nan; the probability is 1
        probs = ember.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction='none') / self.probs
