"""ExponentialFamily: the base class torch gives exponential-family distributions (Normal, Bernoulli, Gamma,
Beta, Dirichlet, Exponential, Poisson). Each subclass here writes its entropy in closed form, so the class
only marks the family (``isinstance(d, ExponentialFamily)``).

>>> from ember.distributions import Normal
>>> isinstance(Normal(0.0, 1.0), ExponentialFamily)
True
"""
from .distribution import Distribution

__all__ = ['ExponentialFamily']


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions."""
