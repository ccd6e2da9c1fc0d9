"""torch.utils._foreach_utils: which devices have multi-tensor (``foreach``) and fused kernels, and the grouping of
tensor lists by device and dtype that torch's optimizers and ``clip_grad_norm_`` do before calling the
``_foreach_*`` operators (NOTE [foreach operators] in ember/_ops/foreach.py).
"""
import ember
from ember import Tensor
from ember.autograd.grad_mode import no_grad
from . import get_privateuse1_backend_name

TensorListList = list
Indices = list
_foreach_supported_types = [Tensor]


def _get_foreach_kernels_supported_devices():
    """The device types torch has fused multi-tensor kernels for (CPU runs the per-tensor loop, but takes the
    foreach path too: ``_device_has_foreach_support``)."""
    return ["cuda", "xpu", "mtia", get_privateuse1_backend_name()]


def _get_fused_kernels_supported_devices():
    """The device types whose optimizers accept ``fused=True``."""
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", get_privateuse1_backend_name()]


@no_grad()
def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """``{(device, dtype): (tensorlistlist restricted to those positions, their indices)}``, keyed by the tensors of
    the first list; an empty list stays empty in every group, as torch's. The indices are filled only
    ``with_indices``.

    >>> import ember
    >>> a, b = [ember.ones(2), ember.ones(2, dtype=ember.float64)], [ember.zeros(2), None]
    >>> groups = _group_tensors_by_device_and_dtype([a, b], with_indices=True)
    >>> groups[(ember.device('cpu'), ember.float64)][1]
    [1]
    """
    if not tensorlistlist or not tensorlistlist[0]:
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.")
    n = len(tensorlistlist[0])
    if any(len(tl) not in (n, 0) for tl in tensorlistlist):
        raise RuntimeError("Expected all tensor lists to have the same number of tensors (or none), got "
                           f"{[len(tl) for tl in tensorlistlist]}")
    groups = {}
    for i, t in enumerate(tensorlistlist[0]):
        lists, indices = groups.setdefault((t.device, t.dtype), ([[] for _ in tensorlistlist], []))
        for grouped, tl in zip(lists, tensorlistlist):
            if tl:
                grouped.append(tl[i])
        if with_indices:
            indices.append(i)
    return groups


def _device_has_foreach_support(device):
    return device.type in (_get_foreach_kernels_supported_devices() + ["cpu"]) and not ember.jit.is_scripting()


def _has_foreach_support(tensors, device):
    return _device_has_foreach_support(device) and all(t is None or type(t) in _foreach_supported_types
                                                       for t in tensors)
