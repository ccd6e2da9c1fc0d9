"""torch.utils._sympy's names that ember's symbolic sizes need: ``int_oo`` and ``ValueRanges`` (ember keeps its
size expressions as polynomials of its own, NOTE [symbolic sizes]; it has no sympy)."""
