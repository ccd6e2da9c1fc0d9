"""A torch name that ember deliberately does not provide: a function that raises an error saying why.

Used by the namespaces that are importable but partly or wholly absent (``jit``, ``onnx``, ``distributed``),
so that a program fails at the call with the reason, never by silently running something else under torch's
name.

>>> f = absent('ember.jit.script', ' (TorchScript) is not available in ember')
>>> f.__name__
'script'
"""


def absent(qualname, why, error=NotImplementedError):
    """A function named like ``qualname``'s last part that raises ``error(qualname + why)``."""
    def fn(*args, **kwargs):
        raise error(f'{qualname}{why}')
    fn.__name__ = fn.__qualname__ = qualname.rpartition('.')[2]
    fn.__doc__ = f'Not available in ember: {qualname}{why}'
    return fn
