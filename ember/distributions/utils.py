"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits, lazy properties.

>>> import ember
>>> from ember.distributions.utils import probs_to_logits
>>> probs_to_logits(ember.tensor([0.5]), is_binary=True)
tensor([0.])
"""
from numbers import Number

import ember
import ember.nn.functional as F

__all__ = ['broadcast_all', 'logits_to_probs', 'clamp_probs', 'probs_to_logits', 'lazy_property', 'tril_matrix_to_vec',
           'vec_to_tril_matrix']

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcast numbers and tensors to one shape; numbers become tensors of the first tensor's dtype
    (or the default dtype).

    >>> a, b = broadcast_all(ember.zeros(2), 1.0)
    >>> b
    tensor([1., 1.])
    """
    if not all(isinstance(v, (ember.Tensor, Number)) for v in values):
        raise ValueError('Input arguments must all be instances of numbers.Number, torch.Tensor or objects '
                         'implementing __torch_function__.')
    if not all(isinstance(v, ember.Tensor) for v in values):
        opts = {'dtype': ember.get_default_dtype()}
        for v in values:
            if isinstance(v, ember.Tensor):
                opts = {'dtype': v.dtype, 'device': v.device}
                break
        values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **opts) for v in values]
    return ember.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return ember.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape)[:value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for a binary variable, softmax over the last dimension otherwise.

    >>> logits_to_probs(ember.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    if is_binary:
        return ember.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into [eps, 1 - eps] of their dtype, so their logs stay finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds for a binary variable, log-probabilities otherwise.

    >>> probs_to_logits(ember.tensor([0.5, 0.5]))
    tensor([-0.6931, -0.6931])
    """
    ps = clamp_probs(probs)
    if is_binary:
        return ember.log(ps) - ember.log1p(-ps)
    return ember.log(ps)


class lazy_property:
    """A property computed once, on first use (with grad enabled, so it is differentiable), and then cached
    on the instance. Seen on the class it is itself, so ``Distribution.__init__`` can tell a lazily derived
    parameter (not validated) from one given by the user."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n, diag, device):
    """True at (i, j) when j <= i + diag: the entries ``tril(diag)`` keeps, read in row order."""
    r = ember.arange(n, device=device)
    return r < r.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of a (batched) square matrix, in row order.

    >>> tril_matrix_to_vec(ember.tensor([[1.0, 0.0], [2.0, 3.0]]))
    tensor([1., 2., 3.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f'diag ({diag}) provided is outside [{-n}, {n - 1}].')
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The (batched) square lower-triangular matrix whose entries below diagonal ``diag`` are ``vec`` in row
    order (the inverse of ``tril_matrix_to_vec``).

    >>> vec_to_tril_matrix(ember.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 0.],
            [2., 3.]])
    """
    # n is the positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 len(vec) = 0
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > ember.finfo(vec.dtype).eps:
        raise ValueError(f'The size of last dimension is {vec.shape[-1]} which cannot be expressed as '
                         'the lower triangular part of a square D x D matrix.')
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def count_and_param(dist, total_count, probs, logits):
    """Binomial's and NegativeBinomial's parameters: ``total_count`` broadcast with exactly one of ``probs`` and
    ``logits`` (and cast to its dtype); the one given becomes ``dist._param``."""
    if (probs is None) == (logits is None):
        raise ValueError('Either `probs` or `logits` must be specified, but not both.')
    name, value = ('probs', probs) if probs is not None else ('logits', logits)
    count, param = broadcast_all(total_count, value)
    dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
