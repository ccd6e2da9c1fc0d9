"""torch.nn.utils._named_member_accessor: read, set and swap a module's tensors by (dotted) name, bypassing the
Parameter checks of ``setattr`` (a parameter's slot may hold a plain tensor for a functional call), as torch's."""
import ember

__all__ = ['set_tensor', 'swap_tensor', 'NamedMemberAccessor']

_MISSING = object()


def _check(module, name, tensor):
    if not isinstance(module, ember.nn.Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, ember.Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if '.' in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == '':
        raise KeyError('tensor name can\'t be empty string ""')


def set_tensor(module, name, tensor):
    """Put ``tensor`` in ``module``'s slot ``name`` (its parameter or buffer slot where it has one)."""
    _check(module, name, tensor)
    if name in module._parameters:
        module._parameters[name] = tensor
    elif name in module._buffers:
        module._buffers[name] = tensor
    else:
        setattr(module, name, tensor)


def swap_tensor(module, name, tensor, allow_missing=False):
    """``set_tensor``, returning what the slot held (``_MISSING`` where nothing did and ``allow_missing``);
    ``tensor`` ``_MISSING`` empties the slot."""
    _check(module, name, tensor)
    if name in module._parameters:
        orig, slots = module._parameters[name], module._parameters
    elif name in module._buffers:
        orig, slots = module._buffers[name], module._buffers
    elif hasattr(module, name):
        orig, slots = getattr(module, name), None
    elif allow_missing:
        orig, slots = _MISSING, None
    else:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    if tensor is _MISSING:
        if slots is not None:
            del slots[name]
        elif orig is not _MISSING:
            delattr(module, name)
    elif slots is not None:
        slots[name] = tensor
    else:
        setattr(module, name, tensor)
    return orig


class NamedMemberAccessor:
    """The same for dotted names below a root module (``'encoder.0.weight'``), submodules looked up once."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        if name not in self.memo:
            self.memo[name] = self.module.get_submodule(name)
        return self.memo[name]

    def _split(self, name):
        prefix, _, attr = name.rpartition('.')
        return self.get_submodule(prefix), attr

    def get_tensor(self, name):
        module, attr = self._split(name)
        return getattr(module, attr)

    def set_tensor(self, name, value):
        module, attr = self._split(name)
        set_tensor(module, attr, value)

    def swap_tensor(self, name, value, allow_missing=False):
        module, attr = self._split(name)
        return swap_tensor(module, attr, value, allow_missing=allow_missing)

    def swap_tensors_dict(self, named_tensors, allow_missing=False):
        """Swap every (name, tensor) pair; returns the originals and the names that were missing."""
        orig, missing = {}, []
        for name, t in named_tensors.items():
            o = self.swap_tensor(name, t, allow_missing=allow_missing)
            if o is _MISSING:
                missing.append(name)
            orig[name] = o
        return orig, missing
