"""QuantStub and DeQuantStub mark where a float model's tensors become quantized and float again; QuantWrapper
puts a module between the two."""
from ember import nn


class QuantStub(nn.Module):
    """Identity before ``convert``; an observer watches its output after ``prepare``; ``convert`` makes it a
    Quantize module."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """Identity before ``convert``; DeQuantize after."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(nn.Module):
    """``dequant(module(quant(x)))``, with the module's qconfig on the stubs.

    >>> QuantWrapper(nn.Linear(2, 2))
    QuantWrapper(
      (quant): QuantStub()
      (dequant): DeQuantStub()
      (module): Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, 'qconfig', None)
        self.add_module('quant', QuantStub(qconfig))
        self.add_module('dequant', DeQuantStub(qconfig))
        self.add_module('module', module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
