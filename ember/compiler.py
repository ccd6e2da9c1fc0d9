"""ember.compiler (torch.compiler): the user-facing names of the compiler stack.

``compile`` is ``ember.compile``; ``is_compiling()`` says whether the code runs under capture (library code
uses it to take a path the tracer can record, as ember's Adam does for its bias corrections); ``reset()``
forgets every compiled version; ``disable`` marks a function to run eagerly; ``set_stance`` changes how
compiled callables treat a call (NOTE [compiler stance]); ``list_backends`` names the backends.
"""
__all__ = ['compile', 'reset', 'set_stance', 'list_backends', 'is_compiling', 'is_dynamo_compiling', 'disable', 'allow_in_graph',
           'assume_constant_result']


def compile(*args, **kwargs):
    import ember
    return ember.compile(*args, **kwargs)


def set_stance(stance='default', *, skip_guard_eval_unsafe=False, force_backend=None):
    """Set the compiler's stance: 'default', 'force_eager', 'eager_on_recompile', 'fail_on_recompile',
    'eager_then_compile' or 'aot_eager_then_compile' (NOTE [compiler stance]); a function, context manager or
    decorator, as torch's.

    >>> import ember
    >>> _ = ember.compiler.set_stance('force_eager')       # compiled callables run eagerly from here on
    >>> _ = ember.compiler.set_stance('default')
    """
    from ._dynamo.stance import set_stance as _set_stance
    return _set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe, force_backend=force_backend)


def list_backends(exclude_tags=('debug', 'experimental')):
    """The names ``ember.compile(backend=...)`` accepts, less those tagged with ``exclude_tags``.

    >>> import ember
    >>> ember.compiler.list_backends()
    ['inductor']
    """
    from ._dynamo.backends import list_backends as _list
    return _list(exclude_tags)


def reset():
    from ._dynamo import reset as _reset
    _reset()


def is_compiling():
    """True while ember.compile traces the running code (in this thread)."""
    import sys
    ef = sys.modules.get('ember._dynamo.eval_frame')
    return bool(ef is not None and ef._tracing.on)


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    from ._dynamo import disable as _disable
    return _disable(fn, recursive, reason=reason)


def allow_in_graph(fn):
    """torch's hint that a function may be put in the graph whole; ember's capture traces through every
    function anyway, so this returns ``fn``."""
    return fn


def assume_constant_result(fn):
    """torch's hint that ``fn``'s result may be baked into a compiled graph as a constant; eagerly (and for ember's
    capture, which runs the function while tracing) it is ``fn`` itself."""
    return fn
