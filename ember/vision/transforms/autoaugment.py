"""``torchvision.transforms`` automatic augmentation: AutoAugment, RandAugment, TrivialAugmentWide and AugMix.

Each policy picks image operations (shear, translate, rotate, colour, posterize, ...) and their magnitudes at
random and applies them with ``functional``'s ops, to a PIL image or a uint8 tensor ``(..., 1 or 3, H, W)``
(float tensors work where every op drawn does: ``posterize`` and ``equalize`` take uint8 only, as
torchvision's). NOTE [augmentation draws]: the choices come from ember's RNG through the same calls, with the
same arguments and in the same order as torchvision's (``ember.randint(n, (1,))`` for an op, another for a
magnitude bin where the policy draws one, ``ember.randint(2, (1,))`` for the sign of a signed op only;
AutoAugment's ``get_params`` draws a sub-policy, two probabilities and two signs at once; AugMix draws its
Dirichlet weights first). As ember's generator gives torch's numbers for a seed, a seeded pipeline chooses the
ops and magnitudes torchvision does. The magnitudes are ``ember.linspace`` bins, float32 as torch's, so a
chosen bin's value matches to the bit.
"""
import math
from enum import Enum

import ember

from . import functional as F
from .functional import InterpolationMode
from .transforms import _tensor_fill

__all__ = ['AutoAugmentPolicy', 'AutoAugment', 'RandAugment', 'TrivialAugmentWide', 'AugMix']


def _shear(axis):
    """A shear about the top-left corner; the policies give its slope, ``affine`` takes degrees."""
    def op(img, magnitude, interpolation, fill):
        degrees = math.degrees(math.atan(magnitude))
        shear = [degrees, 0.0] if axis == 0 else [0.0, degrees]
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=shear, interpolation=interpolation,
                        fill=fill, center=[0, 0])
    return op


def _translate(axis):
    def op(img, magnitude, interpolation, fill):
        shift = [int(magnitude), 0] if axis == 0 else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=shift, scale=1.0, shear=[0.0, 0.0], interpolation=interpolation,
                        fill=fill)
    return op


def _enhance(fn):
    """Colour ops take a factor around 1: magnitude 0 leaves the image unchanged."""
    return lambda img, magnitude, interpolation, fill: fn(img, 1.0 + magnitude)


_OPS = {
    'Identity': lambda img, magnitude, interpolation, fill: img,
    'ShearX': _shear(0),
    'ShearY': _shear(1),
    'TranslateX': _translate(0),
    'TranslateY': _translate(1),
    'Rotate': lambda img, magnitude, interpolation, fill: F.rotate(img, magnitude, interpolation=interpolation,
                                                                 fill=fill),
    'Brightness': _enhance(F.adjust_brightness),
    'Color': _enhance(F.adjust_saturation),
    'Contrast': _enhance(F.adjust_contrast),
    'Sharpness': _enhance(F.adjust_sharpness),
    'Posterize': lambda img, magnitude, interpolation, fill: F.posterize(img, int(magnitude)),
    'Solarize': lambda img, magnitude, interpolation, fill: F.solarize(img, magnitude),
    'AutoContrast': lambda img, magnitude, interpolation, fill: F.autocontrast(img),
    'Equalize': lambda img, magnitude, interpolation, fill: F.equalize(img),
    'Invert': lambda img, magnitude, interpolation, fill: F.invert(img),
}


def _apply_op(img, op_name, magnitude, interpolation, fill):
    """Apply the operation named ``op_name`` with ``magnitude`` (a shear slope, pixels, degrees, a factor - 1,
    bits or a threshold, by op)."""
    if op_name not in _OPS:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return _OPS[op_name](img, magnitude, interpolation, fill)


def _bins(stop, num_bins):
    return ember.linspace(0.0, stop, num_bins)


def _posterize_bins(top, levels, num_bins):
    """Bits from ``top`` down to ``top - levels`` over the bins (more bins, fewer bits: a stronger op)."""
    return (top - (ember.arange(num_bins) / ((num_bins - 1) / levels)).round().int())


