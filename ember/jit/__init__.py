"""ember.jit: torch.jit's tracing and TorchScript files; everything else as eager torch runs it with
``PYTORCH_JIT=0``.

``trace(module_or_fn, example_inputs)`` records one run as a graph of aten operators (ember's make_fx tracer, NOTE
[TorchScript from a trace] in ``_trace.py``) and returns a ``TracedModule`` (an nn.Module sharing the module's
parameters, buffers and submodules) or, for a function, a ``ScriptFunction``. Calling either runs the original
module or function eagerly (hooks and all), so results are the eager ones; the recorded graph is what ``.graph``
shows, ``.code`` prints as TorchScript and ``.save(f)`` / ``save(m, f)`` write as a TorchScript archive that
``torch.jit.load`` reads (NOTE [TorchScript archive] in ``_archive.py``); the file's code is flat (one forward on
the top class, in ``ops.aten`` calls) where torch's keeps a forward per submodule. A function whose trace
cannot be recorded (non-tensor inputs or outputs, an operation the tracer refuses) still runs; its ``.code`` and
``.save`` raise with the reason.

``load(f)`` reads a TorchScript archive written by ember or torch without running code from the file: data.pkl
and constants.pkl go through ember's restricted unpickler (``__torch__.*`` classes as attribute holders), and the
TorchScript source is parsed with ``ast`` and interpreted over ember's operators, a subset only (NOTE [TorchScript
interpreter] in ``_interpreter.py``): what traced modules of layers, convolutions, normalisations and
attention written with matmul use. Anything else raises NotImplementedError naming the construct and line.

``trace_module(module, {'forward': inputs, 'other': inputs})`` traces several methods the same way. A traced
call that fails raises torch's RuntimeError, "The following operation failed in the TorchScript interpreter."
with the operator's error under it, whatever the eager code raised (an IndexError, a Python assert).

``script(module)`` returns torch's ``RecursiveScriptModule`` (see the class): the module's state, attributes and
exported methods, hooks refused, TorchScript's errors, while running the module's Python code (ember has no
TorchScript compiler, so it cannot be saved). A ``@torch.jit.script`` function, and anything with
``PYTORCH_JIT=0``, comes back as it is, as torch returns it with its JIT disabled. ``freeze`` and
``optimize_for_inference`` need TorchScript's compiler and raise. ``ScriptModule`` is torch's base class, an
nn.Module (``class M(torch.jit.ScriptModule)`` with ``@torch.jit.script_method`` methods runs eagerly), so an
eager module is no instance of it, as in torch. The names that only matter to the compiler (``ignore``,
``unused``, ``export``, ``interface``, ``annotate``, ``Final``, ``is_scripting``) behave as they do in eager
torch code.

>>> import ember, io
>>> m = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()).eval()
>>> traced = trace(m, ember.randn(4, 3))
>>> for line in traced.code.splitlines()[-3:]:       # after the checks of the input's sizes
...     print(line)
  linear = ops.aten.linear(input, getattr(self, "0").weight, getattr(self, "0").bias)
  relu = ops.aten.relu(linear)
  return relu
>>> buf = io.BytesIO(); traced.save(buf); _ = buf.seek(0)
>>> loaded = load(buf)
>>> x = ember.randn(4, 3)
>>> bool((loaded(x) == m(x)).all())
True
"""
import warnings

from .._absent import absent

_NOTHING = object()
from ..futures import Future  # noqa: F401  torch.jit.Future is torch.futures.Future
from ..nn.modules.module import Module as _Module


def _absent(name):
    return absent(f'ember.jit.{name}', " (TorchScript) is not available in ember: it has no TorchScript compiler. "
                  "Run the function or module eagerly; ember.export and ember.compile capture graphs.")


