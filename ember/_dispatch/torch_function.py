"""PyTorch's ``__torch_function__`` protocol: objects that are not Tensors but stand in for them.

NOTE [__torch_function__]
A public function (``ember.add``, ``ember.nn.functional.relu``) that receives, where a Tensor goes, an
object whose type defines ``__torch_function__`` does not run: it calls
``type(obj).__torch_function__(func, types, args, kwargs)`` with ``func`` the public function itself, and
returns what that gives (torch.overrides' protocol; ``ember.fx.Proxy`` records graph nodes this way).
The check costs nothing on the ordinary path. A generated entry point reaches it only where it would
otherwise raise its TypeError about a non-Tensor argument (``_bad`` in dispatcher.py hands over all the
call's arguments); a hand-written public function (``ember/_python_functions``, ``ember.nn.functional``) is wrapped
once, where its package collects it, by ``public_function``, which looks at the argument types before
calling. A Tensor subclass whose class defines ``__torch_function__`` is found by its dispatch key, and a
generated entry point reaches it through that key's fallback (NOTE [tensor subclasses] in subclasses.py).
"""
import functools
import threading

from .._core import tensor_impl as _tensor_impl
from .._core.tensor_impl import TensorImpl
from .._core.dispatch_key import TORCH_FUNCTION_BIT as _TF_BIT

# types that never define __torch_function__: the scan skips them without a lookup
_PLAIN = frozenset([int, float, bool, complex, str, type(None), slice, type(Ellipsis)])


def _overloaded(a):
    t = type(a)
    if t in _PLAIN or _MODES.subclasses_off:
        return False
    if isinstance(a, TensorImpl):       # a Tensor subclass that defines it carries the key (NOTE [tensor subclasses])
        return bool(a._keys & _TF_BIT)
    return hasattr(t, '__torch_function__')


def overloaded_args(values, overloaded=None):
    """The arguments among ``values`` (one level into lists, tuples and dicts) whose type defines
    ``__torch_function__`` (or for which ``overloaded(a)`` holds), one per type, a subclass before its base class,
    else left to right."""
    test = _overloaded if overloaded is None else overloaded
    found = []

    def add(a):
        if not test(a) or any(type(f) is type(a) for f in found):
            return
        for i, f in enumerate(found):       # a subclass goes before its base class, as torch orders them
            if issubclass(type(a), type(f)):
                found.insert(i, a)
                return
        found.append(a)

    for v in values:
        if isinstance(v, (list, tuple)):
            for e in v:
                add(e)
        elif isinstance(v, dict):
            for e in v.values():
                add(e)
        else:
            add(v)
    return found


def has_torch_function(relevant_args):
    """True when one of ``relevant_args`` (or of the lists inside) is a Tensor-like non-Tensor."""
    for a in relevant_args:
        t = type(a)
        if t is list or t is tuple:
            if has_torch_function(a):
                return True
        elif _overloaded(a):
            return True
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the innermost torch function mode, then the ``__torch_function__`` of the overloaded arguments in
    ``relevant_args`` in torch's order, until one returns something other than ``NotImplemented``."""
    return dispatch_overloaded(public_api, relevant_args, args, kwargs, operator=False)


