"""``torchvision.transforms.functional`` on ember: each function takes a PIL image or a tensor.

A tensor image is ``[..., C, H, W]`` (float in [0, 1] or uint8 in [0, 255]); a PIL image is
handled with Pillow's own calls, as torchvision does, so results match Pillow's exactly. Tensor
paths are written in ember operators (differentiable where torchvision's are) and follow
torchvision's tensor code: the same rounding, clamping, grayscale weights and pixel-centre
conventions. Resampling matrices and grids are computed with NumPy and applied with ember ops.
"""
import math
import numbers
from enum import Enum

import numpy as np

import ember
import ember.nn.functional as _F

from .._pil import is_pil_image as _is_pil_image, pil_image as _pil


class InterpolationMode(Enum):
    """Interpolation modes, as torchvision's (``InterpolationMode.BILINEAR.value == 'bilinear'``)."""
    NEAREST = 'nearest'
    NEAREST_EXACT = 'nearest-exact'
    BILINEAR = 'bilinear'
    BICUBIC = 'bicubic'
    BOX = 'box'
    HAMMING = 'hamming'
    LANCZOS = 'lanczos'


_PIL_CODES = {InterpolationMode.NEAREST: 0, InterpolationMode.LANCZOS: 1, InterpolationMode.BILINEAR: 2,
              InterpolationMode.BICUBIC: 3, InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5}


def _interp(mode):
    """Accept InterpolationMode, its string value or a PIL integer code (torchvision's legacy form)."""
    if isinstance(mode, InterpolationMode):
        return mode
    if isinstance(mode, int):
        for k, v in _PIL_CODES.items():
            if v == mode:
                return k
    if isinstance(mode, str):
        return InterpolationMode(mode)
    raise TypeError("Argument interpolation should be of type InterpolationMode instead of "
                    f"{type(mode).__name__}")


def _is_tensor(img):
    return isinstance(img, ember.Tensor)


