"""QuantizedCPU kernels: QArrays and ndarrays in, QArrays or ndarrays out (NOTE [quantized tensors]).

Like the CPU kernels they know arrays only. ``KERNELS`` take a quantized argument and run under the QuantizedCPU
key; ``CPU_KERNELS`` make a quantized tensor from dense inputs (``quantize_per_tensor``) and run under CPU.
Rounding is torch's x86/fbgemm rounding, bit for bit where the tests could pin it down:

* quantize (per tensor, 8-bit): ``nearbyint(fma(x, 1/scale, zero_point))`` in float32 (fbgemm's AVX2 loop);
  ``fma`` is exact in float64 here (a float32 product has 48 significant bits), then rounded once to float32;
* quantize (per channel, qint32): ``nearbyint(x * (1/scale) + zero_point)``, product and sum each rounded to
  float32 (the scalar loop);
* requantize (kernel outputs): ``zero_point + nearbyint(x * (1/scale))`` with the product rounded to float32
  (at::vec's and fbgemm's non-legacy loops);
* dequantize: ``(q - zero_point) * scale`` in float32.
"""
import math

import numpy as np

from ..._core.quantized import QArray, STORAGE, RANGE, per_channel_affine, per_channel_affine_float_qparams
from ..._core.dtype import qint8, quint8, qint32

_F32, _F64 = np.float32, np.float64
_BY_STORAGE = {np.dtype(np.int8): qint8, np.dtype(np.uint8): quint8, np.dtype(np.int32): qint32}


def _clamp(v, dt, nan=None):
    """``v`` clamped to ``dt``'s range in its storage type; NaN becomes ``nan`` (each of torch's loops sends it to a
    fixed integer: fbgemm's 8-bit loop to the type's maximum, the scalar loops' float-to-int conversion to 0 for
    8-bit types and to the minimum for qint32)."""
    lo, hi = RANGE[dt]
    r = np.asarray(np.clip(v, lo, hi))
    if nan is not None:
        r = np.nan_to_num(r, copy=False, nan=nan)
    return r.astype(STORAGE[dt])


def _scalar_loop_nan(dt):
    return RANGE[dt][0] if dt is qint32 else 0


def _inv(scale):
    return _F32(1) / _F32(scale)


def quantize_array(x, scale, zero_point, dt):
    """torch's per-tensor quantization of float values ``x`` (NOTE [quantized tensors])."""
    x = np.asarray(x, _F32)
    if dt is qint32:        # the scalar loop: product and sum each rounded to float32
        v = np.rint((x * _inv(scale) + _F32(zero_point)).astype(_F64))
        return _clamp(v, dt, RANGE[dt][0])
    v = np.rint((x.astype(_F64) * _F64(_inv(scale)) + zero_point).astype(_F32))
    return _clamp(v, dt, RANGE[dt][1])


def requantize_array(y, scale, zero_point, dt):
    """Kernel outputs: ``zero_point + nearbyint(float32(y * (1/scale)))``, clamped."""
    v = np.rint(np.asarray(y, _F32) * _inv(scale)).astype(_F64) + zero_point
    return _clamp(v, dt)


def choose_qparams(lo, hi, qmin, qmax, reduce_range=False):
    """ATen's ChooseQuantizationParams: (scale, int zero point) covering [lo, hi] and 0; the scale stays a double
    (the tensor keeps it), kernels round it to float32 where they use it."""
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if float(_F32(scale)) == 0.0 or math.isinf(float(_F32(1.0) / _F32(scale))):
        scale = 0.1
    zp_min, zp_max = qmin - lo / scale, qmax - hi / scale
    err_min, err_max = abs(qmin) - abs(lo / scale), abs(qmax) - abs(hi / scale)
    zp = zp_min if err_min < err_max else zp_max
    zp = qmin if zp < qmin else qmax if zp > qmax else int(np.rint(zp))
    return scale, int(zp)


# --- making and reading quantized arrays ---------------------------------------------------------------

def quantize_per_tensor(x, scale, zero_point, dtype):
    return QArray(quantize_array(x, scale, zero_point, dtype), dtype, float(scale), int(zero_point))


