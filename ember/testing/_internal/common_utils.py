"""``TestCase`` and ``run_tests`` from torch's test harness (torch.testing._internal.common_utils), which
libraries' suites import for ``assertEqual`` on tensors (timm's optimizer tests compare weights and state dicts).

``TestCase.assertEqual`` compares as torch's: tensors, NumPy arrays, numbers, and sequences and mappings of them
with ``assert_close``'s default tolerances for their dtype and NaN equal to NaN; a tensor against a number or
list compares it as a tensor of the tensor's dtype; anything else with ``==``.

>>> import ember
>>> from ember.testing._internal.common_utils import TestCase
>>> TestCase().assertEqual({'w': ember.ones(2)}, {'w': ember.ones(2) + 1e-7})
"""
import collections.abc
import unittest

import numpy as np

from .. import assert_close

__all__ = ['TestCase', 'run_tests']


def _is_tensor(x):
    import ember
    return isinstance(x, ember.Tensor)


def _as_tensor_like(x, like):
    import ember
    return x if _is_tensor(x) else ember.as_tensor(x, dtype=like.dtype, device=like.device)


def _comparable(x):
    return _is_tensor(x) or isinstance(x, (np.ndarray, np.number, bool, int, float, complex))


class TestCase(unittest.TestCase):
    """unittest's TestCase with torch's ``assertEqual`` and ``assertNotEqual`` for tensors."""

    def __init__(self, method_name='runTest'):
        super().__init__(method_name)

    def runTest(self):      # noqa: N802  (a bare TestCase() is usable for its assertions, as torch's)
        pass

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True, exact_dtype=True,  # noqa: N802
                    exact_device=False, **kwargs):
        try:
            self._compare(x, y, atol, rtol, equal_nan, exact_dtype, exact_device)
        except AssertionError as e:
            raise self.failureException(f"{e}\n{msg}" if isinstance(msg, str) and msg else str(e)) from None

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):  # noqa: N802
        try:
            self.assertEqual(x, y, atol=atol, rtol=rtol, **kwargs)
        except self.failureException:
            return
        raise self.failureException(msg or f"{x!r} == {y!r}")

    def _compare(self, x, y, atol, rtol, equal_nan, exact_dtype, exact_device):
        if _is_tensor(x) or _is_tensor(y):
            if not (_comparable(x) and _comparable(y)) and not isinstance(x if _is_tensor(y) else y, (list, tuple)):
                raise AssertionError(f"Cannot compare {type(x).__name__} with {type(y).__name__}")
            both = _is_tensor(x) and _is_tensor(y)
            x, y = (x, _as_tensor_like(y, x)) if _is_tensor(x) else (_as_tensor_like(x, y), y)
            assert_close(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan, check_dtype=exact_dtype and both,
                         check_device=exact_device)
        elif isinstance(x, collections.abc.Mapping) and isinstance(y, collections.abc.Mapping):
            if set(x) != set(y):
                raise AssertionError(f"The keys of the mappings do not match: {sorted(map(str, x))} != "
                                     f"{sorted(map(str, y))}")
            for k in x:
                self._compare(x[k], y[k], atol, rtol, equal_nan, exact_dtype, exact_device)
        elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            if len(x) != len(y):
                raise AssertionError(f"The length of the sequences mismatch: {len(x)} != {len(y)}")
            for a, b in zip(x, y):
                self._compare(a, b, atol, rtol, equal_nan, exact_dtype, exact_device)
        elif _comparable(x) and _comparable(y) and not isinstance(x, str):
            assert_close(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan, check_dtype=False)
        elif x != y:
            raise AssertionError(f"{x!r} != {y!r}")


def run_tests(argv=None):
    """Run the calling module's tests with unittest, as torch's harness does outside pytest."""
    unittest.main(argv=argv)
