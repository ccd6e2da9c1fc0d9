"""torch.nn.utils.stateless: the pre-2.0 home of ``functional_call``, kept as a deprecated alias.

It warns (FutureWarning, torch's text) and calls ``ember.func.functional_call``, which swaps the given
tensors into the module for the duration of one call.
"""
from ember._warn import warnings

__all__ = ['functional_call']


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated: use ``ember.func.functional_call`` (the same arguments).

    >>> import ember, warnings
    >>> lin = ember.nn.Linear(2, 1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter('ignore')
    ...     functional_call(lin, {'weight': ember.ones(1, 2), 'bias': ember.zeros(1)}, ember.ones(1, 2))
    tensor([[2.]])
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    from ...func import functional_call as _functional_call
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False, stack_weights=False):
    """A context manager: inside it, ``module``'s parameters and buffers named in ``parameters_and_buffers`` are
    the tensors given (gradients flow to them); on exit the module's own come back. The private helper behind
    ``functional_call`` that libraries call directly (zuko's Bayesian models). ``stack_weights`` is accepted as
    torch's is; the swap restores the original tensors either way.

    >>> import ember
    >>> lin = ember.nn.Linear(2, 1)
    >>> with _reparametrize_module(lin, {'weight': ember.ones(1, 2), 'bias': ember.zeros(1)}):
    ...     lin(ember.ones(1, 2))
    tensor([[2.]])
    >>> isinstance(lin.weight, ember.nn.Parameter)
    True
    """
    from ...func._module import _expand_tied, _check_strict, _reparametrize
    values = dict(parameters_and_buffers)
    if tie_weights:
        values = _expand_tied(module, values)
    if strict:
        _check_strict(module, values)
    return _reparametrize(module, values)
