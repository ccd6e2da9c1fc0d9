"""Every declared operator has an OpInfo record, so the generic tests of test_ops.py reach it.

A record may carry the public name of an operator declared under an internal one (torch's
overloads such as max/max.dim are separate ops in ember's table, tested through the public
function that picks between them); those pairs are listed here, each with where it is tested.
"""
import torch

import ember  # noqa: F401
from ember._ops.registry import DECLS
from opinfo import OPS

TESTED_THROUGH = {
    # internal overloads, tested through the public function's record
    '_max_all': 'max', '_max_dim': 'max', '_min_all': 'min', '_min_dim': 'min', '_max_other': 'max',
    '_min_other': 'min', '_median_all': 'median',
    '_median_dim': 'median', '_nanmedian_all': 'nanmedian', '_nanmedian_dim': 'nanmedian', '_div_mode': 'div',
    '_linalg_matrix_norm_str': 'linalg.matrix_norm', '_linalg_norm_str': 'linalg.norm', '_unique2': 'unique',
    'unique_dim': 'unique', '_to_copy': 'to', '_cdist_forward': 'cdist', '_euclidean_dist': 'cdist', 'log_sigmoid': 'nn.functional.logsigmoid',
    '_pdist_forward': 'nn.functional.pdist',
    '_strided_index': 'as_strided',                 # the index map behind as_strided's backward
    '_resize_output_': 'max',                       # out= of the hand-written functions (test_pointwise)
    '_unsafe_view': 'kron',                         # torch's reshape inside kron and matmul (test_saved_versions)
    '_view_dtype': 'view',                          # Tensor.view(dtype): tests/test_users_gaps.py against torch
    # aten overloads libraries name (_ops/aten_aliases.py), composites of the operators tested under these records
    '_sort_stable': 'sort', '_squeeze_all': 'squeeze', '_squeeze_dim': 'squeeze', '_pin_memory': 'clone',
    # torch's whole-tensor reductions, shown to __torch_dispatch__ (tests/test_boxed_arguments.py)
    '_sum_all': 'sum', '_mean_all': 'mean', '_prod_all': 'prod', '_all_all': 'all', '_any_all': 'any',
    '_count_nonzero_one': 'count_nonzero', '_convolution': 'nn.functional.conv2d',
    **{f'_{n}_scalar{t}': n for n in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'fmod', 'remainder', 'bitwise_and',
                                      'bitwise_or', 'bitwise_xor', 'bitwise_left_shift', 'bitwise_right_shift')
       for t in ('', '_tensor')},
    '_pow_tensor_scalar': 'pow', '_pow_scalar': 'pow', '_arange_start': 'arange', '_arange_start_step': 'arange',
    '_empty_memory_format': 'empty',
    # fake quantization's primitives (output and mask), tested through the composites torch defines over them
    'fake_quantize_per_tensor_affine_cachemask': 'fake_quantize_per_tensor_affine',
    '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams': 'fake_quantize_per_tensor_affine',
    'fake_quantize_per_channel_affine_cachemask': 'fake_quantize_per_channel_affine',
    **{f'{m}_pad{k}d': 'pad' for m in ('reflection', 'replication') for k in (1, 2, 3)},   # pad's reflect, replicate
    # backward primitives, tested through the gradients of their forward ops
    'gelu_backward': 'nn.functional.gelu', 'silu_backward': 'nn.functional.silu', 'tanh_backward': 'tanh',
    'threshold_backward': 'nn.functional.relu', 'convolution_backward_weight': 'nn.functional.conv2d',
    # random operators: values differ from torch by design, tested for distributions in test_random.py
    '_bernoulli_p': 'bernoulli', '_bernoulli_tensor': 'bernoulli', '_normal_float_float': 'normal',
    '_normal_float_tensor': 'normal', '_normal_tensor_tensor': 'normal', 'normal_functional': 'normal',
    '_randint': 'randint',
    # torch.special's operators, tested under their torch.special names
    'special_erfcx': 'special.erfcx', 'special_entr': 'special.entr', 'special_gammainc': 'special.gammainc',
    'special_gammaincc': 'special.gammaincc', 'special_i0e': 'special.i0e', 'special_i1': 'special.i1',
    'special_i1e': 'special.i1e', 'special_log_ndtr': 'special.log_ndtr',
    **{f'special_{n}': f'special.{n}' for n in (
        'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0', 'modified_bessel_i1',
        'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1',
        'spherical_bessel_j0', 'zeta', 'chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
        'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
        'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h',
        'hermite_polynomial_he', 'laguerre_polynomial_l', 'legendre_polynomial_p')},
}


