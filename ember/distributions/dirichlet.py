"""The Dirichlet distribution over the probability simplex. rsample draws torch's samples
(``ember._sample_dirichlet``: double Gamma(alpha_i, 1) samples over their row's sum). Where the concentration
requires grad it computes them from differentiable pieces, the double gammas (``ember._standard_gamma`` makes the
draws ``_sample_dirichlet`` makes) over their sum, so the implicit-reparameterisation gradients of the gammas give a
pathwise gradient of the normalised sample; the values then equal torch's to rounding (the kernel adds each row in
torch's order, ``sum`` in its own). torch instead
differentiates the Dirichlet CDF directly (``_dirichlet_grad``); both are unbiased reparameterised gradients,
but the per-sample gradients differ."""
import ember
import ember.nn.functional as F
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ['Dirichlet']


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution with ``concentration`` (last dimension = event).

    >>> import ember
    >>> Dirichlet(ember.tensor([1.0, 1.0])).log_prob(ember.tensor([0.3, 0.7]))
    tensor(0.)
    """
    arg_constraints = {'concentration': constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError('`concentration` parameter must be at least one-dimensional.')
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = ember.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        conc = self.concentration.expand(shape)
        if not (conc.requires_grad and ember.is_grad_enabled()):
            return ember._sample_dirichlet(conc)
        g = ember._standard_gamma(conc.double())
        x = (g / g.sum(-1, keepdim=True) if g.dim() else g / g).to(conc.dtype)
        fi = ember.finfo(x.dtype)
        x.detach().clamp_(min=fi.tiny, max=1 - fi.eps / 2)        # as torch's kernel: up to the float below 1
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1)) - ember.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        if mask.any():      # all concentrations < 1: the mass piles up at the largest one's vertex
            mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), concm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ember.lgamma(self.concentration).sum(-1) - ember.lgamma(a0) - (k - a0) * ember.digamma(a0)
                - ((self.concentration - 1.0) * ember.digamma(self.concentration)).sum(-1))
