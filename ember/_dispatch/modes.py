"""Python dispatch modes: a context manager that sees every operator call (like TorchDispatchMode).

Entering a mode pushes it on a per-thread stack and adds the Python key to the
thread-local include set, so every call reaches the Python key's fallback,
which pops the innermost mode and calls its ``__ember_dispatch__``. Inside
that method the mode is off the stack, so calling ``func`` again continues to
the next mode or to the ordinary kernels: modes stack like torch's.
This is the hook that operator-level graph capture, profilers and fake tensors are meant to be written on;
ember ships none of them yet (tests/test_dispatcher.py writes a logging mode). ember.fx's symbolic tracing
records public functions, above the dispatcher, through __torch_function__ (NOTE [__torch_function__]).
"""
import threading
import weakref

from .._core.dispatch_key import DispatchKey, PYTHON_BIT
from . import dispatcher

_tls = threading.local()


def _stack():
    s = getattr(_tls, 'stack', None)
    if s is None:
        s = _tls.stack = []
    return s


def _sync_key():
    if _stack():
        dispatcher.STATE.include |= PYTHON_BIT
    else:
        dispatcher.STATE.include &= ~PYTHON_BIT


class EmberDispatchMode:
    """Subclass and define ``__ember_dispatch__(self, func, types, args=(), kwargs=None)``.

    >>> import ember
    >>> class Log(EmberDispatchMode):
    ...     def __init__(self): self.seen = []
    ...     def __ember_dispatch__(self, func, types, args=(), kwargs=None):
    ...         self.seen.append(func.name)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log() as m:
    ...     _ = ember.ones(2) + 1
    >>> m.seen
    ['aten::ones', 'aten::add.Tensor']
    """

    def __ember_dispatch__(self, func, types, args=(), kwargs=None):
        if type(self).__torch_dispatch__ is not EmberDispatchMode.__torch_dispatch__:
            return self.__torch_dispatch__(func, types, args, kwargs)      # a mode written for torch
        raise NotImplementedError

    # torch spells it __torch_dispatch__; accept modes written for torch
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self.__ember_dispatch__(func, types, args, kwargs)

    def __enter__(self):
        _stack().append(self)
        _sync_key()
        return self

    def __exit__(self, *exc):
        s = _stack()
        if self in s:
            s.remove(self)
        _sync_key()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


TorchDispatchMode = EmberDispatchMode


def _split_kwargs(op, args):
    """Positional schema-order arguments -> (args, kwargs) as a user would have written them."""
    pos, kw = [], {}
    for a, v in zip(op.schema.arguments, args):
        if a.kwarg_only:
            if not (a.has_default and v is a.default):
                kw[a.name] = v
        else:
            pos.append(v)
    return tuple(pos), kw


def python_mode_fallback(op, ks, *args):
    s = _stack()
    if not s:   # the key was left on by another thread's state: go below it
        return op.redispatch(ks & ~PYTHON_BIT, *args)
    mode = s.pop()
    _sync_key()
    try:
        from .._core.tensor_impl import TensorImpl
        types = tuple({type(a) for a in args if isinstance(a, TensorImpl)})
        pargs, kwargs = _split_kwargs(op, args)
        return mode.__ember_dispatch__(op, types, pargs, kwargs)
    finally:
        s.append(mode)
        _sync_key()


def _len_torch_dispatch_stack():
    return len(_stack())


def _get_current_dispatch_mode():
    """The innermost dispatch mode, or None."""
    s = _stack()
    return s[-1] if s else None


def _get_current_dispatch_mode_stack():
    return list(_stack())


class _disable_current_modes:
    """``with _disable_current_modes() as modes:``: the dispatch modes are off inside (all of them, innermost last in
    ``modes``) and back on after."""

    def __enter__(self):
        s = _stack()
        self.saved = list(s)
        s.clear()
        _sync_key()
        return self.saved

    def __exit__(self, *exc):
        s = _stack()
        s[:] = self.saved + s
        _sync_key()
        return False


def current_modes():
    return tuple(_stack())


class TensorDataMap:
    """A map from tensors to values in which every handle on the same data and geometry is the same key.

    A mode that records operators (make_fx) must recognise a tensor when it comes back as another handle:
    autograd saves an output as a new handle on the output's array, without its history (NOTE [saved outputs]),
    and backward formulas receive that handle. The key is the array the handles share; it is held weakly, so the
    map keeps no tensor alive, and an entry whose array has died is never matched by a later one.
    """

    def __init__(self):
        self._d = {}

    def __setitem__(self, t, value):
        a = t._a
        try:
            ref = weakref.ref(a)
        except TypeError:        # an array type without weak references: kept alive while the map lives
            ref = (lambda a=a: a)
        self._d[id(a)] = (ref, value)

    def get(self, t, default=None):
        a = t._a
        hit = self._d.get(id(a))
        return hit[1] if hit is not None and hit[0]() is a else default

    def __contains__(self, t):
        return self.get(t, _MISSING) is not _MISSING

    def __len__(self):
        return len(self._d)


_MISSING = object()


dispatcher.register_fallback(DispatchKey.Python, python_mode_fallback)

# torch.utils._python_dispatch's helpers for wrapper subclasses live with the subclass mechanism
from .subclasses import is_traceable_wrapper_subclass, return_and_correct_aliasing  # noqa: E402,F401
