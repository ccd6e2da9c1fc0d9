"""``parameters_to_vector`` and ``vector_to_parameters``."""
from ..._tensor import Tensor

__all__ = ['parameters_to_vector', 'vector_to_parameters']


def _check_same_device(param, old):
    if old is None:
        return param.device
    if param.device != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor."""
    from ... import _functions as _E
    device = None
    vec = []
    for p in parameters:
        device = _check_same_device(p, device)
        vec.append(p.reshape(-1))
    return _E.cat(vec)


def vector_to_parameters(vec, parameters):
    """Copy slices of ``vec`` into the parameters' data (in the order given)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec.narrow(0, pointer, n).view_as(param).data
        pointer += n
