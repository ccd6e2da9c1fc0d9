"""torch._higher_order_ops.out_dtype: run an ATen operator with a chosen result dtype, ``out_dtype(aten.mm.default,
ember.int32, a_int8, b_int8)``: the inputs are promoted together with the result dtype (torch's default promotion),
the operator runs, and its result is cast to the dtype. The integer matrix product on a GPU is ``_int_mm``.

Autograd: as torch, no derivative is defined; a result computed from inputs that require grad requires grad, and
backward through it raises.

>>> import ember
>>> from ember._higher_order_ops.out_dtype import out_dtype
>>> a = ember.tensor([[100, 100]], dtype=ember.int8)
>>> out_dtype(ember.ops.aten.mm.default, ember.int32, a, a.t())
tensor([[20000]], dtype=torch.int32)
"""
import ember
from .._core.dtype import result_type
from .._dispatch.dispatcher import OpOverload
from .._dispatch.ops_namespace import HigherOrderOperator
from ..utils import _pytree as pytree

__all__ = ['out_dtype']


_ALLOWABLE = ('linear.default', 'mm.default', 'conv2d.default', 'convolution.default', 'mul.Tensor', 'mul.Scalar',
              'div.Tensor', 'div.Scalar')


def _allowable_ops():
    """torch's list, less the overloads ember does not declare (no program can pass those)."""
    ops = []
    for qual in _ALLOWABLE:
        name, overload = qual.split('.')
        op = getattr(getattr(ember.ops.aten, name), overload, None)
        if op is not None:
            ops.append(op)
    return ops


class OutDtypeOperator(HigherOrderOperator):
    """``out_dtype(op, output_dtype, *args)``: ``op(*args)`` computed in the promotion of its inputs' dtypes and
    ``output_dtype``, returned as ``output_dtype``."""

    def __init__(self):
        super().__init__('out_dtype', _out_dtype_dense)

    def __call__(self, op, output_dtype, *args):
        if not isinstance(op, OpOverload):
            raise ValueError("out_dtype's first argument must be an OpOverload")
        if op._schema.is_mutable:
            raise ValueError("out_dtype's first argument needs to be a functional operator")
        if not (len(op._schema.returns) == 1 and str(op._schema.returns[0].type) == 'Tensor'):
            raise ValueError("out_dtype's can only apply to ops that return a single tensor"
                             f"Instead got {[r.type for r in op._schema.returns]}")
        allowed = _allowable_ops()
        if op not in allowed:
            raise ValueError(f"out_dtype only allows the following operators: {allowed}.")
        return super().__call__(op, output_dtype, *args)


def _is_int_mm(op, output_dtype, args):
    return (op is ember.ops.aten.mm.default and output_dtype == ember.int32 and len(args) == 2
            and all(a.dtype == ember.int8 and a.device.type in ('cuda', 'xpu') for a in args))


def _out_dtype_fallback(op, output_dtype, *args):
    leaves = [x for x in pytree.tree_leaves(args) if isinstance(x, (ember.Tensor, bool, int, float, complex))]
    promote = result_type(*leaves, ember.ones(1, dtype=output_dtype))     # torch's elementwise_dtypes, DEFAULT
    cast = pytree.tree_map_only(ember.Tensor, lambda a: a.to(dtype=promote), args)
    return op(*cast).to(dtype=output_dtype)


class _NoBackward(ember.autograd.Function):
    """torch's ``autograd_not_implemented(out_dtype, deferred_error=True)``: the result joins the graph, its
    backward raises."""

    @staticmethod
    def forward(ctx, result, *inputs):
        return result

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("Autograd not implemented for out_dtype")


def _out_dtype_dense(op, output_dtype, *args):
    if _is_int_mm(op, output_dtype, args):
        return ember._int_mm(*args)
    tensors = [a for a in pytree.tree_leaves(args) if isinstance(a, ember.Tensor)]
    if not (ember.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return _out_dtype_fallback(op, output_dtype, *args)
    with ember.no_grad():
        result = _out_dtype_fallback(op, output_dtype, *args)
    return _NoBackward.apply(result, *tensors)


out_dtype = OutDtypeOperator()
