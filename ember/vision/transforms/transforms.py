"""``torchvision.transforms`` (v1) classes on ember.

Each class validates its arguments in ``__init__`` and calls ``functional`` in ``forward``. Random
transforms draw their parameters with ember's RNG in exactly the calls and order torchvision makes
with torch's (``ember.rand(1)`` for a coin, ``ember.randint`` for an offset, ``ember.empty(1).uniform_``
for a scale, ``ember.randperm(4)`` for ColorJitter's order), so a pipeline seeded with
``ember.manual_seed`` draws the same parameters, call for call, as torchvision's under torch's seed
(the numbers themselves come from ember's generator, not torch's).
"""
import math
import numbers
from collections.abc import Sequence

import ember

from . import functional as F
from .functional import InterpolationMode, _interp

__all__ = ['Compose', 'ToTensor', 'PILToTensor', 'ToPILImage', 'ConvertImageDtype', 'Normalize', 'Resize',
           'CenterCrop', 'RandomCrop', 'RandomResizedCrop', 'RandomHorizontalFlip', 'RandomVerticalFlip',
           'RandomRotation', 'ColorJitter', 'Grayscale', 'RandomGrayscale', 'Pad', 'Lambda', 'RandomApply',
           'RandomChoice', 'RandomOrder', 'RandomErasing', 'FiveCrop', 'TenCrop', 'GaussianBlur', 'RandomAffine',
           'RandomPerspective', 'LinearTransformation', 'RandomInvert', 'RandomPosterize', 'RandomSolarize',
           'RandomAdjustSharpness', 'RandomAutocontrast', 'RandomEqualize', 'InterpolationMode']


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return tuple(size)


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    """A range of angles as floats: one number ``d`` means ``[-d, d]``."""
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _setup_fill(fill):
    if fill is None:
        return 0
    if not isinstance(fill, (Sequence, numbers.Number)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


def _tensor_fill(fill, img, channels):
    """A tensor's fill as one float per channel (PIL images take ``fill`` as given)."""
    if not isinstance(img, ember.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * channels
    return [float(f) for f in fill]


class Compose:
    """Apply transforms one after another.

    >>> Compose([Lambda(lambda x: x + 1), Lambda(lambda x: x * 2)])(1)
    4
    """

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        body = ''.join(f'\n    {t}' for t in self.transforms)
        return f'{self.__class__.__name__}({body}\n)'


class _Transform(ember.nn.Module):
    """torchvision's transforms are nn.Modules (scriptable); ``__call__`` runs ``forward``."""

    def __repr__(self):
        return f'{self.__class__.__name__}()'


class ToTensor:
    """PIL image / HWC ndarray → float CHW tensor in [0, 1].

    >>> import numpy as np; ToTensor()(np.full((1, 1, 3), 255, np.uint8)).tolist()
    [[[1.0]], [[1.0]], [[1.0]]]
    """

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f'{self.__class__.__name__}()'


class PILToTensor:
    """PIL image → CHW tensor of the image's dtype, unscaled."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f'{self.__class__.__name__}()'


class ToPILImage:
    """CHW tensor / HWC ndarray → PIL image."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f'{self.__class__.__name__}(mode={self.mode})'


class ConvertImageDtype(_Transform):
    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(_Transform):
    """Per-channel ``(x - mean) / std``.

    >>> Normalize((0.5,), (0.5,))(ember.zeros(1, 1, 1)).item()
    -1.0
    """

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f'{self.__class__.__name__}(mean={self.mean}, std={self.std})'


class Resize(_Transform):
    """Resize to (h, w), or the smaller edge to ``size``."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)) and size is not None:
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size, self.max_size, self.antialias = size, max_size, antialias
        self.interpolation = _interp(interpolation)

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f'{self.__class__.__name__}(size={self.size}, interpolation={self.interpolation.value}, '
                f'max_size={self.max_size}, antialias={self.antialias})')


class CenterCrop(_Transform):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f'{self.__class__.__name__}(size={self.size})'


class Pad(_Transform):
    def __init__(self, padding, fill=0, padding_mode='constant'):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} "
                             "element tuple")
        if padding_mode not in ('constant', 'edge', 'reflect', 'symmetric'):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f'{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, '
                f'padding_mode={self.padding_mode})')


class Lambda:
    """Apply a user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f'{self.__class__.__name__}()'


class RandomApply(_Transform):
    """Apply all ``transforms`` with probability ``p`` (one ``ember.rand(1)`` draw)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if self.p < ember.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice:
    def __init__(self, transforms, p=None):
        self.transforms = transforms
        if p is not None and len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        total = sum(p) if p is not None else None
        self.p = [x / total for x in p] if p is not None else [1.0] * len(transforms)

    def __call__(self, *args):
        idx = int(ember.multinomial(ember.tensor(self.p), 1))
        return self.transforms[idx](*args)


class RandomOrder:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for i in ember.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img


class RandomCrop(_Transform):
    """A random ``size`` window, after optional padding."""

    @staticmethod
    def get_params(img, output_size):
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = ember.randint(0, h - th + 1, size=(1,)).item()
        j = ember.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode='constant'):
        super().__init__()
        self.size = tuple(_setup_size(size, "Please provide only two dimensions (h, w) for size."))
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f'{self.__class__.__name__}(size={self.size}, padding={self.padding})'


class RandomResizedCrop(_Transform):
    """A random area/aspect crop resized to ``size`` (the Inception crop)."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        self.scale, self.ratio, self.antialias = scale, ratio, antialias
        self.interpolation = _interp(interpolation)

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = ember.log(ember.tensor(ratio))
        for _ in range(10):
            target_area = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = ember.exp(ember.empty(1).uniform_(log_ratio[0].item(), log_ratio[1].item())).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = ember.randint(0, height - h + 1, size=(1,)).item()
                j = ember.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)     # fallback: central crop at the nearest allowed ratio
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return (f'{self.__class__.__name__}(size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, '
                f'ratio={tuple(round(r, 4) for r in self.ratio)}, interpolation={self.interpolation.value}, '
                f'antialias={self.antialias})')


class RandomHorizontalFlip(_Transform):
    """Flip left-right with probability ``p``."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        if ember.rand(1) < self.p:
            return F.hflip(img)
        return img

    def __repr__(self):
        return f'{self.__class__.__name__}(p={self.p})'


class RandomVerticalFlip(RandomHorizontalFlip):
    """Flip top-bottom with probability ``p``."""

    def forward(self, img):
        if ember.rand(1) < self.p:
            return F.vflip(img)
        return img


class RandomRotation(_Transform):
    """Rotate by an angle drawn uniformly from ``degrees``."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        self.interpolation, self.expand, self.center = _interp(interpolation), expand, center
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.fill = _setup_fill(fill)

    @staticmethod
    def get_params(degrees):
        return float(ember.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img):
        channels, _, _ = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        return (f'{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}, '
                f'expand={self.expand}, fill={self.fill})')


class ColorJitter(_Transform):
    """Random brightness, contrast, saturation and hue, applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, 'brightness')
        self.contrast = self._check_input(contrast, 'contrast')
        self.saturation = self._check_input(saturation, 'saturation')
        self.hue = self._check_input(hue, 'hue', center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float('inf')), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        fn_idx = ember.randperm(4)
        draw = lambda r: None if r is None else float(ember.empty(1).uniform_(r[0], r[1]).item())  # noqa: E731
        b = draw(brightness)
        c = draw(contrast)
        s = draw(saturation)
        h = draw(hue)
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return (f'{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, '
                f'saturation={self.saturation}, hue={self.hue})')


class Grayscale(_Transform):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.to_grayscale(img, self.num_output_channels)

    def __repr__(self):
        return f'{self.__class__.__name__}(num_output_channels={self.num_output_channels})'


class RandomGrayscale(_Transform):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels, _, _ = F.get_dimensions(img)
        if ember.rand(1) < self.p:
            return F.to_grayscale(img, num_output_channels=num_output_channels)
        return img


class GaussianBlur(_Transform):
    """Blur with a Gaussian kernel whose sigma is drawn uniformly from ``sigma`` (min, max) each call (a number:
    fixed)."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        if any(k <= 0 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return ember.empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img):
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class FiveCrop(_Transform):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def forward(self, img):
        return F.five_crop(img, self.size)


class RandomErasing(_Transform):
    """Erase a random rectangle of a tensor image with probability ``p`` (Zhong et al.)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != 'random':
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            from ember._warn import warnings
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = ember.log(ember.tensor(ratio))
        for _ in range(10):
            erase_area = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
            aspect_ratio = ember.exp(ember.empty(1).uniform_(log_ratio[0].item(), log_ratio[1].item())).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = ember.empty([img_c, h, w], dtype=ember.float32).normal_()
            else:
                v = ember.tensor(value)[:, None, None]
            i = ember.randint(0, img_h - h + 1, size=(1,)).item()
            j = ember.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img):
        if ember.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError("If value is a sequence, it should have either a single value or "
                                 f"{img.shape[-3]} (number of input channels)")
            x, y, h, w, v = self.get_params(img, self.scale, self.ratio, value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img


class TenCrop(_Transform):
    """The four corner crops and the central crop of the image and of its mirror image (``F.ten_crop``)."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        self.vertical_flip = vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f'{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})'


class RandomAffine(_Transform):
    """Rotate, translate, scale and shear about the centre by amounts drawn each call: an angle from
    ``degrees``, shifts up to ``translate`` (fractions of width and height, rounded to pixels), a zoom from
    ``scale`` and an x shear (then a y shear when ``shear`` has four values), in that order.

    >>> RandomAffine(0)(ember.arange(4.).view(1, 2, 2)).view(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        self.interpolation = _interp(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            if not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            if any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        self.translate, self.scale = translate, scale
        self.shear = None if shear is None else _setup_angle(shear, name="shear", req_sizes=(2, 4))
        self.fill = _setup_fill(fill)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """``(angle, (tx, ty), scale, (shear_x, shear_y))`` for ``img_size`` = ``[width, height]``."""
        draw = lambda lo, hi: float(ember.empty(1).uniform_(lo, hi).item())     # noqa: E731
        angle = draw(float(degrees[0]), float(degrees[1]))
        translations = (0, 0)
        if translate is not None:
            max_dx, max_dy = float(translate[0] * img_size[0]), float(translate[1] * img_size[1])
            tx = int(round(draw(-max_dx, max_dx)))
            translations = (tx, int(round(draw(-max_dy, max_dy))))
        scale = 1.0 if scale_ranges is None else draw(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = draw(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = draw(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self):
        s = f'{self.__class__.__name__}(degrees={self.degrees}'
        s += f', translate={self.translate}' if self.translate is not None else ''
        s += f', scale={self.scale}' if self.scale is not None else ''
        s += f', shear={self.shear}' if self.shear is not None else ''
        s += f', interpolation={self.interpolation.value}' if self.interpolation != InterpolationMode.NEAREST else ''
        s += f', fill={self.fill}' if self.fill != 0 else ''
        s += f', center={self.center}' if self.center is not None else ''
        return s + ')'


class RandomPerspective(_Transform):
    """With probability ``p``, move each corner inwards by up to ``distortion_scale`` of half the width/height
    (drawn per call) and warp the image accordingly (``F.perspective``)."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.p, self.distortion_scale = p, distortion_scale
        self.interpolation = _interp(interpolation)
        self.fill = _setup_fill(fill)

    @staticmethod
    def get_params(width, height, distortion_scale):
        """``(startpoints, endpoints)``: the image's corners and where they go, top-left first, clockwise."""
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))
        near = lambda d: int(ember.randint(0, d + 1, size=(1,)).item())                 # noqa: E731
        far = lambda d, n: int(ember.randint(n - d - 1, n, size=(1,)).item())           # noqa: E731
        topleft = [near(dx), near(dy)]
        topright = [far(dx, width), near(dy)]
        botright = [far(dx, width), far(dy, height)]
        botleft = [near(dx), far(dy, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        if ember.rand(1) < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    def __repr__(self):
        return f'{self.__class__.__name__}(p={self.p})'


class LinearTransformation(_Transform):
    """Flatten each ``C × H × W`` tensor image, subtract ``mean_vector`` and multiply by
    ``transformation_matrix`` (``D × D``, ``D = C * H * W``; e.g. a ZCA whitening matrix). Tensors only.

    >>> LinearTransformation(2 * ember.eye(2), ember.zeros(2))(ember.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0]]]
    """

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        if transformation_matrix.size(0) != transformation_matrix.size(1):
            raise ValueError("transformation_matrix should be square. Got "
                             f"{tuple(transformation_matrix.size())} rectangular matrix.")
        if mean_vector.size(0) != transformation_matrix.size(0):
            raise ValueError(f"mean_vector should have the same length {mean_vector.size(0)} as any one of the "
                             f"dimensions of the transformation_matrix [{tuple(transformation_matrix.size())}]")
        if transformation_matrix.device != mean_vector.device:
            raise ValueError(f"Input tensors should be on the same device. Got {transformation_matrix.device} and "
                             f"{mean_vector.device}")
        if transformation_matrix.dtype != mean_vector.dtype:
            raise ValueError(f"Input tensors should have the same dtype. Got {transformation_matrix.dtype} and "
                             f"{mean_vector.dtype}")
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def forward(self, tensor):
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError("Input tensor and transformation matrix have incompatible shape."
                             f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != {self.transformation_matrix.shape[0]}")
        if tensor.device.type != self.mean_vector.device.type:
            raise ValueError("Input tensor should be on the same device as transformation matrix and mean vector. "
                             f"Got {tensor.device} vs {self.mean_vector.device}")
        flat = tensor.reshape(-1, n) - self.mean_vector
        return ember.mm(flat, self.transformation_matrix.to(flat.dtype)).reshape(shape)

    def __repr__(self):
        return (f'{self.__class__.__name__}(transformation_matrix={self.transformation_matrix.tolist()}, '
                f'mean_vector={self.mean_vector.tolist()})')


class _RandomImageOp(_Transform):
    """An ``F`` colour op (``_op``, with the arguments named in ``_args``) applied with probability ``p``: one
    ``ember.rand(1)`` draw per call, as torchvision's Random{Invert, Posterize, ...}."""
    _op, _args = None, ()

    def __init__(self, *args, p=0.5):
        super().__init__()
        if len(args) != len(self._args):
            raise TypeError(f"{type(self).__name__}() takes {', '.join(self._args + ('p',))}")
        for name, value in zip(self._args, args):
            setattr(self, name, value)
        self.p = p

    def forward(self, img):
        if ember.rand(1).item() < self.p:
            return getattr(F, self._op)(img, *(getattr(self, a) for a in self._args))
        return img

    def __repr__(self):
        return f"{self.__class__.__name__}({''.join(f'{a}={getattr(self, a)},' for a in self._args)}p={self.p})"


class RandomInvert(_RandomImageOp):
    """Invert the colours (``F.invert``) with probability ``p``."""
    _op = 'invert'

    def __init__(self, p=0.5):
        super().__init__(p=p)


class RandomPosterize(_RandomImageOp):
    """Keep ``bits`` bits per channel (``F.posterize``) with probability ``p``."""
    _op, _args = 'posterize', ('bits',)

    def __init__(self, bits, p=0.5):
        super().__init__(bits, p=p)


class RandomSolarize(_RandomImageOp):
    """Invert the values at or above ``threshold`` (``F.solarize``) with probability ``p``."""
    _op, _args = 'solarize', ('threshold',)

    def __init__(self, threshold, p=0.5):
        super().__init__(threshold, p=p)


class RandomAdjustSharpness(_RandomImageOp):
    """Sharpen by ``sharpness_factor`` (``F.adjust_sharpness``) with probability ``p``."""
    _op, _args = 'adjust_sharpness', ('sharpness_factor',)

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(sharpness_factor, p=p)


class RandomAutocontrast(_RandomImageOp):
    """Stretch each channel to the full range (``F.autocontrast``) with probability ``p``."""
    _op = 'autocontrast'

    def __init__(self, p=0.5):
        super().__init__(p=p)


class RandomEqualize(_RandomImageOp):
    """Equalise the histogram (``F.equalize``) with probability ``p``."""
    _op = 'equalize'

    def __init__(self, p=0.5):
        super().__init__(p=p)
