"""Reductions, scans, sorting and softmax.

A reduction's meta function resolves ``dim`` the way torch does (an int, a
list/tuple, or None / ``()`` meaning every dimension; negative dims wrap; a
0-d tensor accepts dim 0 and -1) and the result dtype (``sum`` of integers or
bool is int64, ``dtype=`` casts the input first). Kernels receive the raw
``dim`` argument and the resolved NumPy result dtype.

Gradients of reductions are the incoming gradient put back in the reduced
dimensions (`_unreduce`: a reshape to the keepdim shape, then an expand) —
never a hand-written sum-to-shape, which the engine does.
"""
from .._core import dtype as D
from .._core.dtype import scalar_name as _tn, SAME_DTYPE
from .._core.storage import follows
from .registry import declare
from .overloads import overloads
from .views import wrap_dim
from .._dispatch.ops_namespace import aten


# --- shared rules ----------------------------------------------------------------

def reduce_dims(dim, ndim):
    """The sorted tuple of dims reduced over; None or () means all of them."""
    if dim is None:
        return tuple(range(ndim))
    if dim.__class__ is int and 0 <= dim < ndim:      # the common case, on the hot path
        return (dim,)
    if isinstance(dim, int) or hasattr(dim, '__index__') and not isinstance(dim, (list, tuple)):
        dims = (int(dim),)
    else:
        dims = tuple(int(d) for d in dim)
        if not dims:
            return tuple(range(ndim))
    out = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.add(w)
    return tuple(sorted(w for w in out if w < ndim)) if ndim else ()


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _int_to_long(d):
    return D.int64 if d.category <= 1 else d


def _sum_meta(self, dim=None, keepdim=False, dtype=None):
    shape = tuple(self._a.shape)
    dims = reduce_dims(dim, len(shape))
    return reduced_shape(shape, dims, keepdim), dtype if dtype is not None else _int_to_long(self._dtype)


def _unreduce(grad, sizes, dim, keepdim):
    """``grad`` of a reduction over ``dim`` broadcast back to the input's ``sizes``."""
    sizes = tuple(sizes)
    if not keepdim and sizes:
        dims = reduce_dims(dim, len(sizes))
        if len(dims) < len(sizes):      # a full reduction's 0-d grad expands as it is (torch's sum backward)
            grad = grad.reshape(reduced_shape(sizes, dims, True))
    return aten.expand.default(grad, sizes)      # the operator itself: Tensor.expand's argument chooser is ~1.5 us


def _by_dim(base):
    """torch's node for the overload called (NOTE [node names by arguments]): ``x.sum()`` is sum's first overload
    (SumBackward0), ``x.sum(1)`` its dim overload (SumBackward1); mean and prod alike."""
    names = (base + 'Backward0', base + 'Backward1')
    return lambda self, dim=None, keepdim=False, dtype=None: names[dim is not None or keepdim]


declare('sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', forward='linear',
        meta=_sum_meta, name='sum', out=True, grad_name=_by_dim('Sum'),
        derivatives={'self': lambda grad, self_sizes, dim, keepdim: _unreduce(grad, self_sizes, dim, keepdim)})


# --- helpers for formulas --------------------------------------------------------

def _keep(t, sizes, dim, keepdim):
    """``t`` (a reduction's output) with the reduced dims put back as size 1."""
    sizes = tuple(sizes)
    if keepdim or not sizes:
        return t
    return t.reshape(reduced_shape(sizes, reduce_dims(dim, len(sizes)), True))


def _zeros(sizes, like):
    return aten.zeros.default(tuple(sizes), dtype=like.dtype, device=like.device)


def _scatter_grad(grad, indices, sizes, dim, keepdim=True):
    """Gradient of an op that picked ``self``'s elements at ``indices`` along ``dim``: scatter it back
    (add, so repeated indices as in cummax accumulate)."""
    sizes = tuple(sizes)
    if not sizes:
        return grad.reshape(())
    d = wrap_dim(dim, len(sizes))
    if not keepdim:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return _zeros(sizes, grad).scatter_add(d, indices, grad)


