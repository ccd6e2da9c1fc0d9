"""ember._dynamo: capture, guards and graph breaks under ``ember.compile`` (torch._dynamo's place).

See NOTE [capture and guards] in ``eval_frame.py``; the backends are in ``backends.py``, AOTAutograd in
``ember._functorch.aot_autograd``, the code generator in ``ember._inductor``.
"""
from . import config
from .eval_frame import compile, reset, OptimizedModule, counters, is_dynamo_supported, is_inductor_supported
from .backends import list_backends, register_backend, lookup_backend
from .exc import Unsupported
from .explain import explain, ExplainOutput
from .stance import set_stance

__all__ = ['compile', 'counters', 'lookup_backend', 'config', 'reset', 'explain', 'ExplainOutput', 'list_backends', 'register_backend', 'Unsupported', 'set_stance',
           'OptimizedModule', 'disable', 'mark_dynamic', 'mark_static', 'is_compiling', 'allow_in_graph',
           'assume_constant_result', 'mark_static_address']


def allow_in_graph(fn):
    """torch._dynamo.allow_in_graph: put calls of ``fn`` into the graph without tracing its bytecode. ember's capture
    runs every function under its dispatcher-level tracer (NOTE [capture and guards]), so ``fn``'s operators are
    recorded either way, and eagerly ``fn`` is itself."""
    fn._ember_allow_in_graph = True
    return fn


def assume_constant_result(fn):
    """torch._dynamo.assume_constant_result: a function whose result a trace may take as a constant. ember's
    capture records the operators a call runs and guards on the Python values it reads, so nothing changes; eagerly
    ``fn`` is itself."""
    fn._ember_assume_constant_result = True
    return fn


def mark_static_address(t, guard=False):
    """Mark ``t``'s memory as not moving between calls (torch's hint for CUDA graphs, which ember does not make)."""
    t._dynamo_static_input_type = 'guarded' if guard else 'unguarded'


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Run ``fn`` eagerly (torch._dynamo.disable): compiling it returns it unchanged, and calling it while a
    compiled function is being traced ends that graph (a graph break), since ember's capture cannot leave a
    hole in a graph for Python to fill. The wrapper carries torch's markers (``_torchdynamo_disable``,
    ``_torchdynamo_orig_callable``...), which libraries look for (lightning's tests); a Module is compiled
    with ``disable=True`` instead, as torch's is."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason, wrapping=wrapping)
    from ember.nn import Module
    if isinstance(fn, Module):
        from .eval_frame import compile as _compile
        m = _compile(fn, disable=True)
        m.forward = disable(m.forward, recursive, reason=reason)
        return m
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if is_compiling():
            raise Unsupported(f'{getattr(fn, "__qualname__", fn)} is marked ember._dynamo.disable'
                              + (f': {reason}' if reason else ''))
        return fn(*args, **kwargs)
    wrapper._torchdynamo_disable, wrapper._torchdynamo_disable_msg = True, reason
    wrapper._torchdynamo_disable_recursive, wrapper._torchdynamo_orig_callable = recursive, fn
    wrapper._torchdynamo_wrapper_id = id(wrapper)
    return wrapper


def is_compiling():
    from .eval_frame import _tracing
    return _tracing.on


def mark_dynamic(t, index, min=None, max=None):
    """Trace dimension(s) ``index`` of ``t`` with a symbolic size from the first compile on (NOTE [symbolic
    sizes]), instead of waiting for a size change (torch._dynamo.mark_dynamic)."""
    dims = set(getattr(t, '_dynamo_dynamic_indices', ()))
    dims.update([index] if isinstance(index, int) else index)
    t._dynamo_dynamic_indices = dims


def mark_static(t, index=None):
    """Keep dimension(s) of ``t`` static even under automatic dynamic sizes."""
    dims = set(getattr(t, '_dynamo_dynamic_indices', ()))
    dims.difference_update(range(t.dim()) if index is None else ([index] if isinstance(index, int) else index))
    t._dynamo_dynamic_indices = dims
