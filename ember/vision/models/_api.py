"""``weights=`` for ember.vision models: a local file or torchvision's cache, never a download.

A ``WeightsEnum`` member (its value a ``Weights`` record) names torchvision's published checkpoint file; ember looks for it where
torchvision caches downloads (``$TORCH_HOME/hub/checkpoints``, default ``~/.cache/torch``) and loads
it with ``ember.load``; a path (str or os.PathLike) is loaded directly. A checkpoint that is absent
raises a RuntimeError saying where to put it. ``pretrained=True`` means the default weights, as
torchvision's deprecated argument.
"""
import enum
import fnmatch
import os
from dataclasses import dataclass
from typing import Callable
from ember._warn import warnings

import ember


@dataclass
class Weights:
    """One published checkpoint, torchvision's record: ``url`` (its file name is the cache name), the inference
    ``transforms`` (None in ember's own enums) and ``meta`` (categories, num_params, ...)."""
    url: str
    transforms: Callable
    meta: dict


class WeightsEnum(enum.Enum):
    """Base of every ``*_Weights`` enum, torchvision's ``WeightsEnum``: each member's value is a ``Weights``,
    whose ``url``, ``transforms`` and ``meta`` the member exposes. Subclass it for checkpoints of one's own.

    >>> class Mine(WeightsEnum):
    ...     V1 = Weights(url='https://example.com/mine-v1.pth', transforms=None, meta={'acc': 0.9})
    >>> Mine.verify('Mine.V1') is Mine.V1, Mine.V1.meta['acc'], Mine.V1
    (True, 0.9, Mine.V1)
    """

    @classmethod
    def verify(cls, obj):
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + '.', '')
            if name == 'DEFAULT' and hasattr(cls, 'DEFAULT'):
                return cls.DEFAULT
            if name in cls.__members__:
                return cls.__members__[name]
        raise ValueError(f"Invalid Weights {obj!r} for {cls.__name__}; expected one of "
                         f"{', '.join(cls.__members__)} or a local file path")

    def get_state_dict(self, *args, **kwargs):
        """The checkpoint from torchvision's cache (``progress``/``check_hash`` are accepted; nothing downloads)."""
        return ember.load(_cached_file(self.url), map_location='cpu', weights_only=True)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


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


def _load(model, weights, rename=None):
    """Load ``weights`` (a member or a path) into ``model``; None leaves the random initialisation.
    ``rename`` maps each checkpoint key to the model's (DenseNet's published files use older names)."""
    if weights is None:
        return model
    if isinstance(weights, str):
        if not os.path.isfile(weights):
            raise RuntimeError(f"Weights file {weights} does not exist")
        state = ember.load(weights, map_location='cpu', weights_only=True)
    else:
        state = weights.get_state_dict()
    if rename is not None:
        state = {rename(k): v for k, v in state.items()}
    model.load_state_dict(state)
    return model


def _overwrite_named_param(kwargs, param, new_value):
    """Set a builder's fixed argument, refusing a different value from the caller (torchvision's wording)."""
    if param in kwargs and kwargs[param] != new_value:
        raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    kwargs[param] = new_value


def _inception_published(weights, kwargs):
    """GoogLeNet and Inception v3: whether ``weights`` are torchvision's published ones (a file path is the
    caller's own model); if so, set the arguments their checkpoints were trained with (the ImageNet input
    transform unless given, the auxiliary heads present, no initialisation) and check num_classes."""
    published = weights is not None and not isinstance(weights, str)
    if published:
        if 'transform_input' not in kwargs:
            _overwrite_named_param(kwargs, 'transform_input', True)
        _overwrite_named_param(kwargs, 'aux_logits', True)
        _overwrite_named_param(kwargs, 'init_weights', False)
        _check_num_classes(weights, kwargs)
    return published


def _check_num_classes(weights, kwargs):
    if weights is not None and not isinstance(weights, str) and 'categories' in weights.meta:
        n = len(weights.meta['categories'])
        if kwargs.get('num_classes', n) != n:
            raise ValueError(f"The parameter 'num_classes' expected value {n} but got {kwargs['num_classes']} "
                             "instead.")
        kwargs['num_classes'] = n


_IMAGENET = {'categories': [None] * 1000}
_BASE = 'https://download.pytorch.org/models/'


def _weights(name, members, default=None, meta=None):
    """A WeightsEnum class with ImageNet members (name: checkpoint file, or a ``(file, meta)`` pair whose
    entries are that member's own) and ``DEFAULT`` (torchvision's choice: ``default``, else the last member);
    ``meta`` adds entries (``num_params``, ``min_size``) to every member's meta."""
    def member(value):
        file, own = (value, {}) if isinstance(value, str) else value
        return Weights(url=_BASE + file, transforms=None, meta={**_IMAGENET, **(meta or {}), **own})
    ns = {k: member(v) for k, v in members.items()}
    cls = WeightsEnum(name, ns)
    cls.DEFAULT = cls[default or list(members)[-1]]
    return cls


# NOTE [model registry]: each builder is registered by ``@register_model(WeightsEnum)`` where it is
# defined, as torchvision's ``@register_model()``; ``list_models``, ``get_model``, ``get_model_builder``
# and ``get_model_weights`` read this table, so a new model file needs no other list kept in step.
BUILTIN_MODELS = {}
_MODEL_WEIGHTS = {}


def register_model(weights_enum, name=None):
    def wrapper(fn):
        key = name or fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        _MODEL_WEIGHTS[key] = weights_enum
        return fn
    return wrapper


def list_models(module=None, include=None, exclude=None):
    """Names of the registered models, optionally of one module and filtered by fnmatch patterns.

    >>> list_models(include='resnet1*')
    ['resnet101', 'resnet152', 'resnet18']
    """
    names = {k for k, fn in BUILTIN_MODELS.items()
             if module is None or fn.__module__.rsplit('.', 1)[0] == module.__name__}
    if include:
        patterns = [include] if isinstance(include, str) else include
        names = {n for p in patterns for n in fnmatch.filter(names, p)}
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else exclude
        names -= {n for p in patterns for n in fnmatch.filter(names, p)}
    return sorted(names)


def get_model_builder(name):
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """Build a model by name: ``get_model('resnet18', num_classes=10)``."""
    return get_model_builder(name)(**config)


def get_model_weights(name):
    """The Weights enum class of a model, by name or builder."""
    if callable(name):
        name = name.__name__
    get_model_builder(name)
    return _MODEL_WEIGHTS[name.lower()]


def get_weight(name):
    """A Weights member from its full name: ``get_weight('ResNet50_Weights.IMAGENET1K_V2')``."""
    try:
        enum_name, value_name = name.split('.')
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    for weights_enum in _MODEL_WEIGHTS.values():
        if weights_enum.__name__ == enum_name:
            return weights_enum.verify(value_name)
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be retrieved.")
