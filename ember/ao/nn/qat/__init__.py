"""ember.ao.nn.qat (also ember.nn.qat): float layers that fake-quantize their weight in every forward
(``weight_fake_quant``), for quantization-aware training."""
import ember
from ember import nn

__all__ = ['Linear', 'Conv2d']


class Linear(nn.Linear):
    """``F.linear(x, weight_fake_quant(weight), bias)``.

    >>> from ember.ao.quantization import default_qat_qconfig
    >>> Linear(3, 2, qconfig=default_qat_qconfig)(ember.ones(1, 3)).shape
    ember.Size([1, 2])
    """
    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return ember.nn.functional.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if not hasattr(mod, 'qconfig') or mod.qconfig is None:
            raise AssertionError("Input float module must have a valid qconfig")
        if type(mod).__name__ == 'LinearReLU':
            mod = mod[0]
        q = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        q.weight = mod.weight
        q.bias = mod.bias
        return q

    def to_float(self):
        lin = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        lin.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            lin.bias = nn.Parameter(self.bias.detach())
        return lin


class Conv2d(nn.Conv2d):
    """A Conv2d whose weight is fake-quantized in every forward."""
    _FLOAT_MODULE = nn.Conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', qconfig=None, device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias, padding_mode=padding_mode)
        if qconfig is None:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if not hasattr(mod, 'qconfig') or mod.qconfig is None:
            raise AssertionError("Input float module must have a valid qconfig")
        if isinstance(mod, nn.Sequential):
            mod = mod[0]
        q = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None, padding_mode=mod.padding_mode,
                qconfig=mod.qconfig)
        q.weight = mod.weight
        q.bias = mod.bias
        return q