def _evenly(grad, self, result, dim=None, keepdim=False, nan_ties=False):
    """Gradient of max/min/amax/amin/median over ``dim``: shared evenly among the elements that tie
    (for the full max/min/median a NaN result ties with every NaN, as torch's evenly_distribute_backward)."""
    sizes = tuple(self.shape)
    r = _keep(result, sizes, dim, keepdim)
    g = _keep(grad, sizes, dim, keepdim)
    mask = self == r
    if nan_ties and self.dtype.is_floating_point:
        mask = aten.where.self(r != r, self != self, mask)
    return g * mask / mask.sum(dim if sizes else None, keepdim=True)


def _check_nonempty_dims(name, shape, dims, dim_given):
    if not dim_given and any(n == 0 for n in shape):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _float_only(name, d, msg=None):
    if d.category < 2:
        raise RuntimeError(msg or f"{name}(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_tn(d)}")


# --- sum-like --------------------------------------------------------------------

declare('nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', forward='transpose',
        meta=_sum_meta, out=True,
        derivatives={'self': lambda grad, self, dim, keepdim:
                     _unreduce(grad, self.shape, dim, keepdim) * (self == self)})


def _mean_meta(self, dim=None, keepdim=False, dtype=None):
    shape = tuple(self._a.shape)
    _float_only('mean', dtype if dtype is not None else self._dtype)
    dims = reduce_dims(dim, len(shape))
    return reduced_shape(shape, dims, keepdim), dtype if dtype is not None else self._dtype


def _count(sizes, dim):
    sizes = tuple(sizes)
    n = 1
    for d in reduce_dims(dim, len(sizes)):
        n *= sizes[d]
    return n


declare('mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', forward='linear',
        meta=_mean_meta, name='mean', out=True, grad_name=_by_dim('Mean'),
        derivatives={'self': lambda grad, self_sizes, dim, keepdim:     # divide the small grad, then expand
                     _unreduce(grad / _count(self_sizes, dim), self_sizes, dim, keepdim)})


def _nanmean(self, dim=None, keepdim=False, dtype=None):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_tn(self.dtype)}")
    notnan = (self == self).sum(dim, keepdim=keepdim)
    return self.nansum(dim, keepdim=keepdim, dtype=dtype) / notnan


declare('nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
        composite=_nanmean, out=True)


def _prod_meta(self, dim=None, keepdim=False, dtype=None):
    shape = tuple(self._a.shape)
    dims = reduce_dims(dim, len(shape))
    return reduced_shape(shape, dims, keepdim), dtype if dtype is not None else _int_to_long(self._dtype)


def _prod_backward(grad, self, result, dim, keepdim):
    """d prod / d x_i = product of the others: result / x_i where no zeros; the exclusive products
    (cumprod from each side) where there are, so zeros give torch's exact values."""
    sizes = tuple(self.shape)
    if not sizes:
        return grad
    g = _keep(grad, sizes, dim, keepdim)
    if not bool((self == 0).any()):
        return g * _keep(result, sizes, dim, keepdim) / self
    if dim is None:
        flat = self.reshape(-1)
        return (g.reshape(-1) * _exclusive_prod(flat, 0)).reshape(sizes)
    return g * _exclusive_prod(self, dim)


def _exclusive_prod(x, dim):
    d = wrap_dim(dim, x.dim())
    n = x.shape[d]
    ones = aten.ones.default(tuple(1 if i == d else s for i, s in enumerate(x.shape)), dtype=x.dtype, device=x.device)
    left = aten.cat.default([ones, x.narrow(d, 0, n - 1)], d).cumprod(d)
    right = aten.cat.default([x.narrow(d, 1, n - 1), ones], d).flip([d]).cumprod(d).flip([d])
    return left * right


declare('prod.dim_int(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', forward='transpose',
        meta=_prod_meta, name='prod', out=True, grad_name=_by_dim('Prod'),
        # torch's formula reads self.to(grad's dtype): with dtype= the product is of the cast values
        derivatives={'self': lambda grad, self, result, dim, keepdim: _prod_backward(
            grad, self if self.dtype == grad.dtype else self.to(grad.dtype), result, dim, keepdim)})


# --- max / min ---------------------------------------------------------------------

def _full_extreme_meta(name):
    def meta(self):
        shape = tuple(self._a.shape)
        if any(n == 0 for n in shape):
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return (), self._dtype
    return meta


