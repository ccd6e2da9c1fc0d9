"""ember.autograd.forward_ad: forward-mode automatic differentiation (torch.autograd.forward_ad's API).

A dual tensor is a primal with a tangent attached at a dual level; every operator on it computes its result's
tangent from its forward derivative (NOTE [forward AD] in autograd/forward.py). Unlike torch, levels nest
(``ember.func.jvp`` inside ``jvp`` uses that); each keeps its own tangents.

>>> import ember
>>> import ember.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(ember.tensor([1., 2.]), ember.tensor([1., 0.]))
...     fwAD.unpack_dual(x.exp() * 2).tangent
tensor([5.4366, 0.0000])
"""
import collections
import weakref

from .._core.tensor_impl import TensorImpl
from .._dispatch.ops_namespace import aten
from . import forward as _fw

__all__ = ['dual_level', 'enter_dual_level', 'exit_dual_level', 'make_dual', 'unpack_dual', 'UnpackedDualTensor']

UnpackedDualTensor = collections.namedtuple('UnpackedDualTensor', ['primal', 'tangent'])
UnpackedDualTensor.__doc__ = "Namedtuple returned by unpack_dual() containing the primal and tangent components."


def _current_level():
    """The innermost live dual level's index, -1 outside every level (torch's forward_ad._current_level)."""
    return len(_fw.LEVELS.stack) - 1


def enter_dual_level():
    """Enter a new dual level and return its index (torch.autograd.forward_ad.enter_dual_level)."""
    return _fw.enter().index


def exit_dual_level(*, level=None):
    """Exit the innermost dual level; every tangent of that level is dropped."""
    stack = _fw.LEVELS.stack
    if level is None:
        level = len(stack) - 1
    if not stack or level != len(stack) - 1:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _fw.exit_(stack[level])


def _level(level, api):
    stack = _fw.LEVELS.stack
    if level is None:
        level = len(stack) - 1
    if not 0 <= level < len(stack):
        raise RuntimeError(f"{api}: Expected the level to be valid; use it inside a `with dual_level():` block or "
                           f"after enter_dual_level()" if stack else
                           f"To create a dual tensor, you need to be within a dual level context. Use "
                           f"`with fwAD.dual_level():` (or enter_dual_level()) first.")
    return stack[level]


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` at ``level`` (the innermost by default)."""
    if not _fw.LEVELS.stack:
        raise RuntimeError("To create a dual tensor, you need to be within a dual level context. Use "
                           "`with fwAD.dual_level():` (or enter_dual_level()) first.")
    lvl = _level(level, 'make_dual')
    if not isinstance(tensor, TensorImpl) or not isinstance(tangent, TensorImpl):
        raise TypeError("make_dual(): expected the primal and the tangent to be Tensors")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    with _fw._Hide(lvl):
        dual = aten.alias.default(tensor)
        tangent = _like_layout(tangent, tensor)
    _attach_as_given(dual, lvl, tangent)
    return dual


def _attach_as_given(dual, lvl, tangent):
    """``forward.attach`` without its cast: torch keeps a make_dual tangent in its own dtype (a float32 tangent on a
    float64 primal unpacks as float32; a real tangent of a complex primal stays real). Tangents that operators
    compute from it are cast to their output's dtype by ``attach``, where torch's follow each formula's promotion."""
    if tangent.dtype == dual.dtype:
        _fw.attach(dual, lvl, tangent)
        return
    fw = dict(dual._fw) if dual._fw else {}
    fw[lvl] = tangent
    dual._fw = fw
    dual._keys |= _fw.FORWARD_AD_BIT
    lvl.tensors.append(weakref.ref(dual))


def _like_layout(tangent, primal):
    """The tangent laid out as the primal is in its storage (strides and offset), so that ``as_strided`` and other
    views defined on the storage give the same elements of both (torch copies a tangent whose layout differs)."""
    from .._functorch.batching import zeros_strided
    shape, stride, off = tuple(primal.shape), primal.stride(), primal.storage_offset()
    if tangent.stride() == stride and tangent.storage_offset() == off or primal.numel() == 0:
        return tangent
    # NOTE [batched tangent layout]: under vmap (``vmap(lambda v: jvp(f, (W,), (v,)))``) the tangent is batched
    # and the primal may not be; the buffer is batched as the tangent is (torch makes it with new_empty_strided,
    # whose batching rule does the same), since an unbatched one could hold a single sample only
    out = zeros_strided(tangent, shape, stride, off)
    out.copy_(tangent)
    return out


def _detach_keeping_tangents(t):
    """``t.detach()`` that keeps ``t``'s tangents at the live dual levels (themselves detached likewise): a result
    that leaves a transform under no_grad has no history but must still carry the tangents of a jvp around it
    (``detach`` drops them, as torch's does)."""
    out = t.detach()
    for lvl, tan in (t._fw or {}).items():
        if lvl.alive:
            _attach_as_given(out, lvl, _detach_keeping_tangents(tan))
    return out


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a dual tensor at ``level``: the primal a view of ``tensor`` without that level's
    tangent, the tangent None when there is none."""
    if not isinstance(tensor, TensorImpl):
        return UnpackedDualTensor(tensor, None)
    if not _fw.LEVELS.stack:
        return UnpackedDualTensor(tensor, None)
    lvl = _level(level, 'unpack_dual')
    t = _fw.tangent(tensor, lvl)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    with _fw._Hide(lvl):
        primal = aten.alias.default(tensor)
    return UnpackedDualTensor(primal, t)


class dual_level:
    """Context manager for a dual level: tangents made inside it are dropped on exit.

    >>> import ember, ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(ember.tensor(2.), ember.tensor(1.)) ** 3
    ...     fwAD.unpack_dual(y).tangent
    tensor(12.)
    """
    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