freeze = _absent('freeze')
optimize_for_inference = _absent('optimize_for_inference')


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """A module as torch's scripted module (a ``RecursiveScriptModule``, see the module docstring: it runs the
    module's Python code, and fails and refuses hooks as TorchScript does); a function, a ScriptModule, or
    anything with ``PYTORCH_JIT=0`` in the environment comes back as it is, as torch returns it with its JIT
    disabled.

    >>> import ember
    >>> @script
    ... def f(x):
    ...     return x * 2
    >>> f(ember.ones(2))
    tensor([2., 2.])
    >>> type(script(ember.nn.Linear(2, 2))).__name__
    'RecursiveScriptModule'
    """
    import os
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)       # torch 2.13's, from its own module (hidden by the default filters)
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    if isinstance(obj, _Module) and not isinstance(obj, ScriptModule) and os.environ.get('PYTORCH_JIT') != '0':
        return RecursiveScriptModule._script(obj)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """A ``TracedModule`` (for a module) or ``ScriptFunction`` (for a function) recording one run of ``func`` on
    the example inputs (see the module docstring). ``func`` runs as many times as under torch's tracer (once to
    trace; with check_trace, the default, three more times to check the trace: counted from the random draws),
    so its random draws and side effects happen as in torch.

    >>> import ember
    >>> f = trace(lambda a, b: a * b + 1, (ember.ones(2), ember.ones(2)))
    >>> f(ember.ones(2), ember.full((2,), 2.0))
    tensor([3., 3.])
    """
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)
    if example_kwarg_inputs is not None:
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
    elif example_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if isinstance(getattr(func, '__self__', None), _Module) and getattr(func, '__name__', None) == 'forward':
        # a module's bound forward traces the module, as torch's (a TopLevelTracedModule, with .training)
        inputs = example_kwarg_inputs if example_kwarg_inputs is not None else example_inputs
        return trace_module(func.__self__, {'forward': inputs}, check_trace=check_trace, strict=strict,
                            example_inputs_is_kwarg=example_kwarg_inputs is not None)
    root = func if isinstance(func, _Module) else None
    cap = _trace_call(func, func, example_kwarg_inputs if example_kwarg_inputs is not None else example_inputs,
                      example_kwarg_inputs is not None, strict, check_trace, root)
    if root is not None:
        return TopLevelTracedModule(root, cap)
    return ScriptFunction._traced(func, cap)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Trace several methods of ``mod``: ``inputs`` maps a method's name to its example inputs (a tuple, one
    tensor, or with ``example_inputs_is_kwarg=True`` a dict of keyword arguments). The result is a
    ``TracedModule`` whose ``forward`` (if traced) and other traced methods run the module's own methods, each
    with its recorded graph. ``check_inputs`` is a list of such dicts: each traced method runs on them as
    torch's check does, so that a method which cannot take them fails here.

    >>> import ember
    >>> m = ember.nn.Linear(3, 2)
    >>> t = trace_module(m, {'forward': ember.ones(1, 3)})
    >>> bool((t(ember.ones(1, 3)) == m(ember.ones(1, 3))).all())
    True
    """
    warnings.warn("`torch.jit.trace_module` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)
    if not isinstance(mod, _Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    captures = {}
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg and isinstance(example, dict):
            valid = _argument_names(method, None)
            for key in example:
                if key not in valid:
                    raise NameError(f"'{key}' is not in forward() method's arguments,\n"
                                    f"                         valid arguments name are [{','.join(valid)}]")
        call = mod if name == 'forward' else method
        kwargs = example_inputs_is_kwarg and isinstance(example, dict)
        example = example if kwargs else _make_tuple(example)
        captures[name] = _trace_call(call, method, example, kwargs, strict, check_trace and not check_inputs, mod)
        for check in (check_inputs or []) if check_trace else []:
            given = check[name]
            if kwargs:
                call(**given)
            else:
                call(*_make_tuple(given))
    from ._trace import Capture
    traced = TopLevelTracedModule(mod, captures.get('forward', Capture(root=mod, error="forward was not traced")))
    for name, cap in captures.items():
        if name != 'forward':
            object.__setattr__(traced, name, _TracedMethod._traced(getattr(mod, name), cap))
    return traced


def _make_tuple(example):
    """trace_module's example inputs as a tuple: one tensor or dict is one argument, a list its elements."""
    import ember
    if isinstance(example, (ember.Tensor, dict)):
        return (example,)
    return example if isinstance(example, tuple) else tuple(example)


