"""ember.ao.nn.intrinsic.quantized: quantized fused layers, the ReLU applied to the requantized integers."""
import ember
from ..quantized.linear import Linear as _QLinear
from ..quantized.conv import Conv2d as _QConv2d

from . import ConvReLU2d as _FloatConvReLU2d, LinearReLU as _FloatLinearReLU

__all__ = ['ConvReLU2d', 'LinearReLU']

qops = ember.ops.quantized


class ConvReLU2d(_QConv2d):
    """A quantized Conv2d whose output is clamped at the zero point (ReLU)."""
    _NAME = 'QuantizedConvReLU2d'
    _FLOAT_MODULE = (_FloatConvReLU2d,)
    _op = staticmethod(lambda *a: qops._conv2d_relu_unpacked(*a))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return super().from_float(mod)


class LinearReLU(_QLinear):
    """A quantized Linear whose output is clamped at the zero point (ReLU)."""
    _FLOAT_MODULE = (_FloatLinearReLU,)

    def _get_name(self):
        return 'QuantizedLinearReLU'

    def forward(self, x):
        w, b = self._weight_bias()
        return qops._linear_relu_unpacked(x, w, b, float(self.scale), int(self.zero_point))
