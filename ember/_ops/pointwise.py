"""Pointwise operators and their shared rules (ember's TensorIterator).

Every elementwise operator broadcasts its operands and computes in one
"computation dtype" chosen by torch's promotion (NOTE [result type] in
_core/dtype.py). A rule names how the result dtype follows from it:

  promote       result = computation dtype (add, mul, maximum, ...)
  float         integers and bool compute in the default float dtype (sin, exp, div)
  bool          comparisons and logical ops: computation dtype for the kernel, bool result
  integral      bitwise ops: floating operands are an error
  real          complex inputs give their real dtype (abs)
  no_bool       like promote, but bool is an error (neg, sub)
"""
from .._core import dtype as D
from .._core.tensor_impl import TensorImpl
from .registry import declare

_PROMOTE = D._PROMOTE
_res = D.result_type_of
_FLOAT = 2


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes; the error names the first mismatching dimension as torch does."""
    out = list(shapes[0])
    for s in shapes[1:]:
        if len(s) > len(out):
            out = [1] * (len(s) - len(out)) + out
        off = len(out) - len(s)
        for i, n in enumerate(s):
            m = out[off + i]
            if m != n:
                if m == 1:
                    out[off + i] = n
                elif n != 1:
                    dim = off + i - len(out)
                    raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b ({n}) at "
                                       f"non-singleton dimension {len(out) + dim}")
    return tuple(out)


def _scan(operands):
    """(broadcast shape, computation dtype) of tensors and Python numbers, as torch computes them."""
    dim = zero = wrapped = None
    shape = None
    for x in operands:
        if isinstance(x, TensorImpl):
            s, d = x._a.shape, x._dtype
            if s:
                dim = d if dim is None else _PROMOTE[dim, d]
                shape = s if shape is None or shape == s else broadcast_shapes(shape, s)
            else:
                zero = d if zero is None else _PROMOTE[zero, d]
                if shape is None:
                    shape = s
        elif x is not None:
            d = D.scalar_dtype(x)
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
    if dim is not None and zero is None and wrapped is None:
        return shape, dim
    return (shape if shape is not None else ()), _res(dim, zero, wrapped)


def _float_of(d):
    return d if d.category >= _FLOAT else D.get_default_dtype()


def _check_integral(name, d):
    if d.category >= _FLOAT:
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{_tname(d)}\'')


def _tname(d):
    from .adapters import _tname as t
    return t(d)


def pointwise_meta(rule, nargs, name=''):
    """The meta function of a pointwise op: ``(*args) -> (shape, result dtype, computation dtype)``.
    The first ``nargs`` arguments are the operands; the rest (alpha, ...) do not take part."""
    def meta(*args):
        shape, cd = _scan(args[:nargs])
        if rule == 'promote':
            return shape, cd, cd
        if rule == 'float':
            cd = _float_of(cd)
            return shape, cd, cd
        if rule == 'bool':
            return shape, D.bool_, cd
        if rule == 'integral':
            _check_integral(name, cd)
            return shape, cd, cd
        if rule == 'real':
            return shape, cd.to_real(), cd
        if rule == 'no_bool':
            if cd is D.bool_:
                raise RuntimeError(f"{name}: the operation is not supported for bool tensors; use "
                                   "logical_not() / bitwise_xor() / logical_xor() instead.")
            return shape, cd, cd
        if rule == 'float_bool':      # isnan, isinf: any input, bool result
            return shape, D.bool_, cd
        raise ValueError(rule)
    meta.__qualname__ = f'pointwise_meta[{rule}]'
    return meta


def pointwise(schema, rule, derivatives=None, nargs=None, inplace=True, out=True, **kw):
    from .._dispatch.schema import parse_schema
    s = parse_schema(schema)
    n = nargs if nargs is not None else sum(1 for a in s.arguments if a.base_type == 'Tensor')
    return declare(schema, kind='pointwise', meta=pointwise_meta(rule, n, s.name), derivatives=derivatives,
                   inplace=inplace, out=out, **kw)


def unary(name, rule, grad=None, **kw):
    return pointwise(f'{name}(Tensor self) -> Tensor', rule, {'self': grad} if grad else None, **kw)


# ---------------------------------------------------------------------------
# The declarations. Derivatives use ember operators (so they differentiate
# again); ``grad`` is the incoming gradient, ``result`` the op's output, and
# other names are the op's arguments. Gradients are summed back to each
# input's shape by the autograd engine, never here.
# ---------------------------------------------------------------------------

pointwise('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'promote',
          {'self': lambda grad: grad, 'other': lambda grad, alpha: grad if alpha == 1 else grad * alpha})
pointwise('sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', 'no_bool',
          {'self': lambda grad: grad, 'other': lambda grad, alpha: -grad if alpha == 1 else grad * -alpha})
pointwise('mul.Tensor(Tensor self, Tensor other) -> Tensor', 'promote',
          {'self': lambda grad, other: grad * other, 'other': lambda grad, self: grad * self})
pointwise('div.Tensor(Tensor self, Tensor other) -> Tensor', 'float',
          {'self': lambda grad, other: grad / other, 'other': lambda grad, self, other: -grad * self / (other * other)})
unary('neg', 'no_bool', lambda grad: -grad)
unary('exp', 'float', lambda grad, result: grad * result)
unary('log', 'float', lambda grad, self: grad / self)
unary('sin', 'float', lambda grad, self: grad * self.cos())
unary('cos', 'float', lambda grad, self: -grad * self.sin())
unary('tanh', 'float', lambda grad, result: grad * (1 - result * result))
unary('sigmoid', 'float', lambda grad, result: grad * result * (1 - result))
unary('sqrt', 'float', lambda grad, result: grad / (2 * result))
pointwise('eq.Tensor(Tensor self, Tensor other) -> Tensor', 'bool', differentiable=False)
pointwise('lt.Tensor(Tensor self, Tensor other) -> Tensor', 'bool', differentiable=False)
pointwise('gt.Tensor(Tensor self, Tensor other) -> Tensor', 'bool', differentiable=False)


def _where_meta(condition, self, other):
    shape, cd = _scan((self, other))
    if isinstance(condition, TensorImpl):
        if condition._dtype is not D.bool_ and condition._dtype is not D.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_tname(condition._dtype)}")
        shape = broadcast_shapes(shape, condition._a.shape)
    return shape, cd


declare('where.self(Tensor condition, Tensor self, Tensor other) -> Tensor', meta=_where_meta,
        derivatives={'self': lambda grad, condition: grad * condition,
                     'other': lambda grad, condition: grad * condition.logical_not()}, tags=('wraps_numbers',))
unary('logical_not', 'bool', differentiable=False)
