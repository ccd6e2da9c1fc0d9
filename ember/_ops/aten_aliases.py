"""Overloads torch's aten namespace has that libraries name (PyG registers handlers for them at import:
``@implements(aten.sort.stable)``), each a composite of the operator ember declares for it, so that
``ember.ops.aten.<name>.<overload>`` exists and computes what torch's does."""
import numpy as np

from .registry import declare
from .sparse import _layout_name as layout_name
from .._core import dtype as D
from .._core.coo import sparse_csr, strided
from .._core.dtype import scalar_name, legacy_type_name
from .products import _addmm_meta
from .._dispatch.ops_namespace import aten
from .._dispatch.modes import show_as, WHOLE, NUMBER_OTHER, NUMBER_SELF, ALWAYS


declare('sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, '
        'Tensor indices)', composite=lambda self, stable, dim=-1, descending=False:
        aten.sort.default(self, dim, descending, stable=stable), name='_sort_stable', function=False, method=False)
declare('squeeze(Tensor(a) self) -> Tensor(a)', composite=lambda self: aten.squeeze.dims(self, None),
        name='_squeeze_all', function=False, method=False)
declare('squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)', composite=lambda self, dim: aten.squeeze.dims(self, [dim]),
        name='_squeeze_dim', function=False, method=False)
declare('_pin_memory(Tensor self, Device? device=None) -> Tensor', composite=lambda self, device=None: self.pin_memory(),
        function=False, method=False)


_REDUCTIONS = ('sum', 'prod', 'mean', 'amax', 'amin', 'max', 'min')     # torch's get_reduction_enum's names
_ALIASES = {'max': 'amax', 'min': 'amin'}


def _check_other(what, t, name, pos, dtype, size0):
    """torch's check_sparse_mm_reduce_impl_inputs for one dense operand: strided, ``dtype``, 2-D of ``size0`` rows."""
    if t.layout is not strided:
        raise RuntimeError(f"Expected tensor to have Strided Layout, but got tensor with {layout_name(t)} Layout "
                           f"(while checking arguments for {what})")
    if t._dtype is not dtype:
        raise RuntimeError(f"Expected tensor for argument #{pos} '{name}' to have scalar type {scalar_name(dtype)}; "
                           f"but got {legacy_type_name(t._dtype)} instead (while checking arguments for {what})")
    if t.dim() != 2 or t.shape[0] != size0:
        raise RuntimeError(f"Expected a tensor of dimension 2 and tensor.size[0] == {size0} but got: dimension "
                           f"{t.dim()} and tensor.size[0] = {t.shape[0] if t.dim() else 1}")


def _sparse_mm_reduce_meta(self, other, reduce):
    """torch's checks for torch.sparse.mm(csr, dense, reduce) in its order; (out, arg_out): arg_out holds the winning
    entry of each output for amax/amin (NOTE [spmm reduce] in _backends/sparse/compressed.py), else is empty."""
    if self.layout is not sparse_csr:
        raise RuntimeError(f"sparse_mm_reduce: expect self to be SparseCsr, got {layout_name(self)}")
    _check_other('sparse_mm_reduce', other, 'other', 1, self._dtype, self.shape[1])
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == 'prod':
        raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
    reduce = _ALIASES.get(reduce, reduce)
    if self._dtype.name not in ('float16', 'bfloat16', 'float32', 'float64'):
        raise NotImplementedError(f"\"spmm_reduce_kernel\" not implemented for '{scalar_name(self._dtype)}'")
    index = D.int32 if self._a.plain_indices.dtype == np.int32 else D.int64
    arg_shape = (self.shape[0], other.shape[1]) if reduce in ('amax', 'amin') and self._a.nnz else (0,)
    return [((self.shape[0], other.shape[1]), other._dtype), (arg_shape, index)]


def _sparse_mm_reduce_backward_meta(self, grad_out, weight, reduce, arg_out, output_mask):
    what = 'sparse_mm_reduce_backward'
    if self.layout is not sparse_csr:
        raise RuntimeError(f"{what}: expect self to be SparseCsr, got {layout_name(self)}")
    _check_other(what, grad_out, 'grad_out', 1, self._dtype, self.shape[0])
    _check_other(what, weight, 'other', 2, self._dtype, self.shape[1])
    return [(tuple(self.shape), self._dtype) if output_mask[0] else None,
            (tuple(weight.shape), weight._dtype) if output_mask[1] else None]


