"""torch._C: the names of torch's C++ extension that published Python code reaches for.

ember is Python throughout, so there is no extension module; this one holds the ``torch._C`` names that
libraries use from Python and that mean something here, each answering as torch's does on a CPU build:
``_TensorMeta`` (the metaclass of Tensor), ``_log_api_usage_once`` (torch reports the event to a usage-logging
hook that open builds leave unset: nothing happens), ``_nn._parse_to`` (``Module.to``'s argument parsing),
``Generator``, ``DisableTorchFunction``/``DisableTorchFunctionSubclass``, ``_disabled_torch_function_impl``,
``_disabled_torch_dispatch_impl``, ``_DisableTorchDispatch`` (NOTE [tensor subclasses]), ``_get_tracing_state``, ``_is_tracing``,
``_is_torch_function_mode_enabled``, ``_get_accelerator``, ``_get_default_device``,
``_are_functorch_transforms_active`` and ``_functorch`` (queries on vmap's BatchedTensor). Any other name raises AttributeError naming it.
"""
from .._tensor import Tensor as _Tensor
from .._dispatch.torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                                        current_function_modes as _modes)
from .._dispatch.subclasses import (disabled_torch_function_impl as _disabled_torch_function_impl,  # noqa: F401
                                    disabled_torch_dispatch_impl as _disabled_torch_dispatch_impl,
                                    DisableTorchDispatch as _DisableTorchDispatch)
from . import _nn, _functorch, _distributed_rpc, _cpu, _profiler  # noqa: F401
from .._dispatch.tags import Tag  # noqa: F401  (torch._C.Tag is torch.Tag)
from .._functorch import TRANSFORMS as _TRANSFORMS

_TensorMeta = type(_Tensor)
_GLIBCXX_USE_CXX11_ABI = True


def _log_api_usage_once(event):
    return None


def _set_grad_enabled(mode):
    """Turn grad mode on or off for this thread (what ``set_grad_enabled`` does on entry; a captured graph calls
    it where the traced function changed the mode: NOTE [grad mode in captured graphs])."""
    from ..autograd.grad_mode import _set_enabled
    _set_enabled(bool(mode))


def _get_tracing_state():
    """None: no TorchScript tracer is running (ember has none)."""
    return None


def _is_tracing():
    """False: no TorchScript tracer is running (``torch.jit.is_tracing``'s answer)."""
    return False


def _is_torch_function_mode_enabled():
    return bool(_modes())


_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try "
             "to run backward on a tensor that was swapped. For a module m with "
             "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or dtype "
             "of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve this, "
             "please only change the device/dtype before running forward (or after both forward and backward).")


def _poisoned_hook(grad_outputs):
    raise RuntimeError(_POISONED)


def _swap_tensor_impl(t1, t2):
    """Exchange the two tensors' contents (ember's fields: NOTE [tensor __dict__]), each Python object keeping its
    identity (``torch.utils.swap_tensors`` swaps the class, the attributes and the slots, then calls this). A graph
    built before the swap would accumulate into the wrong object: each one's AccumulateGrad, if alive, is poisoned so
    that it refuses to run, as torch's, and the moved contents forget it."""
    from .._core.tensor_impl import fields, FIELDS
    f1, f2 = fields(t1), fields(t2)
    for f in (f1, f2):
        ref = f.pop('_acc_ref', None)
        node = ref() if ref is not None else None
        if node is not None:
            node.register_prehook(_poisoned_hook)
    own1 = {k: f1.pop(k) for k in list(f1) if k in FIELDS}
    own2 = {k: f2.pop(k) for k in list(f2) if k in FIELDS}
    f1.update(own2)
    f2.update(own1)


def _are_functorch_transforms_active():
    """Whether an ember.func transform (vmap, grad, jvp, functionalize, ...) is running on this thread (NOTE
    [functorch transform stack])."""
    return bool(_TRANSFORMS.stack)


def _get_default_device():
    """The default device's type name ('cpu'), as torch.set_default_device sets it."""
    from .. import get_default_device
    return get_default_device().type


def _get_accelerator(check=False):
    from .. import accelerator, device
    return accelerator.current_accelerator() or device('cpu')


def _torchscript_class(name):
    """A TorchScript IR class (``torch._C.Graph``, ``Node``, ...): code names them in annotations and isinstance
    checks (fvcore's ``-> torch._C.Graph``, torchview's ``isinstance(m, ScriptMethod)``); ember has no TorchScript,
    so no object is ever one of them, and making one says why."""
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"torch._C.{name}: ember has no TorchScript compiler or tracer; graphs come from "
                           "torch.fx and make_fx")
    return type(name, (), {'__init__': __init__, '__module__': __name__,
                           '__doc__': f"TorchScript's {name} (no instance exists in ember)."})


Graph, Node, Value, Block, ScriptMethod, ScriptObject = (_torchscript_class(n) for n in (
    'Graph', 'Node', 'Value', 'Block', 'ScriptMethod', 'ScriptObject'))

_JIT_FLAGS = {'profiling_executor': True, 'profiling_mode': True}


def _jit_set_profiling_executor(flag):
    """TorchScript's executor switch (speechbrain turns it off at import): the previous setting; ember has no
    TorchScript executor for it to change."""
    old, _JIT_FLAGS['profiling_executor'] = _JIT_FLAGS['profiling_executor'], bool(flag)
    return old


def _jit_set_profiling_mode(flag):
    old, _JIT_FLAGS['profiling_mode'] = _JIT_FLAGS['profiling_mode'], bool(flag)
    return old


def __getattr__(name):
    if name == 'Generator':
        from ..random import Generator
        return Generator
    if name == '_LinAlgError':
        from ..linalg import LinAlgError
        return LinAlgError
    if name.startswith('__'):
        raise AttributeError(name)
    raise AttributeError(f"ember has no torch._C.{name}: ember is written in Python and has no C++ extension "
                         f"(ember._C holds the names with a meaning here)")
