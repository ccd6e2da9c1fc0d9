"""Dropout modules: active in training mode only (``module.train()``/``eval()``)."""
from .. import functional as F
from .module import Module

__all__ = ['Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout']


class _DropoutNd(Module):
    _fn = 'dropout'

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f'p={self.p}, inplace={self.inplace}'


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` and scales the rest by 1/(1-p) while training.

    >>> import ember
    >>> ember.nn.Dropout(0.5).eval()(ember.ones(3))
    tensor([1., 1., 1.])
    """


class Dropout1d(_DropoutNd):
    _fn = 'dropout1d'


class Dropout2d(_DropoutNd):
    _fn = 'dropout2d'


class Dropout3d(_DropoutNd):
    _fn = 'dropout3d'


class AlphaDropout(_DropoutNd):
    _fn = 'alpha_dropout'


class FeatureAlphaDropout(_DropoutNd):
    _fn = 'feature_alpha_dropout'
