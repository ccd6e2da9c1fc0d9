"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
import math

import ember
from .cauchy import Cauchy
from ._folded import _Folded

__all__ = ['HalfCauchy']


class HalfCauchy(_Folded):
    """|X| with X ~ Cauchy(0, ``scale``): infinite mean.

    >>> import ember
    >>> HalfCauchy(1.0).cdf(ember.tensor(1.0))
    tensor(0.5000)
    """

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
