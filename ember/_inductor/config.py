"""torch._inductor.config: the settings programs read and set for torch's code generator (litgpt sets
``coordinate_descent_tuning``, ``triton.unique_kernel_names`` and ``fx_graph_cache`` before compiling).

They tune torch's Triton and C++ kernels (autotuning, CUDA graphs, kernel naming, its on-disk graph cache), which
ember's generator (ember/_inductor/codegen.py) does not have: the values are kept, with torch's defaults, so that
such programs run; what ember generates does not depend on them.
"""
import types

coordinate_descent_tuning = False
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
freezing = False
fx_graph_cache = True
autotune_local_cache = True
epilogue_fusion = True
aggressive_fusion = False
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
split_reductions = True
benchmark_kernel = False
debug = False
cpp_wrapper = False
fallback_random = False
triton = types.SimpleNamespace(unique_kernel_names=True, cudagraphs=False, cudagraph_trees=True, autotune_pointwise=True,
                               descriptive_names='original_aten')
cpp = types.SimpleNamespace(threads=-1, simdlen=None, enable_kernel_profile=False)
