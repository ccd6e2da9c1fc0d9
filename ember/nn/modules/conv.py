"""Convolutions: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``, with torch's argument checks, padding
modes ('zeros', 'reflect', 'replicate', 'circular'), ``padding='same'|'valid'``, parameters and reprs."""
import math

from ..._warn import warnings

from ... import _functions as _E
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _single, _pair, _triple, _reverse_repeat_tuple

__all__ = ['Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d', 'LazyConv1d',
           'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d']


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {'same', 'valid'}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == 'same' and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {'zeros', 'reflect', 'replicate', 'circular'}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            rp = [0, 0] * len(kernel_size)
            if padding == 'same':
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    rp[2 * i] = total // 2
                    rp[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = rp
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_E.empty(shape + tuple(kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_E.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = '{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}'
        if self.padding != (0,) * len(self.padding):
            s += ', padding={padding}'
        if self.dilation != (1,) * len(self.dilation):
            s += ', dilation={dilation}'
        if self.output_padding != (0,) * len(self.output_padding):
            s += ', output_padding={output_padding}'
        if self.groups != 1:
            s += ', groups={groups}'
        if self.bias is None:
            s += ', bias=False'
        if self.padding_mode != 'zeros':
            s += ', padding_mode={padding_mode}'
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, 'padding_mode'):
            self.padding_mode = 'zeros'

    def _conv_forward(self, input, weight, bias):
        fn = self._fn
        if self.padding_mode != 'zeros':
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, self._zero, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


def _conv_class(n, tup, fn_name):
    class Conv(_ConvNd):
        _zero = tup(0)

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode='zeros', device=None, dtype=None):
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                             padding if isinstance(padding, str) else tup(padding), tup(dilation), False, tup(0),
                             groups, bias, padding_mode, device, dtype)

        @property
        def _fn(self):
            return getattr(F, fn_name)
    Conv.__name__ = Conv.__qualname__ = f'Conv{n}d'
    Conv.__doc__ = f"""{n}-d convolution over an input of shape (N, C_in, *spatial) or (C_in, *spatial).

    ``weight``: (out_channels, in_channels // groups, *kernel_size); ``bias``: (out_channels,); both
    initialised like torch's (kaiming_uniform_ with a=sqrt(5), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
    """
    return Conv


Conv1d = _conv_class(1, _single, 'conv1d')
Conv2d = _conv_class(2, _pair, 'conv2d')
Conv3d = _conv_class(3, _triple, 'conv3d')


class _ConvTransposeNd(_ConvNd):
    _n = 0

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        nn_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == nn_dims + num_spatial_dims:
            output_size = output_size[nn_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {nn_dims + num_spatial_dims} elements (got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + nn_dims) - 1) * stride[d] - 2 * padding[d] +
                        (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(dim_size + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != 'zeros':
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._n
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, n,
                                              self.dilation)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                        self.dilation)


def _conv_transpose_class(n, tup, fn_name):
    class ConvT(_ConvTransposeNd):
        _n = n

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None):
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride), tup(padding),
                             tup(dilation), True, tup(output_padding), groups, bias, padding_mode, device, dtype)

        @property
        def _fn(self):
            return getattr(F, fn_name)
    ConvT.__name__ = ConvT.__qualname__ = f'ConvTranspose{n}d'
    ConvT.__doc__ = f"""{n}-d transposed convolution; ``weight``: (in_channels, out_channels // groups,
    *kernel_size). ``forward(input, output_size=None)`` picks ``output_padding`` from ``output_size``."""
    return ConvT


ConvTranspose1d = _conv_transpose_class(1, _single, 'conv_transpose1d')
ConvTranspose2d = _conv_transpose_class(2, _pair, 'conv_transpose2d')
ConvTranspose3d = _conv_transpose_class(3, _triple, 'conv_transpose3d')


# --- lazy convolutions (NOTE [lazy parameters]) ----------------------------------------------------------------


class _ConvTransposeMixin(_ConvTransposeNd):
    """torch's deprecated internal base of the transposed convolutions, which old code still imports by name."""

    def __init__(self, *args, **kwargs):
        warnings.warn("_ConvTransposeMixin is a deprecated internal class. Please consider using public APIs.")
        super().__init__(*args, **kwargs)

class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input's channel dimension (dim 1 batched, dim 0 unbatched)."""
    _n = 0

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._n + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv_class(base, n):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base
        _n = n

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode='zeros', device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, device, dtype)
    LazyConv.__name__ = LazyConv.__qualname__ = f'Lazy{base.__name__}'
    LazyConv.__doc__ = f"""A {base.__name__} whose ``in_channels`` is read from its first input; it becomes a
    {base.__name__} then (NOTE [lazy parameters])."""
    return LazyConv


def _lazy_conv_transpose_class(base, n):
    class LazyConvT(_LazyConvXdMixin, base):
        cls_to_become = base
        _n = n

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode='zeros', device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device, dtype)
            self._lazy_init(out_channels, bias, device, dtype)
    LazyConvT.__name__ = LazyConvT.__qualname__ = f'Lazy{base.__name__}'
    LazyConvT.__doc__ = f"""A {base.__name__} whose ``in_channels`` is read from its first input; it becomes a
    {base.__name__} then (NOTE [lazy parameters])."""
    return LazyConvT


LazyConv1d = _lazy_conv_class(Conv1d, 1)
LazyConv2d = _lazy_conv_class(Conv2d, 2)
LazyConv3d = _lazy_conv_class(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose_class(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose_class(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose_class(ConvTranspose3d, 3)
