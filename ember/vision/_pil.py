"""Pillow, imported only when an image is read, written or transformed as a PIL image.

Pillow is the optional extra ``ember[vision]``; everything that works on tensors or on the
idx/CIFAR files needs only NumPy, so Pillow is imported lazily and a missing Pillow is reported
with the extra to install.
"""


def pil_image():
    """The ``PIL.Image`` module, or an ImportError naming the extra that provides it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("this part of ember.vision needs Pillow: pip install ember[vision] "
                          "(or pip install pillow)") from None
    return Image


def is_pil_image(img):
    """True when ``img`` is a PIL image (False, without importing Pillow, when Pillow is absent)."""
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)
