"""The Wishart distribution W_p(df, Sigma) over p x p positive-definite matrices, parameterised like
MultivariateNormal by one of covariance_matrix (Sigma), precision_matrix (Sigma^-1) or scale_tril (L, Sigma = L L^T),
all kept as the unbroadcast lower factor L.

    log p(X) = (df - p - 1)/2 log|X| - tr(Sigma^-1 X)/2 - df p/2 log 2 - df/2 log|Sigma| - log Gamma_p(df/2)

with the multivariate gamma log Gamma_p(a) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(a - j/2). df must exceed p - 1
(a ValueError whatever validate_args says, as torch); for p - 1 < df < p the distribution is singular, and torch
warns. Samples use the Bartlett decomposition: X = (L A)(L A)^T with A lower triangular, A_ii^2 ~ Chi2(df - i)
and A_ij ~ N(0, 1) below the diagonal, so rsample differentiates through L and (by the chi-squared draws'
implicit-reparameterisation gradient) through df.

A sample outside the support (a singular matrix, for df < p or an ill-conditioned Sigma) is redrawn up to
``max_try_correction`` times (default 3 when validating, else 0) with the warning 'Singular sample detected.'.
torch 2.13 emits that warning on every rsample call, singular or not, and its redraw replaces the valid
samples rather than the singular ones; ember warns and redraws only when a sample is singular.

>>> import ember
>>> Wishart(ember.tensor(4.0), ember.eye(2)).mean
tensor([[4., 0.],
        [0., 4.]])
"""
import math
from numbers import Number

import ember
from ember._warn import warnings
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril, _solve_lower
from .utils import lazy_property

__all__ = ['Wishart']


def _mvlgamma(a, p):
    """log Gamma_p(a), elementwise over ``a``."""
    half_j = 0.5 * ember.arange(p, dtype=a.dtype, device=a.device)
    return ember.lgamma(a.unsqueeze(-1) - half_j).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def _mvdigamma(a, p):
    """d/da log Gamma_p(a) = sum_{j<p} digamma(a - j/2)."""
    half_j = 0.5 * ember.arange(p, dtype=a.dtype, device=a.device)
    return ember.digamma(a.unsqueeze(-1) - half_j).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart distribution with ``df`` degrees of freedom (> p - 1) and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``.

    >>> import ember
    >>> Wishart(ember.tensor(3.0), ember.eye(2)).log_prob(ember.eye(2))
    tensor(-3.5310)
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {'covariance_matrix': constraints.positive_definite,
                'precision_matrix': constraints.positive_definite,
                'scale_tril': constraints.lower_cholesky,
                'df': constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError('Exactly one of covariance_matrix or precision_matrix or scale_tril may be '
                                 'specified.')
        name, param = next((n, m) for n, m in (('scale_tril', scale_tril), ('covariance_matrix', covariance_matrix),
                                               ('precision_matrix', precision_matrix)) if m is not None)
        if param.dim() < 2:
            raise ValueError('scale_tril must be at least two-dimensional, with optional leading batch dimensions')
        if isinstance(df, Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.Size(ember.broadcast_shapes(tuple(param.shape)[:-2], tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = ember.Size(param.shape[-2:])
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            shown = df.item() if isinstance(df, ember.Tensor) and df.dim() == 0 else df
            raise ValueError(f'Value of df={shown} expected to be greater than ndim - 1 = {p - 1}.')
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        self._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril(scale_tril, covariance_matrix, precision_matrix)
        L = self._unbroadcasted_scale_tril
        # A_ii^2 ~ Chi2(df - i) in the Bartlett factor
        self._dist_chi2 = Chi2(self.df.unsqueeze(-1) - ember.arange(p, dtype=L.dtype, device=L.device),
                               validate_args=False)
        if self.df.lt(p).any():
            warnings.warn('Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < '
                          'ndim.')

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ('covariance_matrix', 'scale_tril', 'precision_matrix'):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        new._dist_chi2 = self._dist_chi2.expand(batch_shape + self.event_shape[-1:])
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = ember.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = _solve_lower(L, Id.expand(L.shape))
        return ember.matmul(L_inv.mT, L_inv).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df=None):
        """``df`` (default self.df) shaped to multiply batch_shape + (p, p) matrices."""
        df = self.df if df is None else df
        # a Number df stays 0-d under a batch of matrices (as torch keeps it; torch's view then fails)
        return df.expand(self._batch_shape).reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        # an integer df gives a floating mode (torch's fails writing nan into the integer factor)
        factor = (self.df - self.event_shape[-1] - 1).to(self._unbroadcasted_scale_tril.dtype)
        factor = factor.where(factor > 0, float('nan'))     # no mode (density unbounded at 0) for df <= p + 1
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        L = self._unbroadcasted_scale_tril
        chi2 = self._dist_chi2.rsample(sample_shape)
        noise = ember.randn(tuple(self._extended_shape(sample_shape)), dtype=L.dtype, device=L.device).tril(-1)
        A = noise + ember.diag_embed(chi2.sqrt())
        LA = ember.matmul(L, A)
        return ember.matmul(LA, LA.mT)

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """A reparameterised sample by the Bartlett decomposition; singular draws are redrawn up to
        ``max_try_correction`` times (default 3 when validating arguments, else 0)."""
        if max_try_correction is None:
            max_try_correction = 3 if self._validate_args else 0
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample.detach())
        if singular.any():
            warnings.warn('Singular sample detected.')
            for _ in range(max_try_correction):
                redraw = self._bartlett_sampling(sample_shape)
                sample = ember.where(singular.unsqueeze(-1).unsqueeze(-1), redraw, sample)
                singular = ~self.support.check(sample.detach())
                if not singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        shape = ember.broadcast_shapes(tuple(L.shape)[:-2], tuple(value.shape)[:-2]) + (p, p)
        L_b = L.expand(shape)
        # tr(Sigma^-1 X) = tr(L^-1 X L^-T), solving with L as a general matrix: the gradient with respect to
        # scale_tril is then torch's, that of tr((L L^T)^-1 X) in every entry of L (upper triangle included)
        half = ember.linalg.solve(L_b, value.expand(shape))
        whitened = ember.linalg.solve(L_b, half.mT)
        trace = whitened.diagonal(dim1=-2, dim2=-1).sum(-1)
        half_log_det_sigma = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det_sigma) - _mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * ember.logdet(value) - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * half_log_det_sigma + p * (p + 1) / 2 * math.log(2) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2).expand(self._batch_shape)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -0.5 * self.precision_matrix, 0.5 * (self.df - p - 1)

    def _log_normalizer(self, x, y):
        # with df/2 = y + (p + 1)/2 and Sigma = (-2x)^-1: df/2 (p log 2 + log|Sigma|) + log Gamma_p(df/2)
        p = self._event_shape[-1]
        half_df = y + (p + 1) / 2
        return -half_df * ember.logdet(-x) + _mvlgamma(half_df, p)
