"""The MultivariateNormal distribution, parameterised by one of covariance_matrix, precision_matrix or
scale_tril (all kept as the lower Cholesky factor L, unbroadcast, so batched work reuses one factor).

Triangular solves are ``linalg.solve`` on ``L.tril()``: the same values as a triangular solve, and the
``tril`` keeps the gradient with respect to L lower-triangular, as torch's ``solve_triangular`` does."""
import math

import ember
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ['MultivariateNormal']


def _batch_mv(bmat, bvec):
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _solve_lower(L, b):
    """L^-1 b for lower-triangular L (b a matrix), broadcasting batch dimensions."""
    return ember.linalg.solve(L.tril(), b)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for each vector x of ``bx`` (whose batch may be larger than L's)."""
    n = bx.size(-1)
    shape = ember.broadcast_shapes(tuple(bL.shape)[:-2], tuple(bx.shape)[:-1])
    sol = _solve_lower(bL.expand(shape + (n, n)), bx.expand(shape + (n,)).unsqueeze(-1)).squeeze(-1)
    return sol.pow(2).sum(-1)


def _scale_tril(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the covariance, from whichever of the three was given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return ember.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


def _precision_to_scale_tril(P):
    # With P = U U^T for upper-triangular U (a Cholesky factor of P read backwards), the covariance
    # P^-1 = U^-T U^-1 and L = U^-T is its lower Cholesky factor.
    Lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    L_inv = ember.transpose(ember.flip(Lf, (-2, -1)), -2, -1)
    Id = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _solve_lower(L_inv, Id.expand(L_inv.shape)).tril()


class MultivariateNormal(Distribution):
    """Multivariate normal distribution with mean ``loc`` and one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``.

    >>> import ember
    >>> MultivariateNormal(ember.zeros(2), ember.eye(2)).log_prob(ember.zeros(2))
    tensor(-1.8379)
    """
    arg_constraints = {'loc': constraints.real_vector, 'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite,
                       'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError('Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.')
        for name, m in (('scale_tril', scale_tril), ('covariance_matrix', covariance_matrix),
                        ('precision_matrix', precision_matrix)):
            if m is not None:
                if m.dim() < 2:
                    what = 'scale_tril matrix' if name == 'scale_tril' else name
                    raise ValueError(f'{what} must be at least two-dimensional, with optional leading '
                                     'batch dimensions')
                batch_shape = ember.broadcast_shapes(tuple(m.shape)[:-2], tuple(loc.shape)[:-1])
                setattr(self, name, m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril(scale_tril, covariance_matrix, precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ('covariance_matrix', 'scale_tril', 'precision_matrix'):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = ember.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = _solve_lower(L, Id.expand(L.shape))
        return ember.matmul(L_inv.mT, L_inv).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
