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

supported_engines = ['qnnpack', 'onednn', 'x86', 'fbgemm']
_ENGINE_NAMES = {'none': 'NoQEngine', 'qnnpack': 'QNNPACK', 'onednn': 'ONEDNN', 'x86': 'X86', 'fbgemm': 'FBGEMM'}


class _QuantizedModule(types.ModuleType):
    _engine = 'x86'

    @property
    def engine(self):
        return self._engine

    @engine.setter
    def engine(self, name):
        if name not in _ENGINE_NAMES:
            raise RuntimeError(f"{name} is not a valid value for quantized engine")
        if name not in supported_engines:       # 'none' names an engine; no build supports it
            raise RuntimeError(f"quantized engine {_ENGINE_NAMES[name]} is not supported")
        type(self)._engine = name

    supported_engines = supported_engines


sys.modules[__name__].__class__ = _QuantizedModule