def _check(img):
    if not (_is_tensor(img) or _is_pil_image(img)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image or tensor image.

    >>> get_dimensions(ember.zeros(3, 4, 5))
    [3, 4, 5]
    """
    _check(img)
    if _is_tensor(img):
        c = 1 if img.dim() == 2 else img.shape[-3]
        return [c, img.shape[-2], img.shape[-1]]
    return [len(img.getbands()), img.height, img.width]


def get_image_size(img):
    """``[width, height]`` (torchvision's legacy order)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


# --- conversions ----------------------------------------------------------------------

def to_tensor(pic):
    """PIL image or HWC ndarray → float CHW tensor; uint8 data is scaled to [0, 1].

    >>> to_tensor(np.zeros((2, 3, 1), dtype=np.uint8)).shape
    ember.Size([1, 2, 3])
    """
    if not (_is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        t = ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        return t.to(ember.get_default_dtype()).div(255) if arr.dtype == np.uint8 else t
    mode_dtypes = {'I': np.int32, 'I;16': np.int16, 'F': np.float32}
    arr = np.array(pic, mode_dtypes.get(pic.mode, np.uint8), copy=True)
    if pic.mode == '1':
        arr = 255 * arr
    arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    if arr.dtype == np.uint8 and ember.get_default_dtype() is ember.float32:
        # the per-sample path of every image pipeline: one NumPy pass (channel-first copy, float32 x / 255, the
        # same rounding as torch's .float().div(255)) instead of three operator calls
        out = np.empty((arr.shape[2], arr.shape[0], arr.shape[1]), np.float32)
        return ember.from_numpy(np.divide(arr.transpose(2, 0, 1), np.float32(255), out=out))
    t = ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    return t.to(ember.get_default_dtype()).div(255) if t.dtype == ember.uint8 else t


def pil_to_tensor(pic):
    """PIL image → CHW tensor of the image's own dtype (no scaling)."""
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    arr = arr.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    """CHW tensor or HWC ndarray → PIL image; float data is scaled by 255 and truncated to uint8.

    >>> to_pil_image(ember.zeros(3, 2, 2)).mode
    'RGB'
    """
    Image = _pil()
    if _is_tensor(pic):
        if pic.dim() not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.dim()} dimensions.")
        if pic.dim() == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != 'F':
            pic = pic.mul(255).to(ember.uint8)
        arr = np.transpose(pic.detach().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        if arr.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if arr.shape[2] == 1:
        arr = arr[:, :, 0]
        defaults = {np.dtype(np.uint8): 'L', np.dtype(np.int16): 'I;16', np.dtype(np.int32): 'I',
                    np.dtype(np.float32): 'F'}
        if mode is None:
            mode = defaults.get(arr.dtype)
        if mode is None:
            raise TypeError(f"Input type {arr.dtype} is not supported")
        if mode == 'F':
            arr = arr.astype(np.float32)
    else:
        if arr.dtype != np.uint8:
            raise TypeError(f"Input type {arr.dtype} is not supported")
        mode = mode or {2: 'LA', 3: 'RGB', 4: 'RGBA'}[arr.shape[2]]
    return Image.fromarray(np.ascontiguousarray(arr), mode=mode)


def convert_image_dtype(image, dtype=ember.float32):
    """Convert a tensor image's dtype, rescaling values (uint8 [0, 255] ↔ float [0, 1])."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        eps = 1e-3
        max_val = float(ember.iinfo(dtype).max)
        return image.mul(max_val + 1.0 - eps).to(dtype)
    max_in = float(ember.iinfo(image.dtype).max)
    if dtype.is_floating_point:
        return image.to(dtype).div(max_in)
    max_out = float(ember.iinfo(dtype).max)
    return image.to(ember.float64).mul(max_out / max_in).to(dtype)


# --- normalisation and colour -----------------------------------------------------------

_NORMALIZE_STATS = {}


def _normalize_stats(mean, std, dtype):
    mean = ember.as_tensor(mean, dtype=dtype)
    std = ember.as_tensor(std, dtype=dtype)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    return mean, std


def normalize(tensor, mean, std, inplace=False):
    """``(tensor - mean[c]) / std[c]`` per channel of a float tensor image.

    >>> normalize(ember.ones(1, 2, 2), [0.5], [0.5]).unique().tolist()
    [1.0]
    """
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    if isinstance(mean, (list, tuple)) and isinstance(std, (list, tuple)):
        # a per-item transform: the usual constant statistics become tensors once, not at every sample
        key = (tuple(mean), tuple(std), tensor.dtype)
        stats = _NORMALIZE_STATS.get(key)
        if stats is None:
            stats = _NORMALIZE_STATS[key] = _normalize_stats(mean, std, tensor.dtype)
        mean, std = stats
    else:
        mean, std = _normalize_stats(mean, std, tensor.dtype)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return tensor.sub(mean).div(std)


def _max_value(dtype):
    return 1.0 if dtype.is_floating_point else float(ember.iinfo(dtype).max)


def _blend(img1, img2, ratio):
    ratio = float(ratio)        # an int factor on a uint8 image would wrap instead of saturating
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def rgb_to_grayscale(img, num_output_channels=1):
    """Luma ``0.2989 R + 0.587 G + 0.114 B`` of a tensor image, cast back to its dtype."""
    if img.shape[-3] == 1:
        l_img = img
    else:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    if num_output_channels == 3:
        return l_img.expand(*img.shape[:-3], 3, *img.shape[-2:])
    return l_img


def to_grayscale(img, num_output_channels=1):
    """Grayscale of a PIL image (``convert('L')``) or tensor image, with 1 or 3 output channels."""
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if _is_tensor(img):
        return rgb_to_grayscale(img, num_output_channels)
    Image = _pil()
    img = img.convert('L')
    if num_output_channels == 3:
        img = Image.fromarray(np.dstack([np.array(img)] * 3), 'RGB')
    return img


def _enhance(img, name, factor):
    from PIL import ImageEnhance
    return getattr(ImageEnhance, name)(img).enhance(factor)


def adjust_brightness(img, brightness_factor):
    """Blend with black: factor 0 gives black, 1 the original."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _check(img)
    if not _is_tensor(img):
        return _enhance(img, 'Brightness', brightness_factor)
    return _blend(img, ember.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the image's mean gray level."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _check(img)
    if not _is_tensor(img):
        return _enhance(img, 'Contrast', contrast_factor)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    gray = rgb_to_grayscale(img) if img.shape[-3] == 3 else img
    mean = gray.to(dtype).mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the grayscale image: 0 gives gray, 1 the original."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _check(img)
    if not _is_tensor(img):
        return _enhance(img, 'Color', saturation_factor)
    if img.shape[-3] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = img.max(dim=-3).values
    minc = img.min(dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = ember.ones_like(maxc)
    s = cr / ember.where(eqc, ones, maxc)
    cr_divisor = ember.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = hr + hg + hb
    h = ember.fmod((h / 6.0 + 1.0), 1.0)
    return ember.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = ember.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(ember.int32)
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == ember.arange(6).view(-1, 1, 1)
    a1 = ember.stack((v, q, p, p, t, v), dim=-3)
    a2 = ember.stack((t, v, v, q, p, p), dim=-3)
    a3 = ember.stack((p, p, t, v, v, q), dim=-3)
    a4 = ember.stack((a1, a2, a3), dim=-4)
    return ember.einsum('...ijk, ...xijk -> ...xjk', mask.to(img.dtype), a4)


def adjust_hue(img, hue_factor):
    """Shift the hue channel by ``hue_factor`` (in [-0.5, 0.5]) cyclically."""
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check(img)
    if not _is_tensor(img):
        Image = _pil()
        input_mode = img.mode
        if input_mode in {'L', '1', 'I', 'F'}:
            return img
        h, s, v = img.convert('HSV').split()
        np_h = np.array(h, dtype=np.uint8)
        with np.errstate(over='ignore'):     # uint8 addition wraps around: the hue is cyclic
            np_h += np.array(hue_factor * 255).astype(np.uint8)
        h = Image.fromarray(np_h, 'L')
        return Image.merge('HSV', (h, s, v)).convert(input_mode)
    if img.shape[-3] == 1:
        return img
    orig_dtype = img.dtype
    img = convert_image_dtype(img, ember.float32)
    hsv = _rgb2hsv(img)
    h, s, v = hsv.unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    out = _hsv2rgb(ember.stack((h, s, v), dim=-3))
    return convert_image_dtype(out, orig_dtype)



def _check_image_channels(img, min_ndim=3):
    """torchvision's checks for the per-pixel colour ops: a (..., 1 or 3, H, W) tensor."""
    if img.ndim < min_ndim:
        raise TypeError(f"Input image tensor should have at least {min_ndim} dimensions, but found {img.ndim}")
    c = 1 if img.ndim == 2 else img.shape[-3]
    if c not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {c}")


def _check_uint8(img):
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")


def invert(img):
    """Each value ``v`` becomes ``max - v`` (255 for uint8, 1.0 for float).

    >>> invert(ember.tensor([[[0, 200]]], dtype=ember.uint8)).tolist()
    [[[255, 55]]]
    """
    _check(img)
    if not _is_tensor(img):
        from PIL import ImageOps
        return ImageOps.invert(img)
    _check_image_channels(img)
    bound = _max_value(img.dtype)
    return (bound if img.is_floating_point() else int(bound)) - img    # an int keeps an integer image's dtype


def posterize(img, bits):
    """Keep the ``bits`` high bits of each uint8 value (``v & ~(2**(8 - bits) - 1)``).

    >>> posterize(ember.tensor([[[255, 100]]], dtype=ember.uint8), 2).tolist()
    [[[192, 64]]]
    """
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    _check(img)
    if not _is_tensor(img):
        from PIL import ImageOps
        return ImageOps.posterize(img, bits)
    _check_image_channels(img)
    _check_uint8(img)
    return img.bitwise_and(ember.tensor(256 - 2 ** (8 - bits), dtype=ember.uint8))


def solarize(img, threshold):
    """Invert the values at or above ``threshold``.

    >>> solarize(ember.tensor([[[10, 200]]], dtype=ember.uint8), 128).tolist()
    [[[10, 55]]]
    """
    _check(img)
    if not _is_tensor(img):
        from PIL import ImageOps
        return ImageOps.solarize(img, threshold)
    _check_image_channels(img)
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return ember.where(img >= threshold, invert(img), img)


def _smoothed(img):
    """PIL's SMOOTH filter (3×3, centre weight 5, the others 1, over 13) inside a one-pixel border kept as is."""
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kernel = ember.ones(3, 3, dtype=dtype)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(img.shape[-3], 1, 3, 3)
    x = img.reshape(-1, *img.shape[-3:]).to(dtype)
    y = _F.conv2d(x, kernel, groups=img.shape[-3])
    if not img.is_floating_point():
        y = y.round()
    out = img.clone()
    out[..., 1:-1, 1:-1] = y.reshape(*img.shape[:-2], *y.shape[-2:]).to(img.dtype)
    return out


def adjust_sharpness(img, sharpness_factor):
    """Blend with a smoothed copy: 0 gives the smoothed image, 1 the original, above 1 sharper."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _check(img)
    if not _is_tensor(img):
        return _enhance(img, 'Sharpness', sharpness_factor)
    _check_image_channels(img, min_ndim=2)
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _smoothed(img), sharpness_factor)


def autocontrast(img):
    """Stretch each channel linearly so its darkest value becomes 0 and its brightest the maximum."""
    _check(img)
    if not _is_tensor(img):
        from PIL import ImageOps
        return ImageOps.autocontrast(img)
    _check_image_channels(img)
    bound = _max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    lo = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    hi = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    flat = hi == lo     # a constant channel is left as it is
    lo = ember.where(flat, ember.zeros_like(lo), lo)
    scale = ember.where(flat, ember.ones_like(hi), bound / (hi - lo))
    return ((img - lo) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(chan):
    """PIL's histogram equalisation of one uint8 channel: a lookup table from the cumulative histogram, whose
    step leaves out the last non-empty bin; a channel with a single non-empty bin is returned unchanged."""
    hist = ember.bincount(chan.reshape(-1), minlength=256)
    nonzero = hist[hist != 0]
    step = nonzero[:-1].sum().div(255, rounding_mode='floor')
    if int(step) == 0:
        return chan
    lut = (hist.cumsum(0) + step.div(2, rounding_mode='floor')).div(step, rounding_mode='floor')
    lut = _F.pad(lut, [1, 0])[:-1].clamp(0, 255)
    return lut[chan.to(ember.int64)].to(ember.uint8)


def equalize(img):
    """Equalise each channel's histogram (uint8 tensors of 3 or 4 dims, or PIL images), as PIL's ``equalize``."""
    _check(img)
    if not _is_tensor(img):
        from PIL import ImageOps
        return ImageOps.equalize(img)
    if not 3 <= img.ndim <= 4:
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found {img.ndim}")
    _check_uint8(img)
    _check_image_channels(img)
    images = img.reshape(-1, *img.shape[-3:])
    out = ember.stack([ember.stack([_equalize_channel(c) for c in im]) for im in images])
    return out.reshape(img.shape)


# --- geometry -------------------------------------------------------------------------

def hflip(img):
    """Mirror left-right."""
    _check(img)
    if _is_tensor(img):
        return img.flip(-1)
    return img.transpose(_pil().FLIP_LEFT_RIGHT)


def vflip(img):
    """Mirror top-bottom."""
    _check(img)
    if _is_tensor(img):
        return img.flip(-2)
    return img.transpose(_pil().FLIP_TOP_BOTTOM)


def _pad_ltrb(padding):
    if isinstance(padding, numbers.Number):
        padding = [padding]
    if not isinstance(padding, (list, tuple)):
        raise TypeError("Got inappropriate padding arg")
    if len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    padding = [int(p) for p in padding]
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return padding


def _parse_fill(fill, img):
    """Pillow's fill value for ``img``'s mode: a number per band."""
    if fill is None:
        fill = 0
    bands = len(img.getbands())
    if isinstance(fill, (int, float)) and bands > 1:
        fill = tuple([fill] * bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * bands
        if len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of bands of the image "
                             f"({len(fill)} != {bands})")
        fill = tuple(fill)
    if img.mode != 'F':
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return fill


def pad(img, padding, fill=0, padding_mode='constant'):
    """Pad each border: ``padding`` is one int, (left/right, top/bottom) or (left, top, right, bottom).

    ``padding_mode`` is ``constant`` (``fill``), ``edge``, ``reflect`` or ``symmetric``; negative
    padding crops, as torchvision.

    >>> pad(ember.ones(1, 2, 2), 1).shape
    ember.Size([1, 4, 4])
    """
    _check(img)
    if padding_mode not in ('constant', 'edge', 'reflect', 'symmetric'):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if not isinstance(fill, (numbers.Number, tuple, list)) and fill is not None:
        raise TypeError("Got inappropriate fill arg")
    l, t, r, b = _pad_ltrb(padding)
    _, h, w = get_dimensions(img)
    if min(l, t, r, b) < 0:     # negative padding crops that side first
        img = crop(img, -min(t, 0), -min(l, 0), h + min(t, 0) + min(b, 0), w + min(l, 0) + min(r, 0))
        l, t, r, b = max(l, 0), max(t, 0), max(r, 0), max(b, 0)
        _, h, w = get_dimensions(img)
    if _is_tensor(img):
        return _pad_tensor(img, l, t, r, b, fill, padding_mode)
    Image = _pil()
    if padding_mode == 'constant':
        from PIL import ImageOps
        out = ImageOps.expand(img, border=(l, t, r, b), fill=_parse_fill(fill, img))
        if img.mode == 'P':
            out.putpalette(img.getpalette())
        return out
    mode = {'edge': 'edge', 'reflect': 'reflect', 'symmetric': 'symmetric'}[padding_mode]
    arr = np.asarray(img)
    widths = ((t, b), (l, r)) + (((0, 0),) if arr.ndim == 3 else ())
    out = Image.fromarray(np.pad(arr, widths, mode=mode), mode=img.mode) if img.mode != 'P' else None
    if img.mode == 'P':
        out = Image.fromarray(np.pad(arr, widths, mode=mode))
        out.putpalette(img.getpalette())
    return out


def _pad_tensor(img, l, t, r, b, fill, padding_mode):
    h, w = img.shape[-2], img.shape[-1]
    if padding_mode == 'constant':
        fill = 0 if fill is None else fill
        shape = (*img.shape[:-2], h + t + b, w + l + r)
        if isinstance(fill, (list, tuple)):
            out = ember.zeros(shape, dtype=img.dtype)
            out[...] = ember.as_tensor(fill, dtype=img.dtype).view(-1, 1, 1)
        else:
            out = ember.full(shape, fill, dtype=img.dtype)
        out[..., t:t + h, l:l + w] = img
        return out
    # edge/reflect/symmetric: gather rows and columns by the index pattern NumPy's pad gives an arange
    if padding_mode == 'reflect' and (max(l, r) >= w or max(t, b) >= h):
        raise ValueError("Padding size should be less than the corresponding input dimension")
    rows = ember.as_tensor(np.pad(np.arange(h), (t, b), mode=padding_mode))
    cols = ember.as_tensor(np.pad(np.arange(w), (l, r), mode=padding_mode))
    return img.index_select(-2, rows).index_select(-1, cols)


def crop(img, top, left, height, width):
    """The ``height × width`` window at (top, left); parts outside the image are zero, as torchvision."""
    _check(img)
    if not _is_tensor(img):
        return img.crop((left, top, left + width, top + height))
    h, w = img.shape[-2], img.shape[-1]
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        inside = img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)]
        ltrb = [max(-left, 0), max(-top, 0), max(right - w, 0), max(bottom - h, 0)]
        return _pad_tensor(inside, *ltrb, 0, 'constant')
    return img[..., top:bottom, left:right]


def center_crop(img, output_size):
    """The central ``output_size`` window (padded with zeros where the image is smaller).

    >>> center_crop(ember.ones(1, 4, 4), 2).shape
    ember.Size([1, 2, 2])
    """
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    th, tw = output_size
    if tw > w or th > h:
        padding = [(tw - w) // 2 if tw > w else 0, (th - h) // 2 if th > h else 0,
                   (tw - w + 1) // 2 if tw > w else 0, (th - h + 1) // 2 if th > h else 0]
        img = pad(img, padding, fill=0)
        _, h, w = get_dimensions(img)
        if tw == w and th == h:
            return img
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def _resized_size(h, w, size, max_size):
    if isinstance(size, (list, tuple)) and len(size) == 2:
        if max_size is not None:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
        return [int(size[0]), int(size[1])]
    if isinstance(size, (list, tuple)):
        if len(size) != 1:
            raise ValueError(f"If size is a sequence, it should have 1 or 2 values, got {len(size)}")
        size = size[0]
    if size is None:
        short, long = (w, h) if w <= h else (h, w)
        if max_size is None:
            raise ValueError("max_size must be given when size is None")
        new_long = max_size
        new_short = int(max_size * short / long)
    else:
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = size, int(size * long / short)
        if max_size is not None:
            if max_size <= size:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def _aa_weights(in_size, out_size, mode):
    """PIL/torch antialias resampling matrix (out × in): a filter stretched by the downscale factor."""
    scale = in_size / out_size
    support_scale = max(scale, 1.0)
    if mode == 'bilinear':
        support = 1.0 * support_scale
        def kernel(x):
            x = np.abs(x)
            return np.where(x < 1.0, 1.0 - x, 0.0)
    elif mode == 'lanczos':     # sinc(x) sinc(x / 3) on |x| < 3, as PIL and torch's
        support = 3.0 * support_scale
        def kernel(x):
            return np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
    else:   # bicubic with a = -0.5, as PIL and torch's antialias kernel
        support = 2.0 * support_scale
        def kernel(x, a=-0.5):
            x = np.abs(x)
            return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                            np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))
    W = np.zeros((out_size, in_size), dtype=np.float64)
    for i in range(out_size):
        center = (i + 0.5) * scale
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        j = np.arange(lo, hi)
        wts = kernel((j - center + 0.5) / support_scale)
        total = wts.sum()
        W[i, lo:hi] = wts / total if total != 0 else wts
    return W


def _resize_tensor(img, size, mode, antialias):
    squeeze = img.dim() == 3
    x = img.unsqueeze(0) if squeeze else img
    out_dtype = x.dtype
    if not x.is_floating_point():
        x = x.to(ember.float32)
    if mode == InterpolationMode.LANCZOS or (antialias and mode in (InterpolationMode.BILINEAR,
                                                                     InterpolationMode.BICUBIC)):
        Wh = ember.as_tensor(_aa_weights(x.shape[-2], size[0], mode.value), dtype=x.dtype)
        Ww = ember.as_tensor(_aa_weights(x.shape[-1], size[1], mode.value), dtype=x.dtype)
        y = ember.matmul(ember.matmul(Wh, x), Ww.t())
    else:
        align = False if mode in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC) else None
        y = _F.interpolate(x, size=list(size), mode=mode.value, align_corners=align)
    if mode in (InterpolationMode.BICUBIC, InterpolationMode.LANCZOS) and out_dtype == ember.uint8:
        y = y.clamp(min=0, max=255)
    if not out_dtype.is_floating_point:
        y = ember.round(y).to(out_dtype)
    return y.squeeze(0) if squeeze else y


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` = (h, w), or match the smaller edge to ``size`` when it is one int.

    Tensors are resampled with antialiasing when downscaling (bilinear/bicubic), as torchvision's
    default ``antialias=True``; PIL images use ``Image.resize``.

    >>> resize(ember.ones(1, 8, 16), 4).shape
    ember.Size([1, 4, 8])
    """
    _check(img)
    interpolation = _interp(interpolation)
    _, h, w = get_dimensions(img)
    out = _resized_size(h, w, size, max_size)
    if [h, w] == out:
        return img
    if _is_tensor(img):
        if interpolation not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                                 InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
            raise ValueError("Input tensor image supports interpolation modes nearest, nearest-exact, bilinear "
                             "and bicubic only")
        return _resize_tensor(img, out, interpolation, bool(antialias))
    if interpolation not in _PIL_CODES:
        raise ValueError(f"{interpolation} is not supported for PIL images")
    return img.resize((out[1], out[0]), _PIL_CODES[interpolation])


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """``crop`` then ``resize``."""
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def _crop_size(size):
    """``(h, w)`` from an int or a sequence of one or two ints, as five_crop/ten_crop take it."""
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return tuple(size)


def five_crop(img, size):
    """The four corner crops and the central crop: ``(tl, tr, bl, br, center)``."""
    size = _crop_size(size)
    _, h, w = get_dimensions(img)
    ch, cw = size
    if cw > w or ch > h:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(h, w)}")
    return (crop(img, 0, 0, ch, cw), crop(img, 0, w - cw, ch, cw), crop(img, h - ch, 0, ch, cw),
            crop(img, h - ch, w - cw, ch, cw), center_crop(img, [ch, cw]))


def ten_crop(img, size, vertical_flip=False):
    """``five_crop`` of the image, then ``five_crop`` of its mirror image (left-right, or top-bottom with
    ``vertical_flip``): ten images.

    >>> [tuple(c.shape) for c in ten_crop(ember.zeros(1, 4, 4), 2)][::5]
    [(1, 2, 2), (1, 2, 2)]
    """
    size = _crop_size(size)
    return five_crop(img, size) + five_crop(vflip(img) if vertical_flip else hflip(img), size)


def _inverse_affine_matrix(center, angle, translate, scale, shear):
    """Output pixel → input pixel map of an affine transform, as torchvision (rotation about center)."""
    rot = math.radians(angle)
    sx, sy = (math.radians(s) for s in shear)
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m


def _affine_output_size(matrix, w, h):
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, -0.5 * h, 1.0]], dtype=np.float32)
    theta = np.array(matrix, dtype=np.float32).reshape(2, 3)
    new = pts @ theta.T
    tol = 1e-4
    cmax = np.ceil(np.trunc(new.max(0) / tol) * tol)
    cmin = np.floor(np.trunc(new.min(0) / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def _affine_tensor(img, matrix, mode, expand, fill):
    """Sample ``img`` at the input points the inverse affine ``matrix`` maps each output pixel centre to.

    Same convention as torchvision's affine grid + grid_sample(align_corners=False): coordinates
    are relative to the image centre, outside points are zero (or ``fill``).
    """
    h, w = img.shape[-2], img.shape[-1]
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    theta = np.array(matrix, dtype=np.float32).reshape(2, 3)
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=np.float32)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh, dtype=np.float32)
    gx, gy = np.meshgrid(xs, ys)
    r = theta.T / np.array([0.5 * w, 0.5 * h], dtype=np.float32)   # to grid_sample's normalised coordinates
    # x * r0 + y * r1 + r2, each product rounded, added left to right: torch's bmm of the base grid with r gives
    # exactly these float32 values, so nearest sampling breaks ties (shears land on half pixels) as torchvision
    src = (gx.reshape(-1, 1) * r[0] + gy.reshape(-1, 1) * r[1]) + r[2]
    return _sample_grid(img, src, oh, ow, mode, fill, 'rotate/affine')


def _sample_grid(img, src, oh, ow, mode, fill, what):
    """torchvision's ``_apply_grid_transform``: ``grid_sample(align_corners=False, padding_mode='zeros')`` of
    ``img`` at the normalised points ``src`` (``(oh * ow, 2)``, x then y, in [-1, 1] across the input), the
    points outside blended with ``fill`` through the sampled coverage of each output pixel (nearest: below 0.5
    takes ``fill``), integer images computed in float32 and rounded back."""
    h, w = img.shape[-2], img.shape[-1]
    channels = img.shape[-3] if img.dim() >= 3 else 1
    if isinstance(fill, (list, tuple)) and len(fill) > 1 and len(fill) != channels:
        raise ValueError("The number of elements in 'fill' cannot broadcast to match the number of channels of the "
                         f"image ({len(fill)} != {channels})")
    px = ((src[:, 0] + 1) * w - 1) / 2
    py = ((src[:, 1] + 1) * h - 1) / 2
    squeeze = img.dim() == 3
    x = img.unsqueeze(0) if squeeze else img
    out_dtype = x.dtype
    x = x.to(ember.float32) if not x.is_floating_point() else x
    flat = x.reshape(*x.shape[:-2], h * w)
    if mode == InterpolationMode.NEAREST:
        ix, iy = np.rint(px).astype(np.int64), np.rint(py).astype(np.int64)
        taps = [(ix, iy, np.ones_like(px))]
    elif mode == InterpolationMode.BILINEAR:
        x0, y0 = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
        fx, fy = px - x0, py - y0
        taps = [(x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)), (x0, y0 + 1, (1 - fx) * fy),
                (x0 + 1, y0 + 1, fx * fy)]
    else:
        raise ValueError(f"Input tensor image supports interpolation modes nearest and bilinear only for {what}")
    # one (out × in) sparse-in-effect matrix, applied with an ember matmul so gradients flow to img
    M = np.zeros((oh * ow, h * w), dtype=np.float32)
    mask = np.zeros(oh * ow, dtype=np.float32)
    rows = np.arange(oh * ow)
    for ix, iy, wt in taps:
        ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        np.add.at(M, (rows[ok], iy[ok] * w + ix[ok]), wt[ok])
        mask[ok] += wt[ok]
    y = ember.matmul(flat, ember.as_tensor(M.T, dtype=flat.dtype)).reshape(*x.shape[:-2], oh, ow)
    if fill is not None:
        fill_t = ember.as_tensor(fill if isinstance(fill, (list, tuple)) else [fill], dtype=y.dtype).view(-1, 1, 1)
        m = ember.as_tensor(mask.reshape(oh, ow), dtype=y.dtype)
        if mode == InterpolationMode.NEAREST:
            y = ember.where(m < 0.5, fill_t.expand_as(y), y)
        else:
            y = y * m + (1.0 - m) * fill_t
    if not out_dtype.is_floating_point:
        y = ember.round(y).to(out_dtype)
    return y.squeeze(0) if squeeze else y


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the image centre)."""
    _check(img)
    interpolation = _interp(interpolation)
    if not _is_tensor(img):
        fillcolor = _parse_fill(fill, img) if fill is not None else None
        return img.rotate(angle, _PIL_CODES[interpolation], expand, center, fillcolor=fillcolor)
    center_f = [0.0, 0.0]
    if center is not None:
        _, h, w = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return _affine_tensor(img, matrix, interpolation, expand, fill)



def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """Rotate by ``angle`` degrees (clockwise), shift by ``translate`` (pixels), zoom by ``scale`` and shear by
    ``shear`` degrees (one value: along x; two: x then y), all about ``center`` (default: the image centre).

    >>> affine(ember.eye(3).view(1, 3, 3), 0.0, [1, 0], 1.0, [0.0, 0.0]).tolist()
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]]
    """
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    shear = [shear, 0.0] if isinstance(shear, numbers.Number) else list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _check(img)
    _, h, w = get_dimensions(img)
    if not _is_tensor(img):
        # Pillow measures from the top-left corner; the centre is (w/2, h/2), as torchvision's
        center = [w * 0.5, h * 0.5] if center is None else center
        matrix = _inverse_affine_matrix(center, float(angle), translate, scale, shear)
        return img.transform(img.size, _pil().AFFINE, matrix, _PIL_CODES[interpolation],
                             fillcolor=_parse_fill(fill, img))
    # a tensor's sampling grid is relative to the image centre
    center_f = [0.0, 0.0] if center is None else [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine_matrix(center_f, float(angle), [1.0 * t for t in translate], scale, shear)
    return _affine_tensor(img, matrix, interpolation, False, fill)

def _get_perspective_coeffs(startpoints, endpoints):
    """The eight coefficients ``(a, b, c, d, e, f, g, h)`` of the map from output to input pixel
    ``(x, y) -> ((a x + b y + c) / (g x + h y + 1), (d x + e y + f) / (g x + h y + 1))`` taking each of
    ``endpoints`` to the matching one of ``startpoints`` (four corners each): a solve in float64 (torchvision's least squares),
    rounded to float32 as torchvision's."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} startpoints and "
                         f"{len(endpoints)} endpoints.")
    a = np.zeros((8, 8), dtype=np.float64)
    for i, ((ex, ey), (sx, sy)) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey]
        a[2 * i + 1] = [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]
    b = np.array(startpoints, dtype=np.float64).reshape(8)
    try:        # four corners give a square system; solving it exactly keeps an identity map exact
        coeffs = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        coeffs = np.linalg.lstsq(a, b, rcond=None)[0]
    return coeffs.astype(np.float32).tolist()