def quantize_per_tensor_tensor_qparams(x, scale, zero_point, dtype):
    return quantize_per_tensor(x, float(np.asarray(scale).reshape(-1)[0]), int(np.asarray(zero_point).reshape(-1)[0]),
                               dtype)


def quantize_per_tensor_tensors(xs, scales, zero_points, dtype):
    return [quantize_per_tensor(x, float(s), int(z), dtype) for x, s, z in zip(xs, scales, zero_points)]


def quantize_per_tensor_dynamic(x, dtype, reduce_range):
    lo, hi = RANGE[dtype]
    x = np.asarray(x, _F32)
    mn, mx = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    if mn != mn:
        raise RuntimeError("In ChooseQuantizationParams, min should be less than or equal to max")
    scale, zp = choose_qparams(mn, mx, lo, hi, reduce_range)
    return quantize_per_tensor(x, scale, zp, dtype)


def quantize_per_channel(x, scales, zero_points, axis, dtype):
    """Per-channel quantization; floating zero points make torch's per_channel_affine_float_qparams (scales and zero
    points kept as float32, a zero scale dividing by 1), integer ones per_channel_affine (float64 and int64)."""
    shape = [1] * x.ndim
    shape[axis] = -1
    if np.asarray(zero_points).dtype.kind == 'f':
        s, zp = np.asarray(scales, _F32).copy(), np.asarray(zero_points, _F32).copy()
        inv = (_F32(1) / np.where(s == 0, _F32(1), s)).reshape(shape)
        scheme = per_channel_affine_float_qparams
    else:
        s, zp = np.asarray(scales, _F64).copy(), np.asarray(zero_points).astype(np.int64)
        inv = (_F32(1) / s.astype(_F32)).reshape(shape)
        scheme = per_channel_affine
    v = np.rint((np.asarray(x, _F32) * inv + zp.reshape(shape).astype(_F32)).astype(_F64))
    return QArray(_clamp(v, dtype, _scalar_loop_nan(dtype)), dtype, s, zp, int(axis), scheme)


def make_per_tensor_quantized_tensor(ints, scale, zero_point):
    return QArray(np.array(ints, order='C'), _BY_STORAGE[ints.dtype], float(scale), int(zero_point))


def make_per_channel_quantized_tensor(ints, scale, zero_point, axis):
    return QArray(np.array(ints, order='C'), _BY_STORAGE[ints.dtype], np.asarray(scale, _F64).copy(),
                  np.asarray(zero_point).astype(np.int64), int(axis))


def dequantize(q):
    return q.dequantize()


def dequantize_tensors(qs):
    return [q.dequantize() for q in qs]


def int_repr(q):
    return np.array(q.int_repr, order='C')      # a copy that keeps 0-d shapes (ascontiguousarray makes them 1-d)


def q_per_channel_scales(q):
    return np.array(q.scale)        # float64; float32 for per_channel_affine_float_qparams


def q_per_channel_zero_points(q):
    return np.array(q.zero_point)   # int64; float32 for per_channel_affine_float_qparams


def local_scalar_dense(q):
    """Tensor.item() of a one-element quantized tensor: its dequantized value."""
    return float(q.dequantize().reshape(-1)[0])


# --- arithmetic: dequantize, compute in float32 (int32 for GEMMs), requantize --------------------------------

def _dq_fma(q):
    """at::vec's dequantize inside kernels: ``fma(scale, q, -zero_point * scale)`` in float32."""
    premul = _F64(_F32(-_F32(q.zero_point) * _F32(q.scale)))
    return (q.int_repr.astype(_F64) * _F64(_F32(q.scale)) + premul).astype(_F32)


def q_add(a, b, scale, zero_point, relu=False):
    c = _dq_fma(a) + _dq_fma(b)
    if relu:
        c = np.maximum(c, _F32(0))
    return QArray(requantize_array(c, scale, zero_point, a.qdtype), a.qdtype, float(scale), int(zero_point))


