"""ember.ao.nn.intrinsic.qat: the fused modules for quantization-aware training. ConvBn2d keeps the batch norm
and trains it, with the weight fake-quantized after the batch norm's scale is folded in (torch's approximation:
``conv(x, fq(w * gamma / std)) / (gamma / std) + b`` then the batch norm)."""
import math

import ember
from ember import nn
from ember.nn import functional as F
from .. import qat as nnqat

__all__ = ['ConvReLU2d', 'ConvBn2d', 'ConvBnReLU2d', 'LinearReLU', 'freeze_bn_stats', 'update_bn_stats']


class LinearReLU(nnqat.Linear):
    """A QAT Linear followed by ReLU."""

    def forward(self, input):
        return F.relu(super().forward(input))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return super().from_float(mod)


class ConvReLU2d(nnqat.Conv2d):
    """A QAT Conv2d followed by ReLU."""

    def forward(self, input):
        return F.relu(super().forward(input))


class ConvBn2d(nnqat.Conv2d):
    """Conv2d and BatchNorm2d trained together, the folded weight fake-quantized."""
    _RELU = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=None,
                 padding_mode='zeros', eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, qconfig=qconfig)
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = nn.BatchNorm2d(out_channels, eps, momentum, True, True)
        if bias:
            self.bias = nn.Parameter(ember.empty(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_bn_parameters(self):
        """As torch's: fresh statistics, the batch norm's weight uniform in [0, 1), its bias zero, and the
        convolution's bias uniform in +-1/sqrt(fan_in) (these draws come after the weight's, from the global
        generator, so a seeded program draws what it draws under torch)."""
        self.bn.reset_running_stats()
        nn.init.uniform_(self.bn.weight)
        nn.init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            nn.init.uniform_(self.bias, -bound, bound)

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def _forward(self, input):
        running_std = ember.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1, 1, 1))
        zero_bias = ember.zeros(self.out_channels, dtype=input.dtype)
        conv = self._conv_forward(input, scaled_weight, zero_bias) / scale_factor.reshape(1, -1, 1, 1)
        if self.bias is not None:
            conv = conv + self.bias.reshape(1, -1, 1, 1)
        return self.bn(conv)

    def forward(self, input):
        out = self._forward(input)
        return F.relu(out) if self._RELU else out

    def train(self, mode=True):
        self.training = mode
        if not self.freeze_bn:
            for m in self.children():
                m.train(mode)
        return self

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        conv, bn = mod[0], mod[1]
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                conv.groups, conv.bias is not None, conv.padding_mode, bn.eps, bn.momentum, False, mod.qconfig)
        q.weight = conv.weight
        q.bias = conv.bias
        q.bn.weight, q.bn.bias = bn.weight, bn.bias
        q.bn.running_mean, q.bn.running_var = bn.running_mean, bn.running_var
        q.bn.num_batches_tracked = bn.num_batches_tracked
        return q


class ConvBnReLU2d(ConvBn2d):
    """ConvBn2d followed by ReLU."""
    _RELU = True


def freeze_bn_stats(mod):
    """Stop updating the batch norm statistics of a fused conv-bn QAT module (``model.apply(freeze_bn_stats)``
    late in training); other modules are left alone.

    >>> from ember.ao.quantization import default_qat_qconfig
    >>> m = ConvBn2d(2, 2, 1, qconfig=default_qat_qconfig); freeze_bn_stats(m); m.bn.training
    False
    """
    if type(mod) in (ConvBn2d, ConvBnReLU2d):
        mod.freeze_bn_stats()


def update_bn_stats(mod):
    """Resume updating the batch norm statistics of a fused conv-bn QAT module (see `freeze_bn_stats`)."""
    if type(mod) in (ConvBn2d, ConvBnReLU2d):
        mod.update_bn_stats()
