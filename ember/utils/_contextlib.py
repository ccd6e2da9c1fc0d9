"""torch.utils._contextlib: the base class of context managers that also decorate functions (``@no_grad()``)."""
from ..autograd.grad_mode import _DecoratorContextManager

__all__ = ['_DecoratorContextManager']
