"""torch.utils.deterministic: ``fill_uninitialized_memory`` (default True). While deterministic algorithms are on
(``ember.use_deterministic_algorithms(True)``), ``empty``, ``empty_like`` and ``empty_strided`` fill the memory
they return (NaN, or the largest integer) as torch's do, unless this is False (ultralytics sets it False to skip
the fill)."""
import sys
import types

from .. import backends


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        return backends._fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        backends._fill_uninitialized_memory(mode)


sys.modules[__name__].__class__ = _Deterministic
