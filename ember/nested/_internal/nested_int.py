"""The nested int: the size of a jagged tensor's ragged dimension (torch's ``j1``).

NOTE [nested ints] -- a jagged tensor of shape (B, j1, D) has no single size at dim 1; torch gives that dim a SymInt
whose node (NestedIntNode) stands for "the lengths these offsets describe". Two nested ints are equal when they come
from the same offsets tensor (an operator that keeps the offsets keeps the nested int, so ``(nt + 1).shape[1] ==
nt.shape[1]``); a nested int is never equal to a plain int, is known to be at least 2 (``j1 >= 2`` is True, ``j1 >= 3``
raises), can be scaled by an int (strides: ``3*j1``), and has no int value (``int(j1)`` raises).

ember's ``NestedInt`` behaves the same and prints the same (``j1``, ``3*j1``); it is not a ``SymInt`` (ember's SymInt is
an int with a hint, NOTE [symbolic sizes]), so ``isinstance(j1, torch.SymInt)`` is False here where torch says True.
It carries ``expr`` (its printed form), which is how ``Size`` knows to keep a symbolic size as it is.
"""
import weakref

_counter = [1]
# id(offsets or lengths tensor) -> (weak reference to it, its nested int): keyed by identity, as torch's
# WeakTensorKeyDictionary (a WeakKeyDictionary would compare tensors with ==); an entry goes with its tensor
_registry = {}


def get_tensor_nested_int(tensor):
    """The nested int of the ragged dimension described by ``tensor`` (offsets or lengths): made once per tensor."""
    key = id(tensor)
    entry = _registry.get(key)
    if entry is None or entry[0]() is not tensor:
        entry = _registry[key] = (weakref.ref(tensor, lambda _, key=key: _registry.pop(key, None)),
                                  NestedInt(_counter[0]))
        _counter[0] += 1
    return entry[1]


def set_tensor_nested_int(tensor, j):
    """Let ``tensor`` (a copy of offsets) stand for the nested int ``j`` too (``copy.deepcopy`` of a nested tensor
    keeps its shape, as torch's)."""
    key = id(tensor)
    _registry[key] = (weakref.ref(tensor, lambda _, key=key: _registry.pop(key, None)), j)


class NestedInt:
    """``j<id>`` times ``coeff``: a ragged size (NOTE [nested ints]).

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(4, 3)], layout=ember.jagged)
    >>> j = nt.shape[1]
    >>> j == nt.shape[1], j == 2, j >= 2
    (True, False, True)
    """
    __slots__ = ('id', 'coeff', 'expr', '__weakref__')

    def __init__(self, id, coeff=1):
        self.id, self.coeff = id, coeff
        self.expr = f'j{id}' if coeff == 1 else f'{coeff}*j{id}'

    def __repr__(self):
        return self.expr

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, NestedInt):
            return self.id == other.id and self.coeff == other.coeff
        if isinstance(other, int):
            return False
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return hash((self.id, self.coeff))

    def __bool__(self):
        return True

    def _compare(self, other, name, lower_ok):
        """A nested int is >= 2 and nothing more: what follows from that answers, anything else is indeterminate."""
        if isinstance(other, NestedInt):
            if self == other:
                return name in ('ge', 'le')
        elif isinstance(other, int):
            if lower_ok(other):
                return name in ('ge', 'gt')
        raise ValueError(f'{name}: relation is indeterminate')

    def __ge__(self, other):
        return self._compare(other, 'ge', lambda o: o <= 2)

    def __gt__(self, other):
        return self._compare(other, 'gt', lambda o: o < 2)

    def __lt__(self, other):
        return self._compare(other, 'lt', lambda o: o <= 2)

    def __le__(self, other):
        return self._compare(other, 'le', lambda o: o < 2)

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return NestedInt(self.id, self.coeff * other)
        return NotImplemented

    __rmul__ = __mul__

    def __int__(self):
        raise TypeError(f'cannot convert the nested int {self} to an int: it stands for several lengths')

    __index__ = __int__
