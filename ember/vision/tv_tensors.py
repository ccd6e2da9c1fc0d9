"""``torchvision.tv_tensors``: Tensor subclasses that tell v2 transforms what a tensor holds.

An Image, Video, Mask or BoundingBoxes is the same tensor (same memory and autograd history) under a class
that v2 transforms dispatch on. As in torchvision, operators on one return plain Tensors, except the
copies that keep the meaning (``clone``, ``to``, ``detach``, ``requires_grad_``, deepcopy); a transform
re-wraps its result with ``wrap_like``.

>>> img = Image(ember.zeros(4, 5))
>>> type(img).__name__, img.shape, type(img + 1).__name__
('Image', ember.Size([1, 4, 5]), 'Tensor')
"""
from enum import Enum

import ember

from ._pil import is_pil_image

__all__ = ['TVTensor', 'Image', 'Video', 'Mask', 'BoundingBoxes', 'BoundingBoxFormat', 'wrap']


def _as_tensor(data, dtype, device, requires_grad):
    if is_pil_image(data):
        from .transforms.functional import pil_to_tensor
        data = pil_to_tensor(data)
    t = data if isinstance(data, ember.Tensor) else ember.as_tensor(data)
    if dtype is not None or device is not None:
        t = t.to(dtype=dtype, device=device)
    if requires_grad is not None:
        t = t.detach().requires_grad_(requires_grad) if requires_grad != t.requires_grad else t
    return t


class TVTensor(ember.Tensor):
    """Base of the tv_tensors: a second handle on a tensor, under a meaningful class."""
    # operators return plain Tensors; the methods below re-wrap the copies that keep the meaning
    __torch_function__ = ember._C._disabled_torch_function_impl

    @classmethod
    def _wrap(cls, tensor, **meta):
        out = tensor.as_subclass(cls)     # the same memory and version counter, as torchvision's _wrap
        out.__dict__.update(meta)
        return out

    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def wrap_like(cls, other, tensor):
        """``tensor`` as ``other``'s class (with its metadata)."""
        return cls._wrap(tensor)

    def _rewrap(self, tensor):
        return type(self).wrap_like(self, tensor)

    def clone(self, *args, **kwargs):
        return self._rewrap(super().clone(*args, **kwargs))

    def to(self, *args, **kwargs):
        return self._rewrap(super().to(*args, **kwargs))

    def detach(self):
        return self._rewrap(super().detach())

    def requires_grad_(self, requires_grad=True):
        super().requires_grad_(requires_grad)
        return self

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._rewrap(ember.Tensor.detach(self).clone().requires_grad_(self.requires_grad))
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (_rebuild, (type(self), ember.Tensor.detach(self).clone(), self._meta()))

    def _meta(self):
        return {}



def _rebuild(cls, tensor, meta):
    return cls._wrap(tensor, **meta)


class Image(TVTensor):
    """An image ``[..., C, H, W]``; a 2-D input gets a channel dim, a PIL image is read as ``pil_to_tensor``."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        t = _as_tensor(data, dtype, device, requires_grad)
        if t.dim() < 2:
            raise ValueError(f"Image needs at least 2 dimensions, got {t.dim()}")
        return cls._wrap(t.unsqueeze(0) if t.dim() == 2 else t)


class Video(TVTensor):
    """A video ``[..., T, C, H, W]``."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        t = _as_tensor(data, dtype, device, requires_grad)
        if t.dim() < 4:
            raise ValueError(f"Video needs at least 4 dimensions, got {t.dim()}")
        return cls._wrap(t)


class Mask(TVTensor):
    """A segmentation mask ``[..., H, W]``; a PIL image gives its single band."""

    def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
        if is_pil_image(data):
            from .transforms.functional import pil_to_tensor
            data = pil_to_tensor(data)[0]
        return cls._wrap(_as_tensor(data, dtype, device, requires_grad))


class BoundingBoxFormat(Enum):
    XYXY = 'XYXY'
    XYWH = 'XYWH'
    CXCYWH = 'CXCYWH'


class BoundingBoxes(TVTensor):
    """``[N, 4]`` boxes in ``format`` on an image of ``canvas_size`` = (H, W)."""

    def __new__(cls, data, *, format, canvas_size, clamping_mode='soft', dtype=None, device=None,
                requires_grad=None):
        t = _as_tensor(data, dtype, device, requires_grad)
        if t.dim() == 1:
            t = t.unsqueeze(0)
        elif t.dim() != 2:
            raise ValueError(f"Expected a 1D or 2D tensor, got {t.dim()}D")
        if isinstance(format, str):
            format = BoundingBoxFormat[format.upper()]
        return cls._wrap(t, format=format, canvas_size=tuple(canvas_size), clamping_mode=clamping_mode)

    @classmethod
    def wrap_like(cls, other, tensor, *, format=None, canvas_size=None, clamping_mode=None):
        return cls._wrap(tensor, format=format or other.format, canvas_size=canvas_size or other.canvas_size,
                         clamping_mode=clamping_mode or other.clamping_mode)

    def _meta(self):
        return {'format': self.format, 'canvas_size': self.canvas_size, 'clamping_mode': self.clamping_mode}

    def __repr__(self):
        return super().__repr__()[:-1] + f', format={self.format}, canvas_size={self.canvas_size})'


def _plain(t):
    """The same tensor as a plain Tensor (ToPureTensor)."""
    return t.as_subclass(ember.Tensor)


def wrap(wrappee, *, like, **kwargs):
    """``wrappee`` as the tv_tensor class of ``like`` (BoundingBoxes metadata may be overridden by kwargs)."""
    return type(like).wrap_like(like, wrappee, **kwargs)


