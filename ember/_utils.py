"""torch._utils: the helpers of torch's private ``_utils`` module that published code imports.

fastai imports ``_flatten_dense_tensors``/``_unflatten_dense_tensors`` (its fp16 utilities) and rebuilds tensors with
``_rebuild_tensor_v2``; checkpoints name the ``_rebuild_*`` functions, which ember.serialization implements.
"""
import importlib

from .serialization import (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,  # noqa: F401
                            _rebuild_parameter_with_state)
from .utils.data._utils.worker import ExceptionWrapper  # noqa: F401

__all__ = []


def _flatten_dense_tensors(tensors):
    """The tensors' values, flattened and joined into one contiguous 1-D tensor.

    >>> import ember
    >>> _flatten_dense_tensors([ember.ones(2, 2), ember.zeros(3)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """
    from . import cat
    tensors = list(tensors)
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of ``flat`` shaped like ``tensors`` (the inverse of ``_flatten_dense_tensors``).

    >>> import ember
    >>> [t.shape for t in _unflatten_dense_tensors(ember.arange(7.), [ember.ones(2, 2), ember.zeros(3)])]
    [ember.Size([2, 2]), ember.Size([3])]
    """
    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(out)


def _take_tensors(tensors, size_limit):
    """Groups of tensors of one type, each group's bytes at most ``size_limit`` (a tensor larger than the limit is a
    group of its own), in order within each type: DistributedDataParallel's bucketing helper."""
    buckets = {}
    for t in tensors:
        key = (t.type(), t.device)
        group, size = buckets.get(key, ([], 0))
        n = t.numel() * t.element_size()
        if group and size + n > size_limit:
            yield group
            group, size = [], 0
        group.append(t)
        buckets[key] = (group, size + n)
    for group, _ in buckets.values():
        if group:
            yield group


def _import_dotted_name(name):
    """The object at ``'package.module.attr'``."""
    components = name.split('.')
    obj = importlib.import_module(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


def _element_size(dtype):
    return dtype.itemsize


def _get_obj_state(obj):
    """What ``__reduce_ex__`` saves of an object's Python attributes: its ``__dict__`` (a tensor's holds only what its
    user set) and its slots."""
    getstate = getattr(obj, '__getstate__', None)
    if getstate is not None and getattr(getstate, '__func__', None) is not object.__getstate__:
        return getstate()
    state = dict(getattr(obj, '__dict__', {}))
    slots = {}
    for cls in type(obj).__mro__:
        for name in cls.__dict__.get('__slots__', ()):
            if name not in ('__dict__', '__weakref__') and hasattr(obj, name):
                slots[name] = getattr(obj, name)
    return (state, slots) if slots else state


def _set_obj_state(obj, state):
    """The inverse of ``_get_obj_state``."""
    if isinstance(state, tuple):
        state, slots = state
        for k, v in slots.items():
            setattr(obj, k, v)
    if state:
        for k, v in state.items():
            setattr(obj, k, v)
    return obj


def is_compiling():
    """False: ember's compile traces by running the function, so user code never sees a compiling state."""
    return False


class classproperty:
    """A read-only property of the class (``torch._utils.classproperty``)."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner=None):
        return self.fget(owner)


def _get_available_device_type():
    """The accelerator's device type ('cuda' where the CUDA backend runs), or None, as torch's."""
    import ember
    return 'cuda' if ember.cuda.is_available() else None


def _get_device_module(device_type=None):
    """``ember.<device_type>`` (``ember.cuda`` by default, as torch's)."""
    import ember
    return getattr(ember, device_type or _get_available_device_type() or 'cuda')
