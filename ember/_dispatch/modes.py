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

    # NOTE [modes see torch's composites]: torch decomposes its CompositeImplicitAutograd operators (linear,
    # matmul) above the Python key, so a mode sees ``t`` and ``addmm`` where ember runs one fused ``linear``; the
    # Python key's fallback applies torch's definitions (_decomp's composite table) before the mode gets the call.
    # ember's own modes that compute the same either way, or apply the table themselves (make_fx, which keeps
    # ``linear`` whole under ``pre_dispatch=True``), set this to see the fused operators.
    sees_composites = False

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
    """Positional schema-order arguments -> (operator, args, kwargs) as torch boxes the call for
    ``__torch_dispatch__`` (NOTE [boxed arguments])."""
    pos, kw = _boxed_call(op, args)
    for torch_op, applies in _SHOWN.get(op.name, ()):
        if applies(pos):
            return dispatcher.lookup_op(torch_op), pos, kw
    return op, pos, kw


def _number(v):
    return isinstance(v, (int, float, complex))        # bool included


# when a call of ember's operator is shown as torch's overload: its boxed positional arguments are ...
WHOLE = lambda pos: len(pos) == 1                                     # only the input (x.sum())
NUMBER_OTHER = lambda pos: len(pos) > 1 and _number(pos[1]) and not _number(pos[0])   # x > 0
NUMBER_SELF = lambda pos: _number(pos[0])                             # 2 ** x
ALWAYS = lambda pos: True

_SHOWN = {}         # ember's operator's name -> [(torch's overload's name, when a call is shown as it)]
_EMBER = {}         # torch's overload's name -> ember's operator's name


def show_as(ember_op, torch_op, applies):
    """Show calls of ``ember_op`` (``'aten::sum.dim_IntList'``) for which ``applies(boxed positional args)`` holds
    as ``torch_op`` (``'aten::sum'``), which takes the same arguments in the same places (declared by
    ops/aten_aliases.py beside ``torch_op``; names, as the operators are declared in any order)."""
    _SHOWN.setdefault(ember_op, []).append((torch_op, applies))
    _EMBER[torch_op] = ember_op


def ember_overload(op):
    """``sum.default`` -> ``sum.dim_IntList``, ``gt.Scalar`` -> ``gt.Tensor``: the operator ember computes a
    call torch names by that overload with; None for any other."""
    name = _EMBER.get(getattr(op, 'name', None))
    return None if name is None else dispatcher.lookup_op(name)


def _boxed_call(op, args):
    values = [_boxed(a, v) for a, v in zip(op.schema.arguments, args)]
    slots = _DEVICES.get(op)
    if slots is None:
        slots = _DEVICES[op] = _device_slots(op.schema)
    if slots:
        _devices_as_objects(values, slots)
    pos, kw = [], {}
    for a, v in zip(op.schema.arguments, values):
        if not a.kwarg_only:
            pos.append((a, v))
        elif not _is_default(a, v):
            kw[a.name] = v
    while pos and _is_default(*pos[-1]):
        pos.pop()
    return tuple(v for _, v in pos), kw


# NOTE [boxed arguments]: a Python mode or a subclass's ``__torch_dispatch__`` gets an operator's arguments as
# torch's boxed calling convention gives them (parseIValuesToPyArgsKwargs): list-typed arguments are lists
# (``int[1] dim`` given as 0 is ``[0]``, ``int[2] stride`` given as 1 is ``[1, 1]``, a tuple of tensors is a
# list), positional arguments equal to their defaults are left out from the end, and keyword-only ones equal to
# their defaults are left out. So ``x.amax(0)`` reaches a handler as ``amax.default(x, [0])`` and ``x.sum(0)``
# as ``sum.dim_IntList(x, [0])``, and a traced graph reads as torch's. Where ember declares one operator for two
# of torch's (``sum.dim_IntList`` with an optional dim; ``gt.Tensor`` taking a number too), the call is shown as
# the overload torch's would be: ``x.sum()`` as ``sum.default(x)``, ``x > 0`` as ``gt.Scalar(x, 0)``. Those
# overloads are composites of ember's operator (ops/aten_aliases.py); the code generator maps them back. "Equal" is of the same type: ``alpha=1.0``
# is passed on where the default is the int 1, as torch's IValue comparison does.

_DEVICES = {}


def _device_slots(schema):
    return [i for i, a in enumerate(schema.arguments) if a.base_type == 'Device']


def _devices_as_objects(values, slots):
    from .._core.device import device
    for i in slots:
        if isinstance(values[i], str):      # torch's parser makes 'cpu' a device
            values[i] = device(values[i])


def _boxed(arg, v):
    if '[' not in arg.type or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, int) and arg.type.startswith(('int[', 'SymInt[')):
        n = arg.type[arg.type.index('[') + 1:arg.type.index(']')]
        return [v] * int(n) if n else [v]
    return v


def _is_default(arg, v):
    if not arg.has_default:
        return False
    d = arg.default
    if v is d:
        return True
    if isinstance(d, tuple):
        return isinstance(v, list) and len(v) == len(d) and all(type(x) is type(y) and x == y for x, y in zip(v, d))
    return type(v) is type(d) and type(v) in (int, float, bool, str) and v == d


def python_mode_fallback(op, ks, *args):
    s = _stack()
    if not s:   # the key was left on by another thread's state: go below it
        return op.redispatch(ks & ~PYTHON_BIT, *args)
    mode = s[-1]
    if not mode.sees_composites:
        from .subclasses import _torch_composites
        decomposition = _torch_composites().get(op)
        if decomposition is not None:       # linear, matmul: torch decomposes them before any mode sees them
            pargs, kwargs = _boxed_call(op, args)
            return decomposition(*pargs, **kwargs)
    s.pop()
    _sync_key()
    try:
        from .._core.tensor_impl import TensorImpl
        types = tuple({type(a) for a in args if isinstance(a, TensorImpl)})
        func, pargs, kwargs = _split_kwargs(op, args)
        return mode.__ember_dispatch__(func, types, pargs, kwargs)
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
