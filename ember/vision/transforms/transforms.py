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
           'RandomChoice', 'RandomOrder', 'RandomErasing', 'FiveCrop', 'GaussianBlur', 'InterpolationMode']


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return tuple(size)


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
        if isinstance(degrees, numbers.Number):
            if degrees < 0:
                raise ValueError("If degrees is a single number, it must be positive.")
            degrees = [-degrees, degrees]
        elif not (isinstance(degrees, Sequence) and len(degrees) == 2):
            raise ValueError("If degrees is a sequence, it must be of len 2.")
        self.degrees = [float(d) for d in degrees]
        self.interpolation, self.expand, self.center = _interp(interpolation), expand, center
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees):
        return float(ember.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img):
        fill = self.fill
        channels, _, _ = F.get_dimensions(img)
        if isinstance(img, ember.Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [float(f) for f in fill]
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
