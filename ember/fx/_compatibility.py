"""torch.fx's stability marks: ``@compatibility(is_backward_compatible=...)`` on an fx API (a class or function)
notes in its docstring whether later releases keep it as it is. The mark changes no behaviour; libraries built
on fx (PyG's transformers) put it on their own tracers.

>>> @compatibility(is_backward_compatible=False)
... def f():
...     '''A helper.'''
>>> 'may change' in f.__doc__
True
"""
import textwrap

# what has been marked, and how: {object: True (kept) / False (may change)}
MARKED = {}

_NOTES = {True: ".. note::\n    Backwards-compatibility for this API is guaranteed.\n",
          False: ".. warning::\n    This API is experimental and is *NOT* backward-compatible: it may change or be "
                 "removed in a later release.\n"}


def compatibility(is_backward_compatible):
    """A decorator that records the mark and appends its note to the object's docstring; returns the object."""
    def mark(obj):
        doc = textwrap.dedent(getattr(obj, '__doc__', None) or '')
        try:
            obj.__doc__ = doc + ('\n' if doc else '') + _NOTES[bool(is_backward_compatible)]
        except (AttributeError, TypeError):     # a builtin's docstring cannot be set
            pass
        MARKED[obj] = bool(is_backward_compatible)
        return obj
    return mark
