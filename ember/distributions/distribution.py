"""The ``Distribution`` base class: shapes (sample + batch + event), parameter and sample validation, and the
interface every distribution fills in (sample/rsample, log_prob, cdf/icdf, entropy, moments, expand).

Shapes follow torch: ``batch_shape`` indexes independent distributions, ``event_shape`` one draw's shape,
and ``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``. Validation is on by default
(off under ``python -O``), as torch's; invalid parameters raise ValueError at construction and out-of-support
values raise ValueError in ``log_prob``.

>>> import ember
>>> from ember.distributions import Normal
>>> Normal(ember.zeros(3), 1.0).sample((2,)).shape
ember.Size([2, 3])
"""
from ember._warn import warnings

import ember
from . import constraints
from .utils import lazy_property

__all__ = ['Distribution']


class Distribution:
    """Abstract base class for probability distributions."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for every distribution built afterwards (``validate_args=None``).

        >>> Distribution.set_default_validate_args(True)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=ember.Size(), event_shape=ember.Size(), validate_args=None):
        self._batch_shape = ember.Size(batch_shape)
        self._event_shape = ember.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f'{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = '
                              '{}` or initialize the distribution with `validate_args=False` to turn off validation.')
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue        # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue        # a parameter derived from the one the user gave (probs from logits)
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose parameters are expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraints each parameter must satisfy, by parameter name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the distribution's values satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f'{self.__class__} does not implement mean')

    @property
    def mode(self):
        raise NotImplementedError(f'{self.__class__} does not implement mode')

    @property
    def variance(self):
        raise NotImplementedError(f'{self.__class__} does not implement variance')

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=ember.Size()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size()):
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """Deprecated: ``sample((n,))``."""
        warnings.warn('sample_n will be deprecated. Use .sample((n,)) instead', UserWarning)
        return self.sample(ember.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        return ember.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Raise ValueError unless ``value`` is a tensor that broadcasts with the distribution and lies in its
        support."""
        if not isinstance(value, ember.Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        event_dim_start = value.dim() - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f'The right-most size of value must match event_shape: {value.size()} vs '
                             f'{self._event_shape}.')
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f'Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.')
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f'{self.__class__} does not define `support` to enable sample validation. Please '
                          'initialize the distribution with `validate_args=False` to turn off validation.')
            return
        assert support is not None
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _expanded(self, cls, batch_shape, _instance, params, param_event=()):
        """The body of most ``expand()`` methods: a new ``cls`` whose parameters ``params`` (those this
        instance holds: a lazily derived ``probs``/``logits`` only once computed) are expanded to
        ``batch_shape + param_event``; ``_param`` follows probs/logits, and validation is carried over."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = ember.Size(batch_shape)
        for name in params:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + ember.Size(param_event)))
                if name in ('probs', 'logits'):
                    new._param = new.__dict__[name]
        super(cls, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f'Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom '
                                      '__init__ method must also define a custom .expand() method.')
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ', '.join(f'{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}'
                         for p in names)
        return self.__class__.__name__ + '(' + args + ')'
