"""ember.distributions: torch.distributions on ember's public API.

Parameterisable probability distributions with sampling (``sample``, reparameterised ``rsample``),
``log_prob``, ``entropy``, ``cdf``/``icdf``, moments, constraints with torch's validation, transforms and
``kl_divergence``. Random streams differ from torch's; every deterministic quantity matches it.

>>> import ember
>>> from ember.distributions import Normal, kl_divergence
>>> Normal(0.0, 1.0).entropy()
tensor(1.4189)
"""
from . import constraints, transforms, utils  # noqa: F401  (torch's submodules)
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
                         TanhTransform, Transform)
from .uniform import Uniform

__all__ = ['ExpRelaxedCategorical', 'LogitRelaxedBernoulli', 'AffineTransform', 'Bernoulli', 'Beta', 'Binomial', 'Categorical', 'ComposeTransform', 'Dirichlet',
           'Distribution', 'ExpTransform', 'Exponential', 'ExponentialFamily', 'Gamma', 'Independent', 'Laplace',
           'LogNormal', 'Multinomial', 'MultivariateNormal', 'Normal', 'OneHotCategorical', 'Poisson',
           'PowerTransform', 'RelaxedBernoulli', 'RelaxedOneHotCategorical', 'SigmoidTransform', 'TanhTransform', 'Transform', 'TransformedDistribution',
           'Uniform', 'constraints', 'kl_divergence', 'register_kl', 'transforms', 'utils']
