"""``torchvision.transforms.v2`` on ember: transforms over whole samples, built on v1's kernels.

A v2 transform takes any structure (one image, ``(image, label)``, a dict ...) and transforms each leaf
it knows: tv_tensors (Image, Video, Mask; BoundingBoxes change format, are clamped and sanitized, but raise
NotImplementedError in geometric transforms), PIL images and, when the sample holds no Image/Video/PIL image, its first plain tensor (v2's
rule for treating a plain tensor as the image). Other leaves (labels, strings, further plain tensors) pass
through. Random parameters are drawn once per call (``make_params``), so an image and its mask get the same
crop; the draws are v1's, in the same order, from ember's generator.

>>> from ember.vision import tv_tensors
>>> img, label = Resize(4)(tv_tensors.Image(ember.zeros(3, 8, 16))), 3
>>> type(img).__name__, tuple(img.shape)
('Image', (3, 4, 8))
"""
import numbers
from collections.abc import Sequence

import numpy as np

import ember

from ... import tv_tensors
from ..._pil import is_pil_image as _is_pil
from .. import transforms as _v1
# v1's classes, which take one image (PIL or tensor) and draw v1's choices; torchvision's v2 versions also take
# whole samples and draw signs with ``torch.rand``, which these do not (yet)
from ..autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from . import functional as F
from ..functional import _pad_ltrb
from .functional import InterpolationMode, _interp, is_pure_tensor

__all__ = ['Transform', 'Compose', 'RandomApply', 'RandomChoice', 'RandomOrder', 'Identity', 'Lambda', 'Resize',
           'CenterCrop', 'RandomCrop', 'RandomResizedCrop', 'RandomHorizontalFlip', 'RandomVerticalFlip', 'Pad',
           'RandomRotation', 'Normalize', 'ToDtype', 'ConvertImageDtype', 'ToImage', 'ToPureTensor', 'PILToTensor',
           'ToPILImage', 'ToTensor', 'ColorJitter', 'Grayscale', 'RandomGrayscale', 'RGB', 'GaussianBlur',
           'RandomAffine', 'RandomPerspective', 'TenCrop', 'FiveCrop', 'LinearTransformation', 'RandomInvert',
           'RandomPosterize', 'RandomSolarize', 'RandomAdjustSharpness', 'RandomAutocontrast', 'RandomEqualize',
           'ConvertBoundingBoxFormat', 'ClampBoundingBoxes', 'SanitizeBoundingBoxes', 'MixUp', 'CutMix', 'RandomErasing',
           'InterpolationMode',
           'AutoAugmentPolicy', 'AutoAugment', 'RandAugment', 'TrivialAugmentWide', 'AugMix', 'functional']


def _flatten(sample):
    """The leaves of nested lists/tuples/dicts, and a function that rebuilds the structure from new leaves."""
    if isinstance(sample, (list, tuple)) and not isinstance(sample, ember.Tensor):
        parts = [_flatten(s) for s in sample]
        def rebuild(leaves, parts=parts, kind=type(sample)):
            out, k = [], 0
            for ls, rb in parts:
                out.append(rb(leaves[k:k + len(ls)]))
                k += len(ls)
            return kind(out) if kind in (list, tuple) else kind(*out)
        return [x for ls, _ in parts for x in ls], rebuild
    if isinstance(sample, dict):
        keys = list(sample)
        leaves, rb = _flatten([sample[k] for k in keys])
        return leaves, lambda new: type(sample)(zip(keys, rb(new)))
    return [sample], lambda new: new[0]


def _needs_transform(leaves):
    """v2's rule: tv_tensors and PIL images always; a plain tensor only if it is the first and no image is there."""
    has_image = any(isinstance(x, (tv_tensors.Image, tv_tensors.Video)) or _is_pil(x) for x in leaves)
    first_pure = not has_image
    needs = []
    for x in leaves:
        if is_pure_tensor(x):
            needs.append(first_pure)
            first_pure = False
        else:
            needs.append(isinstance(x, tv_tensors.TVTensor) or _is_pil(x))
    return needs


def _query_size(flat):
    """``(H, W)`` of the sample's first image-like leaf."""
    for x in flat:
        if isinstance(x, (tv_tensors.Image, tv_tensors.Video, tv_tensors.Mask, tv_tensors.BoundingBoxes)) or \
                is_pure_tensor(x) or _is_pil(x):
            return tuple(F.get_size(x))
    raise TypeError("No image, video, mask or bounding box was found in the sample")


