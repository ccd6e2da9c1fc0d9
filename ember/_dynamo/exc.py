"""The errors and warnings of ember.compile (torch._dynamo.exc)."""

__all__ = ['Unsupported', 'BackendCompilerFailed', 'RecompileLimitWarning']


class Unsupported(RuntimeError):
    """Capture could not continue (a graph break); raised when ``fullgraph=True`` asks for one graph."""


class BackendCompilerFailed(RuntimeError):
    """The backend raised while compiling a captured graph."""


class RecompileLimitWarning(UserWarning):
    """A function recompiled ``cache_size_limit`` times; it runs eagerly from now on."""
