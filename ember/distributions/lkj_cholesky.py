"""The LKJ distribution over lower Cholesky factors L of correlation matrices (Lewandowski, Kurowicka and Joe,
2009): the correlation matrix C = L L^T has density proportional to det(C)^(eta - 1).

Density. Measured on the strictly-lower entries of L (row i, 0-based, is a point of the upper unit hemisphere
of R^(i+1), with L_ii = sqrt(1 - sum_j<i L_ij^2)), the density of C times the Jacobian of L -> C is

    p(L) = c_d(eta) * prod_{i=1}^{d-1} L_ii^(d - i - 3 + 2 eta)

and c_d(eta) comes from the onion construction: row i's off-diagonal part w_i = sqrt(y_i) u_i, with u_i uniform
on the sphere S^(i-1) and y_i ~ Beta(i/2, b_i), b_i = eta + (d - 1 - i)/2, has density on the ball
(1 - |w|^2)^(b_i - 1) Gamma(eta + (d-1)/2) / (Gamma(b_i) pi^(i/2)), so

    log c_d(eta) = (d-1) lgamma(eta + (d-1)/2) - sum_{k=0}^{d-2} lgamma(eta + k/2) - d(d-1)/4 log(pi).

Sampling. torch's sampler (whose draws ember mirrors) is the same onion construction, vectorised over rows,
but draws row i's squared radius from Beta(i - 1/2, b_i) rather than Beta(i/2, b_i): identical for row 1 (so
for dim=2), different from row 2 on. Its draws for dim >= 3 therefore do not follow the density above (the
off-diagonal correlations are not exchangeable: with dim=4, eta=1, var(C_01) = 0.20 but var(C_02) = 0.25); ember
reproduces torch's sampler, beta parameters included (``_beta``), so a program's draws keep torch's statistics.
The onion method of the paper is ``_ONION_CONCENTRATION1 = 'paper'``.

>>> import ember
>>> LKJCholesky(2, 1.0).log_prob(ember.eye(2))
tensor(-0.6931)
"""
import math

import ember
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['LKJCholesky']

# 'torch': row i's squared radius ~ Beta(i - 1/2, b_i), as torch draws; 'paper': Beta(i/2, b_i), the onion
# method of LKJ 2009 (section 3.2), whose draws follow the density log_prob evaluates.
_ONION_CONCENTRATION1 = 'torch'


class LKJCholesky(Distribution):
    """LKJ distribution for lower Cholesky factors of ``dim`` x ``dim`` correlation matrices, with
    ``concentration`` eta: L L^T has density proportional to det(L L^T)^(eta - 1) (uniform when eta = 1).

    >>> import ember
    >>> LKJCholesky(3, 0.5).sample().shape
    ember.Size([3, 3])
    """
    arg_constraints = {'concentration': constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f'Expected dim to be an integer greater than or equal to 2. Found dim={dim}.')
        if not isinstance(dim, int):        # torch fails building the event shape
            size = repr(ember.Size())[:-len('([])')]       # ember.Size, or torch.Size under ember run
            raise TypeError(f"{size}() takes an iterable of 'int' (item 0 is '{type(dim).__name__}')")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = ember.Size((dim, dim))
        # Row i >= 1 of L has squared off-diagonal norm y_i ~ Beta(c1_i, b_i), b_i = eta + (dim - 1 - i)/2.
        # Row 0 needs no draw; it gets row 1's parameters so one Beta of event size dim covers every row.
        offset = ember.arange(dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        if _ONION_CONCENTRATION1 == 'torch':
            c1 = offset + 0.5
        else:
            c1 = 0.5 * (offset + 1)
        c0 = (self.concentration + 0.5 * (dim - 2)).unsqueeze(-1) - 0.5 * offset
        c1 = ember.cat([c1[:1], c1]).expand(batch_shape + (dim,))
        c0 = ember.cat([c0[..., :1], c0], -1)
        self._beta = Beta(c1, c0, validate_args=validate_args)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        """The onion method, all rows at once: row i's off-diagonal part is sqrt(y_i) times a uniform point of
        the sphere S^(i-1) (normalised Gaussian draws), its diagonal sqrt(1 - y_i); row 0 is e_0."""
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            dtype, device = self.concentration.dtype, self.concentration.device
            u = ember.randn(tuple(self._extended_shape(sample_shape)), dtype=dtype, device=device).tril(-1)
            # row 0 is all zeros: its norm is clamped so it stays zero
            u = u / u.norm(dim=-1, keepdim=True).clamp(min=ember.finfo(dtype).tiny)
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=ember.finfo(dtype).tiny).sqrt()
            return w + ember.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        eta = self.concentration
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        rows = ember.arange(1, d, dtype=eta.dtype, device=eta.device)
        exponent = 2 * (eta - 1).unsqueeze(-1) + (d - 1) - rows        # d - i - 3 + 2 eta for rows i = 1..d-1
        unnormalized = (exponent * diag.log()).sum(-1)
        half_k = 0.5 * ember.arange(d - 1, dtype=eta.dtype, device=eta.device)
        log_normalizer = ((d - 1) * ember.lgamma(eta + 0.5 * (d - 1))
                          - ember.lgamma(eta.unsqueeze(-1) + half_k).sum(-1) - d * (d - 1) / 4 * math.log(math.pi))
        return unnormalized + log_normalizer