class Transform(ember.nn.Module):
    """Base class: ``make_params`` once per call, then ``transform(leaf, params)`` on each leaf to transform.

    Leaves of the ``_passthrough`` types are returned unchanged (e.g. masks through colour transforms).
    """
    _passthrough = ()
    _v1_transform_cls = None    # the v1 class whose ``get_params`` a subclass offers, as torchvision's

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        v1 = cls.__dict__.get('_v1_transform_cls')
        if v1 is not None and hasattr(v1, 'get_params'):
            cls.get_params = staticmethod(v1.get_params)

    def make_params(self, flat_inputs):
        return {}

    def transform(self, inpt, params):
        raise NotImplementedError

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves, rebuild = _flatten(sample)
        needs = [n and not isinstance(x, self._passthrough) for x, n in zip(leaves, _needs_transform(leaves))]
        params = self.make_params([x for x, n in zip(leaves, needs) if n])
        return rebuild([self.transform(x, params) if n else x for x, n in zip(leaves, needs)])

    def extra_repr(self):
        return ', '.join(f'{k}={v}' for k, v in vars(self).items() if not k.startswith('_') and k != 'training')


class _WithProbability:
    """Mixin: the transform runs with probability ``p``; one ``ember.rand(1)`` draw per call decides."""

    def _set_p(self, p):
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def forward(self, *inputs):
        if ember.rand(1) >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return super().forward(*inputs)


class _RandomApply(_WithProbability, Transform):
    """A transform applied with probability ``p``."""

    def __init__(self, p=0.5):
        super().__init__()
        self._set_p(p)


class _Geometric(Transform):
    """A transform on pixel positions: images, videos and masks alike."""


class _Color(Transform):
    _passthrough = (tv_tensors.Mask, tv_tensors.BoundingBoxes)


# --- containers -------------------------------------------------------------------------

def _run(t, inputs):
    return t(*inputs) if len(inputs) > 1 else t(inputs[0])


class Compose(Transform):
    """Apply transforms in order, each to the whole sample."""

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        out = inputs if len(inputs) > 1 else inputs[0]
        for t in self.transforms:
            out = _run(t, (out,) if len(inputs) == 1 else out)
        return out

    def extra_repr(self):
        return '\n'.join(str(t) for t in self.transforms)


class RandomApply(_WithProbability, Compose):
    """Apply all ``transforms`` with probability ``p``."""

    def __init__(self, transforms, p=0.5):
        super().__init__(transforms)
        self._set_p(p)


class RandomChoice(Transform):
    """Apply one of ``transforms``, picked with probabilities ``p``."""

    def __init__(self, transforms, p=None):
        super().__init__()
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        total = sum(p)
        self.transforms, self.p = transforms, [x / total for x in p]

    def forward(self, *inputs):
        idx = int(ember.multinomial(ember.tensor(self.p), 1))
        return _run(self.transforms[idx], inputs)


class RandomOrder(Transform):
    """Apply ``transforms`` in a random order."""

    def __init__(self, transforms):
        super().__init__()
        self.transforms = transforms

    def forward(self, *inputs):
        out = inputs if len(inputs) > 1 else inputs[0]
        for i in ember.randperm(len(self.transforms)).tolist():
            out = _run(self.transforms[i], out if len(inputs) > 1 else (out,))
        return out


class Identity(Transform):
    def forward(self, *inputs):
        return inputs if len(inputs) > 1 else inputs[0]


class Lambda(Transform):
    """Apply ``lambd`` to each leaf of ``types`` (all leaves v2 would transform when no types are given)."""

    def __init__(self, lambd, *types):
        super().__init__()
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd, self.types = lambd, types or (object,)

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves, rebuild = _flatten(sample)
        return rebuild([self.lambd(x) if isinstance(x, self.types) else x for x in leaves])

    def extra_repr(self):
        return f'{getattr(self.lambd, "__name__", "<lambda>")}, types={list(t.__name__ for t in self.types)}'


# --- geometry ---------------------------------------------------------------------------

