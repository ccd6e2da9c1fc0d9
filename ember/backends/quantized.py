"""torch.backends.quantized: the quantized engine (``engine``, settable) and the engines this build has.

ember's quantized kernels compute one way (x86/fbgemm's rounding, NOTE [quantized tensors]); the engine decides
what torch's choice decides in the modules: whether a dynamic layer's input quantization drops one bit of range
(x86, fbgemm, onednn) or not (qnnpack), and the default qconfigs programs pick by engine name.

>>> import ember
>>> ember.backends.quantized.engine
'x86'
"""
import sys
import types

supported_engines = ['qnnpack', 'onednn', 'x86', 'fbgemm', 'none']


class _QuantizedModule(types.ModuleType):
    _engine = 'x86'

    @property
    def engine(self):
        return self._engine

    @engine.setter
    def engine(self, name):
        if name not in supported_engines:
            raise RuntimeError(f"quantized engine {name} is not supported")
        type(self)._engine = name

    supported_engines = supported_engines


sys.modules[__name__].__class__ = _QuantizedModule