def _dim_extreme_meta(name):
    def meta(self, dim, keepdim=False):
        shape = tuple(self._a.shape)
        dims = reduce_dims(dim, len(shape))
        _check_nonempty_dims(name, shape, dims, True)
        out = reduced_shape(shape, dims, keepdim)
        return [(out, self._dtype), (out, D.int64)]
    return meta


def _amax_meta(name):
    def meta(self, dim=(), keepdim=False):
        shape = tuple(self._a.shape)
        dims = reduce_dims(dim, len(shape))
        given = dim is not None and (isinstance(dim, int) or len(dim) > 0)
        _check_nonempty_dims(name, shape, dims, given)
        return reduced_shape(shape, dims, keepdim), self._dtype
    return meta


for _n in ('max', 'min'):
    declare(f'{_n}(Tensor self) -> Tensor', meta=_full_extreme_meta(_n), name=f'_{_n}_all', function=False, forward='transpose',
            method=False, grad_name=f'{_n.capitalize()}Backward1',
            derivatives={'self': lambda grad, self, result: _evenly(grad, self, result, nan_ties=True)})
    declare(f'{_n}.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
            meta=_dim_extreme_meta(_n), name=f'_{_n}_dim', function=False, method=False, forward='transpose',
            grad_name=f'{_n.capitalize()}Backward0',
            derivatives={'self': lambda grad, result1, self_sizes, dim, keepdim:
                         _scatter_grad(grad, result1, self_sizes, dim, keepdim)})
    declare(f'a{_n}(Tensor self, int[1]? dim=[], bool keepdim=False) -> Tensor', meta=_amax_meta(f'a{_n}'), out=True, forward='transpose',
            derivatives={'self': lambda grad, self, result, dim, keepdim: _evenly(grad, self, result, dim, keepdim)})
    # torch's max.other: max(x, y) is maximum(x, y)
    declare(f'{_n}.other(Tensor self, Tensor other) -> Tensor', function=False, method=False, name=f'_{_n}_other',
            composite=lambda self, other, _pair=f'{_n}imum': getattr(aten, _pair).default(self, other))


overloads('max', 'max', 'max.dim', 'max.other')
overloads('min', 'min', 'min.dim', 'min.other')


def _aminmax_meta(self, dim=None, keepdim=False):
    shape = tuple(self._a.shape)
    if dim is None:
        if any(n == 0 for n in shape):
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        out = tuple(1 for _ in shape) if keepdim else ()
    else:
        dims = reduce_dims(dim, len(shape))
        for d in dims:
            if shape[d] == 0:
                raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        out = reduced_shape(shape, dims, keepdim)
    return [(out, self._dtype), (out, self._dtype)]


declare('aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)', forward='transpose', meta=_aminmax_meta,
        derivatives={'self': lambda grads, self, results, dim, keepdim:
                     _evenly(grads[0], self, results[0], dim, keepdim) +
                     _evenly(grads[1], self, results[1], dim, keepdim)})
overloads('aminmax', 'aminmax')     # one overload: the group gives ember.return_types.aminmax and out=


def _arg_meta(name):
    def meta(self, dim=None, keepdim=False):
        shape = tuple(self._a.shape)
        if self._dtype is D.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if any(n == 0 for n in shape):
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            return (tuple(1 for _ in shape) if keepdim else ()), D.int64
        dims = reduce_dims(dim, len(shape))
        for d in dims:
            if shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return reduced_shape(shape, dims, keepdim), D.int64
    return meta


declare('argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor', meta=_arg_meta('argmax'), out=True,
        differentiable=False)
declare('argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor', meta=_arg_meta('argmin'), out=True,
        differentiable=False)


# --- var / std ---------------------------------------------------------------------

def _var_meta(self, dim=None, correction=None, keepdim=False):
    shape = tuple(self._a.shape)
    if self._dtype.category < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = reduce_dims(dim, len(shape))
    n = 1
    for d in dims:
        n *= shape[d]
    c = 1 if correction is None else correction
    if n - c <= 0:
        from ember._warn import warnings
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=5)
    return reduced_shape(shape, dims, keepdim), self._dtype.to_real()


def _dof(sizes, dim, correction):
    return max(0, _count(sizes, dim) - (1 if correction is None else correction))


