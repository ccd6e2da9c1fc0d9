"""``weights=`` for ember.vision models: a local file or torchvision's cache, never a download.

A ``Weights`` member names torchvision's published checkpoint file; ember looks for it where
torchvision caches downloads (``$TORCH_HOME/hub/checkpoints``, default ``~/.cache/torch``) and loads
it with ``ember.load``; a path (str or os.PathLike) is loaded directly. A checkpoint that is absent
raises a RuntimeError saying where to put it. ``pretrained=True`` means the default weights, as
torchvision's deprecated argument.
"""
import enum
import os
from ember._warn import warnings

import ember


class Weights(enum.Enum):
    """One published checkpoint: ``url`` (its file name is the cache name) and ``meta``."""

    def __init__(self, url, meta):
        self.url = url
        self.meta = meta

    @classmethod
    def verify(cls, obj):
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + '.', '')
            if name == 'DEFAULT':
                return cls.DEFAULT
            if name in cls.__members__:
                return cls.__members__[name]
        raise ValueError(f"Invalid Weights {obj!r} for {cls.__name__}; expected one of "
                         f"{', '.join(cls.__members__)} or a local file path")

    def get_state_dict(self, progress=True, check_hash=False):
        return ember.load(_cached_file(self.url), map_location='cpu', weights_only=True)


def _hub_dir():
    return os.path.join(ember.hub.get_dir(), 'checkpoints')


def _cached_file(url):
    path = os.path.join(_hub_dir(), os.path.basename(url))
    if not os.path.isfile(path):
        raise RuntimeError(f"Pretrained weights not found at {path}. ember.vision does not download; fetch {url} "
                           "and put it there (or pass weights='/path/to/file.pth').")
    return path


def _resolve(weights_enum, weights, kwargs):
    """The weights argument after the legacy ``pretrained=`` keyword, validated against ``weights_enum``."""
    if 'pretrained' in kwargs:
        pretrained = kwargs.pop('pretrained')
        warnings.warn("The parameter 'pretrained' is deprecated, please use 'weights' instead.")
        if pretrained and weights is None:
            weights = weights_enum.DEFAULT
    if isinstance(weights, (str, os.PathLike)) and (os.path.sep in str(weights) or os.path.isfile(weights)):
        return os.fspath(weights)
    return weights_enum.verify(weights)


def _load(model, weights, num_classes_key='num_classes', kwargs=None):
    """Load ``weights`` (a member or a path) into ``model``; None leaves the random initialisation."""
    if weights is None:
        return model
    if isinstance(weights, str):
        if not os.path.isfile(weights):
            raise RuntimeError(f"Weights file {weights} does not exist")
        state = ember.load(weights, map_location='cpu', weights_only=True)
    else:
        state = weights.get_state_dict()
    model.load_state_dict(state)
    return model


def _check_num_classes(weights, kwargs):
    if weights is not None and not isinstance(weights, str) and 'categories' in weights.meta:
        n = len(weights.meta['categories'])
        if kwargs.get('num_classes', n) != n:
            raise ValueError(f"The parameter 'num_classes' expected value {n} but got {kwargs['num_classes']} "
                             "instead.")
        kwargs['num_classes'] = n


_IMAGENET = {'categories': [None] * 1000}
_BASE = 'https://download.pytorch.org/models/'


def _weights(name, members):
    """A Weights enum class with ``IMAGENET1K_V1`` (and V2) members and ``DEFAULT``."""
    ns = {k: (_BASE + f, _IMAGENET) for k, f in members.items()}
    cls = Weights(name, ns)
    cls.DEFAULT = cls[list(members)[-1]]
    return cls
