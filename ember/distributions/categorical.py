"""The Categorical distribution over {0, ..., K-1}, parameterised by ``probs`` or ``logits`` (last dimension)."""
import ember
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Categorical']


class Categorical(Distribution):
    """Categorical distribution; ``probs`` are normalised to sum to 1, ``logits`` to log-probabilities.

    >>> import ember
    >>> Categorical(probs=ember.tensor([0.25, 0.75])).log_prob(ember.tensor(1))
    tensor(-0.2877)
    """
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError('Either `probs` or `logits` must be specified, but not both.')
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError('`probs` parameter must be at least one-dimensional.')
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError('`logits` parameter must be at least one-dimensional.')
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else ember.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Categorical, batch_shape, _instance, ('probs', 'logits'), (self._num_events,))
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float('nan'), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float('nan'), dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        with ember.no_grad():
            samples_2d = ember.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ember.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        # clamp so that 0 * -inf (a zero probability) counts as 0
        logits = ember.clamp(self.logits, min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
