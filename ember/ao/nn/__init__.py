"""ember.ao.nn: the quantization front end's modules (torch.ao.nn): quantized, quantized.dynamic, intrinsic (fused
float modules), qat (modules that fake-quantize their weights)."""
from . import intrinsic, qat, quantized  # noqa: F401