def _trace_call(call, signature_of, example, as_kwargs, strict, check_trace, root):
    """Record ``call`` on its example inputs (positional: a tuple or one value; or a dict of keywords), then run
    it three more times if ``check_trace``, as torch's checks do."""
    from ._trace import capture
    if as_kwargs:
        keys, args = list(example), tuple(example.values())
        run = (lambda *values: call(**dict(zip(keys, values))))
    else:
        args = example if isinstance(example, tuple) else (example,)
        keys, run = None, call
    cap = _record(capture, run, args, keys or _argument_names(signature_of, len(args)), root)
    if strict and cap.graph is not None and _dict_output(cap.graph):
        raise RuntimeError("Encountering a dict at the output of the tracer might cause the trace to be incorrect, this "
                           "is only valid if the container structure does not change based on the module's inputs. "
                           "Consider using a constant container instead (e.g. for `list`, use a `tuple` instead. for "
                           "`dict`, use a `NamedTuple` instead). If you absolutely need this and know the side "
                           "effects, pass strict=False to trace() to allow this behavior.")
    for _ in range(3 if check_trace else 0):
        run(*args)
    return cap


def _run_traced(fn, args, kwargs):
    """Call a traced function or method as torch's TorchScript interpreter does: any failure is its RuntimeError,
    "The following operation failed in the TorchScript interpreter.", with the cause under it."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        if isinstance(e, RuntimeError) and str(e).startswith(_INTERPRETER_FAILED):
            raise
        raise RuntimeError(f"{_INTERPRETER_FAILED}\nTraceback of TorchScript (most recent call last):\n"
                           f"{type(e).__name__}: {e}") from e


_INTERPRETER_FAILED = "The following operation failed in the TorchScript interpreter."


def _run_scripted(fn, args, kwargs):
    """Call a scripted module's code as TorchScript runs it: an operator that fails raises RuntimeError, and the
    code's own ``raise``/``assert`` raises ``torch.jit.Error``, both with the interpreter's first line. The
    frame that raised tells them apart: an operator's error comes from ember's own code."""
    import os
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        if isinstance(e, (RuntimeError, Error)) and str(e).startswith(_INTERPRETER_FAILED):
            raise
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        by_operator = os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(here + os.sep)
        if by_operator and not isinstance(e, AssertionError):
            raise RuntimeError(f"{_INTERPRETER_FAILED}\nTraceback of TorchScript (most recent call last):\n"
                               f"RuntimeError: {e}") from e
        cause = f"RuntimeError: AssertionError: {e}" if isinstance(e, AssertionError) else \
            f"builtins.{type(e).__name__}: {e}"
        raise Error(f"{_INTERPRETER_FAILED}\nTraceback of TorchScript (most recent call last):\n{cause}") from e


def _dict_output(graph):
    out = next(n for n in graph.nodes if n.op == 'output').args[0]
    return isinstance(out, dict)


def _record(capture, run, args, names, root):
    """The trace's first run, recorded; where recording fails, an eager run instead (its error is the Capture's)."""
    from ._trace import Capture
    import ember
    if not all(isinstance(a, ember.Tensor) for a in args):
        run(*args)
        return Capture(root=root, error="ember records traces whose inputs are tensors (not nested containers)")
    try:
        return capture(run, args, names, root)
    except Exception as e:      # noqa: BLE001 (the eager run below raises the function's own errors)
        run(*args)
        return Capture(root=root, error=f'{type(e).__name__}: {e}')


def _argument_names(func, n):
    import inspect
    target = func.forward if isinstance(func, _Module) else func
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if n is None:
        return params
    return [params[i] if i < len(params) else f'argument_{i + 1}' for i in range(n)]


def save(m, f, _extra_files=None):
    """Write a traced module or function (``trace``'s result) to ``f`` as a TorchScript archive, which
    ``torch.jit.load`` and ``ember.jit.load`` read; a module that was not traced has no ``save``, as in torch."""
    if not hasattr(m, 'save'):
        raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save' (ember saves TorchScript files of "
                             f"traced modules and functions only: ember.jit.trace(module, example_inputs))")
    m.save(f, _extra_files=_extra_files)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """The module of a TorchScript archive (written by ``torch.jit.save`` or ``ember.jit.save``), run by ember's
    interpreter of its code, which executes nothing from the file (NOTE [TorchScript interpreter])."""
    from ._archive import Archive
    from ._interpreter import Interpreter
    import os
    if isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {f} does not exist")
    archive = Archive(f, map_location)
    if _extra_files is not None:        # torch fills the dict's values with the files' bytes (b'' if absent)
        for name in _extra_files:
            _extra_files[name] = archive.extra.get(name, b'')
    return RecursiveScriptModule._build(archive.obj, Interpreter(archive))


def script_method(fn):
    """Marks a ScriptModule's method for compilation in torch; ember's scripted modules run Python: ``fn`` itself."""
    warnings.warn("`torch.jit.script_method` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)       # torch 2.13's, from its own module (hidden by the default filters)
    return fn


def fork(func, *args, **kwargs):
    """``torch.jit.fork`` in eager code: ``func(*args, **kwargs)`` runs now and its result comes back as a completed
    Future, which ``wait`` unwraps (torchkbnufft interpolates its tables through fork/wait)."""
    from ..futures import Future
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """The value of a Future from ``fork``."""
    return future.wait()


class ScriptModule(_Module):
    """TorchScript's module base class, as torch defines it with its JIT disabled: a plain nn.Module, so that
    ``class M(torch.jit.ScriptModule)`` with ``@torch.jit.script_method`` methods runs eagerly (rwkv's default
    path). Modules built otherwise are not instances of it."""

    def __init__(self, arg=None):
        super().__init__()

    def __setattr__(self, name, value):
        if isinstance(value, Attribute):        # ``self.x = torch.jit.Attribute(3, int)`` stores 3
            value = value.value
        super().__setattr__(name, value)


def _mirror(m, orig, wrap):
    """Make the wrapper ``m`` (a scripted or traced module) stand for ``orig``: the module's parameter and buffer
    dictionaries themselves (so ``.to()``, ``load_state_dict`` and optimizers reach the module), ``wrap(sub)`` for
    each submodule, its mode, and its class name as ``original_name``."""
    d = m.__dict__
    d['_parameters'], d['_buffers'] = orig._parameters, orig._buffers
    d['_non_persistent_buffers_set'] = orig._non_persistent_buffers_set
    for name, sub in orig._modules.items():
        m.add_module(name, None if sub is None else wrap(sub))
    m.training = orig.training
    m.original_name = type(orig).__name__


class RecursiveScriptModule(ScriptModule):
    """A module loaded from a TorchScript archive (``load``), or a scripted module (``script``).

    Loaded: its parameters, buffers and submodules are those of the file's objects, and ``forward`` runs the
    file's TorchScript code through ember's interpreter (NOTE [TorchScript interpreter]); ``code`` is its
    forward's source.

    Scripted: it shares the module's parameter and buffer dictionaries (``.to()``, ``load_state_dict`` and
    optimizers reach the module), its submodules are RecursiveScriptModules of theirs, and ``forward`` runs the
    module's Python code, with TorchScript's errors (``_run_scripted``). As torch's, it shows the module's plain
    attributes and its ``@torch.jit.export`` methods, not its other methods, and new hooks are refused (the
    module's own, registered before scripting, run). ember has no TorchScript compiler, so it has no ``code``
    and cannot be saved; a trace can (``ember.jit.trace``).

    ``original_name`` is the module's class name in both."""
    _scripted = None        # the module a scripted one runs

    @classmethod
    def _script(cls, orig):
        m = cls()
        _mirror(m, orig, lambda sub: sub if isinstance(sub, ScriptModule) else cls._script(sub))
        m.__dict__['_scripted'] = orig
        return m

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            orig = self.__dict__.get('_scripted')
            if orig is None or name.startswith('__'):
                raise
            value = getattr(orig, name, _NOTHING)
            if value is _NOTHING or (getattr(value, '__self__', None) is orig and
                                     not getattr(value, '_ember_jit_export', False)):
                raise
            return value

    def __setattr__(self, name, value):
        orig = self.__dict__.get('_scripted')
        if orig is not None and isinstance(value, _Module) and name in self._modules:
            if not isinstance(value, ScriptModule):
                raise RuntimeError(f"Cannot re-assign modules in a ScriptModule with non-scripted module, tried to "
                                   f"replace existing module '{name}': {value!r}")
            inner = value.__dict__.get('_scripted')
            setattr(orig, name, value if inner is None else inner)     # the module's code calls the new one
        if orig is not None and not name.startswith('_') and name not in ('training', 'original_name') and \
                name in orig.__dict__:      # a plain attribute of the module: scripted code reads that one
            setattr(orig, name, value)
            return
        super().__setattr__(name, value)

    def train(self, mode=True):
        super().train(mode)
        if self._scripted is not None:
            self._scripted.training = mode
        return self

    def _get_name(self):
        return 'RecursiveScriptModule'

    def extra_repr(self):
        return f'original_name={self.original_name}'

    def _refuse_hook(self, name):
        raise RuntimeError(f"{name} is not supported on ScriptModules")

    def register_forward_hook(self, *args, **kwargs):
        self._refuse_hook('register_forward_hook')

    def register_forward_pre_hook(self, *args, **kwargs):
        self._refuse_hook('register_forward_pre_hook')

    def register_full_backward_hook(self, *args, **kwargs):
        self._refuse_hook('register_full_backward_hook')

    def register_full_backward_pre_hook(self, *args, **kwargs):
        self._refuse_hook('register_full_backward_pre_hook')

    def register_backward_hook(self, *args, **kwargs):
        self._refuse_hook('register_backward_hook')

    def save(self, f, _extra_files=None):
        raise NotImplementedError("ember has no TorchScript compiler, so it cannot write a scripted or loaded "
                                  "module's TorchScript; save a trace instead: ember.jit.trace(model, "
                                  "example_inputs).save(f)")

    @classmethod
    def _build(cls, obj, interpreter):
        from ._archive import ScriptObject
        m = cls()
        m._qualified_name = obj.qualified_name
        m.original_name = obj.qualified_name.rpartition('.')[2]
        m._interpreter = interpreter
        _, decls, _ = interpreter.class_of(obj.qualified_name)
        params, buffers = decls.get('__parameters__', []), decls.get('__buffers__', [])
        names = []
        for name, value in vars(obj).items():
            if name in params:
                from ..nn.parameter import Parameter
                m.register_parameter(name, None if value is None else Parameter(value, value.requires_grad))
            elif name in buffers:
                m.register_buffer(name, value)
            elif isinstance(value, ScriptObject):
                m.add_module(name, cls._build(value, interpreter))
            elif name == 'training':
                m.training = bool(value)
            elif name.startswith('_') or not name.isidentifier() or hasattr(type(m), name):
                if value is not None:      # torch writes _is_full_backward_hook = None: nothing else is taken
                    raise NotImplementedError(f"torch.jit.load: attribute {name!r} of {m.original_name} is not a "
                                              f"parameter, buffer, submodule or plain value name")
                continue
            elif value is None or isinstance(value, (bool, int, float, str)):
                setattr(m, name, value)
            else:
                raise NotImplementedError(f"torch.jit.load: attribute {name} of {m.original_name} is a "
                                          f"{type(value).__name__}, which ember's loader does not take")
            names.append(name)
        m._script_attributes = frozenset(names)
        return m

    def forward(self, *args, **kwargs):
        if self._scripted is not None:
            return _run_scripted(self._scripted, args, kwargs)
        return self._interpreter.call(self, 'forward', args, kwargs)

    @property
    def code(self):
        if self._scripted is not None:
            raise NotImplementedError("ember has no TorchScript compiler: a scripted module runs its Python code "
                                      "and has no TorchScript source (ember.jit.trace records one)")
        return self._interpreter.class_of(self._qualified_name)[2]['forward'].code


class ScriptFunction:
    """A traced function (``trace(fn, inputs)``): calling it calls ``fn``; ``code``, ``graph`` and ``save`` are
    those of the recorded run. Only ``trace`` makes one; no plain function is an instance of it."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("ember.jit.ScriptFunction: made by ember.jit.trace(fn, example_inputs) only")

    @classmethod
    def _traced(cls, fn, capture):
        self = object.__new__(cls)
        self._fn, self._capture = fn, capture
        self.name = self.__name__ = getattr(fn, '__name__', 'fn')
        return self

    def __call__(self, *args, **kwargs):
        return _run_traced(self._fn, args, kwargs)

    @property
    def graph(self):
        return _recorded(self._capture).graph

    @property
    def code(self):
        return _code(self._capture, f'def {self.name if self.name.isidentifier() else "fn"}(')

    def save(self, f, _extra_files=None):
        from ._archive import write_archive
        from ._trace import forward_source
        write_archive(f, PlaceholderModule(), forward_source(_recorded(self._capture), '__torch__.?'), _extra_files)


class _TracedMethod(ScriptFunction):
    """A method other than ``forward`` traced by ``trace_module``: calling it calls the module's method; ``graph``
    and ``code`` are those of its recorded run (its code is a method: ``def name(self, ...)``)."""

    @property
    def code(self):
        return _code(self._capture, 'def forward(').replace('def forward(', f'def {self.name}(', 1)


class PlaceholderModule(_Module):
    """The module a traced function is saved as (torch's ``__torch__.PlaceholderModule``): no state, its forward
    the function."""
    __module__ = '__main__'


def _recorded(capture):
    if capture.error is not None:
        raise NotImplementedError(f"this trace has no recorded graph (it runs eagerly only): {capture.error}")
    return capture


def _code(capture, head):
    """``.code`` as torch prints it: the forward's source with ``self`` untyped."""
    from ._trace import forward_source
    source, _ = forward_source(_recorded(capture), '__torch__.?')
    source = source.replace('def forward(self: __torch__.?', 'def forward(self', 1)
    return source if head == 'def forward(' else source.replace('def forward(self,\n    ', head, 1)


class TracedModule(ScriptModule):
    """A traced module (``trace(module, inputs)``): it holds the module's own parameters and buffers (the same
    dictionaries, so ``.to()`` and ``load_state_dict`` reach the module), its submodules as TracedModules of
    theirs, and calling it runs the module eagerly; ``code``, ``graph`` and ``save`` are those of the recorded
    run. Its name and repr are the module's class (``original_name``), as torch prints them."""

    def __init__(self, orig, capture=None):
        super().__init__()
        from ._trace import Capture
        _mirror(self, orig, lambda sub: TracedModule(
            sub, Capture(root=sub, error="a submodule's calls are recorded in its parent's graph")))
        self._trace = (orig, capture)        # a tuple: the original module is no submodule of this one

    def forward(self, *args, **kwargs):
        return _run_traced(self._trace[0], args, kwargs)

    def train(self, mode=True):
        super().train(mode)
        self._trace[0].training = mode
        return self

    def _get_name(self):
        return self.original_name

    def extra_repr(self):
        return f'original_name={self.original_name}'

    @property
    def graph(self):
        return _recorded(self._trace[1]).graph

    @property
    def code(self):
        return _code(self._trace[1], 'def forward(')

    def save(self, f, _extra_files=None):
        from ._archive import write_archive
        from ._trace import forward_source
        write_archive(f, self._trace[0], forward_source(_recorded(self._trace[1]), '__torch__.?'), _extra_files)


class TopLevelTracedModule(TracedModule):
    """What ``trace`` and ``trace_module`` return for a module; its submodules are TracedModules."""


class optimized_execution:
    """``with torch.jit.optimized_execution(False):``: a TorchScript setting, nothing to change eagerly."""

    def __init__(self, should_optimize):
        self.should_optimize = should_optimize

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def ignore(drop=False, **kwargs):
    """Eager code runs ``@torch.jit.ignore`` functions as they are."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def annotate(the_type, the_value):
    """``torch.jit.annotate(List[int], [])``: a type hint for TorchScript; eager code gets the value back."""
    return the_value


def export(fn):
    """``@torch.jit.export``: marks a method for the TorchScript compiler; eagerly the method itself, which a
    scripted module shows (its other methods it does not, as torch's)."""
    fn._ember_jit_export = True
    return fn


def interface(obj):
    """``@torch.jit.interface``: a TorchScript interface type; eagerly the class itself."""
    return obj


def is_scripting():
    """False: ember never runs code under TorchScript."""
    return False


def is_tracing():
    return False


class Final:
    """``torch.jit.Final[int]``: a type annotation, meaningful only to TorchScript."""

    def __class_getitem__(cls, item):
        return item


def script_if_tracing(fn):
    """Scripts ``fn`` only while a trace runs; eagerly (always, in ember) it is ``fn``."""
    return fn


def _overload(func):
    """``@torch.jit._overload``: declares a TorchScript overload signature; eagerly the function itself."""
    return func


def _overload_method(func):
    return func


class TracerWarning(Warning):
    """The category of TorchScript tracer warnings (libraries filter it; ember never traces, so never warns)."""


class Error(Exception):
    """``torch.jit.Error`` (torch._C.JITException): the exception TorchScript code raises; ember never raises it,
    but programs catch it by name."""



def _get_trace_graph(f, args=(), kwargs=None, strict=True, _force_outplace=False, return_inputs=False,
                     _return_inputs_states=False):
    """torch's TorchScript trace of ``f`` as a graph (what mmengine's and fvcore's flop counters walk); ember has no
    TorchScript tracer: its graphs come from ember.fx and make_fx, and its flop counts from
    ember.utils.flop_counter.FlopCounterMode."""
    raise RuntimeError("torch.jit._get_trace_graph: ember has no TorchScript tracer; count flops with "
                       "torch.utils.flop_counter.FlopCounterMode, or trace with torch.fx / make_fx")


class Attribute(tuple):
    """``torch.jit.Attribute(value, type)``: a value with its TorchScript type, as torch's named tuple; a
    ScriptModule subclass stores the value itself."""
    __slots__ = ()

    def __new__(cls, value, type):
        return super().__new__(cls, (value, type))

    value = property(lambda self: self[0])
    type = property(lambda self: self[1])

    def __repr__(self):
        return f'Attribute(value={self[0]!r}, type={self[1]!r})'


def _eager_isinstance(obj, target_type):
    """``torch.jit.isinstance(obj, List[Tensor])``: ``isinstance`` that also checks the typing generics
    TorchScript refines with (List, Dict, Tuple, Optional/Union), element by element, eagerly. An empty
    container cannot show its element type, so it matches any, with torch's warning.

    >>> import ember
    >>> from typing import Dict, List
    >>> ember.jit.isinstance([ember.ones(1)], List[ember.Tensor])
    True
    >>> ember.jit.isinstance({'a': 1}, Dict[str, ember.Tensor])
    False
    """
    import collections.abc
    if isinstance(target_type, collections.abc.Container):
        if not isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a tuple of types")
        return any(_eager_isinstance(obj, t) for t in target_type)
    return _matches(obj, target_type)


def _matches(obj, tp):
    import types
    import typing
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    bare = {list: 'list', dict: 'dict', tuple: 'tuple', typing.List: 'List', typing.Dict: 'Dict',
            typing.Tuple: 'Tuple', typing.Optional: 'Optional'}.get(tp)
    if bare is not None:
        if bare.lower() == 'dict':
            raise RuntimeError(f"Attempted to use {bare} without contained types. Please add contained type, e.g. "
                               f"{bare}[int, int]")
        raise RuntimeError(f"Attempted to use {bare} without a contained type. Please add a contained type, e.g. "
                           f"{bare}[int]")
    if origin is None:
        return isinstance(obj, tp)
    if origin is typing.Union or origin is types.UnionType:
        return obj is None or any(_matches(obj, t) for t in args)
    if not isinstance(obj, origin):
        return False
    if origin in (list, dict, tuple) and not obj:
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in eager mode. For "
                      "example, List[int] would become list and therefore falsely return True for List[float] or "
                      "List[str].")
    if origin is list:
        return all(_matches(e, args[0]) for e in obj)
    if origin is dict:
        return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return len(obj) == len(args) and all(_matches(e, t) for e, t in zip(obj, args))
    return False


class strict_fusion:
    """``with torch.jit.strict_fusion():`` asserts fusion inside TorchScript; eagerly it warns, as torch's."""

    def __init__(self):
        warnings.warn("Only works in script mode")

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_FUSION = {'onednn': False, 'strategy': [('STATIC', 2), ('DYNAMIC', 10)]}


def enable_onednn_fusion(enabled):
    """TorchScript's oneDNN fuser switch: kept, read back by ``onednn_fusion_enabled``; ember runs no fuser."""
    _FUSION['onednn'] = bool(enabled)


def onednn_fusion_enabled():
    return _FUSION['onednn']


def set_fusion_strategy(strategy):
    """TorchScript's fusion strategy (``[('STATIC', 2), ('DYNAMIC', 10)]``): kept; returns the previous one."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning)
    old, _FUSION['strategy'] = _FUSION['strategy'], list(strategy)
    return old


def __getattr__(name):
    """``torch.jit.isinstance`` (not a global here: it would hide the builtin in this module); names of torch.jit
    that ember lacks: AttributeError, so that ``hasattr``/``getattr(jit, name, default)``
    feature tests see them missing (the compiler's entry points above raise with the reason instead)."""
    if name == 'isinstance':
        return _eager_isinstance
    raise AttributeError(f"module 'ember.jit' has no attribute '{name}' (ember has no TorchScript compiler)")