class Resize(_Geometric):
    """Resize to (h, w), or the smaller edge to ``size`` (see ``functional.resize``)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in (1, 2):
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        else:
            raise ValueError(f"size can be an integer, a sequence of one or two integers, or None, but got {size}.")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = _interp(interpolation)

    def transform(self, inpt, params):
        return F.resize(inpt, self.size, self.interpolation, self.max_size, self.antialias)


class CenterCrop(_Geometric):
    def __init__(self, size):
        super().__init__()
        self.size = _v1._setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def transform(self, inpt, params):
        return F.center_crop(inpt, self.size)


class RandomResizedCrop(_Geometric):
    """A random area/aspect crop, resized to ``size`` (v1's parameter draws)."""
    _v1_transform_cls = _v1.RandomResizedCrop

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _v1._setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence) or len(scale) != 2:
            raise TypeError("Scale should be a sequence of two floats.")
        if not isinstance(ratio, Sequence) or len(ratio) != 2:
            raise TypeError("Ratio should be a sequence of two floats.")
        self.scale, self.ratio, self.antialias = scale, ratio, antialias
        self.interpolation = _interp(interpolation)

    def make_params(self, flat_inputs):
        h, w = _query_size(flat_inputs)
        i, j, ch, cw = _v1.RandomResizedCrop.get_params(ember.empty(1, h, w), self.scale, self.ratio)
        return dict(top=i, left=j, height=ch, width=cw)

    def transform(self, inpt, params):
        return F.resized_crop(inpt, **params, size=self.size, interpolation=self.interpolation,
                              antialias=self.antialias)


class RandomCrop(_Geometric):
    """A random ``size`` window, after optional ``padding`` (and padding up to ``size`` with pad_if_needed)."""
    _v1_transform_cls = _v1.RandomCrop

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode='constant'):
        super().__init__()
        self.size = _v1._setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if padding_mode not in ('constant', 'edge', 'reflect', 'symmetric'):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = None if padding is None else _pad_ltrb(padding)
        self.pad_if_needed, self.fill, self.padding_mode = pad_if_needed, fill, padding_mode

    def make_params(self, flat_inputs):
        h, w = _query_size(flat_inputs)
        l, t, r, b = self.padding or [0, 0, 0, 0]
        h, w = h + t + b, w + l + r
        ch, cw = self.size
        if self.pad_if_needed and h < ch:
            extra = ch - h
            t, b, h = t + extra, b + extra, h + 2 * extra
        if self.pad_if_needed and w < cw:
            extra = cw - w
            l, r, w = l + extra, r + extra, w + 2 * extra
        if h < ch or w < cw:
            raise ValueError(f"Required crop size {(ch, cw)} is larger than input image size {(h, w)}")
        top = ember.randint(0, h - ch + 1, size=(1,)).item() if h > ch else 0
        left = ember.randint(0, w - cw + 1, size=(1,)).item() if w > cw else 0
        return dict(padding=[l, t, r, b], needs_pad=any((l, t, r, b)), top=top, left=left)

    def transform(self, inpt, params):
        if params['needs_pad']:
            fill = 0 if isinstance(inpt, tv_tensors.Mask) else self.fill
            inpt = F.pad(inpt, params['padding'], fill, self.padding_mode)
        return F.crop(inpt, params['top'], params['left'], *self.size)


class RandomHorizontalFlip(_RandomApply):
    def transform(self, inpt, params):
        return F.horizontal_flip(inpt)


class RandomVerticalFlip(_RandomApply):
    def transform(self, inpt, params):
        return F.vertical_flip(inpt)


class Pad(_Geometric):
    def __init__(self, padding, fill=0, padding_mode='constant'):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element of tuple or list, got {len(padding)}")
        if padding_mode not in ('constant', 'edge', 'reflect', 'symmetric'):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def transform(self, inpt, params):
        fill = 0 if isinstance(inpt, tv_tensors.Mask) else self.fill
        return F.pad(inpt, self.padding, fill, self.padding_mode)


class RandomRotation(_Geometric):
    """Rotate by an angle drawn uniformly from ``degrees``."""
    _v1_transform_cls = _v1.RandomRotation

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        v1 = _v1.RandomRotation(degrees, interpolation, expand, center, fill)     # v1's argument checks
        self.degrees, self.interpolation = v1.degrees, v1.interpolation
        self.expand, self.center, self.fill = expand, center, fill

    def make_params(self, flat_inputs):
        return dict(angle=_v1.RandomRotation.get_params(self.degrees))

    def transform(self, inpt, params):
        fill = 0 if isinstance(inpt, tv_tensors.Mask) else self.fill
        return F.rotate(inpt, params['angle'], self.interpolation, self.expand, self.center, fill)


