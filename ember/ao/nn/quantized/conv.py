"""Quantized 2-d convolution (and its ReLU fusion in ember.ao.nn.intrinsic.quantized): int32 accumulation of
(x - x_zp)(w - w_zp) per output channel, requantized to the layer's ``scale`` and ``zero_point``."""
import ember
from ember import nn
from ._utils import _quantize_weight, _weight_observer, _activation_qparams, _observed_float_module

qops = ember.ops.quantized


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(nn.Module):
    """A 2-d convolution over quint8 activations with a qint8 weight (state dict keys: weight, bias, scale,
    zero_point, as torch's).

    >>> m = Conv2d(1, 2, 3)
    >>> m(ember.quantize_per_tensor(ember.ones(1, 1, 4, 4), 0.1, 0, ember.quint8)).shape
    ember.Size([1, 2, 2, 2])
    """
    _FLOAT_MODULE = (nn.Conv2d,)
    _NAME = 'QuantizedConv2d'
    _op = staticmethod(lambda *a: qops._conv2d_unpacked(*a))

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', device=None, dtype=None):
        super().__init__()
        if padding_mode != 'zeros':
            raise NotImplementedError("ember's quantized convolution pads with zeros only")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.output_padding, self.transposed, self.padding_mode = (0, 0), False, padding_mode
        shape = (out_channels, in_channels // groups) + self.kernel_size
        qweight = ember._make_per_tensor_quantized_tensor(ember.zeros(shape, dtype=ember.int8), 1.0, 0)
        self.set_weight_bias(qweight, ember.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return self._NAME

    def set_weight_bias(self, w, b):
        self._weight, self._bias = w, b

    def _weight_bias(self):
        return self._weight, self._bias

    def weight(self):
        return self._weight

    def bias(self):
        """The float bias as torch's packed convolution hands it out: a Parameter (None without one)."""
        return None if self._bias is None else nn.Parameter(self._bias)

    def extra_repr(self):
        s = (f'{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, '
             f'scale={self.scale}, zero_point={self.zero_point}')
        if self.padding != (0, 0):
            s += f', padding={self.padding}'
        if self.dilation != (1, 1):
            s += f', dilation={self.dilation}'
        if self.groups != 1:
            s += f', groups={self.groups}'
        if self._bias is None:
            s += ', bias=False'
        return s

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return self._op(input, self._weight, self._bias, list(self.stride), list(self.padding), list(self.dilation),
                        self.groups, float(self.scale), int(self.zero_point))

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + 'weight'], destination[prefix + 'bias'] = self._weight, self.bias()
        destination[prefix + 'scale'] = ember.tensor(self.scale)
        destination[prefix + 'zero_point'] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.set_weight_bias(state_dict.pop(prefix + 'weight'), state_dict.pop(prefix + 'bias'))
        self.scale = float(state_dict.pop(prefix + 'scale'))
        self.zero_point = int(state_dict.pop(prefix + 'zero_point'))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized convolution of an observed float, fused or QAT convolution (batch norm folded in)."""
        act = _activation_qparams(mod)
        mod, wpp = _observed_float_module(cls, mod, nn.utils.fusion.fuse_conv_bn_weights)
        obs = _weight_observer(mod, wpp)
        q = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                mod.groups, mod.bias is not None, mod.padding_mode)
        q.set_weight_bias(_quantize_weight(mod.weight.float(), obs),
                          None if mod.bias is None else mod.bias.detach().float())
        q.scale, q.zero_point = act
        return q