# sparse-layout operators: OpInfo's generic tests compare strided tensors, so tests/test_sparse.py compares
# these with torch (each name must appear there, checked below)
TESTED_IN_SPARSE = ('_sparse_coo_tensor_with_dims_and_tensors', '_sparse_values_at', 'to_sparse', 'to_dense',
                    'coalesce', 'sparse_mask', '_values', '_indices', '_sparse_addmm')
# torch.sparse.mm(csr, dense, reduce=...)'s operators, compared with torch in tests/test_sparse_gaps23.py
TESTED_IN_SPARSE_GAPS23 = ('_sparse_mm_reduce_impl', '_sparse_mm_reduce_impl_backward')
# compressed-layout operators, compared with torch in tests/test_sparse_csr.py
TESTED_IN_SPARSE_CSR = ('sparse_compressed_tensor', '_convert_indices_from_csr_to_coo',
                        '_convert_indices_from_coo_to_csr', '_to_sparse_csr',
                        '_to_sparse_csc', 'values', 'crow_indices', 'col_indices', 'ccol_indices', 'row_indices')


# the Sobol engine's operators (torch.quasirandom): tests/test_users_gaps.py compares their points and states with torch
TESTED_IN_USERS_GAPS = ('_sobol_engine_draw', '_sobol_engine_ff', '_sobol_engine_scramble', '_sobol_engine_initialize_state')
# tests/test_imports_gaps.py compares these with torch (values, dtypes, errors)
TESTED_IN_IMPORTS_GAPS = ('_int_mm', 'new_zeros', '_to_dtype', 'is_pinned', '_lerp_scalar', '_grouped_mm', '_to_dtype_layout',
                          '_to_device', '_to_other')

# the fused recurrent cells (torch runs them on CUDA only, so OpInfo's torch side has no CPU kernel to call):
# tests/test_rnn_fused_cells.py compares them with torch's composite cells (values, gradients, second order, errors)
TESTED_IN_RNN_CELLS = ('_thnn_fused_lstm_cell', '_thnn_fused_lstm_cell_backward_impl', '_thnn_fused_gru_cell',
                       '_thnn_fused_gru_cell_backward')

# torch's multi-tensor operators (NOTE [foreach operators]): tests/test_foreach.py compares each with torch, by its
# name or, for the families it loops over, by the single-tensor operator's name in quotes ('add' for _foreach_add_)
_FOREACH_FAMILIES = ('abs', 'acos', 'add', 'addcdiv', 'addcmul', 'asin', 'atan', 'ceil', 'clamp_max', 'clamp_min',
                     'cos', 'cosh', 'div', 'erf', 'erfc', 'exp', 'expm1', 'floor', 'frac', 'lerp', 'lgamma', 'log',
                     'log10', 'log1p', 'log2', 'maximum', 'minimum', 'mul', 'neg', 'pow', 'reciprocal', 'round',
                     'rsqrt', 'sigmoid', 'sign', 'sin', 'sinh', 'sqrt', 'sub', 'tan', 'tanh', 'trunc')
TESTED_IN_FOREACH = tuple(f'_foreach_{n}{u}' for n in _FOREACH_FAMILIES for u in ('', '_')) + (
    '_foreach_norm', '_foreach_powsum', '_foreach_max', '_foreach_mm', '_foreach_clone', '_foreach_copy',
    '_foreach_copy_', '_foreach_zero', '_foreach_zero_')


