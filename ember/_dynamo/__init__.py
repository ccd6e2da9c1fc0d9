"""ember._dynamo: capture, guards and graph breaks under ``ember.compile`` (torch._dynamo's place).

See NOTE [capture and guards] in ``eval_frame.py``; the backends are in ``backends.py``, AOTAutograd in
``ember._functorch.aot_autograd``, the code generator in ``ember._inductor``.
"""
from . import config
from .eval_frame import compile, reset, OptimizedModule, counters
from .backends import list_backends, register_backend, lookup_backend
from .exc import Unsupported
from .explain import explain, ExplainOutput

__all__ = ['config', 'reset', 'explain', 'ExplainOutput', 'list_backends', 'register_backend', 'Unsupported',
           'OptimizedModule', 'disable', 'mark_dynamic', 'is_compiling']


def disable(fn=None, recursive=True):
    """Run ``fn`` eagerly even inside a compiled function (torch._dynamo.disable)."""
    if fn is None:
        return lambda f: disable(f, recursive)
    return fn


def is_compiling():
    from .eval_frame import _tracing
    return _tracing[0]


def mark_dynamic(t, index, min=None, max=None):
    """torch marks a dimension as symbolic here; ember has no symbolic sizes (SymInt), so a compiled
    version stays specialised to each size it sees."""
    raise NotImplementedError('ember._dynamo.mark_dynamic: ember has no symbolic sizes (SymInt); a compiled '
                              'function compiles one version per input shape (up to config.cache_size_limit)')