def dispatch_overloaded(public_api, relevant_args, args, kwargs, operator, name=None):
    """``operator``: the call is an operator's entry point (torch's C++ functions), whose refusal reads
    "Multiple dispatch failed", where a function written in Python says "no implementation found", as torch's.
    ``name``: what the refusal calls ``public_api`` (``Tensor.shape.__get__``) where its own name would not do."""
    overloaded = overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if _MODES.stack:
        result = call_mode(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for a in overloaded:
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if operator:
        subclasses = ''.join(f"  - tensor subclass {type(a)}\n" for a in overloaded)
        from .._core import naming
        shown = _public_name(public_api) if name is None else f'{naming.shown}.{name}'
        raise TypeError(f"Multiple dispatch failed for '{shown}'; all __torch_function__ handlers "
                        f"returned NotImplemented:\n\n{subclasses}\nFor more information, try re-running with "
                        f"TORCH_LOGS=not_implemented")
    raise TypeError(f"no implementation found for '{_public_name(public_api)}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def _public_name(func):
    """``'ember.nn.functional.relu'``: the module path up to its first private part, and the name (``torch.``
    under ``ember run``, as torch's messages read)."""
    from .._core import naming
    parts = []
    for p in (getattr(func, '__module__', None) or 'ember').split('.'):
        if p.startswith('_'):
            break
        parts.append(p)
    if parts and parts[0] == 'ember':
        parts[0] = naming.shown
    name = getattr(func, '__qualname__', '')     # a method: Tensor.__getitem__
    if not name.startswith('Tensor.'):
        name = getattr(func, '__name__', str(func))
    return '.'.join(parts + [name])


NOT_HANDLED = object()


def dispatch_from_entry_point(op, values):
    """The slow path of a generated entry point that met a non-Tensor where a Tensor goes: rebuild the
    call as its public function received it and hand it to ``__torch_function__``; NOT_HANDLED when no
    argument defines it (the entry point then raises its TypeError)."""
    if not overloaded_args(values):
        return NOT_HANDLED
    args, kwargs = public_call(op, values)
    func = op.public if op.public is not None else op
    return dispatch_overloaded(func, values, args, kwargs, operator=True)


def public_call(op, values):
    """(args, kwargs) of a call in schema order, as its public function received it."""
    args, kwargs = [], {}
    for a, v in zip(op.schema.arguments, values):
        if a.kwarg_only:
            if not (a.has_default and _is_default(v, a.default)):
                kwargs[a.name] = v
        else:
            args.append((a, v))
    while args and args[-1][0].has_default and _is_default(args[-1][1], args[-1][0].default):
        args.pop()          # trailing defaults are left out, as the caller most likely left them out
    return tuple(v for _, v in args), kwargs


def _is_default(v, default):
    if v is default:
        return True
    return type(v) in _PLAIN and type(v) is type(default) and v == default


def _handle(public, args, kwargs):
    return handle_torch_function(public, args + tuple(kwargs.values()), *args, **kwargs)


def _check_call(fn, name, args, kwargs):
    """A call that does not fit ``fn``'s signature raises its TypeError before any handler runs, as torch's
    argument parser (or Python, for a function written in Python) does: ``torch.linalg.solve(A)`` is an error
    whatever A's ``__torch_function__`` would do. Only on the handler's path, so it costs the ordinary call nothing."""
    sig = _signature(fn)
    if sig is None:
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}() {_parser_message(sig, str(e), len(args))}") from None


def _parser_message(sig, msg, given):
    """inspect's binding error in the words of torch's argument parser."""
    if msg.startswith('missing a required argument: '):
        return f'missing 1 required positional arguments: "{msg.split(": ", 1)[1].strip(chr(39))}"'
    if msg == 'too many positional arguments':
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in sig.parameters.values())
        return f"takes {n} positional argument{'' if n == 1 else 's'} but {given} were given"
    return msg


@functools.lru_cache(maxsize=None)
def _signature(fn):
    import inspect
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _by_keyword(fn, positional):
    """A handler that passes ``__torch_function__`` the first ``positional`` parameters by position and every
    other parameter by keyword, defaults included, as torch.nn.functional's Python functions do
    (``handle_torch_function(relu, (input,), input, inplace=inplace)``): a traced graph then records
    ``F.relu(x, inplace=False)`` whether the caller wrote the keyword or not."""
    import inspect
    sig = inspect.signature(fn)

    def handle(public, args, kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return _handle(public, args, kwargs)
        bound.apply_defaults()
        items = list(bound.arguments.items())
        params = sig.parameters
        if any(params[n].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) for n, _ in items):
            return _handle(public, args, kwargs)
        pos = tuple(v for _, v in items[:positional])
        kw = dict(items[positional:])
        return handle_torch_function(public, pos + tuple(kw.values()), *pos, **kw)
    return handle


# NOTE [numpy keyword aliases] (schema operators: _dispatch/dispatcher.py) for the public functions written in
# Python: torch's argument parser takes NumPy's names for four parameters, whatever the function
# (``torch.linalg.norm(a, axis=1, keepdims=True)``, ``torch.quantile(x=t, q=0.5)``)
_NUMPY_NAMES = {'axis': 'dim', 'keepdims': 'keepdim', 'x': 'input', 'a': 'input', 'x1': 'input', 'x2': 'other'}