def _fill_for(fill, inpt):
    """v2's fill argument for one leaf: a number or sequence for every kind, or a dict by tv_tensor class
    (``'others'`` for the rest)."""
    if not isinstance(fill, dict):
        return fill
    key = tv_tensors.Image if is_pure_tensor(inpt) and tv_tensors.Image in fill else type(inpt)
    return fill.get(key, fill.get('others'))


class RandomAffine(_Geometric):
    """Rotate, translate, scale and shear by amounts drawn once per call (v1's draws and checks)."""
    _v1_transform_cls = _v1.RandomAffine

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        v1 = _v1.RandomAffine(degrees, translate, scale, shear, interpolation,
                              0 if isinstance(fill, dict) else fill, center)
        self.degrees, self.translate, self.scale, self.shear = v1.degrees, v1.translate, v1.scale, v1.shear
        self.interpolation, self.fill, self.center = v1.interpolation, fill, center

    def make_params(self, flat_inputs):
        h, w = _query_size(flat_inputs)
        angle, translate, scale, shear = _v1.RandomAffine.get_params(self.degrees, self.translate, self.scale,
                                                                     self.shear, [w, h])
        return dict(angle=angle, translate=translate, scale=scale, shear=shear)

    def transform(self, inpt, params):
        return F.affine(inpt, **params, interpolation=self.interpolation, fill=_fill_for(self.fill, inpt),
                        center=self.center)


class RandomPerspective(_RandomApply, _Geometric):
    """With probability ``p``, a perspective warp moving each corner inwards by up to ``distortion_scale``."""
    _v1_transform_cls = _v1.RandomPerspective

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__(p)
        if not 0 <= distortion_scale <= 1:
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale, self.interpolation, self.fill = distortion_scale, _interp(interpolation), fill

    def make_params(self, flat_inputs):
        h, w = _query_size(flat_inputs)
        startpoints, endpoints = _v1.RandomPerspective.get_params(w, h, self.distortion_scale)
        return dict(coefficients=F._v1._get_perspective_coeffs(startpoints, endpoints))

    def transform(self, inpt, params):
        return F.perspective(inpt, None, None, self.interpolation, _fill_for(self.fill, inpt),
                             coefficients=params['coefficients'])


class FiveCrop(_Geometric):
    """The four corner crops and the central crop of each image (a tuple in place of each)."""
    _crop = staticmethod(F.five_crop)

    def __init__(self, size):
        super().__init__()
        self.size = _v1._setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def make_params(self, flat_inputs):
        if any(isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)) for x in flat_inputs):
            raise TypeError(f"BoundingBoxes'es and Mask's are not supported by {type(self).__name__}()")
        return {}

    def transform(self, inpt, params):
        return self._crop(inpt, self.size)


class TenCrop(FiveCrop):
    """``FiveCrop`` of each image and of its mirror image (left-right, or top-bottom with ``vertical_flip``)."""

    def __init__(self, size, vertical_flip=False):
        super().__init__(size)
        self.vertical_flip = vertical_flip

    def transform(self, inpt, params):
        return F.ten_crop(inpt, self.size, self.vertical_flip)


# --- dtype, conversion and colour -------------------------------------------------------

class Normalize(_Color):
    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = list(mean), list(std), inplace

    def transform(self, inpt, params):
        return F.normalize(inpt, self.mean, self.std, self.inplace)


class ToDtype(Transform):
    """Cast images and videos to ``dtype`` (scaling the value range with ``scale=True``).

    ``dtype`` may be a dict by tv_tensor class (``'others'`` for the rest; a plain tensor counts as an
    Image); masks and boxes are converted only through such a dict.
    """

    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, (dict, ember.dtype)):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        self.dtype, self.scale = dtype, scale

    def transform(self, inpt, params):
        if isinstance(self.dtype, dict):
            key = tv_tensors.Image if is_pure_tensor(inpt) else type(inpt)
            dtype = self.dtype.get(key, self.dtype.get('others'))
        elif isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes)) or _is_pil(inpt):
            return inpt
        else:
            dtype = self.dtype
        if dtype is None or _is_pil(inpt):
            return inpt
        return F.to_dtype(inpt, dtype, self.scale)


class ConvertImageDtype(_Color):
    def __init__(self, dtype=ember.float32):
        super().__init__()
        self.dtype = dtype

    def transform(self, inpt, params):
        return F.convert_image_dtype(inpt, self.dtype)


class ToImage(Transform):
    """PIL image / ndarray / tensor → tv_tensors.Image (unscaled)."""

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves, rebuild = _flatten(sample)
        needs = _needs_transform(leaves)
        return rebuild([F.to_image(x) if (n and (is_pure_tensor(x) or _is_pil(x))) or isinstance(x, np.ndarray)
                        else x for x, n in zip(leaves, needs)])


