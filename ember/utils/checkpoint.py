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
from ember._warn import warnings

from .. import Tensor as TensorImpl      # the front end uses the public API only
from ..autograd import enable_grad, no_grad, is_grad_enabled, Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ['checkpoint', 'checkpoint_sequential', 'CheckpointError', 'get_device_states', 'set_device_states',
           'DefaultDeviceType']


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
    """The global RNG state at the forward, restored around the recomputation."""

    def __init__(self, preserve):
        from .. import random
        self.state = random.get_rng_state() if preserve else None

    def __enter__(self):
        from .. import random
        if self.state is not None:
            self.outer = random.get_rng_state()
            random.set_rng_state(self.state)

    def __exit__(self, *exc):
        from .. import random
        if self.state is not None:
            random.set_rng_state(self.outer)


def _detached(args):
    return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, TensorImpl) else a for a in args)


class _Frame:
    """What one non-reentrant checkpoint call keeps between forward and backward."""

    def __init__(self, fn, args, kwargs, rng):
        self.fn, self.args, self.kwargs, self.rng = fn, args, kwargs, rng
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
        with saved_tensors_hooks(pack, lambda i: saved[i]), enable_grad(), self.rng:
            self.fn(*_detached(self.args), **self.kwargs)
        if len(saved) != self.count:
            raise CheckpointError(f"torch.utils.checkpoint: A different number of tensors was saved during the "
                                  f"original forward and recomputation.\nNumber of tensors saved during forward: "
                                  f"{self.count}\nNumber of tensors saved during recomputation: {len(saved)}")
        self.recomputed = saved


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
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if not is_grad_enabled():
            return function(*args)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    frame = _Frame(function, args, kwargs, _RNG(preserve_rng_state))
    with saved_tensors_hooks(frame.pack, frame.unpack):
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
