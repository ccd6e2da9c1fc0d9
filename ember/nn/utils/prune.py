"""Pruning: zero out parts of a module's parameter through a mask that a forward pre-hook applies.

Pruning parameter ``name`` of a module (as torch.nn.utils.prune) replaces it by

* the parameter ``name + '_orig'`` (the same Parameter object: optimizers keep training it),
* the buffer ``name + '_mask'`` (0 where pruned; saved in the state_dict), and
* a plain attribute ``name`` = ``orig * mask``, recomputed by the pruning method, which is registered as a
  forward pre-hook of the module.

Pruning the same parameter again combines the new method with the old one in a ``PruningContainer``: the new
method only sees the entries (unstructured) or the channels (structured) the earlier masks kept. ``remove``
makes the pruning permanent: ``name`` becomes a Parameter again holding ``orig * mask``.

Random methods draw with ``ember.rand_like`` / ``ember.rand`` exactly as torch's draw with theirs, so after the
same ``manual_seed`` the masks equal torch's.

>>> import ember
>>> from ember import nn
>>> from ember.nn.utils import prune
>>> m = prune.l1_unstructured(nn.Linear(2, 2), 'weight', amount=1)
>>> sorted(n for n, _ in m.named_parameters()), sorted(n for n, _ in m.named_buffers())
(['bias', 'weight_orig'], ['weight_mask'])
>>> int(m.weight_mask.sum()), prune.is_pruned(m)
(3, True)
>>> m = prune.remove(m, 'weight')
>>> sorted(n for n, _ in m.named_parameters()), prune.is_pruned(m)
(['bias', 'weight'], False)
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import ember

__all__ = ['BasePruningMethod', 'PruningContainer', 'Identity', 'RandomUnstructured', 'L1Unstructured',
           'RandomStructured', 'LnStructured', 'CustomFromMask', 'identity', 'random_unstructured',
           'l1_unstructured', 'random_structured', 'ln_structured', 'global_unstructured', 'custom_from_mask',
           'remove', 'is_pruned']


def _pruning_hooks(module, name):
    """The (hook id, method) pairs of pruning methods registered on ``module`` for parameter ``name``."""
    return [(k, h) for k, h in module._forward_pre_hooks.items()
            if isinstance(h, BasePruningMethod) and h._tensor_name == name]


class BasePruningMethod(ABC):
    """A way to compute a mask. Subclasses set ``PRUNING_TYPE`` ('unstructured', 'structured' (with a ``dim``)
    or 'global') and implement ``compute_mask(t, default_mask)``; ``apply`` does the module surgery."""

    _tensor_name = None

    def __call__(self, module, inputs):
        # the forward pre-hook: the pruned tensor is recomputed from orig and mask before every forward
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t`` (same shape), keeping 0 wherever ``default_mask`` (earlier pruning) has 0."""

    def apply_mask(self, module):
        """``name_orig * name_mask`` of ``module``: the pruned tensor."""
        if self._tensor_name is None:
            raise AssertionError(f'Module {module} has to be pruned')
        mask = getattr(module, self._tensor_name + '_mask')
        orig = getattr(module, self._tensor_name + '_orig')
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def _composite(cls, module, name, *args, **kwargs):
        """The method to register: a new ``cls(*args)``, folded into a PruningContainer with an existing one."""
        found = _pruning_hooks(module, name)
        if len(found) > 1:
            raise AssertionError(f'Avoid adding multiple pruning hooks to the same tensor {name} of module '
                                 f'{module}. Use a PruningContainer.')
        for k, _ in found:
            del module._forward_pre_hooks[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if not found:
            return method
        old = found[0][1]
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            return old
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, ranking entries by ``importance_scores``
        (default: the parameter itself). Returns the method registered as the module's pre-hook."""
        method = cls._composite(module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f'importance_scores should have the same shape as parameter {name} of {module}, '
                                 f'got {importance_scores.shape} vs {orig.shape}')
        first = not isinstance(method, PruningContainer)
        if first:      # move the parameter to name_orig; name becomes a plain attribute
            module.register_parameter(name + '_orig', orig)
            del module._parameters[name]
            default_mask = ember.ones_like(orig)
        else:
            default_mask = getattr(module, name + '_mask').detach().clone(memory_format=ember.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + '_mask', mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # undo the move, so a failed first pruning leaves the module as it was
                module.register_parameter(name, getattr(module, name + '_orig'))
                del module._parameters[name + '_orig']
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask (computed from ``importance_scores``, default ``t``): no module involved."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f'importance_scores should have the same shape as tensor t, '
                                 f'got {importance_scores.shape} vs {t.shape}')
        default_mask = default_mask if default_mask is not None else ember.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``name`` is a Parameter again (the orig Parameter, now holding
        ``orig * mask``); ``name_orig`` and ``name_mask`` go. The caller removes the hook."""
        if self._tensor_name is None:
            raise AssertionError(f'Module {module} has to be pruned before pruning can be removed')
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + '_orig']
        orig.data = weight.data
        del module._parameters[name + '_orig']
        del module._buffers[name + '_mask']
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning history of one parameter: its methods in order. Its mask is the last method's mask computed
    on what the earlier ones kept (the earlier masks are already in ``default_mask``)."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if args and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name     # the parameter every later method must act on
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f'{type(method)} is not a BasePruningMethod subclass')
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        where = self._still_kept(method, t, default_mask)
        new_mask = default_mask.to(dtype=t.dtype)
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask

    @staticmethod
    def _still_kept(method, t, mask):
        """The index selecting what ``method`` may still prune: kept entries (unstructured), kept channels
        along ``method.dim`` (structured), or everything (global)."""
        kind = method.PRUNING_TYPE
        if kind == 'unstructured':
            return mask == 1
        if kind == 'global':
            return (slice(None),) * t.dim()
        if kind != 'structured':
            raise ValueError(f'Unrecognized PRUNING_TYPE {kind}')
        if not hasattr(method, 'dim'):
            raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                 'defined.')
        n = t.dim()
        dim = method.dim + n if method.dim < 0 else method.dim
        if dim < 0:
            raise IndexError(f'Index is out of bounds for tensor with dimensions {n}')
        keep = mask.sum(dim=[d for d in range(n) if d != dim]) != 0
        return tuple(keep if d == dim else slice(None) for d in range(n))


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (useful to give a module the pruned layout)."""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f'Invalid type for amount: {amount}. Must be int or float.')
    if (amount < 0 if isinstance(amount, numbers.Integral) else not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f'amount={amount} should either be a float in the range [0, 1] or a non-negative integer')