class ToPureTensor(Transform):
    """tv_tensors → plain Tensors (the same data)."""

    def transform(self, inpt, params):
        return tv_tensors._plain(inpt) if isinstance(inpt, tv_tensors.TVTensor) else inpt


class PILToTensor(Transform):
    def transform(self, inpt, params):
        return F.pil_to_tensor(inpt) if _is_pil(inpt) else inpt


class ToPILImage(Transform):
    def __init__(self, mode=None):
        super().__init__()
        self.mode = mode

    def transform(self, inpt, params):
        if isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes)) or _is_pil(inpt):
            return inpt
        return F.to_pil_image(inpt, self.mode)


class ToTensor(Transform):
    """Deprecated in v2 (use ToImage + ToDtype(float32, scale=True)); v1's conversion."""

    def transform(self, inpt, params):
        return F.to_tensor(inpt) if _is_pil(inpt) else inpt


class ColorJitter(_Color):
    """Random brightness, contrast, saturation and hue in a random order (v1's draws)."""
    _v1_transform_cls = _v1.ColorJitter

    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        super().__init__()
        v1 = _v1.ColorJitter(brightness or 0, contrast or 0, saturation or 0, hue or 0)
        self.brightness, self.contrast, self.saturation, self.hue = v1.brightness, v1.contrast, v1.saturation, v1.hue

    def make_params(self, flat_inputs):
        order, b, c, s, h = _v1.ColorJitter.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return dict(order=order.tolist(), factors=(b, c, s, h))

    def transform(self, inpt, params):
        fns = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for k in params['order']:
            if params['factors'][k] is not None:
                inpt = fns[k](inpt, params['factors'][k])
        return inpt


class GaussianBlur(_Color):
    """v1's GaussianBlur for a whole sample: one sigma drawn per call, masks and boxes passed through."""
    _v1_transform_cls = _v1.GaussianBlur

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        v1 = _v1.GaussianBlur(kernel_size, sigma)
        self.kernel_size, self.sigma = v1.kernel_size, v1.sigma

    def make_params(self, flat_inputs):
        return dict(sigma=_v1.GaussianBlur.get_params(self.sigma[0], self.sigma[1]))

    def transform(self, inpt, params):
        return F.gaussian_blur(inpt, self.kernel_size, [params['sigma'], params['sigma']])


class LinearTransformation(Transform):
    """v1's LinearTransformation on images and videos (and the sample's plain tensor); PIL images are refused."""
    _passthrough = (tv_tensors.Mask, tv_tensors.BoundingBoxes)

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        self._v1 = _v1.LinearTransformation(transformation_matrix, mean_vector)
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def make_params(self, flat_inputs):
        if any(_is_pil(x) for x in flat_inputs):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")
        return {}

    def transform(self, inpt, params):
        out = self._v1(tv_tensors._plain(inpt) if isinstance(inpt, tv_tensors.TVTensor) else inpt)
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out

    def extra_repr(self):
        return ''


class _RandomColorOp(_RandomApply):
    """A colour function of ``F`` (``_op``, with the attributes named in ``_args``) with probability ``p``."""
    _passthrough = _Color._passthrough
    _op, _args = None, ()

    def transform(self, inpt, params):
        return getattr(F, self._op)(inpt, *(getattr(self, a) for a in self._args))


class RandomInvert(_RandomColorOp):
    _op = 'invert'


class RandomAutocontrast(_RandomColorOp):
    _op = 'autocontrast'


class RandomEqualize(_RandomColorOp):
    _op = 'equalize'


class RandomPosterize(_RandomColorOp):
    _op, _args = 'posterize', ('bits',)

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits


class RandomSolarize(_RandomColorOp):
    _op, _args = 'solarize', ('threshold',)

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold


class RandomAdjustSharpness(_RandomColorOp):
    _op, _args = 'adjust_sharpness', ('sharpness_factor',)

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        if sharpness_factor < 0:
            raise ValueError("sharpness_factor should be non-negative")
        self.sharpness_factor = sharpness_factor


class Grayscale(_Color):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, self.num_output_channels)


class RandomGrayscale(_RandomApply):
    _passthrough = _Color._passthrough

    def make_params(self, flat_inputs):
        return dict(channels=F.get_num_channels(next(iter(flat_inputs))))

    def transform(self, inpt, params):
        return F.rgb_to_grayscale(inpt, params['channels'])


