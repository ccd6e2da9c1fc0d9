"""ember.ao.nn.quantized (also ember.nn.quantized): modules over quantized tensors, the targets of ``convert``.

NOTE [quantized tensors] in ember/_core/quantized.py explains the tensors; the arithmetic runs in the QuantizedCPU
kernels (``ember.ops.quantized``). Built on the public API only.
"""
import ember
from ember import nn
from .linear import Linear, LinearPackedParams
from .conv import Conv2d
from .embedding import Embedding, EmbeddingBag
from .activation import ReLU6, Hardswish
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional

__all__ = ['Linear', 'Conv2d', 'Embedding', 'EmbeddingBag',
           'ReLU6', 'Hardswish', 'FloatFunctional', 'FXFloatFunctional', 'QFunctional',
           'Quantize', 'DeQuantize', 'dynamic']


class Quantize(nn.Module):
    """Quantizes its float input per tensor with fixed ``scale`` and ``zero_point`` (what QuantStub becomes).

    >>> Quantize(0.5, 2, ember.quint8)(ember.tensor([1.0])).int_repr()
    tensor([4], dtype=ember.uint8)
    """

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer('scale', ember.tensor([scale]))
        self.register_buffer('zero_point', ember.tensor([zero_point], dtype=ember.int64))
        self.dtype = dtype

    def forward(self, X):
        return ember.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        if not hasattr(mod, 'activation_post_process'):
            raise AssertionError("Input float module must have activation_post_process attribute")
        scale, zp = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zp.long().item(), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f'scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}'


class DeQuantize(nn.Module):
    """Turns a quantized tensor back into float32 (what DeQuantStub becomes)."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()


from . import dynamic  # noqa: E402
