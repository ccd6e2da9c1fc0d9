"""ember.func: composable function transforms (torch.func's API).

Reverse mode (``grad``, ``grad_and_value``, ``vjp``, ``jacrev``) is built on ember.autograd (NOTE [func levels]
in _reverse.py); forward mode (``jvp``, ``jacfwd``, ``linearize``, ``hessian`` = ``jacfwd(jacrev)``) on
ember.autograd.forward_ad (NOTE [forward AD]); ``vmap`` batches through a FuncTorchBatched dispatch key (NOTE [vmap]);
``functionalize`` replaces mutations (and views) by out-of-place operators (NOTE [functionalize]);
``functional_call`` and ``stack_module_state`` turn a module into a function of its parameters and buffers.

>>> import ember
>>> from ember.func import grad
>>> grad(lambda x: (x * x).sum())(ember.tensor([1., 2.]))
tensor([2., 4.])
"""
from ._reverse import grad, grad_and_value, vjp, jacrev
from ._forward import jvp, jacfwd, linearize, hessian
from ._module import functional_call, stack_module_state, replace_all_batch_norm_modules_
from ._vmap import vmap
from ._functionalize import functionalize

__all__ = ['grad', 'grad_and_value', 'vjp', 'jacrev', 'jvp', 'jacfwd', 'linearize', 'hessian', 'functional_call', 'stack_module_state', 'replace_all_batch_norm_modules_', 'vmap', 'functionalize']