def _var_backward(grad, self, dim, correction, keepdim):
    sizes = tuple(self.shape)
    g = _keep(grad, sizes, dim, keepdim)
    dof = _dof(sizes, dim, correction)
    if not dof and (dim is None or not sizes):
        # as torch: over the whole tensor with no degree of freedom, nan where self equals its mean and inf
        # elsewhere, a constant (the comparison has no gradient)
        return g * aten.where.self(self == self.mean(), float('nan'), float('inf')).to(g.dtype)
    return g * (2.0 / dof if dof else float('inf')) * (self - self.mean(dim, keepdim=True))


def _std_backward(grad, self, result, dim, correction, keepdim):
    sizes = tuple(self.shape)
    r = _keep(result, sizes, dim, keepdim)
    # torch zeroes the gradient where the deviation is 0 (a constant input) instead of dividing by it (NaN)
    g = (_keep(grad, sizes, dim, keepdim) / r).masked_fill(r == 0, 0)
    dof = _dof(sizes, dim, correction)
    return g * (self - self.mean(dim, keepdim=True)) / (dof if dof else 0.0)


declare('var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor', forward='transpose',
        meta=_var_meta, name='_var', function=False, method=False, grad_name='VarBackward0',
        derivatives={'self': _var_backward},
        complex_formulas=True)   # NOTE [complex gradients]: |x|-based, right for complex as written
declare('std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor', forward='transpose',
        meta=_var_meta, name='_std', function=False, method=False, grad_name='StdBackward0',
        derivatives={'self': _std_backward},
        complex_formulas=True)   # NOTE [complex gradients]: |x|-based, right for complex as written


# --- logsumexp, softmax ------------------------------------------------------------

def _logsumexp_meta(self, dim=(), keepdim=False):
    shape = tuple(self._a.shape)
    dims = reduce_dims(dim, len(shape))
    d = self._dtype
    return reduced_shape(shape, dims, keepdim), d if d.category >= 2 else D.get_default_dtype()


declare('logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor', forward='transpose', meta=_logsumexp_meta, out=True,
        derivatives={'self': lambda grad, self, result, dim, keepdim:
                     _keep(grad, self.shape, dim, keepdim) * (self - _keep(result, self.shape, dim, keepdim)).exp()})


def _softmax_meta(name):
    def meta(self, dim, dtype=None):
        shape = tuple(self._a.shape)
        w = wrap_dim(dim, len(shape))
        d = dtype if dtype is not None else self._dtype
        if d.category < 2 and self._a.size:
            last = '_lastdim' if w == len(shape) - 1 or not shape else ''
            raise NotImplementedError(f'"{name}{last}_kernel_impl" not implemented for \'{_tn(d)}\'')
        return shape, d
    return meta


# softmax's backward is an operator of its own (as in torch): one fused kernel on the training hot path
# instead of four dispatched ops; its derivatives, in ember ops, give the second order.
def _bwd_data_meta(grad_output, output, dim, input_dtype):
    return tuple(output._a.shape), output._dtype


def _sum_keep(x, dim):
    return x.sum(dim, keepdim=True)


declare('_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor', forward='transpose',
        meta=_bwd_data_meta, method=False,
        derivatives={'grad_output': lambda grad, output, dim, input_dtype:
                     aten._softmax_backward_data.default(grad, output, dim, input_dtype),
                     'output': lambda grad, grad_output, output, dim:
                     grad * grad_output - grad * _sum_keep(grad_output * output, dim)
                     - grad_output * _sum_keep(grad * output, dim)})
declare('_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor', forward='transpose',
        meta=_bwd_data_meta, method=False,
        derivatives={'grad_output': lambda grad, output, dim: grad - _sum_keep(grad * output.exp(), dim),
                     'output': lambda grad, grad_output, output, dim:
                     -grad * output.exp() * _sum_keep(grad_output, dim)})
declare('softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor', meta=_softmax_meta('softmax'),
        name='softmax', grad_name='SoftmaxBackward0', out=True,
        forward=lambda self_t, result, dim: result * (self_t - (result * self_t).sum(dim, keepdim=True)),
        derivatives={'self': lambda grad, result, dim, self_dtype:
                     aten._softmax_backward_data.default(grad, result, dim, self_dtype)},
                     primitive_because="torch's .int overload only casts and calls _softmax; this kernel takes dtype itself")
