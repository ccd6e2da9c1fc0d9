"""torch.nn.functional's scaled (low-precision) matrix products: the scale recipes (``ScalingType``) and swizzle
layouts (``SwizzleType``) their arguments name, and ``scaled_grouped_mm``. torch runs the scaled grouped product
only with CUDA kernels (on the CPU its operator ``_scaled_grouped_mm_v2`` has no kernel and raises); ember has no
such kernel on any device and raises the same way.

>>> ScalingType.RowWise.value, SwizzleType.NO_SWIZZLE.value
(1, 0)
"""
import enum

__all__ = ['ScalingType', 'SwizzleType', 'scaled_grouped_mm']


class _ScalingType(enum.Enum):
    """How a scale applies to a low-precision operand: one per tensor, per row, or per block."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class _SwizzleType(enum.Enum):
    """The memory layout of a scale tensor."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


ScalingType, SwizzleType = _ScalingType, _SwizzleType


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
                      bias=None, offs=None, output_dtype=None, contraction_dim=(), use_fast_accum=False):
    """The grouped product of two low-precision (float8) operands with their scales (``_grouped_mm``'s groups).
    No device of ember's has the kernel (torch's is CUDA-only)."""
    backend = 'CUDA' if mat_a.device.type == 'cuda' else mat_a.device.type.upper()
    raise NotImplementedError(f"Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the '{backend}' "
                              f"backend: the scaled grouped matrix product has CUDA kernels only in torch, and none "
                              f"in ember")
