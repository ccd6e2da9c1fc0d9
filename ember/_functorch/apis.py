"""torch._functorch.apis: where torch defines ``vmap``, ``grad`` and ``grad_and_value``; here ember.func's."""
from ..func import grad, grad_and_value, vmap  # noqa: F401