def _space(num_bins, shear, translate_hw, rotate, enhance, posterize_levels, posterize_top=8):
    """An augmentation space: op name → (magnitude bins, signed), in the order ops are drawn by index."""
    return {
        'ShearX': (_bins(shear, num_bins), True),
        'ShearY': (_bins(shear, num_bins), True),
        'TranslateX': (_bins(translate_hw[1], num_bins), True),
        'TranslateY': (_bins(translate_hw[0], num_bins), True),
        'Rotate': (_bins(rotate, num_bins), True),
        'Brightness': (_bins(enhance, num_bins), True),
        'Color': (_bins(enhance, num_bins), True),
        'Contrast': (_bins(enhance, num_bins), True),
        'Sharpness': (_bins(enhance, num_bins), True),
        'Posterize': (_posterize_bins(posterize_top, posterize_levels, num_bins), False),
        'Solarize': (ember.linspace(255.0, 0.0, num_bins), False),
        'AutoContrast': (ember.tensor(0.0), False),
        'Equalize': (ember.tensor(0.0), False),
    }


class AutoAugmentPolicy(Enum):
    """The AutoAugment policies learned on ImageNet, CIFAR10 and SVHN."""
    IMAGENET = 'imagenet'
    CIFAR10 = 'cifar10'
    SVHN = 'svhn'