declare('log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor', meta=_softmax_meta('log_softmax'),
        name='log_softmax', grad_name='LogSoftmaxBackward0', out=True,
        forward=lambda self_t, result, dim: self_t - (result.exp() * self_t).sum(dim, keepdim=True),
        derivatives={'self': lambda grad, result, dim, self_dtype:
                     aten._log_softmax_backward_data.default(grad, result, dim, self_dtype)},
                     primitive_because="torch's .int overload only casts and calls _log_softmax; this kernel takes dtype itself")


# --- logical reductions, counting ----------------------------------------------------

def _logical_meta(self, dim=None, keepdim=False):
    shape = tuple(self._a.shape)
    # unlike sum's, all/any's dim=() reduces nothing
    dims = () if dim is not None and not isinstance(dim, int) and len(dim) == 0 else reduce_dims(dim, len(shape))
    return reduced_shape(shape, dims, keepdim), D.uint8 if self._dtype is D.uint8 else D.bool_


declare('all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor', meta=_logical_meta, name='all', out=True,
        differentiable=False)
declare('any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor', meta=_logical_meta, name='any', out=True,
        differentiable=False)


def _count_nonzero_meta(self, dim=None):
    shape = tuple(self._a.shape)
    return reduced_shape(shape, reduce_dims(dim, len(shape)), False), D.int64


declare('count_nonzero.dim_IntList(Tensor self, int[1]? dim=None) -> Tensor', meta=_count_nonzero_meta,
        name='count_nonzero', differentiable=False)


# --- norms ------------------------------------------------------------------------

def _vector_norm_meta(self, ord=2, dim=None, keepdim=False, dtype=None):
    shape = tuple(self._a.shape)
    if self._dtype.category < 2:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_tn(self._dtype)}")
    if dtype is not None and D.promote_types(self._dtype, dtype) != dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_tn(self._dtype)}) should be convertible "
                           f"without narrowing to the specified dtype ({_tn(dtype)})")
    if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord < 0 or ord == float('inf'):
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            if any(n == 0 for n in shape):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                                   "the operation does not have an identity")
    dims = reduce_dims(dim, len(shape))
    if isinstance(ord, (int, float)) and (ord < 0 or ord == float('inf')):
        for d in dims:
            if shape[d] == 0 and dim is not None and (isinstance(dim, int) or len(dim)):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the dimension {d}because "
                                   "this dimension is empty and the operation does not have an identity")
    out = dtype if dtype is not None else self._dtype
    return reduced_shape(shape, dims, keepdim), out.to_real()


def _vector_norm_backward(grad, self, result, ord, dim, keepdim):
    sizes = tuple(self.shape)
    g = _keep(grad, sizes, dim, keepdim)
    r = _keep(result, sizes, dim, keepdim)
    ord = float(ord)
    if ord == 0.0:
        return self * 0
    if ord == 1.0:
        return g * self.sgn()
    if ord == 2.0:
        return self * aten.where.self(r == 0, 0.0, g / r)
    if ord in (float('inf'), float('-inf')):
        a = self.abs()
        mask = a == r
        return g * self.sgn() * mask / mask.sum(dim, keepdim=True)
    # |x|^(p-1) sgn(x) / r^(p-1); zero where the norm is 0 (torch's subgradient)
    scale = aten.where.self(r == 0, 0.0, g / r.pow(ord - 1))
    return self.sgn() * self.abs().pow(ord - 1) * scale


declare('linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, '
        'ScalarType? dtype=None) -> Tensor', forward='transpose', meta=_vector_norm_meta, method=False,
        grad_name='LinalgVectorNormBackward0', derivatives={'self': _vector_norm_backward},
        complex_formulas=True)   # NOTE [complex gradients]: |x|-based, right for complex as written


# --- sorting and selection -----------------------------------------------------------

def _sort_meta(self, dim=-1, descending=False, stable=False):
    shape = tuple(self._a.shape)
    wrap_dim(dim, len(shape))
    return [follows(self, shape, self._dtype), follows(self, shape, D.int64)]


