"""ember.jit: TorchScript as eager torch runs it with ``PYTORCH_JIT=0``. ember has no TorchScript compiler
(graph capture is ember.fx and ember.export, compilation ember.compile), so ``script``, ``trace`` and
``script_method`` return what they are given, exactly as torch does when its JIT is disabled: a
``@torch.jit.script`` function or module runs its Python code, with the same results. What needs the
TorchScript format itself (``load``, ``save``, ``freeze``, ``optimize_for_inference``) raises an error saying
so. ``ScriptModule`` is torch's JIT-disabled base class, a plain nn.Module, and ``ScriptFunction`` a class no
function is an instance of, so ``isinstance(m, torch.jit.ScriptModule)`` is False for any eager module, as in
torch. The names that only matter
to the compiler (``ignore``, ``unused``, ``export``, ``interface``, ``annotate``, ``Final``, ``is_scripting``) behave
as they do in eager torch code."""
import warnings

from .._absent import absent
from ..futures import Future  # noqa: F401  torch.jit.Future is torch.futures.Future
from ..nn.modules.module import Module as _Module


def _absent(name):
    return absent(f'ember.jit.{name}', " (TorchScript) is not available in ember: it has no TorchScript compiler. "
                  "Run the function or module eagerly; ember.export and ember.compile capture graphs.")


load = _absent('load')
save = _absent('save')
freeze = _absent('freeze')
optimize_for_inference = _absent('optimize_for_inference')
trace_module = _absent('trace_module')


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself, as ``torch.jit.script`` returns it with ``PYTORCH_JIT=0``: the function or module runs
    eagerly.

    >>> import ember
    >>> @script
    ... def f(x):
    ...     return x * 2
    >>> f(ember.ones(2))
    tensor([2., 2.])
    """
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)       # torch 2.13's, from its own module (hidden by the default filters)
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """``func`` itself, as ``torch.jit.trace`` returns it with ``PYTORCH_JIT=0``; it runs on the example inputs as
    many times as torch's tracer runs it (once to trace; with check_trace, the default, three more times to check
    the trace: counted from the random draws), so its random draws and side effects happen as in torch."""
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning)
    for _ in range(4 if check_trace else 1):
        if example_kwarg_inputs is not None:
            func(**example_kwarg_inputs)
        elif example_inputs is not None:
            func(*(example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    return func


def script_method(fn):
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


class RecursiveScriptModule(ScriptModule):
    pass


class ScriptFunction:
    """TorchScript's compiled function type; no function of ember's is an instance of it."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("ember.jit.ScriptFunction: ember has no TorchScript compiler")


class TracedModule(ScriptModule):
    pass


TopLevelTracedModule = TracedModule


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
    """``@torch.jit.export``: marks a method for the TorchScript compiler; eagerly the method itself."""
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


def __getattr__(name):
    """Names of torch.jit that ember lacks: AttributeError, so that ``hasattr``/``getattr(jit, name, default)``
    feature tests see them missing (the compiler's entry points above raise with the reason instead)."""
    raise AttributeError(f"module 'ember.jit' has no attribute '{name}' (ember has no TorchScript compiler)")
