"""``default_collate`` and ``default_convert``: samples to batches, NumPy data to tensors.

Same rules and results as torch's: tensors and NumPy arrays are stacked along a
new first dimension, Python floats become float64 tensors and ints int64,
strings stay lists, and mappings, namedtuples and sequences are collated field
by field. Stacking goes through NumPy straight into the output array; inside
a DataLoader worker that array lives in shared memory (see shm.py), so the
batch reaches the main process without another copy.
"""
import collections.abc
import copy
import re

import numpy as np

import ember
from . import shm

__all__ = ['collate', 'default_collate', 'default_convert', 'default_collate_fn_map', 'collate_tensor_fn']

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, "
                                  "dicts or lists; found {}")


def default_convert(data):
    """NumPy arrays and scalars (also inside dicts, namedtuples, lists) become tensors; the rest is unchanged.

    >>> import numpy as np
    >>> default_convert({'a': np.array([0, 1]), 'b': 'text'})
    {'a': tensor([0, 1]), 'b': 'text'}
    """
    elem_type = type(data)
    if isinstance(data, ember.Tensor):
        return data
    if elem_type.__module__ == 'numpy' and elem_type.__name__ not in ('str_', 'string_', 'bytes_'):
        if elem_type.__name__ == 'ndarray' and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)   # keeps the mapping type's extra attributes
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, '_fields'):   # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]   # torch returns a list here (backwards compatibility)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples, looking up each element type's function in ``collate_fn_map``."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for ctype, fn in collate_fn_map.items():
            if isinstance(elem, ctype):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        fields = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields)
                return clone
            return elem_type(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, '_fields'):   # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        n = len(elem)
        if not all(len(e) == n for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns   # torch returns a list for tuples (backwards compatibility)
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, c in enumerate(columns):
                    clone[i] = c
                return clone
            return elem_type(columns)
        except TypeError:   # e.g. range: cannot be rebuilt from a list
            return columns
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def _np_to_ember_dtype(dt):
    return ember.from_numpy(np.empty(0, dt)).dtype


def _stack(arrays):
    """Stack equal-shaped arrays into a new tensor (in shared memory inside a worker), with torch's checks."""
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                               f"and {list(a.shape)} at entry {i}")
    dt = arrays[0].dtype
    if any(a.dtype != dt for a in arrays):   # mixed dtypes: torch's promotion, not NumPy's
        edt = _np_to_ember_dtype(dt)
        for a in arrays:
            edt = ember.promote_types(edt, _np_to_ember_dtype(a.dtype))
        dt = edt.np
    out = shm.empty((len(arrays),) + shape, dt)
    np.stack(arrays, out=out, casting='unsafe')
    return ember.from_numpy(out)


def collate_tensor_fn(batch, *, collate_fn_map=None):
    if all(type(t) is ember.Tensor and t.device.type == 'cpu' and not t.requires_grad for t in batch):
        return _stack([t.numpy(force=True) for t in batch])
    return ember.stack(batch, 0)   # keeps autograd history, other devices, and a subclass (its __torch_function__)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return _stack(batch)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ember.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    ember.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,                  # and np.memmap, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stack a list of samples into a batch, recursing into dicts, namedtuples, tuples and lists.

    >>> import ember
    >>> b = default_collate([(ember.tensor([1., 2.]), 0), (ember.tensor([3., 4.]), 1)])
    >>> b[0].shape, b[1]
    (ember.Size([2, 2]), tensor([0, 1]))
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
