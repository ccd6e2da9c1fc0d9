"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers when assigned as attributes.

A Parameter is an ordinary leaf Tensor (``isinstance(p, ember.Tensor)``) that
shares the storage and version counter of the tensor it wraps and requires
grad by default. Operators on a Parameter return plain Tensors, as in torch.
"""
from .._tensor import Tensor
from .. import _functions as _F
from .._C import _disabled_torch_function_impl

__all__ = ['Parameter', 'Buffer', 'UninitializedParameter', 'UninitializedBuffer', 'is_lazy']


class _ParameterMeta(type(Tensor)):
    """torch's metaclass of Parameter: a tensor marked ``_is_param`` (what torch.func and FSDP-style wrappers leave
    on a plain tensor standing in for a parameter) counts as a Parameter for ``isinstance``."""

    def __instancecheck__(cls, instance):
        if cls is Parameter and isinstance(instance, Tensor) and getattr(instance, '_is_param', False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    >>> import ember
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p.requires_grad, isinstance(p, ember.Tensor)
    (True, True)
    """

    def __new__(cls, data=None, requires_grad=True, **internals):
        # ``type(p)(p.to(device), **p.__dict__)`` (accelerate's init_empty_weights): torch's __dict__ holds no tensor
        # state, ember's holds its internals (``_a``, ``_dtype``, ...): those are taken from ``data`` instead
        unexpected = [k for k in internals if not k.startswith('_')]
        if unexpected:
            raise TypeError(f"Parameter.__new__() got an unexpected keyword argument '{unexpected[0]}'")
        if data is None:
            data = _F.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        if type(data) not in (Tensor, Parameter, Buffer):        # torch's Buffer is a flagged plain Tensor
            return _custom_parameter(data, requires_grad)
        p = object.__new__(cls)
        p._alias(data)
        p._is_param = True
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True, **internals):
        pass

    __torch_function__ = _disabled_torch_function_impl     # operators on a Parameter return plain Tensors

    def __repr__(self):
        return 'Parameter containing:\n' + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        from ..autograd.grad_mode import no_grad
        with no_grad():
            result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _custom_parameter(data, requires_grad):
    """torch's path for a Tensor subclass (torchao's quantized weights, NF4): the tensor's own ``detach()``,
    flagged ``_is_param`` (so ``isinstance(t, Parameter)`` holds), keeps its type and so its dispatch."""
    t = data.detach().requires_grad_(requires_grad)
    if type(t) is not type(data):
        raise RuntimeError(f"Creating a Parameter from an instance of type {type(data).__name__} requires that "
                           f"detach() returns an instance of the same type, but return type {type(t).__name__} was "
                           "found instead. To use the type as a Parameter, please correct the detach() semantics "
                           "defined by its __torch_dispatch__() implementation.")
    t._is_param = True
    return t


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """A Tensor that a Module registers as a buffer when assigned (``persistent`` selects state_dict)."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _F.empty(0)
        b = object.__new__(cls)
        b._alias(data)
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass

    __torch_function__ = _disabled_torch_function_impl



# --- lazy parameters ---------------------------------------------------------------------------------------
# NOTE [lazy parameters]: a lazy module (LazyLinear, LazyConv2d, ...) does not know its input size until its
# first forward, so its parameters start as UninitializedParameter / UninitializedBuffer: an empty tensor of
# the requested dtype and device that an optimizer may already hold. ``materialize(shape)`` gives that same
# object its storage and turns its class into the ordinary one (``cls_to_become``), so references taken before
# (an optimizer's param groups) stay valid. torch refuses most operations on them through
# ``__torch_function__``; ember dispatches Tensor subclasses by their keys (NOTE [__torch_function__]), so
# here only the attributes torch names in its errors (``shape``, ``share_memory_``) raise torch's message, and
# an operator on the empty data fails with that operator's own shape error.

_UNINIT_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                 "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                 "`forward` to initialize the parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: materialize, and the refused attributes."""

    def materialize(self, shape, device=None, dtype=None):
        """Give this tensor storage of ``shape`` (uninitialized values) and its ordinary class."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = _F.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_UNINIT_SHAPE)

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def _converted(self, t):
        """A conversion (``to``, ``float``, ...) of an uninitialized tensor stays uninitialized."""
        if t is self:
            return self
        out = type(self)(self.requires_grad, device=t.device, dtype=t.dtype)
        return out

    def to(self, *args, **kwargs):
        return self._converted(Tensor.to(self, *args, **kwargs))

    def float(self, *args, **kwargs):
        return self._converted(Tensor.float(self, *args, **kwargs))

    def double(self, *args, **kwargs):
        return self._converted(Tensor.double(self, *args, **kwargs))

    def half(self, *args, **kwargs):
        return self._converted(Tensor.half(self, *args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._converted(Tensor.cpu(self, *args, **kwargs))

    def __repr__(self):
        return f'<{type(self).__name__}>'

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (NOTE [lazy parameters]); becomes a Parameter."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _F.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape is not known yet (NOTE [lazy parameters]); becomes a Tensor."""
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        b = Buffer.__new__(cls, _F.empty(0, device=device, dtype=dtype), persistent=persistent)
        if requires_grad:
            b.requires_grad_(True)
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def __deepcopy__(self, memo):
        """torch copies an uninitialized buffer through Tensor.__deepcopy__, which its placeholder refuses (only
        UninitializedParameter has a copy of its own): a LazyBatchNorm's copy is an error until ``forward`` ran."""
        from ..compat import imported_as
        raise ValueError(f"Attempted to use an uninitialized parameter in {Tensor.__deepcopy__}. This error happens "
                         f"when you are using a `LazyModule` or explicitly manipulating `{imported_as()}.nn.parameter."
                         f"{type(self).__name__}` objects. When using LazyModules Call `forward` with a dummy batch to "
                         f"initialize the parameters before calling torch functions")


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