class RGB(_Color):
    """Images with one channel → three (others unchanged)."""

    def transform(self, inpt, params):
        return F.grayscale_to_rgb(inpt)



# --- bounding boxes ---------------------------------------------------------------------

class _BoxTransform(Transform):
    """A transform of the sample's BoundingBoxes only (``transform_boxes``); every other leaf passes through."""

    def transform(self, inpt, params):
        return self.transform_boxes(inpt) if isinstance(inpt, tv_tensors.BoundingBoxes) else inpt


class ConvertBoundingBoxFormat(_BoxTransform):
    """Boxes to ``format`` (a BoundingBoxFormat or its name, e.g. ``'CXCYWH'``)."""

    def __init__(self, format):
        super().__init__()
        self.format = format

    def transform_boxes(self, boxes):
        return F.convert_bounding_box_format(boxes, new_format=self.format)


class ClampBoundingBoxes(_BoxTransform):
    """Boxes clamped to their canvas; ``clamping_mode='auto'`` uses each BoundingBoxes' own mode."""

    def __init__(self, clamping_mode='auto'):
        super().__init__()
        self.clamping_mode = clamping_mode

    def transform_boxes(self, boxes):
        return F.clamp_bounding_boxes(boxes, clamping_mode=self.clamping_mode)


def _default_labels(sample):
    """torchvision's heuristic: the second item of a tuple, or the sample itself; a plain tensor is the labels, a
    dict gives its ``labels`` key (any case), else the first key containing ``label``."""
    if isinstance(sample, (tuple, list)):
        sample = sample[1]
    if is_pure_tensor(sample):
        return sample
    if not isinstance(sample, dict):
        raise ValueError("When using the default labels_getter, the input passed to forward must be a dictionary or "
                         f"a two-tuple whose second item is a dictionary or a tensor, but got {sample} instead.")
    keys = [k for k in sample if k.lower() == 'labels'] or [k for k in sample if 'label' in k.lower()]
    if not keys:
        raise ValueError("Could not infer where the labels are in the sample. Try passing a callable as the "
                         "labels_getter parameter?If there are no labels in the sample by design, pass "
                         "labels_getter=None.")
    return sample[keys[0]]


class SanitizeBoundingBoxes(Transform):
    """Remove boxes smaller than ``min_size`` (either side) or ``min_area``, or reaching outside the canvas,
    with the rows of their labels and per-box masks.

    ``labels_getter`` finds the labels: ``'default'`` (a ``labels`` key of the sample's dict, see
    ``_default_labels``), a callable returning a tensor or a tuple of tensors (all filtered alike), or None.

    >>> from ember.vision import tv_tensors
    >>> boxes = tv_tensors.BoundingBoxes([[0, 0, 4, 4], [3, 3, 3, 9]], format='XYXY', canvas_size=(8, 8))
    >>> out = SanitizeBoundingBoxes()({'boxes': boxes, 'labels': ember.tensor([1, 2])})
    >>> out['boxes'].tolist(), out['labels'].tolist()
    ([[0, 0, 4, 4]], [1])
    """

    def __init__(self, min_size=1.0, min_area=1.0, labels_getter='default'):
        super().__init__()
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        if not (labels_getter in ('default', None) or callable(labels_getter)):
            raise ValueError("labels_getter should either be 'default', a callable, or None, but got "
                             f"{labels_getter}.")
        self.min_size, self.min_area, self.labels_getter = min_size, min_area, labels_getter

    def _labels(self, sample):
        if self.labels_getter is None:
            return ()
        labels = (_default_labels if self.labels_getter == 'default' else self.labels_getter)(sample)
        labels = (labels,) if isinstance(labels, ember.Tensor) else labels
        if labels is None:
            return ()
        if not isinstance(labels, (tuple, list)) or not all(isinstance(x, ember.Tensor) for x in labels):
            bad = labels if not isinstance(labels, (tuple, list)) else next(
                x for x in labels if not isinstance(x, ember.Tensor))
            raise ValueError(f"The labels in the input to forward() must be a tensor or None, got {type(bad)} "
                             "instead.")
        return labels

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        labels = self._labels(sample)
        leaves, rebuild = _flatten(sample)
        boxes = next((x for x in leaves if isinstance(x, tv_tensors.BoundingBoxes)), None)
        if boxes is None:
            raise ValueError("No bounding boxes were found in the sample")
        for label in labels:
            if label.shape[0] != boxes.shape[0]:
                raise ValueError(f"Number of boxes (shape={boxes.shape}) and must match the number of labels."
                                 f"Found labels with shape={label.shape}).")
        _, valid = F.sanitize_bounding_boxes(boxes, min_size=self.min_size, min_area=self.min_area)

        def keep_valid(x):
            is_label = any(x is label for label in labels)
            if not (is_label or isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask))):
                return x
            try:
                out = x[valid]
            except IndexError:        # a mask that is not one per box (a semantic segmentation) stays whole
                return x
            return out if is_label else tv_tensors.wrap(out, like=x)
        return rebuild([keep_valid(x) for x in leaves])