# The sub-policies of "AutoAugment: Learning Augmentation Strategies from Data" (Cubuk et al., 2018), one a line:
# two (op, probability, magnitude bin out of 10) steps; ``-`` marks an op without a magnitude.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: """
        Posterize 0.4 8     Rotate 0.6 9
        Solarize 0.6 5      AutoContrast 0.6 -
        Equalize 0.8 -      Equalize 0.6 -
        Posterize 0.6 7     Posterize 0.6 6
        Equalize 0.4 -      Solarize 0.2 4
        Equalize 0.4 -      Rotate 0.8 8
        Solarize 0.6 3      Equalize 0.6 -
        Posterize 0.8 5     Equalize 1.0 -
        Rotate 0.2 3        Solarize 0.6 8
        Equalize 0.6 -      Posterize 0.4 6
        Rotate 0.8 8        Color 0.4 0
        Rotate 0.4 9        Equalize 0.6 -
        Equalize 0.0 -      Equalize 0.8 -
        Invert 0.6 -        Equalize 1.0 -
        Color 0.6 4         Contrast 1.0 8
        Rotate 0.8 8        Color 1.0 2
        Color 0.8 8         Solarize 0.8 7
        Sharpness 0.4 7     Invert 0.6 -
        ShearX 0.6 5        Equalize 1.0 -
        Color 0.4 0         Equalize 0.6 -
        Equalize 0.4 -      Solarize 0.2 4
        Solarize 0.6 5      AutoContrast 0.6 -
        Invert 0.6 -        Equalize 1.0 -
        Color 0.6 4         Contrast 1.0 8
        Equalize 0.8 -      Equalize 0.6 -
    """,
    AutoAugmentPolicy.CIFAR10: """
        Invert 0.1 -        Contrast 0.2 6
        Rotate 0.7 2        TranslateX 0.3 9
        Sharpness 0.8 1     Sharpness 0.9 3
        ShearY 0.5 8        TranslateY 0.7 9
        AutoContrast 0.5 -  Equalize 0.9 -
        ShearY 0.2 7        Posterize 0.3 7
        Color 0.4 3         Brightness 0.6 7
        Sharpness 0.3 9     Brightness 0.7 9
        Equalize 0.6 -      Equalize 0.5 -
        Contrast 0.6 7      Sharpness 0.6 5
        Color 0.7 7         TranslateX 0.5 8
        Equalize 0.3 -      AutoContrast 0.4 -
        TranslateY 0.4 3    Sharpness 0.2 6
        Brightness 0.9 6    Color 0.2 8
        Solarize 0.5 2      Invert 0.0 -
        Equalize 0.2 -      AutoContrast 0.6 -
        Equalize 0.2 -      Equalize 0.6 -
        Color 0.9 9         Equalize 0.6 -
        AutoContrast 0.8 -  Solarize 0.2 8
        Brightness 0.1 3    Color 0.7 0
        Solarize 0.4 5      AutoContrast 0.9 -
        TranslateY 0.9 9    TranslateY 0.7 9
        AutoContrast 0.9 -  Solarize 0.8 3
        Equalize 0.8 -      Invert 0.1 -
        TranslateY 0.7 9    AutoContrast 0.9 -
    """,
    AutoAugmentPolicy.SVHN: """
        ShearX 0.9 4        Invert 0.2 -
        ShearY 0.9 8        Invert 0.7 -
        Equalize 0.6 -      Solarize 0.6 6
        Invert 0.9 -        Equalize 0.6 -
        Equalize 0.6 -      Rotate 0.9 3
        ShearX 0.9 4        AutoContrast 0.8 -
        ShearY 0.9 8        Invert 0.4 -
        ShearY 0.9 5        Solarize 0.2 6
        Invert 0.9 -        AutoContrast 0.8 -
        Equalize 0.6 -      Rotate 0.9 3
        ShearX 0.9 4        Solarize 0.3 3
        ShearY 0.8 8        Invert 0.7 -
        Equalize 0.9 -      TranslateY 0.6 6
        Invert 0.9 -        Equalize 0.6 -
        Contrast 0.3 3      Rotate 0.8 4
        Invert 0.8 -        TranslateY 0.0 2
        ShearY 0.7 6        Solarize 0.4 8
        Invert 0.6 -        Rotate 0.8 4
        ShearY 0.3 7        TranslateX 0.9 3
        ShearX 0.1 6        Invert 0.6 -
        Solarize 0.7 2      TranslateY 0.6 7
        ShearY 0.8 4        Invert 0.8 -
        ShearX 0.7 9        TranslateY 0.8 3
        ShearY 0.8 5        AutoContrast 0.7 -
        ShearX 0.7 2        Invert 0.1 -
    """,
}


def _parse_policy(text):
    """The table's lines → ``[((op, p, bin or None), (op, p, bin or None)), ...]``, torchvision's layout."""
    def step(name, p, magnitude_id):
        return name, float(p), None if magnitude_id == '-' else int(magnitude_id)
    policies = []
    for line in text.strip().splitlines():
        w = line.split()
        policies.append((step(*w[:3]), step(*w[3:])))
    return policies


class AutoAugment(ember.nn.Module):
    """AutoAugment (Cubuk et al., 2018): one of the policy's 25 sub-policies, each of its two ops applied with its
    probability, its magnitude bin (of 10) signed at random where the op is signed.

    >>> out = AutoAugment()(ember.zeros(3, 8, 8, dtype=ember.uint8))
    >>> out.shape, out.dtype
    (ember.Size([3, 8, 8]), ember.uint8)
    """

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _parse_policy(_POLICIES[policy])

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, 0.3, [150.0 / 331.0 * s for s in image_size], 30.0, 0.9, 4)
        space['Invert'] = (ember.tensor(0.0), False)
        return space

    @staticmethod
    def get_params(transform_num):
        """(sub-policy index, two probabilities, two signs): the draws of one call (NOTE [augmentation draws])."""
        policy_id = int(ember.randint(transform_num, (1,)).item())
        probs = ember.rand((2,))
        signs = ember.randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id].item()) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude = -magnitude
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f'{self.__class__.__name__}(policy={self.policy}, fill={self.fill})'


class RandAugment(ember.nn.Module):
    """RandAugment (Cubuk et al., 2019): ``num_ops`` ops drawn uniformly (with replacement), each at the fixed
    bin ``magnitude`` of ``num_magnitude_bins``, signed at random where the op is signed.

    >>> RandAugment(num_ops=3)(ember.zeros(1, 8, 8, dtype=ember.uint8)).shape
    ember.Size([1, 8, 8])
    """

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, 0.3, [150.0 / 331.0 * s for s in image_size], 30.0, 0.9, 4)
        return {'Identity': (ember.tensor(0.0), False), **space}

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        names = list(op_meta)
        for _ in range(self.num_ops):
            op_name = names[int(ember.randint(len(op_meta), (1,)).item())]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            negate = signed and bool(ember.randint(2, (1,)))     # drawn for signed ops only
            img = _apply_op(img, op_name, -magnitude if negate else magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f'{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, '
                f'num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, '
                f'fill={self.fill})')


def _random_op(op_meta, names, num_bins):
    """One op of ``op_meta`` with a random bin of the first ``num_bins`` and a random sign where signed: the
    draws TrivialAugmentWide and AugMix's chains make, in their order."""
    op_name = names[int(ember.randint(len(op_meta), (1,)).item())]
    magnitudes, signed = op_meta[op_name]
    magnitude = 0.0
    if magnitudes.ndim > 0:
        magnitude = float(magnitudes[ember.randint(num_bins, (1,), dtype=ember.long)].item())
    negate = signed and bool(ember.randint(2, (1,)))
    return op_name, -magnitude if negate else magnitude


