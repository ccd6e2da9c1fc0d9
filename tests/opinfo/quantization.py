"""OpInfo records for the float fake-quantize operators (ember/_ops/quantized.py). The operators over quantized
tensors are compared with torch in tests/test_quantization.py (their inputs are not strided float tensors)."""
from .core import op, S, Arg


def _per_tensor_samples(dt):
    yield S(Arg((3, 4)), 0.1, 3, 0, 255)
    yield S(Arg((5,), low=-30, high=30), 0.25, -2, -128, 127)        # values clamped at both ends
    yield S(Arg(()), 0.5, 0, -8, 7)
    yield S(Arg((0, 3)), 0.1, 0, 0, 255)
    yield S(Arg((3, 4), noncontig=True), 0.05, 10, 0, 127)
    yield S(Arg((2, 3)), Arg((1,), dtype='float32', low=0.05, high=0.3, grad=False),
            Arg((1,), dtype='int32', low=0, high=5, grad=False), 0, 255)


def _per_channel_samples(dt):
    yield S(Arg((3, 4)), Arg((3,), dtype='float32', low=0.05, high=0.3, grad=False),
            Arg((3,), dtype='int32', low=-3, high=3, grad=False), 0, -128, 127)
    yield S(Arg((2, 4, 3), low=-20, high=20), Arg((4,), dtype='float32', low=0.1, high=0.5, grad=False),
            Arg((4,), dtype='int32', low=0, high=9, grad=False), 1, 0, 15)


def _learnable_samples(dt):
    yield S(Arg((3, 4)), Arg((1,), low=0.05, high=0.3), Arg((1,), low=0.0, high=5.0), -8, 7)
    yield S(Arg((2, 5), low=-10, high=10), Arg((1,), low=0.2, high=0.5), Arg((1,), low=0.0, high=3.0), 0, 15, 0.5)


def _learnable_channel_samples(dt):
    yield S(Arg((3, 4)), Arg((3,), low=0.05, high=0.3), Arg((3,), low=-2.0, high=2.0), 0, -8, 7)
    yield S(Arg((2, 4, 3), low=-5, high=5), Arg((4,), low=0.1, high=0.4), Arg((4,), low=0.0, high=6.0), 1, 0, 15, 0.7)


# torch's backward of the learnable quantizers takes float32 only, and has no double backward
op('fake_quantize_per_tensor_affine', _per_tensor_samples)
op('fake_quantize_per_channel_affine', _per_channel_samples)
op('_fake_quantize_learnable_per_tensor_affine', _learnable_samples, dtypes=('float32',),
   grad_dtypes=('float32',), gradgrad=False, atol=1e-4, rtol=1e-4)
op('_fake_quantize_learnable_per_channel_affine', _learnable_channel_samples, dtypes=('float32',),
   grad_dtypes=('float32',), gradgrad=False, atol=1e-4, rtol=1e-4)