class _BaseMixUpCutMix(Transform):
    """A batch transform: images (or videos) mixed with the batch rolled by one, labels (class indices, one-hot
    encoded here, or already probabilities) mixed by the same proportion. ``lam`` is drawn from Beta(alpha, alpha)
    with ember's generator (torch's draws for a seed)."""

    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter='default'):
        super().__init__()
        self.alpha = float(alpha)
        self._dist = ember.distributions.Beta(ember.tensor([alpha]), ember.tensor([alpha]))
        self.num_classes = num_classes
        if labels_getter != 'default' and not callable(labels_getter):
            raise ValueError(f"labels_getter should either be 'default' or a callable, but got {labels_getter}.")
        self._labels_getter = _default_labels if labels_getter == 'default' else labels_getter

    def forward(self, *inputs):
        sample = inputs if len(inputs) > 1 else inputs[0]
        leaves, rebuild = _flatten(sample)
        if any(_is_pil(x) or isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)) for x in leaves):
            raise ValueError(f"{type(self).__name__}() does not support PIL images, bounding boxes and masks.")
        labels = self._labels_getter(sample)
        if not isinstance(labels, ember.Tensor):
            raise ValueError(f"The labels must be a tensor, but got {type(labels)} instead.")
        if labels.ndim not in (1, 2):
            raise ValueError(f"labels should be index based with shape (batch_size,) or probability based with shape "
                             f"(batch_size, num_classes), but got a tensor of shape {labels.shape} instead.")
        if labels.ndim == 2 and self.num_classes is not None and labels.shape[-1] != self.num_classes:
            raise ValueError(f"When passing 2D labels, the number of elements in last dimension must match "
                             f"num_classes: {labels.shape[-1]} != {self.num_classes}. You can Leave num_classes to "
                             f"None.")
        if labels.ndim == 1 and self.num_classes is None:
            raise ValueError("num_classes must be passed if the labels are index-based (1D)")
        needs = _needs_transform(leaves)
        params = dict(labels=labels, batch_size=labels.shape[0],
                      **self.make_params([x for x, n in zip(leaves, needs) if n]))
        needs = [n or x is labels for x, n in zip(leaves, needs)]    # the labels are transformed too
        return rebuild([self.transform(x, params) if n else x for x, n in zip(leaves, needs)])

    def _check_image_or_video(self, inpt, batch_size):
        expected = 5 if isinstance(inpt, tv_tensors.Video) else 4
        if inpt.ndim != expected:
            raise ValueError(f"Expected a batched input with {expected} dims, but got {inpt.ndim} dimensions "
                             f"instead.")
        if inpt.shape[0] != batch_size:
            raise ValueError(f"The batch size of the image or video does not match the batch size of the labels: "
                             f"{inpt.shape[0]} != {batch_size}.")

    def _mixup_label(self, label, lam):
        if label.ndim == 1:
            label = ember.nn.functional.one_hot(label, num_classes=self.num_classes)
        if not label.dtype.is_floating_point:
            label = label.float()
        return label.roll(1, 0).mul_(1.0 - lam).add_(label.mul(lam))

    def _mixes(self, inpt):
        return isinstance(inpt, (tv_tensors.Image, tv_tensors.Video)) or is_pure_tensor(inpt)


class MixUp(_BaseMixUpCutMix):
    """torchvision's MixUp: ``lam * batch + (1 - lam) * batch.roll(1, 0)``, for the images and the labels.

    >>> _ = ember.manual_seed(0)
    >>> images, labels = MixUp(num_classes=3)(ember.rand(4, 3, 8, 8), ember.tensor([0, 1, 2, 0]))
    >>> tuple(images.shape), tuple(labels.shape), round(float(labels.sum()), 4)
    ((4, 3, 8, 8), (4, 3), 4.0)
    """

    def make_params(self, flat_inputs):
        return dict(lam=float(self._dist.sample(())))

    def transform(self, inpt, params):
        lam = params['lam']
        if inpt is params['labels']:
            return self._mixup_label(inpt, lam)
        if not self._mixes(inpt):
            return inpt
        self._check_image_or_video(inpt, params['batch_size'])
        out = inpt.roll(1, 0).mul_(1.0 - lam).add_(inpt.mul(lam))
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out


