"""Hand-written pointwise API: overload choosers (``div`` with ``rounding_mode``), torch's aliases
(``multiply``, ``greater``, ``clip``, ``arctan2``, ...), methods whose argument order differs from
the schema (``Tensor.where``), and the complex-view helpers (``real``, ``imag``, ``conj``).

>>> import ember
>>> ember.div(ember.tensor([7, -7]), 2, rounding_mode='floor')
tensor([ 3, -4])
"""
import numpy as np

from .._tensor import Tensor
from .._ops.registry import DECLS
from .._ops.pointwise import DIV_MODE
from .._core.tensor_impl import make_tensor
from .._core import dtype as D
from .._core.storage import MetaArray
from .._core.dtype import scalar_name
from .._core.dispatch_key import AUTOGRAD_BIT
from ..autograd.node import Node, gradient_edge
from ..autograd.grad_mode import is_grad_enabled
from .._dispatch.ops_namespace import aten

__all__ = ['div', 'divide', 'true_divide', 'real', 'imag', 'view_as_real', 'view_as_complex', 'conj', 'conj_physical', 'resolve_conj', 'resolve_neg',
           'is_conj', 'is_neg', 'selu', 'selu_', 'celu', 'celu_', 'rrelu', 'rrelu_', 'prelu', 'hardshrink']

_div = DECLS['div']
_div_functional = aten.div.Tensor


def div(input, other, *, rounding_mode=None, out=None):
    """torch.div: true division, or rounded with ``rounding_mode='trunc'`` / ``'floor'``.

    >>> import ember
    >>> ember.div(ember.tensor([7., -7.]), 2, rounding_mode='trunc')
    tensor([ 3., -3.])
    """
    if rounding_mode is None:
        if out is None:
            return _div_functional(input, other)
        return _div.out_op.call(input, other, out=out)
    if out is None:
        return DIV_MODE(input, other, rounding_mode=rounding_mode)
    return DIV_MODE.decl.out_op.call(input, other, rounding_mode=rounding_mode, out=out)


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div.inplace_op.call(self, other)
    return DIV_MODE.decl.inplace_op.call(self, other, rounding_mode=rounding_mode)


def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


divide = div
Tensor.div = Tensor.divide = div
Tensor.div_ = Tensor.divide_ = _div_
Tensor.true_divide = lambda self, other: _div_functional(self, other)
Tensor.true_divide_ = lambda self, other: _div.inplace_op.call(self, other)

# --- aliases: same operator, torch's other name (function, method and in-place method) -------------------
_ALIASES = {'absolute': 'abs', 'arccos': 'acos', 'arcsin': 'asin', 'arctan': 'atan', 'arctan2': 'atan2',
            'arccosh': 'acosh', 'arcsinh': 'asinh', 'arctanh': 'atanh', 'negative': 'neg', 'multiply': 'mul',
            'subtract': 'sub', 'greater': 'gt', 'greater_equal': 'ge', 'less': 'lt', 'less_equal': 'le',
            'not_equal': 'ne', 'clip': 'clamp', 'fix': 'trunc'}


def _install_aliases():
    import ember
    for alias, name in _ALIASES.items():
        fn = getattr(ember, name)
        globals()[alias] = fn
        __all__.append(alias)
        setattr(Tensor, alias, getattr(Tensor, name))
        if hasattr(Tensor, name + '_'):
            setattr(Tensor, alias + '_', getattr(Tensor, name + '_'))
        if hasattr(ember, name + '_'):
            globals()[alias + '_'] = getattr(ember, name + '_')
            __all__.append(alias + '_')


_install_aliases()

# Tensor.where(condition, y) is where(condition, self, y): the schema's first argument is the condition.
_where = aten.where.self
Tensor.where = lambda self, condition, other: _where(condition, self, other)


def _float_power_(self, exponent):
    want = D.complex128 if self._dtype.is_complex or isinstance(exponent, complex) or \
        (isinstance(exponent, Tensor) and exponent._dtype.is_complex) else D.float64
    if self._dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {scalar_name(self._dtype)} but the "
                           f"operation's result requires dtype {scalar_name(want)}")
    return self.pow_(exponent.to(want) if isinstance(exponent, Tensor) else exponent)


Tensor.float_power_ = _float_power_


def square_(input):
    return input.pow_(2)


Tensor.square_ = square_
__all__ += ['square_']


# `t == None` is False in torch (no error): comparisons with a non-number defer to Python.
def _cmp(name, fallback):
    op = DECLS[name].op.call

    def cmp(self, other):
        if other is None or not isinstance(other, (Tensor, int, float, bool, complex, np.number, np.bool_)):
            return fallback
        return op(self, other)
    cmp.__name__ = f'__{name}__'
    return cmp


Tensor.__eq__ = _cmp('eq', NotImplemented)
Tensor.__ne__ = _cmp('ne', NotImplemented)
_bitwise_not = aten.bitwise_not.default


def _invert(self):
    if self._dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _bitwise_not(self)


Tensor.__invert__ = _invert


# --- complex views ------------------------------------------------------------------------
# NOTE [complex views]: ``z.real``, ``z.imag``, ``view_as_real(z)`` and ``view_as_complex(x)`` share storage
# with their input but reinterpret its dtype (complex64 <-> pairs of float32), which the operator table's views
# (sizes, strides and offset in elements of one dtype) cannot express; so they are made here, and when the
# input requires grad they get a node of their own (RealBackward0, ...; NOTE [complex gradients] in
# autograd/kernels.py has the derivatives). Writing into one in place while autograd records is refused: the
# rebasing of the base's history (views.copy_slices) indexes elements of one dtype.

