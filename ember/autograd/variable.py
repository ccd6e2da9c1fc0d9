"""``torch.autograd.Variable``: the pre-0.4 wrapper, kept for old programs.

Every tensor is a Variable (``isinstance(t, Variable)`` is True), and
``Variable(t, requires_grad=...)`` returns a new leaf sharing ``t``'s data, as torch does.

>>> import ember
>>> from ember.autograd import Variable
>>> Variable(ember.ones(2), requires_grad=True).is_leaf
True
"""
from ember._warn import warnings
from .engine import queue_callback as _queue_callback


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from .._tensor import Tensor
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: what torch programs reach the autograd engine through."""
    queue_callback = staticmethod(_queue_callback)


class Variable(metaclass=_VariableMeta):
    _execution_engine = _ExecutionEngine()

    def __new__(cls, data, requires_grad=False, volatile=False):
        from .._tensor import Tensor
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        t = data.detach()
        return t.requires_grad_(True) if requires_grad else t
