"""torch.utils._python_dispatch: where PyTorch code imports ``TorchDispatchMode`` from.

ember's modes are ember/_dispatch/modes.py; a subclass may define torch's ``__torch_dispatch__`` or
ember's ``__ember_dispatch__``.
``TensorDataMap`` is how a recording mode (make_fx) matches tensors to what made them.
"""
from .._dispatch.modes import TorchDispatchMode, TensorDataMap, current_modes

__all__ = ['TorchDispatchMode', 'TensorDataMap']


def _get_current_dispatch_mode_stack():
    """The dispatch modes entered on this thread, the innermost last."""
    return list(current_modes())


def _get_current_dispatch_mode():
    """The innermost dispatch mode entered on this thread, or None."""
    modes = current_modes()
    return modes[-1] if modes else None
