"""The folding shared by HalfNormal and HalfCauchy: |X| for a symmetric X centred at 0, whose density on
[0, inf) is twice X's (log_prob + log 2), cdf 2 F(x) - 1 and entropy H(X) - log 2."""
import math

import ember
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = []


class _Folded(TransformedDistribution):
    """|base| for a distribution ``base`` symmetric about 0; subclasses name the base."""
    arg_constraints = {'scale': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, base_dist, validate_args=None):
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
