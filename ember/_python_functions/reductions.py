"""Public reductions whose torch signatures are not one schema, returning torch's return types.

``var``/``std`` take ``unbiased`` positionally or ``correction=``; ``norm`` maps ``p`` onto
``linalg.vector_norm``. Each function here is also installed as the ``Tensor`` method of the same name.
(``max``/``min``, ``sort``, ``topk``, ``median`` and the other value-and-index reductions are overload groups,
declared with their operators: ember/_ops/overloads.py.)
"""
from .._tensor import Tensor
from ..ops import aten
from ._out import write_out


__all__ = ['var', 'std', 'var_mean', 'std_mean', 'norm']


def _write_out(out, res):
    """``out=`` for the hand-written functions (NOTE [out= of Python-written functions])."""
    r = write_out(out, res)
    return out if isinstance(res, tuple) else r


def _finish(res, out, rt=None):
    if out is not None:
        res = _write_out(out, res)
        return rt(*res) if rt is not None else res
    return rt(*res) if rt is not None else res




# --- var / std ----------------------------------------------------------------------

def _correction(name, dim, unbiased, correction):
    if isinstance(dim, bool):     # var(x, True): the unbiased overload
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise RuntimeError(f"{name}: Cannot pass both unbiased and correction arguments")
        correction = 1 if unbiased else 0
    return dim, correction


def _numpy_names(name, dim, keepdim, extra):
    """``axis=``/``keepdims=`` for ``dim``/``keepdim`` (NOTE [numpy keyword aliases] in _dispatch/dispatcher.py)."""
    for k, v in extra.items():
        if k not in ('axis', 'keepdims'):
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if not (dim is None if k == 'axis' else keepdim is False):
            raise TypeError(f"{name}() got multiple values for argument '{'dim' if k == 'axis' else 'keepdim'}'")
        dim, keepdim = (v, keepdim) if k == 'axis' else (dim, v)
    return dim, keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, **np_names):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means 0).

    >>> var(tensor([1., 2., 3., 4.])).item()
    1.6666666269302368
    """
    if np_names:
        dim, keepdim = _numpy_names('var', dim, keepdim, np_names)
    dim, correction = _correction('var', dim, unbiased, correction)
    return _finish(aten.var.correction(input, dim, correction=correction, keepdim=keepdim), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, **np_names):
    """Standard deviation over ``dim`` (see `var`).

    >>> round(std(tensor([1., 2., 3., 4.])).item(), 4)
    1.291
    """
    if np_names:
        dim, keepdim = _numpy_names('std', dim, keepdim, np_names)
    dim, correction = _correction('std', dim, unbiased, correction)
    return _finish(aten.std.correction(input, dim, correction=correction, keepdim=keepdim), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, **np_names):
    """``(var(input, dim), mean(input, dim))``.

    >>> [t.item() for t in var_mean(tensor([1., 3.]))]
    [2.0, 2.0]
    """
    if np_names:
        dim, keepdim = _numpy_names('var_mean', dim, keepdim, np_names)
    return var(input, dim, unbiased, keepdim, correction=correction), input.mean(
        None if isinstance(dim, bool) else dim, keepdim=keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, **np_names):
    """``(std(input, dim), mean(input, dim))``.

    >>> [round(t.item(), 4) for t in std_mean(tensor([1., 3.]))]
    [1.4142, 2.0]
    """
    if np_names:
        dim, keepdim = _numpy_names('std_mean', dim, keepdim, np_names)
    return std(input, dim, unbiased, keepdim, correction=correction), input.mean(
        None if isinstance(dim, bool) else dim, keepdim=keepdim)


# --- norms ------------------------------------------------------------------------

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements by default), as torch.linalg.vector_norm.

    >>> vector_norm(tensor([3., 4.])).item()
    5.0
    """
    if isinstance(dim, int):
        dim = (dim,)
    return _finish(aten.linalg_vector_norm.default(x, ord, dim, keepdim, dtype=dtype), out)


def norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: vector norms over ``dim`` ('fro' is the 2-norm of the elements); 'nuc' is the nuclear norm.

    >>> norm(tensor([[3., 0.], [0., 4.]])).item()
    5.0
    """
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == 'fro':
            if dim is not None and len(dim) > 2:
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if p == 'nuc':
            from .. import linalg
            r = linalg.matrix_norm(input, 'nuc', dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
            return _finish(r, out)
        raise RuntimeError(f"norm(): unsupported norm type {p!r}")
    return vector_norm(input, p, dim, keepdim, dtype=dtype, out=out)


# --- sorting and selection ---------------------------------------------------------------

def _methods():
    def method(f):
        def m(self, *args, **kwargs):
            return f(self, *args, **kwargs)
        m.__name__ = m.__qualname__ = f.__name__
        m.__doc__ = f.__doc__
        m._generated = False
        return m
    for f in (var, std, norm):
        setattr(Tensor, f.__name__, method(f))


_methods()


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``
    (by maxnorm / (norm + 1e-7), torch's factor); the others unchanged. Differentiable through the norm.

    >>> import ember
    >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    nd = max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    dims = [d for d in range(input.dim()) if d != dim % nd]
    norm = aten.linalg_vector_norm.default(input, p, dims, True)
    factor = aten.where.self(norm > maxnorm, maxnorm / (norm + 1e-7), norm.new_ones(()))
    return _finish(input * factor, out)


def _renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self, p, dim, maxnorm))


__all__ += ['renorm']
Tensor.renorm = lambda self, p, dim, maxnorm: renorm(self, p, dim, maxnorm)
Tensor.renorm_ = _renorm_


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The nuclear norm (sum of singular values) over ``dim`` (the last two by default): torch's deprecated
    ``torch.nuclear_norm``, ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``; ``nuclear_norm(x, True)`` keeps dims.

    >>> import ember
    >>> ember.nuclear_norm(ember.eye(3))
    tensor(3.)
    """
    from ember._warn import warnings
    warnings.warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed "
                       "in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
                       UserWarning)
    if isinstance(dim, bool):          # nuclear_norm(input, keepdim): the overload without dim
        dim, keepdim = None, dim
    dims = [-2, -1] if dim is None else list(dim)
    r = aten.linalg_matrix_norm.str_ord(input, 'nuc', dims, keepdim)
    return r if out is None else write_out(out, r, same_dtype="linalg.matrix_norm expected out tensor dtype {res} "
                                                              "but got: {out}")


__all__ += ['nuclear_norm']