declare('sort(Tensor self, int dim=-1, bool descending=False, *, bool? stable=False) -> (Tensor values, '
        'Tensor indices)', forward='transpose', meta=_sort_meta, name='_sort', function=False, method=False, grad_name='SortBackward0',
        derivatives={'self': lambda grad, result1, self_sizes, dim: _scatter_grad(grad, result1, self_sizes, dim)})


def _topk_meta(self, k, dim=-1, largest=True, sorted=True):
    shape = tuple(self._a.shape)
    if self._dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    out = shape[:d] + (k,) + shape[d + 1:] if shape else ()
    return [(out, self._dtype), (out, D.int64)]


declare('topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, '
        'Tensor indices)', forward='transpose', meta=_topk_meta, name='_topk', function=False, method=False, grad_name='TopkBackward0',
        derivatives={'self': lambda grad, result1, self_sizes, dim: _scatter_grad(grad, result1, self_sizes, dim)})


def _no_bool(name, d):
    if d is D.bool_:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')


def _kth_meta(self, k, dim=-1, keepdim=False):
    shape = tuple(self._a.shape)
    _no_bool('kthvalue', self._dtype)
    d = wrap_dim(dim, len(shape))
    n = shape[d] if shape else 1
    if shape and n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    out = reduced_shape(shape, (d,) if shape else (), keepdim)
    return [(out, self._dtype), (out, D.int64)]


declare('kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)', forward='transpose',
        meta=_kth_meta, name='_kthvalue', function=False, method=False, grad_name='KthvalueBackward0',
        derivatives={'self': lambda grad, result1, self_sizes, dim, keepdim:
                     _scatter_grad(grad, result1, self_sizes, dim, keepdim)})


def _median_dim_meta(name):
    def meta(self, dim, keepdim=False):
        shape = tuple(self._a.shape)
        if name == 'median':
            _no_bool('median', self._dtype)
        d = wrap_dim(dim, len(shape))
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        out = reduced_shape(shape, (d,) if shape else (), keepdim)
        return [(out, self._dtype), (out, D.int64)]
    return meta


def _median_all_meta(self):
    _no_bool('median', self._dtype)
    return (), self._dtype


declare('median(Tensor self) -> Tensor', forward='transpose', meta=_median_all_meta, name='_median_all', function=False, method=False,
        grad_name='MedianBackward0',
        derivatives={'self': lambda grad, self, result: _evenly(grad, self, result, nan_ties=True)})
declare('median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)', forward='transpose',
        meta=_median_dim_meta('median'), name='_median_dim', function=False, method=False,
        grad_name='MedianBackward1', derivatives={'self': lambda grad, result1, self_sizes, dim, keepdim:
                                                  _scatter_grad(grad, result1, self_sizes, dim, keepdim)})
declare('nanmedian(Tensor self) -> Tensor', forward='transpose', meta=_median_all_meta, name='_nanmedian_all', function=False,
        method=False, grad_name='NanmedianBackward0',
        derivatives={'self': lambda grad, self, result: _evenly(grad, self, result)})
declare('nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)', forward='transpose',
        meta=_median_dim_meta('median'), name='_nanmedian_dim', function=False, method=False,
        grad_name='NanmedianBackward1', derivatives={'self': lambda grad, result1, self_sizes, dim, keepdim:
                                                     _scatter_grad(grad, result1, self_sizes, dim, keepdim)})
declare('mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)', forward='transpose',
        meta=_median_dim_meta('mode'), name='_mode', function=False, method=False, grad_name='ModeBackward0',
        derivatives={'self': lambda grad, result1, self_sizes, dim, keepdim:
                     _scatter_grad(grad, result1, self_sizes, dim, keepdim)})


# --- scans ---------------------------------------------------------------------------

def _scan_meta(name, int_to_long=True, float_only=False):
    def meta(self, dim, dtype=None):
        shape = tuple(self._a.shape)
        wrap_dim(dim, len(shape))
        if dtype is not None:
            return shape, dtype
        if float_only and self._dtype.category < 2:
            raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'{_tn(self._dtype)}\'')
        return shape, _int_to_long(self._dtype) if int_to_long else self._dtype
    return meta


def _rev_cumsum(g, dim):
    """sum over j >= i of g_j: the adjoint of cumsum (a reversed cumsum, exact, unlike total - cumsum)."""
    return g.flip([dim]).cumsum(dim).flip([dim]) if g.dim() else g


