"""torch.utils._python_dispatch: where PyTorch code imports ``TorchDispatchMode`` from.

ember's modes are ember/_dispatch/modes.py; a subclass may define torch's ``__torch_dispatch__`` or
ember's ``__ember_dispatch__``.
``TensorDataMap`` is how a recording mode (make_fx) matches tensors to what made them.
"""
from .._dispatch.modes import TorchDispatchMode, TensorDataMap  # noqa: F401

__all__ = ['TorchDispatchMode', 'TensorDataMap']
