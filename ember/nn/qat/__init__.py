"""ember.nn.qat: torch.nn.qat, the same package as ember.ao.nn.qat (one module object under both names)."""
import importlib
import sys

_target = importlib.import_module('ember.ao.nn.qat')
for _name, _mod in list(sys.modules.items()):
    if _name.startswith('ember.ao.nn.qat.'):
        sys.modules['ember.nn.qat.' + _name[len('ember.ao.nn.qat.'):]] = _mod
sys.modules[__name__] = _target