class _ComplexViewNode(Node):
    _fresh_outputs = True     # NOTE [gradient ownership]
    backward = None           # grad of the view -> grad of the input, in operators (so it differentiates again)

    def apply(self, grads):
        g = grads[0]
        return (None if g is None else type(self).backward(g),)


def _node(name, backward):
    return type(name, (_ComplexViewNode,), {'backward': staticmethod(backward)})


_REAL_NODE = _node('RealBackward0', lambda g: g * (1 + 0j))
_IMAG_NODE = _node('ImagBackward0', lambda g: g * 1j)
_AS_REAL_NODE = _node('ViewAsRealBackward0', lambda g: view_as_complex(g.contiguous()))
_AS_COMPLEX_NODE = _node('ViewAsComplexBackward0', lambda g: view_as_real(g))


def _dtype_view(self, va, dtype, node_cls):
    t = make_tensor(va, dtype, self._device)
    t._vc = self._vc
    st = t._storage = self._storage
    t._offset = va.offset if isinstance(va, MetaArray) else \
        (va.__array_interface__['data'][0] - st.data_ptr()) // va.itemsize if va.size else 0
    t._base = self._base if self._base is not None else self
    t._dtype_view = node_cls.__name__
    if self._keys & AUTOGRAD_BIT and is_grad_enabled():
        node = node_cls()
        node.next_functions = (gradient_edge(self),)
        t._grad_fn, t._output_nr = node, 0
        t._keys |= AUTOGRAD_BIT
        t._hist = t._base._hist
    return t


def _part_view(self, part):
    """A real view of the real or imaginary part of a complex tensor, sharing its storage."""
    a = self._a
    rd = self._dtype.to_real()
    if isinstance(a, MetaArray):
        va = MetaArray(a.shape, rd.np, tuple(a.strides), a.offset * 2 + part)
    else:
        self._storage_or_make()
        va = a.real if part == 0 else a.imag
    return _dtype_view(self, va, rd, _REAL_NODE if part == 0 else _IMAG_NODE)


def real(input):
    """The real part: a view for complex tensors, the tensor itself otherwise."""
    return _part_view(input, 0) if input._dtype.is_complex else input


def imag(input):
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part_view(input, 1)


def view_as_real(input):
    """A real view of a complex tensor with a last dimension of size 2 (real, imaginary)."""
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    a = input._a
    rd = input._dtype.to_real()
    if isinstance(a, MetaArray):
        va = MetaArray(tuple(a.shape) + (2,), rd.np, tuple(a.strides) + (rd.itemsize,), a.offset * 2)
    else:
        input._storage_or_make()
        va = np.lib.stride_tricks.as_strided(a.real, tuple(a.shape) + (2,), tuple(a.strides) + (rd.itemsize,))
    return _dtype_view(input, va, rd, _AS_REAL_NODE)


def view_as_complex(input):
    """A complex view of a real tensor whose last dimension has size 2 and stride 1."""
    if input._dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError("view_as_complex is only supported for floating point tensors, but got a tensor of "
                           f"scalar type: {scalar_name(input._dtype)}")
    shape, st = tuple(input._a.shape), input.stride()
    if not shape or shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(x % 2 for x in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    cd = input._dtype.to_complex()
    a = input._a
    if isinstance(a, MetaArray):
        va = MetaArray(shape[:-1], cd.np, tuple(a.strides[:-1]), a.offset // 2)
    else:
        input._storage_or_make()
        va = a.view(cd.np)[..., 0] if a.size else np.empty(shape[:-1], cd.np)
    return _dtype_view(input, va, cd, _AS_COMPLEX_NODE)


_conj_physical = aten.conj_physical.default


def conj(input):
    """The complex conjugate; a real tensor is returned as is (as in torch). ember computes it eagerly (torch
    sets a lazy conjugate bit instead, so ``is_conj()`` is always False here)."""
    if not input._dtype.is_complex:
        return input
    return _conj_physical(input)


def conj_physical(input):
    return _conj_physical(input) if input._dtype.is_complex else input.clone()


def resolve_conj(input):
    return input


resolve_neg = resolve_conj


def is_conj(input):
    return False


def is_neg(input):
    return False


Tensor.real = property(real)
Tensor.imag = property(imag)
for _n in ('conj', 'conj_physical', 'resolve_conj', 'resolve_neg', 'is_conj', 'is_neg'):  # noqa
    setattr(Tensor, _n, globals()[_n])


# activations torch also has as ``torch.*`` functions (and some as Tensor methods)
def selu(input):
    from ..nn.functional import _activation
    return _activation.selu(input)


def selu_(input):
    from ..nn.functional import _activation
    return _activation.selu(input, True)


def celu(input, alpha=1.0):
    from ..nn.functional import _activation
    return _activation.celu(input, alpha)


def celu_(input, alpha=1.0):
    from ..nn.functional import _activation
    return _activation.celu(input, alpha, True)


def rrelu(input, lower=1. / 8, upper=1. / 3, training=False, generator=None):
    from ..nn.functional import _activation
    return _activation.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1. / 8, upper=1. / 3, training=False, generator=None):
    from ..nn.functional import _activation
    return _activation.rrelu(input, lower, upper, training, True)


def prelu(input, weight):
    from ..nn.functional import _activation
    return _activation.prelu(input, weight)


def hardshrink(input, lambd=0.5):
    from ..nn.functional import _activation
    return _activation.hardshrink(input, lambd)


Tensor.prelu = prelu
Tensor.hardshrink = hardshrink

_polygamma = aten.polygamma.default
Tensor.polygamma = lambda self, n: _polygamma(n, self)
Tensor.polygamma_ = lambda self, n: self.copy_(_polygamma(n, self))
