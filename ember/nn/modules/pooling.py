"""Pooling modules: max, average and adaptive pooling over 1-3 spatial dims (torch's arguments and reprs)."""
from .. import functional as F
from .module import Module
from .utils import _single, _pair, _triple

__all__ = ['MaxPool1d', 'MaxPool2d', 'MaxPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d', 'AdaptiveAvgPool1d',
           'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d',
           'LPPool1d', 'LPPool2d', 'MaxUnpool1d', 'MaxUnpool2d', 'LPPool3d', 'MaxUnpool3d', 'FractionalMaxPool2d', 'FractionalMaxPool3d']


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return ('kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, '
                'ceil_mode={ceil_mode}'.format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    _fn = 'max_pool1d'


class MaxPool2d(_MaxPoolNd):
    """Max over windows of ``kernel_size`` (stride defaults to the kernel size)."""
    _fn = 'max_pool2d'


class MaxPool3d(_MaxPoolNd):
    _fn = 'max_pool3d'


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                    self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class AvgPool2d(_AvgPoolNd):
    _fn = 'avg_pool2d'


class AvgPool3d(_AvgPoolNd):
    _fn = 'avg_pool3d'


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self):
        return f'output_size={self.output_size}'


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _fn = 'adaptive_avg_pool1d'


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _fn = 'adaptive_avg_pool2d'


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _fn = 'adaptive_avg_pool3d'


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f'output_size={self.output_size}'


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _fn = 'adaptive_max_pool1d'


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _fn = 'adaptive_max_pool2d'


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _fn = 'adaptive_max_pool3d'


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return ('norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, '
                'ceil_mode={ceil_mode}'.format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    _fn = 'lp_pool1d'


class LPPool2d(_LPPoolNd):
    _fn = 'lp_pool2d'


class _MaxUnpoolNd(Module):
    _fn = None
    _tuple = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        tup = type(self)._tuple
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of MaxPool1d given its ``indices``: maxima back in place, zeros elsewhere."""
    _fn = 'max_unpool1d'
    _tuple = staticmethod(_single)


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = 'max_unpool2d'
    _tuple = staticmethod(_pair)


class LPPool3d(_LPPoolNd):
    _fn = 'lp_pool3d'


class MaxUnpool3d(_MaxUnpoolNd):
    _fn = 'max_unpool3d'
    _tuple = staticmethod(_triple)


class _FractionalMaxPoolNd(Module):
    """Max pooling over windows at pseudo-random positions (F.fractional_max_pool2d); ``_random_samples``, when
    given, fixes the positions (a buffer, as torch's)."""
    _fn = None
    _tuple = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer('_random_samples', _random_samples)
        self.output_size = self._tuple(output_size) if output_size is not None else None
        self.output_ratio = self._tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.output_size, self.output_ratio,
                                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _fn = 'fractional_max_pool2d'
    _tuple = staticmethod(_pair)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _fn = 'fractional_max_pool3d'
    _tuple = staticmethod(_triple)