def _perspective_tensor(img, coeffs, mode, fill):
    """torchvision's perspective grid: each output pixel centre through ``coeffs``, normalised, in float32."""
    if len(coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    oh, ow = img.shape[-2], img.shape[-1]
    c = np.array(coeffs, dtype=np.float32)
    xs = np.linspace(0.5, ow - 0.5, ow, dtype=np.float32)
    ys = np.linspace(0.5, oh - 0.5, oh, dtype=np.float32)
    gx, gy = (g.reshape(-1, 1) for g in np.meshgrid(xs, ys))
    r = c[:6].reshape(2, 3).T / np.array([0.5 * ow, 0.5 * oh], dtype=np.float32)
    num = (gx * r[0] + gy * r[1]) + r[2]
    den = (gx * c[6] + gy * c[7]) + np.float32(1)     # the same for x and y: one column, broadcast
    src = num / den - np.float32(1)
    return _sample_grid(img, src, oh, ow, mode, fill, 'perspective')


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Warp so the four ``startpoints`` corners ``[top-left, top-right, bottom-right, bottom-left]`` (``[x, y]``
    pixels) land on ``endpoints``; what comes from outside the image is ``fill`` (default 0).

    >>> corners = [[0, 0], [2, 0], [2, 2], [0, 2]]
    >>> perspective(ember.arange(9, dtype=ember.uint8).view(1, 3, 3), corners, corners).view(-1).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8]
    """
    return _perspective(img, _get_perspective_coeffs(startpoints, endpoints), interpolation, fill)


def _perspective(img, coeffs, interpolation, fill):
    """``perspective`` by its eight coefficients (Pillow's PERSPECTIVE data; the tensor grid for a tensor)."""
    interpolation = _interp(interpolation)
    _check(img)
    if not _is_tensor(img):
        return img.transform(img.size, _pil().PERSPECTIVE, coeffs, _PIL_CODES[interpolation],
                             fillcolor=_parse_fill(fill, img))
    return _perspective_tensor(img, coeffs, interpolation, fill)


def _gaussian_kernel1d(size, sigma, dtype):
    """A normalised Gaussian over ``size`` taps centred on the middle one."""
    half = (size - 1) * 0.5
    x = ember.linspace(-half, half, size, dtype=dtype)
    pdf = (-0.5 * (x / sigma).pow(2)).exp()
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Blur with a separable Gaussian kernel (``kernel_size`` (kx, ky), odd; ``sigma`` (sx, sy), default from the
    kernel size), the image reflected at its borders so it keeps its size. A tensor is (..., C, H, W) with at most
    one leading dimension; an integer one is blurred in float32 and rounded back; a PIL image goes through a
    tensor and back."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    if any(k % 2 == 0 or k < 0 for k in kernel_size):
        raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    if any(s <= 0.0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    if not _is_tensor(img):
        if not _is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        return to_pil_image(gaussian_blur(pil_to_tensor(img), kernel_size, sigma), mode=img.mode)
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")
    kx, ky = kernel_size
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kernel = ember.mm(_gaussian_kernel1d(ky, sigma[1], dtype)[:, None], _gaussian_kernel1d(kx, sigma[0], dtype)[None, :])
    x = img if img.ndim >= 4 else img.unsqueeze(0)
    x = x if x.dtype == dtype else x.to(dtype)
    channels = x.shape[-3]
    x = _F.pad(x, [kx // 2, kx // 2, ky // 2, ky // 2], mode='reflect')
    out = _F.conv2d(x, kernel.expand(channels, 1, ky, kx), groups=channels)
    if img.ndim < 4:
        out = out.squeeze(0)
    if out.dtype != img.dtype:
        out = (out.round() if not img.dtype.is_floating_point else out).to(img.dtype)
    return out


def erase(img, i, j, h, w, v, inplace=False):
    """Set the ``h × w`` window at (i, j) of a tensor image to ``v``."""
    if not _is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img
