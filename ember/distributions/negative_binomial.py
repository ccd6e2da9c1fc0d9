"""The NegativeBinomial distribution: successes before ``total_count`` failures in Bernoulli(probs) trials,
sampled as a Poisson with a Gamma-distributed rate (ember's gamma and poisson streams are not torch's)."""
import ember
import ember.nn.functional as F
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import count_and_param, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['NegativeBinomial']


class NegativeBinomial(Distribution):
    """Negative binomial distribution with ``total_count`` failures and success probability ``probs``.

    >>> import ember
    >>> NegativeBinomial(3.0, probs=ember.tensor(0.5)).mean
    tensor(3.)
    """
    arg_constraints = {'total_count': constraints.greater_than_eq(0),
                       'probs': constraints.half_open_interval(0.0, 1.0), 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        count_and_param(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance, ('probs', 'logits'))
        new.total_count = self.total_count.expand(ember.Size(batch_shape))
        return new

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_norm = (-ember.lgamma(self.total_count + value) + ember.lgamma(1.0 + value)
                    + ember.lgamma(self.total_count))
        log_norm = log_norm.masked_fill(self.total_count + value == 0.0, 0.0)     # the point mass at 0
        return log_unnormalized - log_norm
