"""``ValueRanges``: the closed range of values a size symbol may take (torch.utils._sympy.value_ranges), what an
ExportedProgram's ``range_constraints`` maps each symbol to; printed ``VR[2, 64]``, ``VR[0, int_oo]``."""
import dataclasses

from .numbers import int_oo

__all__ = ['ValueRanges']


@dataclasses.dataclass(frozen=True)
class ValueRanges:
    lower: object
    upper: object

    def __contains__(self, x):
        return self.lower <= x and (self.upper is int_oo or x <= self.upper)

    def __repr__(self):
        return f'VR[{self.lower}, {self.upper}]'
