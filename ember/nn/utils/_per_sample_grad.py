"""call_for_per_sample_grads (torch.nn.utils._per_sample_grad): a module's forward whose backward fills each
parameter's ``grad_sample`` with one gradient per sample (NOTE [per-sample gradients] in _expanded_weights.py)."""
import functools

import ember
from ...func import functional_call
from ...utils._pytree import tree_leaves
from ._expanded_weights import ExpandedWeight


def call_for_per_sample_grads(module, *, batch_size=None, loss_reduction='sum', batch_first=True):
    """``module``'s forward with every parameter that requires grad an ExpandedWeight: after a backward,
    ``param.grad_sample`` has shape ``(batch, *param.shape)`` and ``param.grad`` is untouched. With
    ``loss_reduction='mean'`` the per-sample gradients are multiplied by the batch size, undoing the mean.

    >>> import ember
    >>> from ember.nn.utils._per_sample_grad import call_for_per_sample_grads
    >>> model = ember.nn.Linear(4, 3)
    >>> call_for_per_sample_grads(model)(ember.randn(5, 4)).sum().backward()
    >>> model.weight.grad_sample.shape, model.weight.grad
    (ember.Size([5, 3, 4]), None)
    """
    if loss_reduction not in ('sum', 'mean'):
        raise RuntimeError(f"Expected loss_reduction argument to be sum or mean, got {loss_reduction}")
    if not isinstance(module, ember.nn.Module):
        raise RuntimeError(f"Module passed must be nn.Module, got {type(module).__name__}")
    if not (batch_size is None or isinstance(batch_size, int)):
        raise RuntimeError(f"Batch size passed must be None or an integer, got {type(batch_size).__name__}")
    if batch_size is not None and batch_size < 1:
        raise RuntimeError(f"Batch size must be positive, got {batch_size}")
    for weight in module.parameters():
        if getattr(weight, 'grad_sample', None) is not None:
            raise RuntimeError(f"Current Expanded Weights accumulates the gradients, which will be incorrect for "
                               f"multiple calls without clearing gradients. Please clear out the grad_sample "
                               f"parameter of {weight} or post an issue to pytorch/pytorch to prioritize correct "
                               f"behavior")

    def compute_batch_size(args, kwargs):
        found = None
        for arg in tree_leaves((args, kwargs)):
            if not isinstance(arg, ember.Tensor):
                continue
            size = arg.shape[0] if batch_first else arg.shape[1]
            if found is not None and found != size:
                raise RuntimeError(f"When computing batch size, found at least one input with batch size {found} "
                                   f"and one with batch size {size}. Please specify it explicitly using the batch "
                                   f"size kwarg in call_for_per_sample_grads")
            found = size
        if found is None:
            raise RuntimeError("Unable to find a tensor in the passed args and kwargs. They may not be pytree-able "
                               "and so ExpandedWeights cannot compute the batch size from the inputs. Please "
                               "specify it explicitly")
        return found

    @functools.wraps(module.forward)
    def wrapper(*args, **kwargs):
        size = batch_size if batch_size is not None else compute_batch_size(args, kwargs)
        params = {name: ExpandedWeight(p, size, loss_reduction) if p.requires_grad else p
                  for name, p in module.named_parameters()}
        return functional_call(module, params, args, kwargs)

    return wrapper
