"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Grad mode is the Autograd key in the thread-local exclude set: with grad
disabled, dispatch never reaches the Autograd kernels, so no graph is recorded
and the per-op cost of autograd is zero (not a check inside every kernel).
"""
import functools

from .._core.dispatch_key import AUTOGRAD_BIT
from .._dispatch.dispatcher import STATE


def is_grad_enabled():
    return bool(STATE.keep & AUTOGRAD_BIT)


def _set_enabled(flag):
    if flag:
        STATE.keep |= AUTOGRAD_BIT
    else:
        STATE.keep &= ~AUTOGRAD_BIT


class _DecoratorContextManager:
    """A context manager that also works as a decorator (``@no_grad()`` and ``@no_grad``)."""

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError("grad modes decorate functions, not classes")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()

    def __new__(cls, orig_func=None, *args, **kwargs):
        self = super().__new__(cls)
        if callable(orig_func) and cls is not set_grad_enabled and cls is not inference_mode:
            cls.__init__(self)
            return self(orig_func)
        return self


class no_grad(_DecoratorContextManager):
    """Disable gradient recording in this thread.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self):
        self.prev = None

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(True)

    def __exit__(self, *exc):
        _set_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode; takes effect at once (as a function) and is undone on exit (as a context manager)."""

    def __init__(self, mode):
        self.prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_enabled(self.mode)

    def __call__(self, fn):
        _set_enabled(self.prev)
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)


class _InferenceState:
    depth = 0


import threading
_inference = threading.local()


def is_inference_mode_enabled():
    return getattr(_inference, 'depth', 0) > 0


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors created inside are marked as inference tensors: they can
    never be saved for backward later (torch.inference_mode)."""

    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self.prev = is_grad_enabled()
        if self.mode:
            _set_enabled(False)
            _inference.depth = getattr(_inference, 'depth', 0) + 1

    def __exit__(self, *exc):
        if self.mode:
            _inference.depth -= 1
        _set_enabled(self.prev)
