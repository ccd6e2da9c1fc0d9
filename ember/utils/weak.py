"""torch.utils.weak: dictionaries keyed by object identity that do not keep their keys alive.

``weakref.WeakKeyDictionary`` compares keys with ``==``, which on tensors is elementwise; these compare by
identity (``is``), as torch's do, so tensors (and any object) can be keys.
"""
import weakref
from collections.abc import MutableMapping

__all__ = ['WeakIdRef', 'WeakIdKeyDictionary', 'WeakTensorKeyDictionary', 'TensorWeakRef']


class WeakIdRef(weakref.ref):
    """A weak reference hashed and compared by its referent's identity (the id taken while it was alive)."""
    __slots__ = ('_id',)

    def __init__(self, key, callback=None):
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self):
        return self._id

    def __eq__(self, other):
        a, b = self(), other() if isinstance(other, weakref.ref) else None
        if a is not None and b is not None:
            return a is b
        return self is other


class WeakIdKeyDictionary(MutableMapping):
    """A mapping whose entries go away with their keys; keys are matched by identity."""

    def __init__(self, dict=None, ref_type=WeakIdRef):
        self.data = {}
        self.ref_type = ref_type
        selfref = weakref.ref(self)

        def remove(k):
            owner = selfref()
            if owner is not None:
                owner.data.pop(k, None)
        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value):
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key):
        del self.data[self.ref_type(key)]

    def __contains__(self, key):
        try:
            return self.ref_type(key) in self.data
        except TypeError:
            return False

    def __iter__(self):
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __len__(self):
        return sum(1 for ref in list(self.data) if ref() is not None)

    def __repr__(self):
        return f'<{type(self).__name__} at {id(self):#x}>'


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor (``TensorWeakRef(t)()`` is ``t`` while it lives, else None)."""
    __slots__ = ('ref',)

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