def _numpy_names(fn):
    """``{numpy name: parameter}`` for ``fn``'s ``dim``/``keepdim``/``input``/``other`` parameters that NumPy names
    otherwise (NOTE [numpy keyword aliases]), leaving out a name ``fn`` has a parameter of its own for."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in _NUMPY_NAMES.items() if v in params and k not in params}


class builtin_function_or_method(staticmethod):
    """A public function that torch defines in C (``torch.conv2d``, ``torch.cat``, ``torch.zeros``): called, it
    calls the function; kept as a class attribute (``conv = torch.conv2d``, kornia's losses), it binds no
    ``self``, as torch's builtins do not. It pickles by its name; ``inspect.signature`` reads the function's.

    >>> import ember
    >>> class Loss:
    ...     conv = ember.conv2d
    >>> Loss().conv(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 3, 3)).item()
    9.0
    """
    __slots__ = ()

    def __getattr__(self, name):        # the function's own attributes (``_op``, ``_overloads``)
        return getattr(self.__wrapped__, name)

    def __reduce__(self):
        return self.__qualname__

    def __repr__(self):
        return f'<built-in function {self.__name__}>'


def public_function(fn, positional=None, builtin=False):
    """``fn`` as a public function that honours ``__torch_function__`` (NOTE [__torch_function__]).
    ``positional``: hand the first that many parameters over by position and the rest by keyword (see
    ``_by_keyword``); None hands the call over as it was made. ``builtin``: the result is a
    ``builtin_function_or_method`` (no binding as a class attribute), and handlers receive that object."""
    T = _tensor_impl._tensor_class        # the exact type the scan skips first
    _handle = _by_keyword(fn, positional) if positional is not None else globals()['_handle']
    numpy_names = _numpy_names(fn)
    me = None           # what handlers receive as func: the returned object

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if kwargs and numpy_names:
            for k in numpy_names.keys() & kwargs.keys():
                kwargs[numpy_names[k]] = kwargs.pop(k)
        if _MODES.stack:
            return _handle(me, args, kwargs)
        for a in args:
            t = type(a)
            if t is T or t in _PLAIN:
                continue
            if t is list or t is tuple:
                for e in a:
                    if type(e) is not T and _overloaded(e):
                        return _checked_handle(args, kwargs)
            elif _overloaded(a):
                return _checked_handle(args, kwargs)
        if kwargs and has_torch_function(tuple(kwargs.values())):
            return _checked_handle(args, kwargs)
        return fn(*args, **kwargs)

    def _checked_handle(args, kwargs):
        _check_call(fn, public.__name__, args, kwargs)
        return _handle(me, args, kwargs)
    public.__ember_public__ = True
    me = builtin_function_or_method(public) if builtin else public
    me.__ember_public__ = True
    return me



# --- torch function modes -----------------------------------------------------------------------------------------
# NOTE [torch function modes]: a TorchFunctionMode sees every public call made while it is on (torch.overrides'
# modes): ``with Mode(): ember.add(x, y)`` calls ``mode.__torch_function__(ember.add, types, (x, y), {})`` and returns
# what it returns. Entering a mode pushes it on a per-thread stack and adds the PythonTorchFunction key, the highest,
# to the thread's include set: a generated entry point then reaches that key's fallback (dispatch/modes.py) before
# any other, which rebuilds the call as the public function received it. A hand-written public function asks the
# stack itself (``public_function`` above). While its ``__torch_function__`` runs, the mode is off the stack, so
# what it calls (``func(*args, **kwargs)``) runs below it: modes nest as torch's do. The autograd engine runs
# backward with the key excluded, as torch's C++ backward never reaches its Python API.

class _ModeStack(threading.local):
    def __init__(self):
        self.stack = []
        self.subclasses_off = 0     # inside DisableTorchFunction(Subclass): no argument's __torch_function__ runs


_MODES = _ModeStack()


def _sync_key():
    from .dispatcher import STATE
    from .._core.dispatch_key import TORCH_FUNCTION_BIT
    if _MODES.stack:
        STATE.include |= TORCH_FUNCTION_BIT
    else:
        STATE.include &= ~TORCH_FUNCTION_BIT


def call_mode(func, types, args, kwargs):
    """The innermost mode's answer for a public call, given with the mode off the stack."""
    stack = _MODES.stack
    mode = stack.pop()
    _sync_key()
    try:
        return mode.__torch_function__(func, types, args, kwargs)
    finally:
        stack.append(mode)
        _sync_key()


class TorchFunctionMode:
    """Subclass and define ``__torch_function__(self, func, types, args=(), kwargs=None)``; entered as a context
    manager, it sees every public function call (NOTE [torch function modes]).

    >>> import ember
    >>> class Log(TorchFunctionMode):
    ...     def __init__(self): self.seen = []
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         self.seen.append(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log() as m:
    ...     _ = ember.add(ember.ones(2), 1).sum()
    >>> m.seen
    ['ones', 'add', 'sum']
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _MODES.stack.append(self)
        _sync_key()
        return self

    def __exit__(self, *exc):
        stack = _MODES.stack
        if stack and stack[-1] is self:
            stack.pop()
        elif self in stack:
            stack.remove(self)
        _sync_key()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def current_function_modes():
    return tuple(_MODES.stack)


class DisableTorchFunctionSubclass:
    """``with torch._C.DisableTorchFunctionSubclass():`` calls inside run as if no argument defined
    ``__torch_function__``; torch function modes still see them."""

    def __enter__(self):
        _MODES.subclasses_off += 1
        return self

    def __exit__(self, *exc):
        _MODES.subclasses_off -= 1
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """``with torch._C.DisableTorchFunction():`` neither arguments' ``__torch_function__`` nor torch function modes
    see the calls inside."""

    def __enter__(self):
        self._saved, _MODES.stack = _MODES.stack, []
        _sync_key()
        return super().__enter__()

    def __exit__(self, *exc):
        _MODES.stack = self._saved
        _sync_key()
        return super().__exit__(*exc)
