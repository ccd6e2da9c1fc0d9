"""ember.nn: modules, layers and losses.

>>> import ember
>>> from ember import nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> model(ember.randn(3, 4)).shape
ember.Size([3, 2])
"""
from . import functional
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import *  # noqa: F401,F403
from .modules.module import (register_module_forward_pre_hook, register_module_forward_hook,
                             register_module_full_backward_hook, register_module_full_backward_pre_hook)
from . import init, utils
from . import modules
from . import parallel  # noqa: E402  torch.nn.parallel (CPU-only answers)
from .parallel import DataParallel  # noqa: E402


def __getattr__(name):
    # torch.nn.quantized, torch.nn.intrinsic, torch.nn.qat: ember.ao.nn's packages, imported on first use
    if name in ('quantized', 'intrinsic', 'qat'):
        import importlib
        return importlib.import_module(f'ember.nn.{name}')
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")
