"""``torch.nn.parallel.scatter_gather``: split inputs over devices (``scatter``, ``scatter_kwargs``) and join
outputs on one (``gather``), as ``DataParallel`` does.

The walk over containers is torch's: tensors are split, namedtuples, tuples, lists and dicts are walked, any
other object is repeated once per device, and ``gather`` rebuilds the container of the first output. Moving
tensors between devices needs an accelerator's copy kernels, which ember, like a CPU-only torch, has not: a
tensor raises what CPU torch raises (a CPU tensor cannot be gathered; the target devices are checked, then the
scatter kernel is missing), so programs that import these names, or scatter plain Python values, run unchanged.

>>> scatter_kwargs((1, 'a'), {'k': 2}, [0, 1])
(((1, 'a'), (1, 'a')), ({'k': 2}, {'k': 2}))
"""
import ember

__all__ = ['scatter', 'scatter_kwargs', 'gather']


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, '_asdict') and hasattr(obj, '_fields')


def _device_index(d):
    """torch's ``_get_device_index(d, optional=True)`` on a machine without accelerators."""
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = ember.device(d) if isinstance(d, (str, ember.device)) else None
    if dev is not None and dev.type == 'cpu':
        raise ValueError("Expected a non cpu device, but got: cpu")
    if dev is None or dev.index is None:
        raise ValueError("Expected a torch.device with a specified index or an integer, but got:None")
    return dev.index


def _scatter_tensor(target_gpus, tensor):
    for d in target_gpus:
        _device_index(d)
    raise AttributeError("module 'torch._C' has no attribute '_scatter'")


def scatter(inputs, target_gpus, dim=0):
    """Slice tensors into ``len(target_gpus)`` chunks along ``dim``, one per device, repeating anything else;
    a tuple of pieces for a tensor, a list of containers otherwise.

    >>> scatter([1, 'a'], [0, 1])
    [[1, 'a'], [1, 'a']]
    """
    def scatter_map(obj):
        if isinstance(obj, ember.Tensor):
            return _scatter_tensor(target_gpus, obj)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]
    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` of the positional and keyword arguments of a call, padded to the same number of devices."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Join the per-device ``outputs`` on ``target_device``: tensors concatenated along ``dim``, containers
    rebuilt from the first output's type."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, ember.Tensor):
            if not all(t.device.type != 'cpu' for t in outputs):
                raise AssertionError("Gather function not implemented for CPU tensors")
            raise AttributeError("module 'torch._C' has no attribute '_gather'")
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))
    return gather_map(outputs)
