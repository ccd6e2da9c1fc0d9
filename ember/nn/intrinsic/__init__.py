"""ember.nn.intrinsic: torch.nn.intrinsic, the same package as ember.ao.nn.intrinsic (one module object under both names)."""
import importlib
import sys

_target = importlib.import_module('ember.ao.nn.intrinsic')
for _name, _mod in list(sys.modules.items()):
    if _name.startswith('ember.ao.nn.intrinsic.'):
        sys.modules['ember.nn.intrinsic.' + _name[len('ember.ao.nn.intrinsic.'):]] = _mod
sys.modules[__name__] = _target
