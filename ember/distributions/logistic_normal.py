"""The logistic-normal distribution on the simplex: a Normal vector pushed through stick breaking."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ['LogisticNormal']


class LogisticNormal(TransformedDistribution):
    """Stick breaking of X ~ Normal(``loc``, ``scale``) over the last dimension (K normals give K + 1
    probabilities).

    >>> import ember
    >>> LogisticNormal(ember.zeros(2), ember.ones(2)).sample().shape
    ember.Size([3])
    """
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
