"""Overloads torch's aten namespace has that libraries name (PyG registers handlers for them at import:
``@implements(aten.sort.stable)``), each a composite of the operator ember declares for it, so that
``ember.ops.aten.<name>.<overload>`` exists and computes what torch's does."""
from .registry import declare
from .products import _addmm_meta
from .._dispatch.ops_namespace import aten


declare('sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, '
        'Tensor indices)', composite=lambda self, stable, dim=-1, descending=False:
        aten.sort.default(self, dim, descending, stable=stable), name='_sort_stable', function=False, method=False)
declare('squeeze(Tensor(a) self) -> Tensor(a)', composite=lambda self: aten.squeeze.dims(self, None),
        name='_squeeze_all', function=False, method=False)
declare('squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)', composite=lambda self, dim: aten.squeeze.dims(self, [dim]),
        name='_squeeze_dim', function=False, method=False)
declare('_pin_memory(Tensor self, Device? device=None) -> Tensor', composite=lambda self, device=None: self.pin_memory(),
        function=False, method=False)


def _sparse_mm_reduce_impl(self, other, reduce):
    raise NotImplementedError("_sparse_mm_reduce_impl: ember has no reductions other than 'sum' for a CSR matrix "
                              "product (ember.sparse.mm)")


def _scaled(g, s):
    return g if s == 1 else g * s


# torch.sparse.mm's operator (with beta=0): unlike mm's, its gradient for the sparse operand keeps that operand's
# layout and pattern (torch's mm_mat1_sparse_backward); mm and addmm give a sparse operand a dense gradient
declare('_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
        meta=_addmm_meta, function=False, method=False, forward='transpose', derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'mat1': lambda grad, mat1, mat2, alpha: _scaled(grad.mm(mat2.t()).sparse_mask(mat1), alpha),
            'mat2': lambda grad, mat1, alpha: _scaled(mat1.t().mm(grad), alpha)})
declare('_sparse_mm_reduce_impl(Tensor self, Tensor other, str reduce) -> (Tensor, Tensor)',
        composite=_sparse_mm_reduce_impl, function=False, method=False)


# torch's overloads for calls ember makes with one operator that covers them (NOTE [boxed arguments]): a
# ``__torch_dispatch__`` handler is shown these. The whole-tensor reductions: torch's table has ``sum.default``
# beside ``sum.dim_IntList``, and ``x.sum()`` calls the first; ember's runs the dim overload with dim=None.
declare('sum(Tensor self, *, ScalarType? dtype=None) -> Tensor', name='_sum_all', function=False, method=False,
        composite=lambda self, dtype=None: aten.sum.dim_IntList(self, dtype=dtype))
declare('mean(Tensor self, *, ScalarType? dtype=None) -> Tensor', name='_mean_all', function=False, method=False,
        composite=lambda self, dtype=None: aten.mean.dim(self, dtype=dtype))
declare('prod(Tensor self, *, ScalarType? dtype=None) -> Tensor', name='_prod_all', function=False, method=False,
        composite=lambda self, dtype=None: aten.prod.dim_int(self, dtype=dtype))
declare('all(Tensor self) -> Tensor', name='_all_all', function=False, method=False,
        composite=lambda self: aten.all.dims(self))
declare('any(Tensor self) -> Tensor', name='_any_all', function=False, method=False,
        composite=lambda self: aten.any.dims(self))
declare('count_nonzero(Tensor self, int? dim=None) -> Tensor', name='_count_nonzero_one', function=False,
        method=False, composite=lambda self, dim=None: aten.count_nonzero.dim_IntList(self, dim))
declare('_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, '
        'bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, '
        'bool cudnn_enabled, bool allow_tf32) -> Tensor', function=False, method=False,
        composite=lambda input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, *_:
        aten.convolution.default(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups))


# the number overloads: ``x > 0`` is ``gt.Scalar`` in torch; ember's ``gt.Tensor`` takes the number itself
def _scalar_overload(name, schema_tail, ember_op):
    declare(f'{name}({schema_tail}) -> Tensor', name=f"_{name.replace('.', '_').lower()}", function=False,
            method=False, composite=lambda a, b: ember_op(a, b))


for _n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod', 'remainder', 'bitwise_and', 'bitwise_or', 'bitwise_xor',
           'bitwise_left_shift', 'bitwise_right_shift'):
    _scalar_overload(f'{_n}.Scalar', 'Tensor self, Scalar other', getattr(aten, _n).Tensor)
    if _n not in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod'):
        _scalar_overload(f'{_n}.Scalar_Tensor', 'Scalar self, Tensor other', getattr(aten, _n).Tensor)
_scalar_overload('pow.Tensor_Scalar', 'Tensor self, Scalar exponent', aten.pow.Tensor_Tensor)
_scalar_overload('pow.Scalar', 'Scalar self, Tensor exponent', aten.pow.Tensor_Tensor)


# the factories' overloads: ``arange(1, 4)`` is ``arange.start``, ``empty(2)`` is ``empty.memory_format``
declare('arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Device? device=None) -> Tensor',
        name='_arange_start', function=False, method=False, composite=lambda start, end, dtype=None, device=None:
        aten.arange.default(start, end, dtype=dtype, device=device))
declare('arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) '
        '-> Tensor', name='_arange_start_step', function=False, method=False,
        composite=lambda start, end, step=1, dtype=None, device=None:
        aten.arange.default(start, end, step, dtype=dtype, device=device))


def _empty_memory_format(size, dtype=None, device=None, memory_format=None):
    out = aten.empty.default(size, dtype=dtype, device=device)
    return out if memory_format is None else out.contiguous(memory_format=memory_format)


declare('empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Device? device=None, '
        'MemoryFormat? memory_format=None) -> Tensor', name='_empty_memory_format', function=False, method=False,
        composite=_empty_memory_format)
