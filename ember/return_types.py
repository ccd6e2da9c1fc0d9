"""ember.return_types: the named result tuples of operators with several named returns, as torch.return_types
(``ember.max(x, 1)`` is ``ember.return_types.max(values=..., indices=...)``). Each type is made once, the first
time an overload group (ember/_ops/overloads.py) or a hand-written function asks for it."""
from collections import namedtuple

from ._core import naming


def _structseq(name, fields):
    """``ember.return_types.<name>``: a named tuple printed as torch prints its structseqs (made once)."""
    cls = globals().get(name)
    if cls is not None:
        return cls
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ',\n'.join(f'{f}={v!r}' for f, v in zip(fields, self))
        return f'{naming.shown}.return_types.{name}(\n{body})'
    # n_fields & co. mark it a struct sequence (as torch.return_types are), so that pytree registers the class
    # itself as a node rather than flattening it as a namedtuple
    n = len(fields)
    cls = type(name, (base,), {'__slots__': (), '__repr__': __repr__, '__module__': 'ember.return_types',
                               'n_fields': n, 'n_sequence_fields': n, 'n_unnamed_fields': 0})
    cls.__qualname__ = name
    globals()[name] = cls
    from .utils import _pytree
    _pytree.register_pytree_node(cls, _pytree._tuple_flatten, lambda values, context: cls._make(values),
                                 flatten_with_keys_fn=_pytree._tuple_flatten_with_keys)
    return cls
