"""torch._functorch.apis: where torch defines ``vmap``, ``grad`` and ``grad_and_value``; here ember.func's, looked
up when asked for (ember.func, a front end, imports this package: a module-level import back would be a cycle)."""
__all__ = ['vmap', 'grad', 'grad_and_value']


def __getattr__(name):
    if name in __all__:
        from .. import func
        return getattr(func, name)
    raise AttributeError(f"module 'ember._functorch.apis' has no attribute '{name}'")