class TrivialAugmentWide(ember.nn.Module):
    """TrivialAugment Wide (Müller and Hutter, 2021): one op drawn uniformly, with a uniformly drawn bin of
    ``num_magnitude_bins`` over wider ranges than RandAugment's.

    >>> TrivialAugmentWide()(ember.zeros(3, 8, 8, dtype=ember.uint8)).dtype
    ember.uint8
    """

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        space = _space(num_bins, 0.99, [32.0, 32.0], 135.0, 0.99, 6)
        return {'Identity': (ember.tensor(0.0), False), **space}

    def forward(self, img):
        channels, _, _ = F.get_dimensions(img)
        fill = _tensor_fill(self.fill, img, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_name, magnitude = _random_op(op_meta, list(op_meta), self.num_magnitude_bins)
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self):
        return (f'{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, '
                f'interpolation={self.interpolation}, fill={self.fill})')


class AugMix(ember.nn.Module):
    """AugMix (Hendrycks et al., 2019): ``mixture_width`` chains of ``chain_depth`` random ops (1 to 3 when
    negative), each op at a random bin below ``severity``; the chains are mixed with Dirichlet(``alpha``) weights
    and the mixture blended with the original image by a Beta(``alpha``, ``alpha``) weight.

    >>> AugMix()(ember.zeros(2, 3, 8, 8, dtype=ember.uint8)).shape
    ember.Size([2, 3, 8, 8])
    """
    _PARAMETER_MAX = 10

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__()
        if not (1 <= severity <= self._PARAMETER_MAX):
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got {severity} instead.")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        space = _space(num_bins, 0.3, [s / 3.0 for s in image_size], 30.0, 0.9, 4, posterize_top=4)
        colour = ('Brightness', 'Color', 'Contrast', 'Sharpness')
        # torchvision lists the colour ops last (they are drawn by index), and only with all_ops
        ordered = {k: v for k, v in space.items() if k not in colour}
        if self.all_ops:
            ordered.update({k: space[k] for k in colour})
        return ordered

    def _sample_dirichlet(self, params):
        return ember._sample_dirichlet(params)

    def forward(self, orig_img):
        channels, height, width = F.get_dimensions(orig_img)
        is_tensor = isinstance(orig_img, ember.Tensor)
        img = orig_img if is_tensor else F.pil_to_tensor(orig_img)
        fill = _tensor_fill(self.fill, img, channels)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        names = list(op_meta)
        orig_dims = list(img.shape)
        batch = img.view([1] * max(4 - img.ndim, 0) + orig_dims)
        n = batch.shape[0]
        batch_dims = [n] + [1] * (batch.ndim - 1)
        # column 0: the original's weight, column 1: the chains' (a Beta draw as a 2-way Dirichlet)
        m = self._sample_dirichlet(ember.tensor([self.alpha, self.alpha]).expand(n, -1))
        weights = self._sample_dirichlet(ember.tensor([self.alpha] * self.mixture_width).expand(n, -1))
        weights = weights * m[:, 1].view([n, -1])
        mix = m[:, 0].view(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = self.chain_depth if self.chain_depth > 0 else int(ember.randint(low=1, high=4, size=(1,)).item())
            for _ in range(depth):
                op_name, magnitude = _random_op(op_meta, names, self.severity)
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            mix.add_(weights[:, i].view(batch_dims) * aug)
        mix = mix.view(orig_dims).to(dtype=img.dtype)
        return mix if is_tensor else F.to_pil_image(mix)

    def __repr__(self):
        return (f'{self.__class__.__name__}(severity={self.severity}, mixture_width={self.mixture_width}, '
                f'chain_depth={self.chain_depth}, alpha={self.alpha}, all_ops={self.all_ops}, '
                f'interpolation={self.interpolation}, fill={self.fill})')
