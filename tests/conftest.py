import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402


@pytest.fixture
def device_registry():
    """Undo a test's device registrations (ember.library.register_device, rename_privateuse1_backend) when it
    ends: the registry is process-wide, and under xdist another module's tests run in the same process in between,
    some of them expecting their own PrivateUse1 device."""
    from _registry import snapshot
    restore = snapshot()
    yield
    restore()