def _count(amount, size):
    """How many of ``size`` entries/channels to prune; an int count may not exceed ``size``."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f'amount={amount} should be smaller than the number of parameters to prune={size}')
        return amount
    return round(amount * size)


def _validate_structured(t, dim):
    if t.dim() <= 1:
        raise ValueError(f'Structured pruning can only be applied to multidimensional tensors. Found tensor of '
                         f'shape {t.shape} with {t.dim()} dims')
    if dim >= t.dim():
        raise IndexError(f'Invalid index {dim} for tensor of size {t.shape}')


def _zero_entries(default_mask, flat_indices):
    mask = default_mask.clone(memory_format=ember.contiguous_format)
    mask.view(-1)[flat_indices] = 0
    return mask


def _channel_mask(t, dim, keep):
    """Ones on the channels ``keep`` (a bool mask or indices) along ``dim``, zeros elsewhere."""
    mask = ember.zeros_like(t)
    mask[tuple(keep if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class _Unstructured(BasePruningMethod):
    """Prune ``amount`` (a count, or a fraction) of the entries: the ``k`` picked by ``topk`` of ``_scores(t)``."""
    PRUNING_TYPE = 'unstructured'
    _largest = True

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count(self.amount, t.nelement())
        if k == 0:
            return default_mask.clone(memory_format=ember.contiguous_format)
        return _zero_entries(default_mask, ember.topk(self._scores(t).view(-1), k=k, largest=self._largest).indices)


class RandomUnstructured(_Unstructured):
    """Prune ``amount`` (a count, or a fraction) of the entries, chosen uniformly at random."""

    def _scores(self, t):
        return ember.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prune ``amount`` of the entries with the smallest absolute value."""
    _largest = False

    def _scores(self, t):
        return ember.abs(t)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim``, chosen at random."""
    PRUNING_TYPE = 'structured'

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count(self.amount, channels)
        if k == 0:
            return default_mask
        prob = ember.rand(channels)
        mask = _channel_mask(t, self.dim, prob > ember.kthvalue(prob, k=k).values)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune ``amount`` of the channels along ``dim`` with the smallest L``n`` norm (``n`` as ``ember.norm``'s p)."""
    PRUNING_TYPE = 'structured'

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim)
        channels = t.shape[self.dim]
        k = _count(self.amount, channels)
        if k == 0:
            return default_mask
        others = [d for d in range(t.dim()) if d != self.dim % t.dim()]
        norm = ember.norm(t, p=self.n, dim=others)
        mask = _channel_mask(t, self.dim, ember.topk(norm, k=channels - k, largest=True).indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune where the given ``mask`` is 0."""
    PRUNING_TYPE = 'global'

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f'default_mask shape {default_mask.shape} must match self.mask shape '
                                 f'{self.mask.shape}')
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Give ``module.<name>`` the pruned layout with an all-ones mask. Returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>``. Returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` smallest in absolute value. Returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``. Returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels along ``dim`` of smallest L``n`` norm. Returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` pairs together, as one flat vector: ``pruning_method(**kwargs)`` (an
    unstructured method) picks the entries across all of them, then each gets its part as a custom mask.

    >>> import ember
    >>> a, b = ember.nn.Linear(4, 4), ember.nn.Linear(4, 4)
    >>> global_unstructured([(a, 'weight'), (b, 'weight')], L1Unstructured, amount=10)
    >>> int((a.weight == 0).sum() + (b.weight == 0).sum())
    10
    """
    if not isinstance(parameters, Iterable):
        raise TypeError('global_unstructured(): parameters is not an Iterable')
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError('global_unstructured(): importance_scores must be of type dict')
    parameters = list(parameters)     # walked three times below; a generator would be spent after the first
    to_vector = ember.nn.utils.parameters_to_vector
    scores = to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = to_vector([getattr(m, n + '_mask', ember.ones_like(getattr(m, n))) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = 'temp'
    method = pruning_method(**kwargs)
    method._tensor_name = 'temp'
    if method.PRUNING_TYPE != 'unstructured':
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f'{pruning_method} of type {method.PRUNING_TYPE}')
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` where ``mask`` is 0. Returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and drop its hook, mask and ``_orig``. Returns ``module``."""
    for k, hook in _pruning_hooks(module, name):
        hook.remove(module)
        del module._forward_pre_hooks[k]
        return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any submodule has a pruning hook."""
    return any(isinstance(h, BasePruningMethod)
               for _, sub in module.named_modules() for h in sub._forward_pre_hooks.values())
