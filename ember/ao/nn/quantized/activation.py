"""Quantized activations whose output needs its own parameters (Hardswish) or none (ReLU6)."""
import ember
from ember import nn
from ._utils import _activation_qparams

qops = ember.ops.quantized


class ReLU6(nn.ReLU):
    """``min(max(x, zero_point), q(6))`` on the integers: the input's parameters are kept."""

    def __init__(self, inplace=False):
        super().__init__(inplace)

    def forward(self, input):
        return qops.relu6(input, False)

    def _get_name(self):
        return 'QuantizedReLU6'

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU6(mod.inplace)


class Hardswish(nn.Hardswish):
    """Hardswish of the dequantized input, quantized with the observed output parameters."""

    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self.register_buffer('scale', ember.tensor(scale))
        self.register_buffer('zero_point', ember.tensor(zero_point))

    def forward(self, input):
        return qops.hardswish(input, float(self.scale), int(self.zero_point))

    def _get_name(self):
        return 'QuantizedHardswish'

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return Hardswish(*_activation_qparams(mod))
