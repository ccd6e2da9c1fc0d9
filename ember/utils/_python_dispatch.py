"""torch.utils._python_dispatch: where PyTorch code imports ``TorchDispatchMode`` from.

ember's modes are ember/_dispatch/modes.py; a subclass may define torch's ``__torch_dispatch__`` or
ember's ``__ember_dispatch__``.
``TensorDataMap`` is how a recording mode (make_fx) matches tensors to what made them.
"""
from .._dispatch.modes import (TorchDispatchMode, TensorDataMap, _get_current_dispatch_mode,  # noqa: F401
                               _get_current_dispatch_mode_stack, _len_torch_dispatch_stack, _disable_current_modes,
                               is_traceable_wrapper_subclass, return_and_correct_aliasing)

__all__ = ['TorchDispatchMode', 'TensorDataMap', 'is_traceable_wrapper_subclass', 'return_and_correct_aliasing']
