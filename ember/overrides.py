"""torch.overrides: the ``__torch_function__`` protocol for Tensor-like objects (NOTE [__torch_function__]
in ember/_dispatch/torch_function.py).

An object that is not a Tensor but whose type defines ``__torch_function__`` may be passed where a Tensor
goes to any public function; the function then returns what ``__torch_function__`` returns:

>>> import ember
>>> class Logged:
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         return f'{func.__name__} called with {len(args)} arguments'
>>> ember.add(Logged(), 1)
'add called with 2 arguments'
"""
import functools

from ._dispatch.torch_function import (has_torch_function, handle_torch_function, public_function,
                                       overloaded_args as _overloaded_args, TorchFunctionMode,
                                       current_function_modes as _current_function_modes)
from ._tensor import Tensor

__all__ = ['has_torch_function', 'has_torch_function_unary', 'has_torch_function_variadic',
           'handle_torch_function', 'is_tensor_like', 'wrap_torch_function', 'public_function', 'TorchFunctionMode',
           'get_default_nowrap_functions']


def get_default_nowrap_functions():
    """The functions whose Tensor results Tensor's ``__torch_function__`` leaves in their own class (the ``.grad``
    getter): a subclass's handler that re-wraps results consults this set, as torch's does."""
    return {Tensor.grad.__get__}


def has_torch_function_unary(arg):
    """``has_torch_function((arg,))``, as a hand-written function checks its one Tensor argument."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def is_tensor_like(inp):
    """True for a Tensor and for any object whose type defines ``__torch_function__``.

    >>> import ember
    >>> is_tensor_like(ember.ones(1)), is_tensor_like(1.0)
    (True, False)
    """
    return isinstance(inp, Tensor) or hasattr(type(inp), '__torch_function__')


def wrap_torch_function(dispatcher):
    """Decorator: the function honours ``__torch_function__`` for the Tensor-likes ``dispatcher(*args,
    **kwargs)`` returns (torch.overrides.wrap_torch_function)."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def _get_overloaded_args(relevant_args):
    """The Tensor-like arguments whose ``__torch_function__`` is tried, in torch's order."""
    return _overloaded_args(relevant_args)


def _get_current_function_mode():
    """The innermost torch function mode on, or None (NOTE [torch function modes])."""
    modes = _current_function_modes()
    return modes[-1] if modes else None


def _get_current_function_mode_stack():
    return list(_current_function_modes())


def _is_torch_function_mode_enabled():
    return bool(_current_function_modes())
