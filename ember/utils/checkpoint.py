"""Activation checkpointing: trade compute for memory (torch.utils.checkpoint).

``checkpoint(fn, *args)`` runs ``fn`` so that its graph keeps none of the
tensors its operators would save for backward. In the default (non-reentrant)
form every tensor saved inside ``fn`` goes through a saved-tensors pack hook
that keeps only its position; the first unpack during backward reruns ``fn``
(same inputs, same RNG state) with hooks that collect the saved tensors in the
same order, and hands them out by position. The reentrant form
(``use_reentrant=True``) wraps ``fn`` in an autograd Function whose backward
reruns ``fn`` and backpropagates through the fresh graph.

>>> import ember
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.ones(3, requires_grad=True)
>>> y = checkpoint(lambda t: (t * t).exp(), x, use_reentrant=False)
>>> y.backward(ember.ones(3)); x.grad
tensor([5.4366, 5.4366, 5.4366])
"""
import contextlib
import enum

from ember._warn import warnings

from .. import Tensor as TensorImpl      # the front end uses the public API only
from ..autograd import enable_grad, no_grad, is_grad_enabled, Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ['checkpoint', 'checkpoint_sequential', 'CheckpointError', 'get_device_states', 'set_device_states',
           'DefaultDeviceType', 'CheckpointPolicy', 'SelectiveCheckpointContext', 'create_selective_checkpoint_contexts']


class CheckpointError(RuntimeError):
    pass


class DefaultDeviceType:
    """The device type whose RNG states ``set_device_states`` restores when given none: the current accelerator's
    type, else 'cpu', until ``set_device_type`` chooses one."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device='cuda'):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else 'cpu'
        return DefaultDeviceType._default_device_type


def _device_module(device_type):
    import ember
    return getattr(ember, device_type)


def get_device_states(*args):
    """``(device ids, RNG states)`` of the accelerator devices the tensors among ``args`` (nested in lists, tuples
    and dicts too) live on, for ``set_device_states`` to restore; CPU tensors add none (the CPU state is global).

    >>> import ember
    >>> get_device_states(ember.ones(2))
    ([], [])
    """
    from ._pytree import tree_flatten
    tensors = [a for a in tree_flatten(args)[0] if isinstance(a, TensorImpl) and a.device.type not in ('cpu', 'meta')]
    if not tensors:
        return [], []
    module = _device_module(tensors[0].device.type)
    states = []
    for t in tensors:
        with module.device(t.get_device()):
            states.append(module.get_rng_state())
    return [t.get_device() for t in tensors], states


def set_device_states(devices, states, *, device_type=None):
    """Restore each of ``devices``' RNG state from ``states`` (what ``get_device_states`` returned)."""
    device_type = DefaultDeviceType.get_device_type() if device_type is None else device_type
    if device_type == 'meta' or not devices:
        return
    module = _device_module(device_type)
    for device, state in zip(devices, states):
        with module.device(device):
            module.set_rng_state(state)


class _RNG:
    """The state the forward ran in, restored around the recomputation: the global RNG state (with
    ``preserve_rng_state``) and autocast's state per device type, so that a forward run under
    ``autocast(dtype=bfloat16)`` is recomputed in bfloat16 too, as torch does."""

    def __init__(self, preserve):
        import ember
        from .. import random
        self.state = random.get_rng_state() if preserve else None
        self.autocast = [(d, ember.is_autocast_enabled(d), ember.get_autocast_dtype(d)) for d in _autocast_devices()]
        self.cache = ember.is_autocast_cache_enabled()

    def __enter__(self):
        import ember
        from .. import random
        if self.state is not None:
            self.outer = random.get_rng_state()
            random.set_rng_state(self.state)
        self.contexts = contextlib.ExitStack()
        for device_type, enabled, dtype in self.autocast:
            self.contexts.enter_context(ember.autocast(device_type, dtype=dtype, enabled=enabled,
                                                      cache_enabled=self.cache))

    def __exit__(self, *exc):
        from .. import random
        self.contexts.close()
        if self.state is not None:
            random.set_rng_state(self.outer)


def _autocast_devices():
    import ember
    return ['cpu'] + (['cuda'] if ember.cuda.is_available() else [])


def _detached(args):
    return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, TensorImpl) else a for a in args)