def test_foreach_operators_are_tested_in_test_foreach():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_foreach.py')).read()
    assert [n for n in TESTED_IN_FOREACH if n not in src and f"'{n[len('_foreach_'):].rstrip('_')}'" not in src] == []
    assert sorted(TESTED_IN_FOREACH) == sorted(n for n in DECLS if n.startswith('_foreach_'))


# quantized tensors' operators (NOTE [quantized tensors]): their inputs or results are quantized tensors, which the
# generic OpInfo tests do not make, so tests/test_quantization.py compares each with torch (each name appears there)
TESTED_IN_QUANTIZATION = (
    'quantize_per_tensor', 'quantize_per_tensor_dynamic', 'quantize_per_channel', '_make_per_tensor_quantized_tensor',
    '_make_per_channel_quantized_tensor', 'dequantize', 'int_repr', 'q_per_channel_scales',
    'q_per_channel_zero_points', 'quantized_add', 'quantized_add_relu', 'quantized_mul', 'quantized_mul_relu',
    'quantized_cat', 'quantized_hardswish', 'quantized_relu6', 'quantized_max_pool2d', 'quantized_linear_unpacked',
    'quantized_linear_relu_unpacked', 'quantized_conv2d_unpacked', 'quantized_conv2d_relu_unpacked',
    'quantized_linear_dynamic_unpacked', 'quantized_add_scalar', 'quantized_mul_scalar', 'quantized_matmul')


def test_quantized_operators_are_tested_in_test_quantization():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_quantization.py')).read()
    assert [n for n in TESTED_IN_QUANTIZATION if n not in src] == []
    from ember._ops.registry import DECLS as D
    assert sorted(n for n, d in D.items() if 'quantized' in d.tags) == sorted(TESTED_IN_QUANTIZATION)


# Tensor.item() of a tensor without data (a wrapper subclass): tests/test_tensor_subclasses.py compares with torch
TESTED_IN_SUBCLASSES = ('_local_scalar_dense',)

# the fused optimizer steps: tests/test_fused_optim.py compares them with torch's and with the single-tensor update
TESTED_IN_FUSED_OPTIM = ('_fused_adam_', '_fused_adamw_')


def test_subclass_operators_are_tested_in_test_tensor_subclasses():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_tensor_subclasses.py')).read()
    assert [n for n in TESTED_IN_SUBCLASSES if n not in src] == []


def test_sobol_operators_are_tested_in_test_users_gaps():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_users_gaps.py')).read()
    assert [n for n in TESTED_IN_USERS_GAPS if n not in src] == []


def test_fused_optimizer_operators_are_tested_in_test_fused_optim():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_fused_optim.py')).read()
    assert [n for n in TESTED_IN_FUSED_OPTIM if n not in src] == []


def test_fused_rnn_cells_are_tested_in_test_rnn_fused_cells():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_rnn_fused_cells.py')).read()
    assert [n for n in TESTED_IN_RNN_CELLS if n not in src] == []


def test_sparse_operators_are_tested_in_test_sparse():
    import os
    src = open(os.path.join(os.path.dirname(__file__), 'test_sparse.py')).read()
    assert [n for n in TESTED_IN_SPARSE if n not in src] == []
    src = open(os.path.join(os.path.dirname(__file__), 'test_sparse_csr.py')).read()
    assert [n for n in TESTED_IN_SPARSE_CSR if n not in src] == []
    src = open(os.path.join(os.path.dirname(__file__), 'test_sparse_gaps23.py')).read()
    assert [n for n in TESTED_IN_SPARSE_GAPS23 if n not in src] == []


def _norm(name):
    for prefix in ('nn.functional.', 'linalg.', 'special.', 'fft.'):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name.replace('.', '_').strip('_')


