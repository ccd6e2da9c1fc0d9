"""ember.nn.quantized: torch.nn.quantized, the same package as ember.ao.nn.quantized (one module object under both names)."""
import importlib
import sys

_target = importlib.import_module('ember.ao.nn.quantized')
for _name, _mod in list(sys.modules.items()):
    if _name.startswith('ember.ao.nn.quantized.'):
        sys.modules['ember.nn.quantized.' + _name[len('ember.ao.nn.quantized.'):]] = _mod
sys.modules[__name__] = _target
