"""torch._subclasses: ember's fake tensors (``ember._subclasses.fake_tensor.FakeTensorMode``)."""
from .fake_tensor import FakeTensorMode, FakeTensor  # noqa: F401
