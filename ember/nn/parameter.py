"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers when assigned as attributes.

A Parameter is an ordinary leaf Tensor (``isinstance(p, ember.Tensor)``) that
shares the storage and version counter of the tensor it wraps and requires
grad by default. Operators on a Parameter return plain Tensors, as in torch.
"""
from .._tensor import Tensor
from .. import _functions as _F

__all__ = ['Parameter', 'Buffer']


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    >>> import ember
    >>> p = ember.nn.Parameter(ember.zeros(2))
    >>> p.requires_grad, isinstance(p, ember.Tensor)
    (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _F.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        p = object.__new__(cls)
        p._alias(data)
        p._is_param = True
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

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


def is_lazy(param):
    return False