def q_mul(a, b, scale, zero_point, relu=False):
    c = a.dequantize() * b.dequantize()
    if relu:
        c = np.maximum(c, _F32(0))
    return QArray(requantize_array(c, scale, zero_point, a.qdtype), a.qdtype, float(scale), int(zero_point))


def q_add_scalar(q, c):
    """torch's quantized add_scalar: the scalar rounded to the input's steps ``c_q``; the zero point moves by it
    (the integers copied) unless it leaves the range, where the scale widens to hold every shifted value and the
    integers are requantized from ``q - zero_point + c_q``."""
    lo, hi = RANGE[q.qdtype]
    s, z = float(q.scale), int(q.zero_point)
    c_q = int(np.rint(float(c) / s))
    shifted = z - c_q
    if lo <= shifted <= hi:
        return QArray(np.array(q.int_repr, order='C'), q.qdtype, s, shifted)
    s2, z2 = ((hi - shifted) / (hi - lo) * s, lo) if shifted < lo else ((shifted - lo) / (hi - lo) * s, hi)
    mult = _F32(_F32(s) * (_F32(1) / _F32(s2)))
    acc = q.int_repr.astype(np.int64) - z + c_q
    return QArray(_clamp(np.rint(acc.astype(_F32) * mult).astype(_F64) + z2, q.qdtype), q.qdtype, s2, z2)


def q_mul_scalar(q, c):
    """torch's quantized mul_scalar: a positive scalar scales the scale (integers copied); a negative one also
    mirrors the integers in the range (``q_max + q_min - q``) and the zero point; zero gives zeros, scale 1."""
    lo, hi = RANGE[q.qdtype]
    c, s, z = float(c), float(q.scale), int(q.zero_point)
    if c > 0:
        return QArray(np.array(q.int_repr, order='C'), q.qdtype, c * s, z)
    if c == 0:
        return QArray(np.zeros(q.shape, q.int_repr.dtype), q.qdtype, 1.0, 0)
    mirrored = (hi + lo - q.int_repr.astype(np.int64)).astype(q.int_repr.dtype)
    return QArray(mirrored, q.qdtype, abs(c) * s, hi - (z - lo))


def q_matmul(a, b, scale, zero_point):
    """torch's quantized matmul off mobile (no ruy): dequantize, float32 matmul, quantize per tensor."""
    return quantize_per_tensor(np.matmul(a.dequantize(), b.dequantize()), scale, zero_point, a.qdtype)


def q_cat(qs, dim, scale=None, zero_point=None):
    first = qs[0]
    scale = first.scale if scale is None else scale
    zero_point = first.zero_point if zero_point is None else zero_point
    c = np.concatenate([q.dequantize() for q in qs], axis=dim)
    return QArray(quantize_array(c, scale, zero_point, first.qdtype), first.qdtype, float(scale), int(zero_point))


def _centered(q):
    """The integers minus their zero point (per channel along the axis), as int64."""
    v = q.int_repr.astype(np.int64)
    if q.axis is None:
        return v - int(q.zero_point)
    shape = [1] * v.ndim
    shape[q.axis] = -1
    return v - np.asarray(q.zero_point, np.int64).reshape(shape)


def _w_scales(w, n):
    return np.full(n, w.scale, _F64) if w.axis is None else np.asarray(w.scale, _F64)


def _gemm_output(acc, x, w, bias):
    """float32 ``acc * x_scale * w_scale + bias`` per output column (fbgemm's float-bias requantization)."""
    s = (_F32(x.scale) * _w_scales(w, acc.shape[-1]).astype(_F32)).astype(_F32)
    y = acc.astype(_F32) * s
    return y if bias is None else y + np.asarray(bias, _F32)


def linear(x, w, bias, scale, zero_point):
    """Quantized linear: int32 accumulation of (x - x_zp)(w - w_zp), rescaled, plus bias, requantized."""
    acc = _centered(x) @ _centered(w).T
    y = _gemm_output(acc, x, w, bias)
    return QArray(requantize_array(y, scale, zero_point, x.qdtype), x.qdtype, float(scale), int(zero_point))


