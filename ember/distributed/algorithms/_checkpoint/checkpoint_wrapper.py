"""torch.distributed.algorithms._checkpoint.checkpoint_wrapper: activation checkpointing as a module wrapper.

``checkpoint_wrapper(module)`` returns a module whose forward runs ``module`` under ``ember.utils.checkpoint``
(activations recomputed in backward rather than kept); ``offload_wrapper`` keeps them on the CPU instead
(``save_on_cpu``); ``apply_activation_checkpointing(model, check_fn=...)`` wraps the submodules ``check_fn``
picks, in place. A wrapper's state dict and parameter names are its module's (``_checkpoint_wrapped_module.``
left out), so checkpoints load into the model with or without wrappers.

>>> import ember
>>> lin = ember.nn.Linear(2, 2)
>>> w = checkpoint_wrapper(lin)
>>> list(w.state_dict()) == list(lin.state_dict()), w(ember.ones(1, 2)).shape
(True, ember.Size([1, 2]))
"""
import abc
import enum
import functools

import ember
from ember import nn
from ember.autograd.graph import save_on_cpu
from ember.utils.checkpoint import checkpoint as _utils_checkpoint

__all__ = ['CheckpointImpl', 'ActivationWrapper', 'CheckpointWrapper', 'OffloadWrapper', 'checkpoint_wrapper',
           'offload_wrapper', 'apply_activation_checkpointing']

_CHECKPOINT_WRAPPED_MODULE = '_checkpoint_wrapped_module'
_CHECKPOINT_PREFIX = _CHECKPOINT_WRAPPED_MODULE + '.'


class CheckpointImpl(enum.Enum):
    REENTRANT = enum.auto()
    NO_REENTRANT = enum.auto()


def _replace_by_prefix(state_dict, old_prefix, new_prefix):
    for key in [k for k in state_dict if k.startswith(old_prefix)]:
        state_dict[new_prefix + key[len(old_prefix):]] = state_dict.pop(key)


class ActivationWrapper(nn.Module, abc.ABC):
    """The base of the two wrappers: the wrapped module's attributes, items, parameter names and state dict
    show through."""

    def __init__(self, mod):
        super().__init__()
        self._checkpoint_wrapped_module = mod
        self._register_state_dict_hook(self._post_state_dict_hook)
        self.register_load_state_dict_pre_hook(self._pre_load_state_dict_hook)

    @abc.abstractmethod
    def forward(self, *args, **kwargs):
        raise ValueError("Subclasses should implement forward().")

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._checkpoint_wrapped_module, name)

    def __getitem__(self, key):
        return self._checkpoint_wrapped_module.__getitem__(key)

    def named_parameters(self, *args, **kwargs):
        for name, param in super().named_parameters(*args, **kwargs):
            yield name.replace(_CHECKPOINT_PREFIX, ''), param

    @staticmethod
    def _post_state_dict_hook(module, state_dict, prefix, *args):
        _replace_by_prefix(state_dict, f'{prefix}{_CHECKPOINT_PREFIX}', prefix)
        return state_dict

    @staticmethod
    def _pre_load_state_dict_hook(module, state_dict, prefix, *args):
        _replace_by_prefix(state_dict, prefix, prefix + _CHECKPOINT_PREFIX)


class OffloadWrapper(ActivationWrapper):
    """Runs the module with its saved activations kept on the CPU."""

    def forward(self, *args, **kwargs):
        with save_on_cpu(pin_memory=True):
            return self._checkpoint_wrapped_module(*args, **kwargs)


class CheckpointWrapper(ActivationWrapper):
    """Runs the module under ``checkpoint_fn`` (``ember.utils.checkpoint.checkpoint`` by default)."""

    def __init__(self, mod, checkpoint_impl=CheckpointImpl.NO_REENTRANT, checkpoint_fn=None, **checkpoint_fn_kwargs):
        super().__init__(mod)
        self.checkpoint_impl = checkpoint_impl
        if checkpoint_fn is None:
            self.checkpoint_fn = functools.partial(
                _utils_checkpoint, use_reentrant=checkpoint_impl == CheckpointImpl.REENTRANT, **checkpoint_fn_kwargs)
        else:
            self.checkpoint_fn = functools.partial(checkpoint_fn, **checkpoint_fn_kwargs)

    def forward(self, *args, **kwargs):
        if self.checkpoint_impl == CheckpointImpl.REENTRANT and kwargs:
            # reentrant checkpointing takes positional inputs only: pack the keywords after them
            keys = tuple(kwargs)
            flat = args + tuple(kwargs.values())

            def run(*inputs):
                n = len(inputs) - len(keys)
                return self._checkpoint_wrapped_module(*inputs[:n], **dict(zip(keys, inputs[n:])))
            return self.checkpoint_fn(run, *flat)
        return self.checkpoint_fn(self._checkpoint_wrapped_module, *args, **kwargs)


def offload_wrapper(module):
    """``module`` wrapped to keep its saved activations on the CPU."""
    return OffloadWrapper(module)


def checkpoint_wrapper(module, checkpoint_impl=CheckpointImpl.NO_REENTRANT, checkpoint_fn=None,
                       **checkpoint_fn_kwargs):
    """``module`` wrapped so that each call runs under activation checkpointing (module docstring)."""
    return CheckpointWrapper(module, checkpoint_impl, checkpoint_fn, **checkpoint_fn_kwargs)


def _lambda_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else lambda_fn(module)


def _recursive_wrap(module, policy, wrapper, only_wrap_children):
    """Wrap, children first, every submodule ``policy`` picks (torch's FSDP wrap walk)."""
    for name, child in list(module.named_children()):
        numel = sum(p.numel() for p in child.parameters())
        if policy(module=child, recurse=True, nonwrapped_numel=numel):
            setattr(module, name, _recursive_wrap(child, policy, wrapper, False))
    numel = sum(p.numel() for p in module.parameters())
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=numel):
        return wrapper(module)
    return module


def apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper, check_fn=lambda _: True,
                                   auto_wrap_policy=None):
    """Wrap, in place, each submodule of ``model`` that ``check_fn`` (or ``auto_wrap_policy(module, recurse,
    nonwrapped_numel)``) picks with ``checkpoint_wrapper_fn``; ``model`` itself is never wrapped.

    >>> import ember
    >>> m = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU())
    >>> apply_activation_checkpointing(m, check_fn=lambda l: isinstance(l, ember.nn.Linear))
    >>> type(m[0]).__name__, list(m.state_dict())
    ('CheckpointWrapper', ['0.weight', '0.bias'])
    """
    policy = auto_wrap_policy if auto_wrap_policy is not None else \
        functools.partial(_lambda_policy, lambda_fn=check_fn)
    if not callable(policy):
        raise ValueError(f"Expected {policy} to be callable or be a pre-defined wrap policy")
    _recursive_wrap(model, policy, checkpoint_wrapper_fn, only_wrap_children=True)
