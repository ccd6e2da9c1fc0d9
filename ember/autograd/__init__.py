"""ember.autograd: reverse-mode automatic differentiation (torch.autograd's API).

>>> import ember
>>> x = ember.tensor([1., 2.], requires_grad=True)
>>> (x * x).sum().backward(); x.grad
tensor([2., 4.])
"""
import numpy as _np

from .._dispatch import dispatcher as _dispatcher
from .._dispatch.torch_function import has_torch_function as _has_torch_function, \
    handle_torch_function as _handle_torch_function
from .._core.dispatch_key import PYTHON_BIT as _PYTHON_BIT
from .._core.tensor_impl import TensorImpl as _TensorImpl, make_tensor as _make_tensor
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled)
from .anomaly import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from .node import Node, AccumulateGrad
from .engine import run_backward
from . import graph
from .function import Function, FunctionCtx, once_differentiable
from . import function
from .gradcheck import gradcheck, gradgradcheck, GradcheckError
from . import functional
from . import forward_ad
from . import profiler, profiler_util  # noqa: E402  torch.autograd.profiler (the recorder under ember.profiler)
from . import anomaly as anomaly_mode  # noqa: E402  torch.autograd.anomaly_mode: the same module, torch's name
import sys as _sys  # noqa: E402
import threading as _threading  # noqa: E402
from .grad_mode import _DecoratorContextManager  # noqa: E402
_sys.modules[__name__ + '.anomaly_mode'] = anomaly_mode      # so `import ember.autograd.anomaly_mode` works too


def kineto_available():
    """False: ember's profiler records Python-level events itself; there is no Kineto (CUPTI) tracer."""
    return False


# NOTE [engine flags]: torch keeps two thread-local engine switches that ember reads but never needs.
# Multithreading: ember's engine always runs backward on the calling thread, so the flag changes nothing.
# View replay: a view overwritten in place gets its grad_fn regenerated as AsStridedBackward0 either way
# (autograd/views.py); the gradients are the same as with torch's view replay, only the node names differ.
_engine_flags = _threading.local()


def _flag(name, default):
    return getattr(_engine_flags, name, default)


def is_multithreading_enabled():
    """Whether multithreaded backward is on for this thread (see NOTE [engine flags]); True by default."""
    return _flag('multithreading', True)


class set_multithreading_enabled(_DecoratorContextManager):
    """Turn multithreaded backward on or off for this thread at once; a ``with`` block restores it on exit.

    >>> import ember
    >>> with ember.autograd.set_multithreading_enabled(False):
    ...     ember.autograd.is_multithreading_enabled()
    False
    """

    def __init__(self, mode):
        self.prev = is_multithreading_enabled()
        self.mode = mode
        _engine_flags.multithreading = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _engine_flags.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_view_replay_enabled():
    """Whether view replay is forced for this thread (see NOTE [engine flags]); False by default."""
    return _flag('view_replay', False)


class _force_original_view_tracking(_DecoratorContextManager):
    """Force view replay on or off for this thread: at once when called, for a ``with`` block, or around a
    decorated function (torch's private switch; see NOTE [engine flags])."""

    def __init__(self, mode):
        self.prev = is_view_replay_enabled()
        self.mode = mode
        _engine_flags.view_replay = bool(mode)

    def __call__(self, fn):
        _engine_flags.view_replay = self.prev
        return super().__call__(fn)

    def __enter__(self):
        _engine_flags.view_replay = bool(self.mode)

    def __exit__(self, *exc):
        _engine_flags.view_replay = self.prev

    def clone(self):
        return self.__class__(self.mode)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    res = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.requires_grad and out._a.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.requires_grad and not out.dtype.is_floating_point:     # complex too: torch wants a real loss
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = _ones_like(out)
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has a "
                               f"shape of {out.shape}.")
        res.append(g)
    return res


def _ones_like(out):
    a = out._a
    # the implicit grad of a loss skips the dispatcher on this hot path, unless a Python mode must see every
    # operator (make_fx records it: NOTE [make_fx])
    if type(a) is _np.ndarray and not _dispatcher.STATE.include & _PYTHON_BIT:
        return _make_tensor(_np.ones(a.shape, a.dtype), out._dtype, out._device)
    from .. import ones_like
    return ones_like(out)


def _tuple(x):
    if x is None:
        return None
    from .graph import GradientEdge     # a tuple itself, but one input
    return (x,) if isinstance(x, (_TensorImpl, GradientEdge)) else tuple(x)     # every Tensor is a TensorImpl


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (torch.autograd.backward)."""
    tensors = _tuple(tensors)
    inputs = _tuple(inputs)
    if _has_torch_function(tensors + (inputs or ())):       # a subclass answers for itself, as in torch
        return _handle_torch_function(backward, tensors + (inputs or ()), tensors, grad_tensors=grad_tensors,
                                      retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
    grad_tensors = _tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(tensors, grad_tensors)
    res = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, allow_unused=True,
                       accumulate=True)
    for t, g in zip(inputs or (), res or ()):
        if g is not None and t._grad_fn is not None:     # a non-leaf named in inputs= gets its .grad too
            t._grad = (g if create_graph else g.detach()).clone() if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated."""
    outputs, inputs = _tuple(outputs), _tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if _has_torch_function(outputs + inputs):       # a subclass answers for itself (nested tensors), as in torch
        return _handle_torch_function(grad, outputs + inputs, outputs, inputs, grad_outputs=grad_outputs,
                                      retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
                                      allow_unused=allow_unused, is_grads_batched=is_grads_batched,
                                      materialize_grads=materialize_grads)
    grad_outputs = _tuple(grad_outputs) or (None,) * len(outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    for t in outputs:
        if not t.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate=False)
    if materialize_grads:
        from .. import zeros_like
        res = [zeros_like(i) if g is None else g for g, i in zip(res, inputs)]
    return tuple(res)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``is_grads_batched=True``: the first dimension of every grad_output is a batch of vectors; one
    backward per vector (torch vmaps this), results stacked along a new first dimension."""
    from .. import stack, zeros_like
    n = None
    for g in grad_outputs:
        if g is None:
            raise RuntimeError("is_grads_batched=True requires every grad_output to be given")
        if n is not None and g.shape[0] != n:
            raise RuntimeError("is_grads_batched=True: the grad_outputs must have the same batch size")
        n = g.shape[0]
    per = [grad(outputs, inputs, tuple(g[i] for g in grad_outputs), retain_graph=True if i < n - 1 else retain_graph,
                create_graph=create_graph, allow_unused=True) for i in range(n)]
    res = []
    for k, x in enumerate(inputs):
        col = [p[k] for p in per]
        if all(c is None for c in col):
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            res.append(stack([zeros_like(x)] * n) if materialize_grads else None)
        else:
            res.append(stack([c if c is not None else zeros_like(x) for c in col]))
    return tuple(res)
from .variable import Variable  # noqa: E402,F401  the legacy wrapper (every tensor is one)
