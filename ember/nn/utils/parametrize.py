"""torch.nn.utils.parametrize: a parameter or buffer computed by modules from an unconstrained original.

``register_parametrization(module, 'weight', P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that returns
``P()(original)`` each time it is read (so gradients reach ``original``), as torch does:

- the module's class is swapped for a subclass ``Parametrized<Class>`` that carries the property (one per
  parametrized name), and is swapped back when the last parametrization is removed;
- ``P.right_inverse(value)``, where the parametrization has one, turns a value into originals: it runs at
  registration (``original`` keeps its identity, so an optimizer built before still holds it) and on
  assignment (``module.weight = value``); it may return several tensors (``original0``, ``original1``, ...);
- several parametrizations on one name run in registration order; unless ``unsafe=True`` each must keep
  the tensor's shape and dtype;
- ``with cached():`` computes each parametrized tensor once inside the block;
- ``remove_parametrizations(module, name, leave_parametrized=True)`` puts a plain parameter back, holding the
  parametrized value (or the original with ``leave_parametrized=False``).

state_dict keys are torch's (``parametrizations.weight.original``), so such checkpoints load both ways.

>>> import ember
>>> from ember.nn.utils import parametrize
>>> class Symmetric(ember.nn.Module):
...     def forward(self, x):
...         return x.triu() + x.triu(1).transpose(-1, -2)
>>> m = parametrize.register_parametrization(ember.nn.Linear(3, 3), 'weight', Symmetric())
>>> bool((m.weight == m.weight.T).all()), type(m).__name__
(True, 'ParametrizedLinear')
"""
import collections.abc
import contextlib
import copy

from ... import Tensor, no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ['register_parametrization', 'remove_parametrizations', 'is_parametrized', 'cached',
           'type_before_parametrizations', 'transfer_parametrizations_and_params', 'ParametrizationList']

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside the block each parametrized tensor is computed at its first read and reused after (one
    computation per forward pass of a recurrent model, say); the values are dropped when the outermost block
    ends."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest, src):
    """dest takes src's value, keeping its identity (torch's ``set_``)."""
    if dest is src:
        return
    if tuple(dest.shape) == tuple(src.shape) and dest.dtype == src.dtype:
        dest.copy_(src)
    else:
        dest.data = src


def _check(what, value, like, who):
    if not isinstance(value, Tensor):
        raise ValueError(f"{who} must return a tensor. Got {type(value).__name__}.")
    if value.dtype != like.dtype:
        raise ValueError(f"{who} may not change the dtype of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{what} dtype: {like.dtype}\nparametrized dtype: {value.dtype}")
    if tuple(value.shape) != tuple(like.shape):
        raise ValueError(f"{who} may not change the shape of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{what} shape: {tuple(like.shape)}\nparametrized shape: {tuple(value.shape)}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its original(s): ``original`` when ``right_inverse`` gives one
    tensor, ``original0``, ``original1``, ... when it gives several. Calling it computes the parametrized
    tensor."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, 'right_inverse'):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _maybe_set(original, new)      # the optimizer may hold `original`: keep the object
            _register_parameter_or_buffer(self, 'original', original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                     f"(list, tuple...). Got element {i} of the sequence with type "
                                     f"{type(t).__name__}.")
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                t.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f'original{i}', t)
        if not self.unsafe:
            _check('original', self(), original, 'A parametrization')

    def right_inverse(self, value):
        """Sets the original(s) so that this list computes ``value`` (each parametrization's right_inverse,
        last to first)."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, 'right_inverse'):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of length "
                                     f"{self.ntensors}. Got {type(value).__name__}")
                for i, t in enumerate(value):
                    _maybe_set(getattr(self, f'original{i}'), t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f'original{i}') for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")
    namespace = {'__getstate__': getstate}
    if not hasattr(cls, '__deepcopy__'):
        namespace['__deepcopy__'] = default_deepcopy
    module.__class__ = type(f'Parametrized{cls.__name__}', (cls,), namespace)


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            value = _cache.get(key)
            if value is None:
                value = _cache[key] = parametrization()
            return value
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)
    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` (a parameter, a buffer, or an already parametrized name, whose
    list grows) by the module ``parametrization``; returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            _check('tensor', x, y, 'A parametrization')
            if hasattr(parametrization, 'right_inverse'):
                z = parametrization.right_inverse(x)
                if not isinstance(z, Tensor):
                    raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")
                _check('tensor', z, y, 'right_inverse')
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization, or one on ``tensor_name``."""
    parametrizations = getattr(module, 'parametrizations', None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations on ``tensor_name``: a plain parameter (or buffer) again, holding the
    parametrized value (``leave_parametrized=True``) or the original; the class is restored with the last."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _maybe_set(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name)
        first = parametrizations.original0
        original = Parameter(t, first.requires_grad) if isinstance(first, Parameter) else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, 'parametrizations')
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on ``to_module`` too,
    the same parametrization modules, with the originals' values copied."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        src, dst = from_module.parametrizations[name], to_module.parametrizations[name]
        with no_grad():
            if src.is_tensor:
                _maybe_set(dst.original, src.original)
            else:
                for i in range(src.ntensors):
                    _maybe_set(getattr(dst, f'original{i}'), getattr(src, f'original{i}'))
    return to_module
