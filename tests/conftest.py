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
    from ember._core import device as _device
    import ember.utils as _utils
    saved = dict(_device._REGISTRY), dict(_device._BY_KEY), list(_utils._privateuse1)
    yield
    _device._REGISTRY.clear()
    _device._REGISTRY.update(saved[0])
    _device._BY_KEY.clear()
    _device._BY_KEY.update(saved[1])
    _utils._privateuse1[:] = saved[2]
    _device.device._cache.clear()