class _Frame:
    """What one non-reentrant checkpoint call keeps between forward and backward."""

    def __init__(self, fn, args, kwargs, rng, recompute_context):
        self.fn, self.args, self.kwargs, self.rng = fn, args, kwargs, rng
        self.recompute_context = recompute_context
        self.count = 0
        self.recomputed = None

    def pack(self, t):
        i = self.count
        self.count += 1
        return i

    def unpack(self, i):
        if self.recomputed is None:
            self.recompute()
        if i >= len(self.recomputed):
            raise CheckpointError("torch.utils.checkpoint: the recomputed forward saved fewer tensors than the "
                                  f"original forward ({len(self.recomputed)} vs {self.count}): the function must "
                                  "run the same operations when recomputed.")
        return self.recomputed[i]

    def recompute(self):
        saved = []

        def pack(t):
            saved.append(t)
            return len(saved) - 1
        with saved_tensors_hooks(pack, lambda i: saved[i]), enable_grad(), self.rng, self.recompute_context:
            self.fn(*_detached(self.args), **self.kwargs)
        if len(saved) != self.count:
            raise CheckpointError(f"torch.utils.checkpoint: A different number of tensors was saved during the "
                                  f"original forward and recomputation.\nNumber of tensors saved during forward: "
                                  f"{self.count}\nNumber of tensors saved during recomputation: {len(saved)}")
        self.recomputed = saved


# --- selective activation checkpointing -------------------------------------------------------------------
# NOTE [selective checkpointing]: ``checkpoint(fn, ..., use_reentrant=False, context_fn=...)`` runs the forward
# under the first context ``context_fn()`` returns and the recomputation under the second.
# ``create_selective_checkpoint_contexts(policy)`` makes them two dispatch modes that ask the policy about each
# operator (``ctx.is_recompute`` False, then True), as torch's do. In torch the recomputation then hands back the
# outputs the forward kept for the operators the policy saves, instead of running them again: torch's dispatch
# modes sit below autograd, which records whatever result a mode gives it. ember's sit above autograd
# (_core/dispatch_key.py: a mode sees a call before autograd records it), so a mode cannot give autograd a result
# it did not compute; ember's recomputation runs every operator again. Gradients are the same; the compute the
# policy would save is spent, and the forward keeps nothing.

class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


class SelectiveCheckpointContext:
    """What a policy function is told: ``is_recompute`` (False in the forward, True in the recomputation)."""

    def __init__(self, *, is_recompute):
        self.is_recompute = is_recompute


def _policy_of(policy_fn_or_list):
    if isinstance(policy_fn_or_list, list):
        ops = list(policy_fn_or_list)
        for op in ops:
            if not hasattr(op, 'overloadpacket'):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got {op} of type {type(op)}. "
                                 f"If you are using an OpOverloadPacket, e.g. torch.ops.aten.mm, you need to "
                                 f"specify the overload, e.g. torch.ops.aten.mm.default.")
        return lambda ctx, op, *args, **kwargs: (CheckpointPolicy.MUST_SAVE if op in ops
                                                 else CheckpointPolicy.PREFER_RECOMPUTE)
    if callable(policy_fn_or_list):
        return policy_fn_or_list
    raise TypeError("policy_fn_or_list must be either a function or a list of ops.")


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) contexts of selective checkpointing for ``context_fn`` (NOTE [selective
    checkpointing]): ``policy_fn(ctx, op, *args, **kwargs)`` returns a CheckpointPolicy (or a bool), or a list of
    operators names those to save."""
    from ._python_dispatch import TorchDispatchMode
    policy = _policy_of(policy_fn_or_list)

    class _Asking(TorchDispatchMode):
        def __init__(self, is_recompute):
            self.is_recompute = is_recompute

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            decision = policy(SelectiveCheckpointContext(is_recompute=self.is_recompute), func, *args, **kwargs)
            if not isinstance(decision, (bool, CheckpointPolicy)):
                raise ValueError(f"policy_fn must return a CheckpointPolicy or a bool, but got {decision!r}")
            return func(*args, **kwargs)
    return _Asking(False), _Asking(True)


def _no_contexts():
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, fn, preserve_rng_state, *args):
        ctx.fn, ctx.rng = fn, _RNG(preserve_rng_state)
        ctx.inputs = args
        tensors = [a for a in args if isinstance(a, TensorImpl)]
        ctx.save_for_backward(*tensors)
        with no_grad():
            return fn(*args)

    @staticmethod
    def backward(ctx, *grads):
        from .. import autograd
        saved = iter(ctx.saved_tensors)
        args = tuple(next(saved) if isinstance(a, TensorImpl) else a for a in ctx.inputs)
        args = _detached(args)
        with enable_grad(), ctx.rng:
            outs = ctx.fn(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, TensorImpl) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([p[0] for p in pairs], [p[1] for p in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, TensorImpl) and a.requires_grad else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check='default', debug=False,
               preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate values for backward; backward
    recomputes them. Gradients are the same as without checkpointing."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Please pass "
                      "in either use_reentrant=True or use_reentrant=False explicitly.", UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not is_grad_enabled():
            return function(*args)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    forward_context, recompute_context = (context_fn or _no_contexts)()
    frame = _Frame(function, args, kwargs, _RNG(preserve_rng_state), recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules/functions in ``segments`` chunks, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly.", UserWarning, stacklevel=2)
        use_reentrant = True
    if hasattr(functions, 'children') and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    size = max(1, len(functions) // segments) if segments else len(functions)

    def run(start, end):
        def f(x):
            for fn in functions[start:end + 1]:
                x = fn(x)
            return x
        return f
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
