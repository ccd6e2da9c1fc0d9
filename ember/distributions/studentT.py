"""Student's t distribution: loc + scale * X / sqrt(Z / df), X standard normal and Z ~ Chi2(df)."""
import math

import ember
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ['StudentT']


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    >>> import ember
    >>> StudentT(ember.tensor(3.0)).log_prob(ember.tensor(0.0))
    tensor(-1.0009)
    """
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df, new.loc, new.scale = (t.expand(batch_shape) for t in (self.df, self.loc, self.scale))
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return ember.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / ember.where(df > 2, df - 2, 1.0)
        return ember.where(df > 2, finite, ember.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ember.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + ember.lgamma(0.5 * self.df)
             - ember.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ember.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = ember.lgamma(0.5 * self.df) + math.lgamma(0.5) - ember.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (ember.digamma(0.5 * (self.df + 1))
                                                          - ember.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
