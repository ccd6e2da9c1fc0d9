"""torch.utils.data._utils.pin_memory: ``pin_memory(data)``, a batch with every CPU tensor in page-locked memory
(what a DataLoader with ``pin_memory=True`` hands out on a GPU machine), its structure kept."""
import collections.abc

import ember

__all__ = ['pin_memory']


def pin_memory(data, device=None):
    """``data`` with its CPU tensors pinned: lists, tuples, named tuples, dicts (and other mappings and sequences of
    their own type) keep their structure; strings and other objects are returned as they are."""
    if isinstance(data, ember.Tensor):
        return data.pin_memory() if data.device.type == 'cpu' else data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, tuple) and hasattr(data, '_fields'):
        return type(data)(*(pin_memory(x, device) for x in data))
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: pin_memory(v, device) for k, v in data.items()}) if type(data) is not dict \
            else {k: pin_memory(v, device) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(pin_memory(x, device) for x in data)
    if hasattr(data, 'pin_memory'):         # a custom batch type, as torch's
        return data.pin_memory()
    return data
