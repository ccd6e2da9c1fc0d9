"""``RemovableHandle``: what every ``register_*hook`` returns (torch.utils.hooks.RemovableHandle), for modules,
autograd nodes and tensors, and optimizers alike.

A handle remembers the dicts its hook was added to and its key there; ``remove()`` deletes the hook from each.
It holds those dicts weakly where they allow it (an OrderedDict), so a handle does not keep a module's hook
tables alive, and strongly where they do not (a plain dict).

>>> hooks = {}
>>> h = RemovableHandle(hooks); hooks[h.id] = print
>>> h.remove(); hooks
{}
"""
import itertools
import weakref

_ids = itertools.count()


def _ref(d):
    try:
        return weakref.ref(d)
    except TypeError:            # a plain dict cannot be weakly referenced: keep it
        return lambda: d


class RemovableHandle:
    """A handle that removes the hook with key ``self.id`` from ``hooks_dict`` (and ``extra_dict``)."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = next(_ids)
        extra = [] if extra_dict is None else (extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref = tuple(_ref(d) for d in extra)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