def linear_relu(x, w, bias, scale, zero_point):
    r = linear(x, w, bias, scale, zero_point)
    r.int_repr = np.maximum(r.int_repr, r.int_repr.dtype.type(zero_point))
    return r


def linear_dynamic(x, w, bias, reduce_range=True):
    """Dynamic linear: quantize ``x`` per tensor (quint8, range from its values), int32 GEMM, float output."""
    xf = np.asarray(x, _F32)
    mn, mx = (float(xf.min()), float(xf.max())) if xf.size else (0.0, 0.0)
    s, zp = choose_qparams(mn, mx, 0, 255, reduce_range)
    xq = QArray(quantize_array(xf, s, zp, quint8), quint8, s, zp)
    acc = _centered(xq) @ _centered(w).T
    return _gemm_output(acc, xq, w, bias)


def _im2col(x, kh, kw, stride, padding, dilation, pad_value):
    n, c, h, wd = x.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2), constant_values=pad_value)
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            hi, wj = i * dilation[0], j * dilation[1]
            cols[:, :, i, j] = x[:, :, hi:hi + stride[0] * oh:stride[0], wj:wj + stride[1] * ow:stride[1]]
    return cols, oh, ow


def conv2d(x, w, bias, stride, padding, dilation, groups, scale, zero_point, relu=False):
    """Quantized 2-d convolution (NCHW): int32 accumulation per group, requantized like `linear`."""
    xc, wc = _centered(x), _centered(w)
    oc, icg, kh, kw = w.shape
    cols, oh, ow = _im2col(xc, kh, kw, stride, padding, dilation, 0)
    n = x.shape[0]
    cols = cols.reshape(n, groups, icg * kh * kw, oh * ow)
    wg = wc.reshape(groups, oc // groups, icg * kh * kw)
    acc = np.einsum('gok,ngkp->ngop', wg, cols).reshape(n, oc, oh, ow)
    s = (_F32(x.scale) * _w_scales(w, oc).astype(_F32)).astype(_F32).reshape(1, oc, 1, 1)
    y = acc.astype(_F32) * s
    if bias is not None:
        y = y + np.asarray(bias, _F32).reshape(1, oc, 1, 1)
    if relu:
        y = np.maximum(y, _F32(0))
    return QArray(requantize_array(y, scale, zero_point, x.qdtype), x.qdtype, float(scale), int(zero_point))


def conv2d_relu(x, w, bias, stride, padding, dilation, groups, scale, zero_point):
    return conv2d(x, w, bias, stride, padding, dilation, groups, scale, zero_point, relu=True)


def _unary_requant(q, fn, scale, zero_point):
    y = fn(q.dequantize())
    return QArray(requantize_array(y, scale, zero_point, q.qdtype), q.qdtype, float(scale), int(zero_point))


def hardswish(q, scale, zero_point):
    return _unary_requant(q, lambda x: x * np.clip(x + 3, 0, 6) / _F32(6), scale, zero_point)


def relu6(q, inplace=False):
    six = quantize_array(np.float32(6.0), q.scale, q.zero_point, q.qdtype)
    zp = q.int_repr.dtype.type(q.zero_point)
    return q.with_storage(np.minimum(np.maximum(q.int_repr, zp), six))


def relu(q):
    return q.with_storage(np.maximum(q.int_repr, q.zero_points()))


def equal(a, b):
    if a.qdtype is not b.qdtype or a.scheme is not b.scheme or a.shape != b.shape:
        return False
    same = np.array_equal(np.asarray(a.scale), np.asarray(b.scale)) and \
        np.array_equal(np.asarray(a.zero_point), np.asarray(b.zero_point)) and a.axis == b.axis
    return bool(same and np.array_equal(a.int_repr, b.int_repr))


def adaptive_avg_pool2d(q, output_size):
    h, w = q.shape[-2:]
    oh, ow = output_size
    v = q.int_repr.astype(_F64)
    out = np.empty(q.shape[:-2] + (oh, ow), _F64)
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[..., i, j] = v[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return q.with_storage(_clamp(np.rint(out), q.qdtype))


def _pool_out(size, k, s, p, d, ceil_mode):
    """Output length of a pooling window (torch's rule: with ceil_mode, the last window starts inside the input)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool2d(q, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """The maximum of the integers per window (dequantization is monotone), padding never chosen."""
    two = lambda v: tuple(v) * (2 // len(v))        # noqa: E731
    k, p, d = two(kernel_size), two(padding), two(dilation)
    s = two(stride or k)
    v = q.int_repr
    squeeze = v.ndim == 3
    v = v[None] if squeeze else v
    h, w = v.shape[-2:]
    oh, ow = (_pool_out(n, k[i], s[i], p[i], d[i], ceil_mode) for i, n in enumerate((h, w)))
    extra = [max(0, (o - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (n + 2 * p[i]))      # ceil_mode's last windows
             for i, (o, n) in enumerate(((oh, h), (ow, w)))]
    lo = RANGE[q.qdtype][0]
    x = np.pad(v.astype(np.int64), ((0, 0), (0, 0), (0, extra[0]), (0, extra[1])), constant_values=lo)
    cols, _, _ = _im2col(x, k[0], k[1], s, p, d, lo)
    out = cols.max(axis=(2, 3))[..., :oh, :ow].astype(v.dtype)
    return q.with_storage(out[0] if squeeze else out)


# --- elementwise activations: torch's "dequantize, compute in float32, quantize" loops -------------------------

def _requant(y, q, scale, zero_point):
    """at::vec's quantize: 8-bit types round ``y / scale`` then add the zero point; qint32's loop is the scalar
    one (`quantize_array`: the zero point added before rounding)."""
    ints = quantize_array(y, scale, zero_point, q.qdtype) if q.qdtype is qint32 else \
        requantize_array(y, scale, zero_point, q.qdtype)
    return QArray(ints, q.qdtype, float(scale), int(zero_point))


def leaky_relu(q, negative_slope=0.01):
    """Output parameters are the input's; negative values times the slope, in float32."""
    x = _dq_fma(q)
    return _requant(np.where(x > 0, x, x * _F32(negative_slope)), q, q.scale, q.zero_point)


# the fixed output parameters of sigmoid (range [0, 1]) and tanh ([-1, 1]) per dtype: 2^-8 (2^-32 for qint32)
_SIGMOID_QPARAMS = {quint8: (1.0 / 256, 0), qint8: (1.0 / 256, -128), qint32: (2.0 ** -32, 0)}
_TANH_QPARAMS = {quint8: (2.0 / 256, 128), qint8: (2.0 / 256, 0), qint32: (2.0 ** -31, 0)}


def sigmoid(q):
    x = _dq_fma(q)
    with np.errstate(over='ignore'):
        y = (_F32(1) / (_F32(1) + np.exp(-x))).astype(_F32)
    return _requant(y, q, *_SIGMOID_QPARAMS[q.qdtype])


def tanh(q):
    return _requant(np.tanh(_dq_fma(q)), q, *_TANH_QPARAMS[q.qdtype])


def clamp(q, min=None, max=None):
    """Clamp in the integers: the bounds quantized with the input's parameters (torch's quantize_val)."""
    v = q.int_repr
    bound = lambda b: requantize_array(np.float32(float(np.asarray(b))), q.scale, q.zero_point, q.qdtype)  # noqa
    if min is not None:
        v = np.maximum(v, bound(min))
    if max is not None:
        v = np.minimum(v, bound(max))
    return q.with_storage(np.array(v, dtype=q.int_repr.dtype, order='C'))


def hardtanh(q, min_val=-1.0, max_val=1.0):
    return clamp(q, min_val, max_val)


# --- pooling and reductions -----------------------------------------------------------------------------------

def avg_pool2d(q, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch's quantized average pool: per window the sum of ``q - zero_point`` over the input's entries, times
    ``1 / divisor``, plus the zero point, rounded, in float32 (output parameters: the input's)."""
    two = lambda v: (v, v) if isinstance(v, int) else tuple(v) * (2 // len(v))        # noqa: E731
    k, p = two(kernel_size), two(padding)
    s = two(stride or k)
    v = q.int_repr
    squeeze = v.ndim == 3
    v = (v[None] if squeeze else v).astype(np.int64) - int(q.zero_point)
    h, w = v.shape[-2:]
    oh, ow = (_pool_out(n, k[i], s[i], p[i], 1, ceil_mode) for i, n in enumerate((h, w)))
    out = np.empty(v.shape[:-2] + (oh, ow), np.int64)
    div = np.empty((oh, ow), _F32)
    for i in range(oh):
        h0 = i * s[0] - p[0]
        h1 = min(h0 + k[0], h + p[0])
        for j in range(ow):
            w0 = j * s[1] - p[1]
            w1 = min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            a0, a1, b0, b1 = max(h0, 0), min(h1, h), max(w0, 0), min(w1, w)
            out[..., i, j] = v[..., a0:a1, b0:b1].sum(axis=(-2, -1))
            n = divisor_override or (size if count_include_pad else (a1 - a0) * (b1 - b0))
            div[i, j] = _F32(1) / _F32(n)
    y = np.rint(out.astype(_F32) * div + _F32(q.zero_point))     # the zero point added before rounding
    r = _clamp(y, q.qdtype)
    return q.with_storage(r[0] if squeeze else r)


def mean_dim(q, dim=None, keepdim=False, dtype=None):
    """torch's quantized mean: the dequantized mean, quantized with the input's parameters."""
    dim = [dim] if isinstance(dim, int) else dim
    axes = None if not dim else tuple(d % q.ndim for d in dim)
    y = np.mean(q.dequantize(), axis=axes, keepdims=keepdim, dtype=_F32)
    return QArray(quantize_array(y, q.scale, q.zero_point, q.qdtype), q.qdtype, q.scale, q.zero_point)


KERNELS = {
    'dequantize.self': dequantize, 'dequantize.tensors': dequantize_tensors, 'int_repr': int_repr,
    'q_per_channel_scales': q_per_channel_scales, 'q_per_channel_zero_points': q_per_channel_zero_points,
    'quantized::add': lambda a, b, s, z: q_add(a, b, s, z),
    'quantized::add_relu': lambda a, b, s, z: q_add(a, b, s, z, True),
    'quantized::mul': lambda a, b, s, z: q_mul(a, b, s, z),
    'quantized::mul_relu': lambda a, b, s, z: q_mul(a, b, s, z, True),
    'quantized::cat': q_cat, 'quantized::add_scalar': q_add_scalar, 'quantized::mul_scalar': q_mul_scalar,
    'quantized::matmul': q_matmul, 'quantized::_linear_unpacked': linear, 'quantized::_linear_relu_unpacked': linear_relu,
    'quantized::_conv2d_unpacked': conv2d, 'quantized::_conv2d_relu_unpacked': conv2d_relu,
    'quantized::_linear_dynamic_unpacked': linear_dynamic,     # a float input and a quantized weight
    'quantized::hardswish': hardswish, 'quantized::relu6': relu6,
    'leaky_relu': leaky_relu, 'sigmoid': sigmoid, 'tanh': tanh, 'clamp': clamp, 'hardtanh': hardtanh,
    'avg_pool2d': avg_pool2d, 'mean.dim': mean_dim,
    'relu': relu, 'equal': equal, '_local_scalar_dense': local_scalar_dense, 'adaptive_avg_pool2d': adaptive_avg_pool2d, 'quantized::max_pool2d': max_pool2d,
}

CPU_KERNELS = {
    'quantize_per_tensor': quantize_per_tensor, 'quantize_per_tensor.tensor_qparams': quantize_per_tensor_tensor_qparams,
    'quantize_per_tensor.tensors': quantize_per_tensor_tensors, 'quantize_per_tensor_dynamic': quantize_per_tensor_dynamic,
    'quantize_per_channel': quantize_per_channel, '_make_per_tensor_quantized_tensor': make_per_tensor_quantized_tensor,
    '_make_per_channel_quantized_tensor': make_per_channel_quantized_tensor,
}
