"""ember.vision: the part of torchvision that programs use, on ember (datasets, transforms (v1 and v2), models,
utils, ops, io (images), tv_tensors).

Under ``ember run`` (or after ``ember.compat.install()``) ``import torchvision`` resolves here, as
``import torch`` resolves to ember; see ember/compat.py for how and for the ``import ember as torch``
case. Image files need Pillow (``pip install ember[vision]``); the MNIST-family and CIFAR readers,
tensor transforms, models and ops need only NumPy.

>>> from ember.vision import transforms
>>> transforms.Normalize((0.5,), (0.5,))(ember.ones(1, 2, 2)).sum().item()
4.0
"""
import ember  # noqa: F401  (the doctest above names it)

from . import transforms, datasets, models, utils, ops, io, tv_tensors  # noqa: E402

__version__ = '0.28.0+ember'   # the torchvision API level this subset follows


def get_image_backend():
    return 'PIL'


def set_image_backend(backend):
    if backend != 'PIL':
        raise ValueError(f"Invalid backend '{backend}'. ember.vision supports only 'PIL'")