class CutMix(_BaseMixUpCutMix):
    """torchvision's CutMix: a box of each image replaced by the same box of the previous image in the batch; the
    labels mixed by the area kept."""

    def make_params(self, flat_inputs):
        import math
        lam = float(self._dist.sample(()))
        H, W = _query_size(flat_inputs)
        r_x = ember.randint(W, size=(1,))
        r_y = ember.randint(H, size=(1,))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * W), int(r * H)
        x1 = int(ember.clamp(r_x - r_w_half, min=0))
        y1 = int(ember.clamp(r_y - r_h_half, min=0))
        x2 = int(ember.clamp(r_x + r_w_half, max=W))
        y2 = int(ember.clamp(r_y + r_h_half, max=H))
        return dict(box=(x1, y1, x2, y2), lam_adjusted=float(1.0 - (x2 - x1) * (y2 - y1) / (W * H)))

    def transform(self, inpt, params):
        if inpt is params['labels']:
            return self._mixup_label(inpt, params['lam_adjusted'])
        if not self._mixes(inpt):
            return inpt
        self._check_image_or_video(inpt, params['batch_size'])
        x1, y1, x2, y2 = params['box']
        rolled = inpt.roll(1, 0)
        out = inpt.clone()
        out[..., y1:y2, x1:x2] = rolled[..., y1:y2, x1:x2]
        return tv_tensors.wrap(out, like=inpt) if isinstance(inpt, tv_tensors.TVTensor) else out


class RandomErasing(_RandomApply):
    """torchvision's v2 RandomErasing: with probability ``p``, a rectangle of the image (``scale`` of its area,
    aspect ratio in ``ratio``, drawn as torchvision draws it, up to 10 tries) set to ``value`` (a number, one per
    channel, or ``'random'`` for normal draws). Boxes, keypoints and masks pass through with a warning."""
    _v1_transform_cls = _v1.RandomErasing

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0.0, inplace=False):
        super().__init__(p=p)
        _v1.RandomErasing(p, scale, ratio, value, inplace)      # v1's argument checks (the same as v2's)
        self.scale, self.ratio, self.inplace = scale, ratio, inplace
        self.value = None if isinstance(value, str) else \
            [float(value)] if isinstance(value, numbers.Number) else [float(v) for v in value]
        self._log_ratio = ember.log(ember.tensor(self.ratio))

    def make_params(self, flat_inputs):
        import math
        c, H, W = next(F.get_dimensions(x) for x in flat_inputs
                       if isinstance(x, (tv_tensors.Image, tv_tensors.Video)) or is_pure_tensor(x) or _is_pil(x))
        if self.value is not None and len(self.value) not in (1, c):
            raise ValueError(f"If value is a sequence, it should have either a single value or {c} (number of inpt "
                             f"channels)")
        area = H * W
        lo, hi = self._log_ratio
        for _ in range(10):
            erase_area = area * ember.empty(1).uniform_(self.scale[0], self.scale[1]).item()
            aspect = ember.exp(ember.empty(1).uniform_(lo, hi)).item()
            h, w = int(round(math.sqrt(erase_area * aspect))), int(round(math.sqrt(erase_area / aspect)))
            if not (h < H and w < W):
                continue
            v = ember.empty([c, h, w], dtype=ember.float32).normal_() if self.value is None else \
                ember.tensor(self.value)[:, None, None]
            i = ember.randint(0, H - h + 1, size=(1,)).item()
            j = ember.randint(0, W - w + 1, size=(1,)).item()
            return dict(i=i, j=j, h=h, w=w, v=v)
        return dict(i=0, j=0, h=H, w=W, v=None)

    def transform(self, inpt, params):
        if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.Mask)):
            import warnings
            warnings.warn(f"{type(self).__name__}() is currently passing through inputs of type "
                          f"tv_tensors.{type(inpt).__name__}. This will likely change in the future.")
            return inpt
        if params['v'] is None:
            return inpt
        return F.erase(inpt, params['i'], params['j'], params['h'], params['w'], params['v'], self.inplace)
