"""ember.ao.nn.intrinsic (also ember.nn.intrinsic): float modules fused by ``fuse_modules``; quantization
treats each as one layer (``convert`` turns ConvReLU2d into one quantized convolution with the ReLU applied to its
integers)."""
from ember import nn

__all__ = ['ConvReLU2d', 'ConvBn2d', 'ConvBnReLU2d', 'LinearReLU', 'LinearBn1d', 'BNReLU2d', '_FusedModule']


class _FusedModule(nn.Sequential):
    """A sequence of modules that quantization treats as one."""


def _fused(name, *types, doc):
    def __init__(self, *mods):
        if len(mods) != len(types) or not all(type(m).__name__ == t.__name__ for m, t in zip(mods, types)):
            raise AssertionError(f"Incorrect types for input modules{[type(m) for m in mods]}")
        _FusedModule.__init__(self, *mods)
    return type(name, (_FusedModule,), {'__init__': __init__, '__doc__': doc, '__module__': __name__})


ConvReLU2d = _fused('ConvReLU2d', nn.Conv2d, nn.ReLU, doc="Conv2d followed by ReLU.")
ConvBn2d = _fused('ConvBn2d', nn.Conv2d, nn.BatchNorm2d, doc="Conv2d followed by BatchNorm2d (for QAT).")
ConvBnReLU2d = _fused('ConvBnReLU2d', nn.Conv2d, nn.BatchNorm2d, nn.ReLU,
                      doc="Conv2d, BatchNorm2d and ReLU (for QAT).")
LinearReLU = _fused('LinearReLU', nn.Linear, nn.ReLU, doc="Linear followed by ReLU.")
LinearBn1d = _fused('LinearBn1d', nn.Linear, nn.BatchNorm1d, doc="Linear followed by BatchNorm1d (for QAT).")
BNReLU2d = _fused('BNReLU2d', nn.BatchNorm2d, nn.ReLU, doc="BatchNorm2d followed by ReLU.")

from . import qat, quantized  # noqa: E402,F401
