"""softmax, log_softmax, softmin and gumbel_softmax with torch.nn.functional's signatures (the operators live in
_ops/reductions.py); ``dim=None`` picks torch's legacy implicit dimension, with its deprecation warning."""
from ember._warn import warnings

import ember

_softmax = ember.ops.aten.softmax.int
_log_softmax = ember.ops.aten.log_softmax.int

__all__ = ['softmax', 'log_softmax', 'softmin', 'gumbel_softmax']


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably; ``dtype`` casts the input first.

    >>> softmax(ember.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _get_softmax_dim('softmax', input.dim(), _stacklevel)
    return _softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed as x - logsumexp(x).

    >>> round(log_softmax(ember.tensor([0., 0.]), dim=0)[0].item(), 4)
    -0.6931
    """
    if dim is None:
        dim = _get_softmax_dim('log_softmax', input.dim(), _stacklevel)
    return _log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``.

    >>> softmin(ember.tensor([0., 0.]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _get_softmax_dim('softmin', input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(-input, dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: softmax((logits + g) / tau) with g ~ Gumbel(0, 1) drawn as
    torch draws it (``-log`` of ``exponential_()``, so a seeded call gives torch's sample); ``hard=True`` returns
    the one-hot argmax in the forward pass with the soft sample's gradient (the straight-through estimator).

    >>> y = gumbel_softmax(ember.zeros(2, 4), hard=True)
    >>> y.sum(-1).tolist()
    [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = ember.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
