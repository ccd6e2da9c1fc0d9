"""Fake quantization (quantization-aware training): float in, float out, with the mask of the entries that the
clamp left alone (their gradient passes straight through; NOTE [quantized tensors]).

torch's CPU rounding: ``q = zero_point + nearbyint(x * (1/scale))`` with ``1/scale`` in float32 and the product in
the input's type, then ``(clamp(q) - zero_point) * scale``, rounded to float32 per tensor (for float64 inputs
too) and in the input's type per channel.
"""
import numpy as np

_F32 = np.float32


def _along(v, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v).reshape(shape)


def _fake(x, scale, zero_point, quant_min, quant_max, float_out=True):
    """``scale`` and ``zero_point`` are numbers or arrays broadcasting against ``x``. ``float_out``: the per-tensor
    kernel rounds the result to float32 whatever the input's type; the per-channel one computes in the input's."""
    inv = (_F32(1) / np.asarray(scale, _F32)).astype(x.dtype if x.dtype == np.float64 else _F32)
    q = np.rint(x * inv).astype(np.float64) + zero_point
    mask = (q >= quant_min) & (q <= quant_max)
    out = (np.clip(q, quant_min, quant_max) - zero_point) * np.asarray(scale, _F32).astype(np.float64)
    return (out.astype(_F32) if float_out else out).astype(x.dtype), mask


def fake_quantize_per_tensor_affine_cachemask(x, scale, zero_point, quant_min, quant_max):
    return _fake(x, scale, int(zero_point), quant_min, quant_max)


def fake_quantize_cachemask_tensor_qparams(x, scale, zero_point, fake_quant_enabled, quant_min, quant_max):
    if not np.asarray(fake_quant_enabled).reshape(-1)[0]:
        return x.copy(), np.ones(x.shape, bool)
    zp = int(np.asarray(zero_point).reshape(-1)[0])
    return _fake(x, np.asarray(scale).reshape(-1)[0], zp, quant_min, quant_max)


def fake_quantize_per_channel_affine_cachemask(x, scale, zero_point, axis, quant_min, quant_max):
    if np.asarray(zero_point).dtype.kind == 'f':      # float qparams: the zero point is added before rounding
        inv = _along(_F32(1) / np.asarray(scale, _F32), axis, x.ndim)
        zp = _along(np.asarray(zero_point, _F32), axis, x.ndim)
        q = np.rint(x.astype(_F32) * inv + zp)
        mask = (q >= quant_min) & (q <= quant_max)
        out = (np.clip(q, quant_min, quant_max) - zp) * _along(np.asarray(scale, _F32), axis, x.ndim)
        return out.astype(x.dtype), mask
    return _fake(x, _along(scale, axis, x.ndim), _along(np.asarray(zero_point, np.int64), axis, x.ndim),
                 quant_min, quant_max, float_out=False)


def _learnable_zero_point(zero_point, quant_min, quant_max):
    """torch's forward rounding of a float zero point: nearbyint, then clamped."""
    return np.clip(np.rint(np.asarray(zero_point, _F32)), quant_min, quant_max).astype(np.int64)


def fake_quantize_learnable_per_tensor_affine(x, scale, zero_point, quant_min, quant_max, grad_factor=1.0):
    zp = int(_learnable_zero_point(np.asarray(zero_point).reshape(-1)[0], quant_min, quant_max))
    return _fake(x, np.asarray(scale).reshape(-1)[0], zp, quant_min, quant_max)[0]


def fake_quantize_learnable_per_channel_affine(x, scale, zero_point, axis, quant_min, quant_max, grad_factor=1.0):
    zp = _learnable_zero_point(zero_point, quant_min, quant_max)
    return _fake(x, _along(scale, axis, x.ndim), _along(zp, axis, x.ndim), quant_min, quant_max)[0]


KERNELS = {
    'fake_quantize_per_tensor_affine_cachemask': fake_quantize_per_tensor_affine_cachemask,
    '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams': fake_quantize_cachemask_tensor_qparams,
    'fake_quantize_per_channel_affine_cachemask': fake_quantize_per_channel_affine_cachemask,
    '_fake_quantize_learnable_per_tensor_affine': fake_quantize_learnable_per_tensor_affine,
    '_fake_quantize_learnable_per_channel_affine': fake_quantize_learnable_per_channel_affine,
}
