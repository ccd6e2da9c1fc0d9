"""The Binomial distribution: successes in ``total_count`` Bernoulli(``probs``) trials."""
import ember
from . import constraints
from .distribution import Distribution
from .utils import count_and_param, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Binomial']


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0, as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Binomial distribution with ``total_count`` and ``probs`` or ``logits``.

    >>> import ember
    >>> Binomial(4, ember.tensor(0.5)).log_prob(ember.tensor(2.0))
    tensor(-0.9808)
    """
    arg_constraints = {'total_count': constraints.nonnegative_integer, 'probs': constraints.unit_interval,
                       'logits': constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Binomial, batch_shape, _instance, ('total_count', 'probs', 'logits'))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = ember.lgamma(n + 1)
        log_factorial_k = ember.lgamma(value + 1)
        log_factorial_nmk = ember.lgamma(n - value + 1)
        # n * log(1 + exp(logits)), computed without overflow
        normalize = n * _clamp_by_zero(self.logits) + n * ember.log1p(ember.exp(-ember.abs(self.logits))) \
            - log_factorial_n
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError('Inhomogeneous total count not supported by `entropy`.')
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError('Inhomogeneous total count not supported by `enumerate_support`.')
        values = ember.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
