"""``torchvision.transforms.v2.functional`` on ember: each function takes a plain tensor, a tv_tensor or a PIL image.

The pixel work is v1's (``transforms.functional``), so results agree with v1 and torchvision where v1 does;
what v2 adds is the dispatch: tensors of any leading dims (``[..., C, H, W]``), tv_tensors returned as their
own class, masks resized with nearest neighbours, ``to_dtype(scale=...)``, and LANCZOS for tensors. Boxes
change format (``convert_bounding_box_format``) and are clamped to their canvas (``clamp_bounding_boxes``), but
box geometry is not implemented: a BoundingBoxes input to a geometric function raises NotImplementedError.
"""
import numbers

import numpy as np

import ember

from ... import tv_tensors
from ..._pil import is_pil_image as _is_pil
from .. import functional as _v1
from ..functional import InterpolationMode, _interp

__all__ = ['InterpolationMode', 'resize', 'resize_image', 'center_crop', 'center_crop_image', 'crop', 'crop_image',
           'resized_crop', 'normalize', 'normalize_image', 'to_dtype', 'to_dtype_image', 'convert_image_dtype',
           'pad', 'pad_image', 'hflip', 'horizontal_flip', 'horizontal_flip_image', 'vflip', 'vertical_flip',
           'vertical_flip_image', 'rotate', 'affine', 'perspective', 'five_crop', 'ten_crop', 'grayscale_to_rgb', 'grayscale_to_rgb_image', 'rgb_to_grayscale',
           'rgb_to_grayscale_image', 'to_grayscale', 'adjust_brightness', 'adjust_contrast', 'adjust_saturation',
           'adjust_hue', 'adjust_sharpness', 'posterize', 'solarize', 'autocontrast', 'equalize', 'invert',
           'gaussian_blur', 'erase', 'to_image', 'pil_to_tensor', 'to_pil_image', 'to_tensor', 'get_dimensions',
           'get_size', 'get_num_channels', 'get_image_size', 'get_image_num_channels', 'is_pure_tensor',
           'convert_bounding_box_format', 'clamp_bounding_boxes', 'sanitize_bounding_boxes']

pil_to_tensor = _v1.pil_to_tensor
to_pil_image = _v1.to_pil_image
to_tensor = _v1.to_tensor


def is_pure_tensor(inpt):
    """A tensor that is not a tv_tensor (v2 treats such a tensor as an image)."""
    return isinstance(inpt, ember.Tensor) and not isinstance(inpt, tv_tensors.TVTensor)


def _apply(name, inpt, image_fn, pil_fn=None, mask_fn=None):
    """Run the kernel for ``inpt``'s kind, re-wrapping tv_tensors as their class."""
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        raise NotImplementedError(f"ember.vision.transforms.v2: {name} of BoundingBoxes is not implemented")
    if isinstance(inpt, tv_tensors.TVTensor):
        fn = mask_fn if isinstance(inpt, tv_tensors.Mask) and mask_fn is not None else image_fn
        return type(inpt).wrap_like(inpt, fn(inpt))
    if isinstance(inpt, ember.Tensor):
        return image_fn(inpt)
    if pil_fn is not None and _is_pil(inpt):
        return pil_fn(inpt)
    kinds = 'torch.Tensor, PIL.Image.Image, and subclasses of TVTensor' if pil_fn else \
        'torch.Tensor and subclasses of TVTensor'
    raise TypeError(f"{name}() supports inputs of type {kinds}, but got {type(inpt)} instead.")


def _v1_op(name, inpt, *args):
    """v1's functional ``name`` (which takes tensors and PIL images alike) applied to ``inpt``'s kind."""
    fn = getattr(_v1, name)
    run = lambda x: fn(x, *args)      # noqa: E731
    return _apply(name, inpt, run, run)


def _as_mask_image(fn):
    """Run an image kernel on a mask: a ``[H, W]`` mask gets a channel dim for the call."""
    def run(mask):
        if mask.dim() < 3:
            return fn(mask.unsqueeze(0)).squeeze(0)
        return fn(mask)
    return run


# --- geometry ---------------------------------------------------------------------------

