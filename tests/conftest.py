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


@pytest.fixture(autouse=True)
def _distributions_validate():
    """Each test starts with the distributions' argument checks on: the first torch.compile (and ember.compile) in
    a process turns them off for good (torch's TorchPatcher), and under xdist any test may follow one."""
    import torch.distributions
    import ember.distributions
    torch.distributions.Distribution.set_default_validate_args(True)
    ember.distributions.Distribution.set_default_validate_args(True)