def _scaled(g, s):
    return g if s == 1 else g * s


# torch.sparse.mm's operator (with beta=0): unlike mm's, its gradient for the sparse operand keeps that operand's
# layout and pattern (torch's mm_mat1_sparse_backward); mm and addmm give a sparse operand a dense gradient
declare('_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
        meta=_addmm_meta, function=False, method=False, forward='transpose', derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'mat1': lambda grad, mat1, mat2, alpha: _scaled(grad.mm(mat2.t()).sparse_mask(mat1), alpha),
            'mat2': lambda grad, mat1, alpha: _scaled(mat1.t().mm(grad), alpha)})
# torch.sparse.mm(csr, dense, reduce): a SparseCsrCPU kernel only, as torch's (a COO or dense input cannot run it);
# its backward is torch's fused one, with no derivative of its own (torch's neither)
declare('_sparse_mm_reduce_impl(Tensor self, Tensor other, str reduce) -> (Tensor, Tensor)',
        meta=_sparse_mm_reduce_meta, function=False, method=False, forward='not_implemented', derivatives={
            ('self', 'other'): lambda grad, self, other, reduce, result1, output_mask:
            aten._sparse_mm_reduce_impl_backward.default(self, grad, other, reduce, result1, output_mask)})
declare('_sparse_mm_reduce_impl_backward(Tensor self, Tensor grad_out, Tensor weight, str reduce, Tensor arg_out, '
        'bool[2] output_mask) -> (Tensor, Tensor)', meta=_sparse_mm_reduce_backward_meta, function=False,
        method=False, derivatives={})


# torch's overloads for calls ember makes with one operator that covers them (NOTE [boxed arguments]): each is a
# composite of ember's operator, and a ``__torch_dispatch__`` handler is shown it for the calls torch's would reach
# it with (modes.show_as). The whole-tensor reductions: torch's table has ``sum.default`` beside
# ``sum.dim_IntList``, and ``x.sum()`` calls the first; ember's runs the dim overload with dim=None.
def _torch_overload(schema, name, ember_op, applies, composite):
    """Declare torch's overload ``schema`` as ``composite`` (of ember's operator ``ember_op``, a name such as
    ``'sum.dim_IntList'``), shown to handlers for the calls of ``ember_op`` that ``applies`` to."""
    declare(schema, name=name, function=False, method=False, composite=composite)
    show_as(f'aten::{ember_op}', f"aten::{schema.partition('(')[0]}", applies)


_torch_overload('sum(Tensor self, *, ScalarType? dtype=None) -> Tensor', '_sum_all', 'sum.dim_IntList', WHOLE,
                lambda self, dtype=None: aten.sum.dim_IntList(self, dtype=dtype))
_torch_overload('mean(Tensor self, *, ScalarType? dtype=None) -> Tensor', '_mean_all', 'mean.dim', WHOLE,
                lambda self, dtype=None: aten.mean.dim(self, dtype=dtype))
_torch_overload('prod(Tensor self, *, ScalarType? dtype=None) -> Tensor', '_prod_all', 'prod.dim_int', WHOLE,
                lambda self, dtype=None: aten.prod.dim_int(self, dtype=dtype))
_torch_overload('all(Tensor self) -> Tensor', '_all_all', 'all.dims', WHOLE, lambda self: aten.all.dims(self))
_torch_overload('any(Tensor self) -> Tensor', '_any_all', 'any.dims', WHOLE, lambda self: aten.any.dims(self))
_torch_overload('count_nonzero(Tensor self, int? dim=None) -> Tensor', '_count_nonzero_one',
                'count_nonzero.dim_IntList', WHOLE,
                lambda self, dim=None: aten.count_nonzero.dim_IntList(self, dim))
declare('_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, '
        'bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, '
        'bool cudnn_enabled, bool allow_tf32) -> Tensor', function=False, method=False,
        composite=lambda input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, *_:
        aten.convolution.default(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups))