def resize_image(image, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize the last two dims of a ``[..., C, H, W]`` tensor (v1's resampling, any number of leading dims)."""
    interpolation = _interp(interpolation)
    if interpolation == InterpolationMode.LANCZOS and not antialias:
        raise ValueError("InterpolationMode.LANCZOS requires antialias=True")
    if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT, InterpolationMode.BILINEAR,
                             InterpolationMode.BICUBIC, InterpolationMode.LANCZOS):
        raise ValueError(f"Interpolation mode {interpolation} is unsupported for tensor images")
    c, h, w = image.shape[-3:]
    out = _v1._resized_size(h, w, size, max_size)
    if out == [h, w] or image.numel() == 0:
        return image if out == [h, w] else image.new_empty((*image.shape[:-2], *out))
    flat = image.reshape(-1, c, h, w)
    if image.dtype == ember.uint8 and interpolation in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        # torchvision hands uint8 images to interpolate, whose uint8 kernels are torch's fixed-point ones
        y = ember.nn.functional.interpolate(flat, size=out, mode=interpolation.value, align_corners=False,
                                            antialias=bool(antialias))
    elif image.dtype == ember.uint8 and antialias and interpolation in _SEPARABLE_UINT8:
        y = _resize_uint8(flat, out, interpolation.value)
    else:
        y = _v1._resize_tensor(flat, out, interpolation, bool(antialias))
    return y.reshape(*image.shape[:-2], *out)


_SEPARABLE_UINT8 = (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC, InterpolationMode.LANCZOS)


def _resize_uint8(x, size, mode):
    """torch's uint8 resampling on CPU (which torchvision v2 uses): the width pass, then the height pass, each
    rounded and clamped to [0, 255] (so overshooting kernels clip in between, unlike the float path)."""
    y = x.to(ember.float32)
    if size[1] != x.shape[-1]:
        ww = ember.as_tensor(_v1._aa_weights(x.shape[-1], size[1], mode), dtype=ember.float32)
        y = ember.floor(ember.matmul(y, ww.t()) + 0.5).clamp(0, 255)
    if size[0] != x.shape[-2]:
        wh = ember.as_tensor(_v1._aa_weights(x.shape[-2], size[0], mode), dtype=ember.float32)
        y = ember.floor(ember.matmul(wh, y) + 0.5).clamp(0, 255)
    return y.to(ember.uint8)


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` = (h, w), or the smaller edge to ``size`` (masks always with NEAREST).

    >>> resize(ember.zeros(2, 5, 3, 8, 16), 4).shape
    ember.Size([2, 5, 3, 4, 8])
    """
    return _apply('resize', inpt, lambda x: resize_image(x, size, interpolation, max_size, antialias),
                  lambda x: _v1.resize(x, size, interpolation, max_size, antialias),
                  _as_mask_image(lambda x: resize_image(x, size, InterpolationMode.NEAREST, max_size)))


def crop_image(image, top, left, height, width):
    return _v1.crop(image, top, left, height, width)


def crop(inpt, top, left, height, width):
    """The ``height × width`` window at (top, left), zero-padded where it leaves the image."""
    return _apply('crop', inpt, lambda x: _v1.crop(x, top, left, height, width),
                  lambda x: _v1.crop(x, top, left, height, width))


def center_crop_image(image, output_size):
    return _v1.center_crop(image, output_size)


def center_crop(inpt, output_size):
    return _v1_op('center_crop', inpt, output_size)


def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    return resize(crop(inpt, top, left, height, width), size, interpolation, antialias=antialias)


def pad_image(image, padding, fill=None, padding_mode='constant'):
    return _v1.pad(image, padding, 0 if fill is None else fill, padding_mode)


def pad(inpt, padding, fill=None, padding_mode='constant'):
    """Pad the borders (``padding`` as v1: one int, (lr, tb) or (l, t, r, b)); ``fill=None`` pads with 0."""
    return _apply('pad', inpt, lambda x: pad_image(x, padding, fill, padding_mode),
                  lambda x: pad_image(x, padding, fill, padding_mode))


def horizontal_flip_image(image):
    return image.flip(-1)


def horizontal_flip(inpt):
    return _apply('horizontal_flip', inpt, horizontal_flip_image, _v1.hflip)


def vertical_flip_image(image):
    return image.flip(-2)


def vertical_flip(inpt):
    return _apply('vertical_flip', inpt, vertical_flip_image, _v1.vflip)


hflip, vflip = horizontal_flip, vertical_flip


def _fill_per_channel(fill, x):
    c = x.shape[-3] if x.dim() >= 3 else 1
    return None if fill is None else ([float(fill)] * c if isinstance(fill, numbers.Number) else fill)


def _resample(name, inpt, fn, interpolation, fill):
    """v1's resampling ``fn(x, interpolation, fill)``: a tensor's fill made one value per channel, masks resampled
    with nearest neighbours (as torchvision's ``*_mask`` kernels), PIL images with ``fill`` as given."""
    def on_tensor(x, mode=interpolation):
        return fn(x, mode, _fill_per_channel(fill, x))
    return _apply(name, inpt, on_tensor, lambda x: fn(x, interpolation, fill),
                  _as_mask_image(lambda x: on_tensor(x, InterpolationMode.NEAREST)))


def rotate(inpt, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """Rotate counter-clockwise by ``angle`` degrees (v1's kernel)."""
    return _resample('rotate', inpt, lambda x, mode, f: _v1.rotate(x, angle, mode, expand, center, f),
                     interpolation, fill)


def affine(inpt, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """Rotate (clockwise), translate, scale and shear about ``center`` (v1's kernel)."""
    return _resample('affine', inpt,
                     lambda x, mode, f: _v1.affine(x, angle, translate, scale, shear, mode, f, center),
                     interpolation, fill)


def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None,
                coefficients=None):
    """Warp ``startpoints`` onto ``endpoints`` (four corners each), or by the eight ``coefficients`` instead."""
    if coefficients is not None:
        if startpoints is not None or endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be defined concurrently.")
        if len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
    elif startpoints is not None and endpoints is not None:
        coefficients = _v1._get_perspective_coeffs(startpoints, endpoints)
    else:
        raise ValueError("Either the startpoints/endpoints or the coefficients must have non `None` values.")
    return _resample('perspective', inpt, lambda x, mode, f: _v1._perspective(x, coefficients, mode, f),
                     interpolation, fill)


def _crops(name, inpt, fn):
    """A function returning several images (five_crop, ten_crop): each re-wrapped as ``inpt``'s tv_tensor class;
    masks and boxes are refused, as torchvision's."""
    if isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes)):
        raise TypeError(f"{name}() does not support inputs of type {type(inpt).__name__}")
    if isinstance(inpt, tv_tensors.TVTensor):
        return tuple(type(inpt).wrap_like(inpt, c) for c in fn(tv_tensors._plain(inpt)))
    return _apply(name, inpt, fn, fn)


def five_crop(inpt, size):
    """The four corner crops and the central crop (v1's ``five_crop``)."""
    return _crops('five_crop', inpt, lambda x: _v1.five_crop(x, size))


def ten_crop(inpt, size, vertical_flip=False):
    """``five_crop`` of the input and of its mirror image (v1's ``ten_crop``)."""
    return _crops('ten_crop', inpt, lambda x: _v1.ten_crop(x, size, vertical_flip))


# --- dtype and colour -------------------------------------------------------------------

def _value_bits(dtype):
    bits = {ember.uint8: 8, ember.int8: 7, ember.int16: 15, ember.int32: 31, ember.int64: 63}
    if dtype not in bits:
        raise TypeError(f"Number of value bits is only defined for integer dtypes, but got {dtype}.")
    return bits[dtype]


def to_dtype_image(image, dtype=ember.float32, scale=False):
    """Cast; with ``scale``, map the value range too (ints [0, max] ↔ floats [0, 1], ints by bit shifts)."""
    if image.dtype == dtype:
        return image
    if not scale:
        return image.to(dtype)
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or (
                image.dtype == ember.float64 and dtype == ember.int64):
            raise RuntimeError(f"The conversion from {image.dtype} to {dtype} cannot be performed safely.")
        return image.mul(float(ember.iinfo(dtype).max) + 1.0 - 1e-3).to(dtype)
    if dtype.is_floating_point:
        return image.to(dtype).mul_(1.0 / ember.iinfo(image.dtype).max)
    shift = _value_bits(image.dtype) - _value_bits(dtype)
    if shift > 0:
        return image.bitwise_right_shift(shift).to(dtype)
    return image.to(dtype).bitwise_left_shift(-shift)


def to_dtype(inpt, dtype=ember.float32, scale=False):
    """``to_dtype_image`` for images, videos and plain tensors; masks and boxes are only cast."""
    if isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes)):
        return type(inpt).wrap_like(inpt, inpt.to(dtype))
    return _apply('to_dtype', inpt, lambda x: to_dtype_image(x, dtype, scale))


def convert_image_dtype(image, dtype=ember.float32):
    """v1's name for ``to_dtype(image, dtype, scale=True)``."""
    return _apply('convert_image_dtype', image, lambda x: to_dtype_image(x, dtype, scale=True))


def normalize_image(image, mean, std, inplace=False):
    return _v1.normalize(image, mean, std, inplace)


def normalize(inpt, mean, std, inplace=False):
    """Per-channel ``(x - mean) / std`` of a float ``[..., C, H, W]`` tensor."""
    return _apply('normalize', inpt, lambda x: _v1.normalize(x, mean, std, inplace))


def rgb_to_grayscale_image(image, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}.")
    if image.shape[-3] == 1:
        return image.clone() if num_output_channels == 1 else grayscale_to_rgb_image(image)
    return _v1.rgb_to_grayscale(image, num_output_channels)


def rgb_to_grayscale(inpt, num_output_channels=1):
    """Luma ``0.2989 R + 0.587 G + 0.114 B`` in 1 or 3 channels (PIL images: ``convert('L')``)."""
    return _apply('rgb_to_grayscale', inpt, lambda x: rgb_to_grayscale_image(x, num_output_channels),
                  lambda x: _v1.to_grayscale(x, num_output_channels))


to_grayscale = rgb_to_grayscale


def grayscale_to_rgb_image(image):
    if image.shape[-3] >= 3:
        return image
    return image.repeat(*[1] * (image.dim() - 3), 3, 1, 1)


def grayscale_to_rgb(inpt):
    """A one-channel image repeated to three channels (three or more channels are returned as they are)."""
    return _apply('grayscale_to_rgb', inpt, grayscale_to_rgb_image, lambda x: x.convert('RGB'))


def adjust_brightness(inpt, brightness_factor):
    return _v1_op('adjust_brightness', inpt, brightness_factor)


def adjust_contrast(inpt, contrast_factor):
    return _v1_op('adjust_contrast', inpt, contrast_factor)


def adjust_saturation(inpt, saturation_factor):
    return _v1_op('adjust_saturation', inpt, saturation_factor)


def gaussian_blur(inpt, kernel_size, sigma=None):
    """A Gaussian blur of an image or video (v1's ``gaussian_blur``); masks and boxes pass through the transform."""
    return _v1_op('gaussian_blur', inpt, kernel_size, sigma)


def adjust_hue(inpt, hue_factor):
    return _v1_op('adjust_hue', inpt, hue_factor)


def adjust_sharpness(inpt, sharpness_factor):
    return _v1_op('adjust_sharpness', inpt, sharpness_factor)


def posterize(inpt, bits):
    """v1's kernel: uint8 tensors only (torchvision's v2 also posterizes float images)."""
    return _v1_op('posterize', inpt, bits)


def solarize(inpt, threshold):
    return _v1_op('solarize', inpt, threshold)


def autocontrast(inpt):
    return _v1_op('autocontrast', inpt)


def equalize(inpt):
    """v1's kernel: uint8 tensors only (torchvision's v2 also equalizes float images)."""
    return _v1_op('equalize', inpt)


def invert(inpt):
    return _v1_op('invert', inpt)

def erase(inpt, i, j, h, w, v, inplace=False):
    return _apply('erase', inpt, lambda x: _v1.erase(x, i, j, h, w, v, inplace))


# --- conversions and queries ------------------------------------------------------------

def to_image(inpt):
    """A tv_tensors.Image from a tensor, a PIL image (unscaled, ``pil_to_tensor``) or an HWC ndarray."""
    if isinstance(inpt, np.ndarray):
        return tv_tensors.Image(ember.from_numpy(np.ascontiguousarray(np.atleast_3d(inpt).transpose(2, 0, 1))))
    if _is_pil(inpt):
        return tv_tensors.Image(_v1.pil_to_tensor(inpt))
    if isinstance(inpt, ember.Tensor):
        return tv_tensors.Image(inpt)
    raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but got {type(inpt)} "
                    "instead.")


def get_dimensions(inpt):
    """``[C, H, W]`` of an image (tensor ``[..., C, H, W]`` or PIL)."""
    if isinstance(inpt, (tv_tensors.Mask, tv_tensors.BoundingBoxes)):
        raise TypeError(f"get_dimensions() does not support {type(inpt).__name__}")
    if isinstance(inpt, ember.Tensor):
        if inpt.dim() < 2:
            raise TypeError(f"Input tensor should have at least two dimensions, but got {inpt.dim()}")
        return [1 if inpt.dim() == 2 else inpt.shape[-3], inpt.shape[-2], inpt.shape[-1]]
    return _v1.get_dimensions(inpt)


def get_num_channels(inpt):
    return get_dimensions(inpt)[0]


def get_size(inpt):
    """``[H, W]`` of an image, video, mask (its last two dims) or a BoundingBoxes' canvas."""
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return list(inpt.canvas_size)
    if isinstance(inpt, tv_tensors.Mask):
        return [inpt.shape[-2], inpt.shape[-1]]
    return get_dimensions(inpt)[1:]


def get_image_size(inpt):
    """``[W, H]`` (v1's order)."""
    return get_dimensions(inpt)[:0:-1]


get_image_num_channels = get_num_channels


# --- bounding boxes ---------------------------------------------------------------------
# Conversions are out of place (so boxes keep their autograd history) and follow torchvision's integer rules:
# a centre is ``x + w // 2``; corners from a centre are computed in floating point and truncated.

_Format = tv_tensors.BoundingBoxFormat


def _half(t):
    return t / 2 if t.is_floating_point() else t.div(2, rounding_mode='floor')


def _to_xyxy(boxes, fmt):
    xy, wh = boxes[..., :2], boxes[..., 2:]
    if fmt == _Format.XYWH:
        return ember.cat([xy, xy + wh], dim=-1)
    if fmt == _Format.CXCYWH:
        centre, wh = (xy, wh) if boxes.is_floating_point() else (xy.float(), wh.float())
        low = centre - wh / 2
        return ember.cat([low, low + wh], dim=-1).to(boxes.dtype)
    return boxes


def _from_xyxy(boxes, fmt):
    low, wh = boxes[..., :2], boxes[..., 2:] - boxes[..., :2]
    if fmt == _Format.XYWH:
        return ember.cat([low, wh], dim=-1)
    if fmt == _Format.CXCYWH:
        return ember.cat([_half(low * 2 + wh), wh], dim=-1)
    return boxes


def _convert_format(boxes, old, new):
    if old == new:
        return boxes
    xy, wh = boxes[..., :2], boxes[..., 2:]
    if (old, new) == (_Format.XYWH, _Format.CXCYWH):
        return ember.cat([xy + _half(wh), wh], dim=-1)
    if (old, new) == (_Format.CXCYWH, _Format.XYWH) and boxes.is_floating_point():
        return ember.cat([xy - wh / 2, wh], dim=-1)
    return _from_xyxy(_to_xyxy(boxes, old), new)


def _as_format(fmt):
    return _Format[fmt.upper()] if isinstance(fmt, str) else fmt


def _box_input(inpt, explicit):
    """Whether ``inpt`` is a BoundingBoxes (its metadata must not be passed) or a plain tensor (it must be)."""
    if is_pure_tensor(inpt):
        if any(v is None for v in explicit.values()):
            raise ValueError(f"For pure tensor inputs, {', '.join(f'`{k}`' for k in explicit)} "
                             f"{'has' if len(explicit) == 1 else 'have'} to be passed.")
        return False
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if any(v is not None for v in explicit.values()):
            raise ValueError(f"For bounding box tv_tensor inputs, {' and '.join(f'`{k}`' for k in explicit)} "
                             "must not be passed.")
        return True
    raise TypeError(f"Input can either be a plain tensor or a bounding box tv_tensor, but got {type(inpt)} instead.")


def convert_bounding_box_format(inpt, old_format=None, new_format=None, inplace=False):
    """Boxes in ``new_format`` (``'XYXY'``, ``'XYWH'``, ``'CXCYWH'`` or a BoundingBoxFormat); a plain tensor needs
    ``old_format``, a BoundingBoxes carries its own. ``inplace=True`` writes the result into ``inpt``.

    >>> convert_bounding_box_format(ember.tensor([[1, 2, 4, 6]]), old_format='XYWH', new_format='CXCYWH').tolist()
    [[3, 5, 4, 6]]
    """
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: 'new_format'")
    old_format, new_format = _as_format(old_format), _as_format(new_format)
    if not _box_input(inpt, {'old_format': old_format}):
        return _written(inpt, _convert_format(inpt, old_format, new_format), inplace)
    out = _convert_format(tv_tensors._plain(inpt), inpt.format, new_format)
    return tv_tensors.wrap(_written(tv_tensors._plain(inpt), out, inplace), like=inpt, format=new_format)


def _written(target, result, inplace):
    """``result``, or with ``inplace`` ``target`` overwritten by it (as torchvision, the same format is no copy)."""
    return target.copy_(result) if inplace and result is not target else result


def _clamp(boxes, fmt, canvas_size, clamping_mode):
    if clamping_mode is None:
        return boxes.clone()
    # the corners are clamped in floating point; 'soft' and 'hard' differ only for rotated boxes
    xyxy = _to_xyxy(boxes if boxes.is_floating_point() else boxes.float(), fmt)
    h, w = canvas_size
    xyxy = xyxy.clamp(min=ember.zeros(4, dtype=xyxy.dtype), max=ember.tensor([w, h, w, h], dtype=xyxy.dtype))
    return _from_xyxy(xyxy, fmt).to(boxes.dtype)


def clamp_bounding_boxes(inpt, format=None, canvas_size=None, clamping_mode='auto'):
    """Boxes clamped to their canvas ``(H, W)``: x to ``[0, W]``, y to ``[0, H]``. ``clamping_mode='auto'`` takes
    a BoundingBoxes' own mode; None leaves the boxes as they are.

    >>> clamp_bounding_boxes(ember.tensor([[-2., 1., 12., 4.]]), format='XYXY', canvas_size=(3, 10),
    ...                      clamping_mode='soft').tolist()
    [[0.0, 1.0, 10.0, 3.0]]
    """
    if clamping_mode is not None and clamping_mode not in ('soft', 'hard', 'auto'):
        raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
    format = _as_format(format)
    if is_pure_tensor(inpt):
        if format is None or canvas_size is None or clamping_mode == 'auto':
            raise ValueError("For pure tensor inputs, `format`, `canvas_size` and `clamping_mode` have to be passed.")
        return _clamp(inpt, format, canvas_size, clamping_mode)
    _box_input(inpt, {'format': format, 'canvas_size': canvas_size})
    mode = inpt.clamping_mode if clamping_mode == 'auto' else clamping_mode
    return tv_tensors.wrap(_clamp(tv_tensors._plain(inpt), inpt.format, inpt.canvas_size, mode), like=inpt)


def _valid_boxes(boxes, fmt, canvas_size, min_size, min_area):
    """Which boxes are at least ``min_size`` wide and high, ``min_area`` large, and inside the canvas."""
    xyxy = _convert_format(boxes, fmt, _Format.XYXY)
    x1, y1, x2, y2 = xyxy.unbind(-1)
    ws, hs = x2 - x1, y2 - y1
    h, w = canvas_size
    valid = (ws >= min_size) & (hs >= min_size) & (ws * hs >= min_area) & (xyxy >= 0).all(dim=-1)
    return valid & (x1 <= w) & (x2 <= w) & (y1 <= h) & (y2 <= h)


def sanitize_bounding_boxes(bounding_boxes, format=None, canvas_size=None, min_size=1.0, min_area=1.0):
    """The valid boxes (see ``SanitizeBoundingBoxes``) and the boolean mask that selects them, for labels.

    >>> boxes, valid = sanitize_bounding_boxes(ember.tensor([[0, 0, 4, 4], [2, 2, 2, 5], [1, 1, 9, 3]]),
    ...                                        format='XYXY', canvas_size=(8, 8))
    >>> boxes.tolist(), valid.tolist()
    ([[0, 0, 4, 4]], [True, False, False])
    """
    if is_pure_tensor(bounding_boxes):
        if format is None or canvas_size is None:
            raise ValueError("format and canvas_size cannot be None if bounding_boxes is a pure tensor. "
                             f"Got format={format} and canvas_size={canvas_size}.Set those to appropriate values or "
                             "pass bounding_boxes as a tv_tensors.BoundingBoxes object.")
        valid = _valid_boxes(bounding_boxes, _as_format(format), canvas_size, min_size, min_area)
        return bounding_boxes[valid], valid
    if not isinstance(bounding_boxes, tv_tensors.BoundingBoxes):
        raise ValueError("bounding_boxes must be a tv_tensors.BoundingBoxes instance or a pure tensor.")
    if format is not None or canvas_size is not None:
        raise ValueError("format and canvas_size must be None when bounding_boxes is a tv_tensors.BoundingBoxes "
                         f"instance. Got format={format} and canvas_size={canvas_size}. Leave those to None or pass "
                         "bounding_boxes as a pure tensor.")
    plain = tv_tensors._plain(bounding_boxes)
    valid = _valid_boxes(plain, bounding_boxes.format, bounding_boxes.canvas_size, min_size, min_area)
    return tv_tensors.wrap(plain[valid], like=bounding_boxes), valid