def test_every_declared_operator_has_a_record():
    records = {_norm(n) for n in OPS}
    missing = []
    for name in DECLS:
        if name in OPS or _norm(name) in records or _norm(name).replace('linalg_', '') in records \
                or _norm(name).replace('fft_', '') in records:
            continue
        if name in TESTED_IN_SPARSE or name in TESTED_IN_SPARSE_CSR or name in TESTED_IN_SPARSE_GAPS23 or \
                name in TESTED_IN_SUBCLASSES or \
                name in TESTED_IN_USERS_GAPS or name in TESTED_IN_IMPORTS_GAPS or name in TESTED_IN_FOREACH or \
                name in TESTED_IN_FUSED_OPTIM or name in TESTED_IN_QUANTIZATION or name in TESTED_IN_RNN_CELLS:
            continue
        target = TESTED_THROUGH.get(name)
        if target is not None and (target in OPS or _norm(target) in records):
            continue
        missing.append(name)
    assert not missing, f'operators without an OpInfo record: {missing}'


def test_primitives_that_torch_composes_say_why():
    """An operator torch defines as a composite (a CompositeImplicitAutograd kernel) but ember computes with a
    kernel of its own gives a one-line reason (``primitive_because=``), and only those do."""
    from ember._ops.registry import BY_OP
    missing, stale = [], []
    for name, d in sorted(BY_OP.items()):
        if d.composite is not None or d.kind == 'view':
            continue
        try:
            composite_in_torch = torch._C._dispatch_has_kernel_for_dispatch_key(name, 'CompositeImplicitAutograd')
        except RuntimeError:            # an operator of ember's own (no torch counterpart by that name)
            composite_in_torch = False
        if composite_in_torch and not d.primitive_because:
            missing.append(name)
        if d.primitive_because and not composite_in_torch:
            stale.append(name)
    assert not missing, f'primitives torch composes, with no primitive_because: {missing}'
    assert not stale, f'primitive_because on operators torch does not compose: {stale}'


# operators with a backward formula and no forward rule in their declaration, each with its own ForwardAD kernel
_FORWARD_KERNELS = {'aten::copy_'}


def test_every_differentiable_operator_has_a_forward_derivative():
    """NOTE [forward AD]: an operator with a backward formula declares its forward derivative (a formula or a rule:
    linear, multilinear, self_adjoint, transpose; pointwise operators default to self_adjoint, views to linear) or
    says ``forward='not_implemented'`` (torch's error). The table below is printed with -s: which operators use
    which rule."""
    from ember._ops.registry import BY_OP
    from ember._core.dispatch_key import DispatchKey
    from ember.autograd.forward import rule_name
    by_rule, missing = {}, []
    decls = {d for d in BY_OP.values() if d.derivatives and d.composite is None}
    assert len(decls) > 250
    for d in decls:
        r = rule_name(d)
        if r is None:
            if d.op.name in _FORWARD_KERNELS and DispatchKey.ForwardAD in d.op.kernels:
                r = 'own kernel'
            else:
                missing.append(d.op.name)
                continue
        by_rule.setdefault(r, []).append(d.op.schema.full_name)
        assert DispatchKey.ForwardAD in d.op.kernels, f'{d.op.name}: no ForwardAD kernel registered'
    for r, names in sorted(by_rule.items()):
        print(f'{r} ({len(names)}): {" ".join(sorted(names))}')
    assert not missing, f'operators with a backward formula but no forward derivative: {sorted(missing)}'
    # the operators of an MLP and a CNN have formulas or exact rules, not the costlier transpose
    for name in ('linear', 'convolution', 'softmax.int', 'log_softmax.int', 'native_layer_norm', 'mm', 'matmul',
                 'sum.dim_IntList', 'mean.dim', 'relu', 'tanh', 'nll_loss_forward', 'avg_pool2d'):
        d = next(d for d in decls if d.op.schema.full_name == name)
        assert rule_name(d) != 'transpose', name