def _cumprod_backward(grad, self, result, dim):
    if not self.dim():
        return grad
    if not bool((self == 0).any()):
        return _rev_cumsum(grad * result, dim) / self
    # with zeros: d out_j / d x_i = prod_{k<=j, k!=i} x_k, built from exclusive products (O(n^2) per row)
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    xs = self.movedim(d, -1).unsqueeze(-2)                          # (..., 1, n)
    eye = aten.eye.default(n, dtype=D.bool_, device=self.device)      # (i, k)
    ones = aten.ones.default((), dtype=self.dtype, device=self.device)
    others = aten.where.self(eye, ones, xs)                          # (..., i, k): x_k, 1 at k == i
    partial = others.cumprod(-1)                                     # (..., i, j): prod_{k<=j, k != i} x_k
    tri = aten.arange.default(n, device=self.device).unsqueeze(0) >= aten.arange.default(n, device=self.device).unsqueeze(1)
    g = grad.movedim(d, -1).unsqueeze(-2)                             # (..., 1, j)
    return (g * partial * tri).sum(-1).movedim(-1, d)


def _logcumsumexp_backward(grad, self, result, dim):
    if not self.dim():
        return grad
    # sum_{j>=i} g_j exp(x_i - out_j), shifted by the row's first output (out is nondecreasing) for range
    c = result.narrow(wrap_dim(dim, self.dim()), 0, 1) if self.shape[wrap_dim(dim, self.dim())] else result
    return _rev_cumsum(grad * (c - result).exp(), dim) * (self - c).exp()


declare('cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor', forward='linear', meta=_scan_meta('cumsum'), out=True,
        inplace=True,
        derivatives={'self': lambda grad, dim: _rev_cumsum(grad, dim)})
declare('cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor', forward='transpose', meta=_scan_meta('cumprod'), out=True,
        inplace=True,
        derivatives={'self': _cumprod_backward})
declare('logcumsumexp(Tensor self, int dim) -> Tensor', forward='transpose', meta=_scan_meta('logcumsumexp', False, True), out=True,
        derivatives={'self': _logcumsumexp_backward})


def _cumext_meta(self, dim):
    shape = tuple(self._a.shape)
    wrap_dim(dim, len(shape))
    return [(shape, self._dtype), (shape, D.int64)]


for _n in ('cummax', 'cummin'):
    declare(f'{_n}(Tensor self, int dim) -> (Tensor values, Tensor indices)', meta=_cumext_meta, name=f'_{_n}', forward='transpose',
            function=False, method=False, grad_name=f'{_n.capitalize()}Backward0',
            derivatives={'self': lambda grad, self, result1, dim:     # torch saves self (cummaxmin_backward)
                         _scatter_grad(grad, result1, tuple(self.shape), dim)})

# the public functions of the value-and-index reductions: their named returns give ember.return_types.<name>,
# and out= is routed by the group (overloads.py)
for _n in ('sort', 'topk', 'kthvalue', 'mode', 'cummax', 'cummin'):
    overloads(_n, _n)
overloads('median', 'median', 'median.dim')
overloads('nanmedian', 'nanmedian', 'nanmedian.dim')


# --- composites ----------------------------------------------------------------------

def _trace(self):
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    if self.dtype is D.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    return self.diagonal().sum()


declare('trace(Tensor self) -> Tensor', composite=_trace)


def _diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.dim())
    x = self
    if prepend is not None or append is not None:
        parts = [p if p.dim() else p.expand(tuple(1 if i == d else s for i, s in enumerate(self.shape)))
                 for p in (prepend, self, append) if p is not None]
        x = aten.cat.default(parts, d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = hi - lo if x.dtype is not D.bool_ else (hi == lo).logical_not()     # bool: xor
    return x


declare('diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor',
        composite=_diff, out=True)
declare('msort(Tensor self) -> Tensor', composite=lambda self: aten.sort.default(self, 0)[0], out=True,
        out_dtype=SAME_DTYPE)
declare('argsort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False) -> Tensor',
        composite=lambda self, dim=-1, descending=False, stable=False:
        aten.sort.default(self, dim, descending, stable=stable)[1])
