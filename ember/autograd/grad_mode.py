"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Grad mode is the Autograd key in the thread-local exclude set: with grad
disabled, dispatch never reaches the Autograd kernels, so no graph is recorded
and the per-op cost of autograd is zero (not a check inside every kernel).
"""
import functools

from .._core.dispatch_key import AUTOGRAD_BIT, INFERENCE_BIT, DispatchKey, below
from .._core.tensor_impl import TensorImpl
from .._dispatch.dispatcher import STATE, register_fallback


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


# NOTE [inference mode]: inference mode is the InferenceMode key in the thread-local include set (and
# Autograd removed, as no_grad does). Its fallback runs every operator below itself and marks the new
# outputs as inference tensors, which also carry the key, so that outside the mode in-place writes into
# them raise and their views stay inference tensors. With the mode off and no inference tensors
# around, dispatch never reaches the fallback: the hot path pays nothing.

def is_inference_mode_enabled():
    return bool(STATE.include & INFERENCE_BIT)


def _set_inference(flag):
    if flag:
        STATE.include |= INFERENCE_BIT
    else:
        STATE.include &= ~INFERENCE_BIT


_BELOW_INFERENCE = below(DispatchKey.InferenceMode)


def _mark(o):
    if isinstance(o, TensorImpl) and not o._is_inference:
        o._is_inference = True
        o._keys |= INFERENCE_BIT


def _inference_fallback(op, ks, *args):
    on = STATE.include & INFERENCE_BIT
    if not on and op.schema.is_mutable and any(isinstance(a, TensorImpl) and a._is_inference and w
                                               for a, w in zip(args, _writes(op))):
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    out = op.redispatch(ks & _BELOW_INFERENCE, *args)
    if op.decl is not None and op.decl.kind == 'view':
        # a view is an inference tensor when its input is one; a view of a normal tensor made in the mode is a
        # normal tensor with INFERENCE_MODE creation meta (NOTE [view creation meta] in views.py), as in torch
        if args[0]._is_inference:
            _mark(out)
    elif on:
        inputs = {id(a) for a in args if isinstance(a, TensorImpl)}
        for o in (out if isinstance(out, (tuple, list)) else (out,)):
            if id(o) not in inputs:      # an in-place op returns its (normal) input unchanged in kind
                _mark(o)
    return out


def _writes(op):
    w = op.__dict__.get('_writes')
    if w is None:
        w = op.__dict__['_writes'] = tuple(a.is_write for a in op.schema.arguments)
    return w


register_fallback(DispatchKey.InferenceMode, _inference_fallback)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors created inside are marked as inference tensors: they can
    never be saved for backward later (torch.inference_mode).

    >>> import ember
    >>> with ember.inference_mode():
    ...     y = ember.ones(2) * 2
    >>> y.is_inference(), y.requires_grad
    (True, False)
    """

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def clone(self):
        return inference_mode(self.mode)

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        _set_enabled(not self.mode)
        _set_inference(self.mode)

    def __exit__(self, *exc):
        _set_enabled(self.prev[0])
        _set_inference(self.prev[1])
