"""ember.quantization: torch.quantization, the older name of ember.ao.quantization (the same objects)."""
import importlib
import sys

from ..ao.quantization import *  # noqa: F401,F403
from ..ao import quantization as _ao_quantization

for _name in ('observer', 'fake_quantize', 'qconfig', 'stubs', 'fuse_modules', 'quantize', 'quantization_mappings'):
    sys.modules[f'{__name__}.{_name}'] = importlib.import_module(f'ember.ao.quantization.{_name}')
    globals()[_name] = sys.modules[f'{__name__}.{_name}']
globals().update({k: v for k, v in vars(_ao_quantization).items() if not k.startswith('__')})