# the number overloads: ``x > 0`` is ``gt.Scalar`` in torch (``2 ** x`` ``pow.Scalar``); ember's ``gt.Tensor`` takes
# the number itself
def _scalar_overload(name, schema_tail, ember_op, applies):
    packet, overload = ember_op.split('.')
    _torch_overload(f'{name}({schema_tail}) -> Tensor', f"_{name.replace('.', '_').lower()}", ember_op, applies,
                    lambda a, b: getattr(getattr(aten, packet), overload)(a, b))


for _n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod', 'remainder', 'bitwise_and', 'bitwise_or', 'bitwise_xor',
           'bitwise_left_shift', 'bitwise_right_shift'):
    _scalar_overload(f'{_n}.Scalar', 'Tensor self, Scalar other', f'{_n}.Tensor', NUMBER_OTHER)
    if _n not in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod'):
        _scalar_overload(f'{_n}.Scalar_Tensor', 'Scalar self, Tensor other', f'{_n}.Tensor', NUMBER_SELF)
_scalar_overload('pow.Tensor_Scalar', 'Tensor self, Scalar exponent', 'pow.Tensor_Tensor', NUMBER_OTHER)
_scalar_overload('pow.Scalar', 'Scalar self, Tensor exponent', 'pow.Tensor_Tensor', NUMBER_SELF)


# the factories' overloads: ``arange(1, 4)`` is ``arange.start``, ``empty(2)`` is ``empty.memory_format``
_torch_overload('arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Device? device=None) -> Tensor',
                '_arange_start', 'arange', lambda pos: len(pos) == 2,
                lambda start, end, dtype=None, device=None: aten.arange.default(start, end, dtype=dtype,
                                                                               device=device))
_torch_overload('arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, '
                'Device? device=None) -> Tensor', '_arange_start_step', 'arange',
                lambda pos: len(pos) == 3, lambda start, end, step=1, dtype=None, device=None:
                aten.arange.default(start, end, step, dtype=dtype, device=device))


def _empty_memory_format(size, dtype=None, device=None, memory_format=None):
    out = aten.empty.default(size, dtype=dtype, device=device)
    return out if memory_format is None else out.contiguous(memory_format=memory_format)


_torch_overload('empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Device? device=None, '
                'MemoryFormat? memory_format=None) -> Tensor', '_empty_memory_format', 'empty', ALWAYS,
                _empty_memory_format)


# torch's aten operators that ember's Tensor methods cover in Python (``Tensor.new_zeros``, ``Tensor.to``), named
# by libraries that call them through torch.ops (torchao's tensor subclasses); each is that method
declare('new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
        'bool? pin_memory=None) -> Tensor', function=False, method=False,
        composite=lambda self, size, dtype=None, layout=None, device=None, pin_memory=None:
        self.new_zeros(size, dtype=dtype, device=device))
declare('to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, '
        'MemoryFormat? memory_format=None) -> Tensor(a)', name='_to_dtype', function=False, method=False,
        composite=lambda self, dtype, non_blocking=False, copy=False, memory_format=None:
        self.to(dtype, non_blocking=non_blocking, copy=copy,
                **({} if memory_format is None else {'memory_format': memory_format})))
declare('is_pinned(Tensor self, Device? device=None) -> bool', function=False, method=False,
        composite=lambda self, device=None: self.is_pinned())
declare('lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor', name='_lerp_scalar', function=False,
        method=False, composite=lambda self, end, weight: aten.lerp.Tensor(self, end, weight))
declare('to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, '
        'bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) '
        '-> Tensor(a)', name='_to_dtype_layout', function=False, method=False,
        composite=lambda self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False,
        memory_format=None: self.to(device=device, dtype=dtype, non_blocking=non_blocking, copy=copy,
                                    **({} if memory_format is None else {'memory_format': memory_format})))
declare('to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, '
        'MemoryFormat? memory_format=None) -> Tensor(a)', name='_to_device', function=False, method=False,
        composite=lambda self, device, dtype, non_blocking=False, copy=False, memory_format=None:
        self.to(device, dtype, non_blocking=non_blocking, copy=copy,
                **({} if memory_format is None else {'memory_format': memory_format})))
declare('to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, '
        'MemoryFormat? memory_format=None) -> Tensor(a)', name='_to_other', function=False, method=False,
        composite=lambda self, other, non_blocking=False, copy=False, memory_format=None:
        self.to(other, non_blocking=non_blocking, copy=copy,
                **({} if memory_format is None else {'memory_format': memory_format})))
