"""Quantized tensors' operators: their declarations, the adapter that runs QuantizedCPU kernels, the dense operators
that also run on quantized storage (views, clone, cat), and the float fake-quantize operators of QAT.

A quantized tensor is a TensorImpl over a `QArray` (NOTE [quantized tensors] in _core/quantized.py) whose key set
holds ``QuantizedCPU`` instead of ``CPU``. QuantizedCPU sits above CPU and below Autograd (as in torch), so a call
with a quantized argument reaches the operator's QuantizedCPU kernel, and an operator without one raises torch's
"Could not run 'aten::xxx' with arguments from the 'QuantizedCPU' backend". Array kernels live in
``ember/_backends/quantized`` and are registered through ember.library; `quantized_kernel` is their adapter.

Views and other storage-only operators (view, permute, select, slicing, unsqueeze, clone, ...) need no kernel of
their own: `_on_storage` runs the dense operator on a tensor over the integer storage (a real NumPy view, so the
result shares memory as torch's does) and puts the quantizer back, moving a per-channel axis as the view moves it.

The fake-quantize operators are ordinary float operators with torch's straight-through gradients: inside the
clamp range the gradient passes, outside it is zero (the ``mask`` their cachemask forms return).
"""
import numpy as np

from .._core.quantized import QArray, RANGE
from .._core.dtype import bool_, int64, float32, qint8, quint8, scalar_name
from .._core.dispatch_key import DispatchKey
from .._core import device as _devmod
from .._core.tensor_impl import TensorImpl, make_tensor, adopt
from .._dispatch import dispatcher
from .._dispatch.ops_namespace import namespace, aten
from .registry import declare
from .overloads import overloads

QUANTIZED_BIT = 1 << DispatchKey.QuantizedCPU
quantized = namespace('quantized')


def make_quantized(a, dev=None):
    """A quantized tensor over QArray ``a``."""
    t = make_tensor(a, a.qdtype, dev or _devmod.canonical('cpu'))
    t._keys = QUANTIZED_BIT
    return t


def _unwrap(x):
    if isinstance(x, TensorImpl):
        return x._a
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], TensorImpl):
        return [e._a for e in x]
    return x


def _wrap(r, dev):
    if isinstance(r, (tuple, list)):
        return type(r)(_wrap(x, dev) for x in r)
    if isinstance(r, QArray):
        return make_quantized(r, dev)
    if isinstance(r, (bool, int, float)):
        return r
    if isinstance(r, np.generic):
        r = np.asarray(r)
    return adopt(r, dev)


# dense operators whose meta function's dtype rule refuses quantized inputs (clamp promotes its bounds with the
# input, mean and leaky_relu ask for a floating input); torch's quantized kernels take them, so their checks are
# the kernel's
_NO_DENSE_META = frozenset({'clamp', 'mean.dim', 'leaky_relu'})


def quantized_kernel(op, fn):
    """The dispatcher kernel for array kernel ``fn`` on QuantizedCPU (or a dense-to-quantized kernel on CPU)."""
    cpu = _devmod.canonical('cpu')

    check = None if op.schema.full_name in _NO_DENSE_META else getattr(op.decl, 'meta', None)

    def kernel(ks, *args, **kwargs):
        if check is not None:           # torch's argument checks, before any data is read
            check(*args, **kwargs)
        return _wrap(fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()}), cpu)
    kernel.__qualname__ = f'quantizedcpu::{op.schema.full_name}'
    return kernel


# --- storage-only operators: the dense operator on the integer storage, the quantizer kept ----------------

def _storage(t):
    return adopt(t._a.int_repr, t._device)


def _axis_after(name, q, args):
    """Where a per-channel axis goes under view operator ``name`` (None: the view makes it per tensor)."""
    ax, nd = q.axis, q.ndim
    if name in ('unsqueeze',):
        d = args[0] % (nd + 1)
        return ax + 1 if d <= ax else ax
    if name == 'select':
        d = args[0] % nd
        return None if d == ax else ax - 1 if d < ax else ax
    if name in ('permute', 'transpose', 't'):
        raise RuntimeError("Setting strides is possible only on uniformly quantized tensor")
    return ax


def _channel_params(q, name, args):
    if name == 'select' and args[0] % q.ndim == q.axis:
        i = args[1]
        return dict(scale=float(q.scale[i]), zero_point=int(q.zero_point[i]))
    if name == 'slice' and args[0] % q.ndim == q.axis:
        sl = slice(*(None if v is None or abs(v) >= 2 ** 62 else v for v in (args[1], args[2], args[3])))
        return dict(scale=q.scale[sl].copy(), zero_point=q.zero_point[sl].copy())
    return {}


def _on_storage(op):
    name = op.schema.name

    def kernel(ks, self, *args):
        q = self._a
        r = op.call_in_schema_order((_storage(self),) + args)
        if q.axis is None:
            return make_quantized(q.with_storage(r._a), self._device)
        params = _channel_params(q, name, args)
        axis = _axis_after(name, q, args)
        if axis is None:
            return make_quantized(QArray(r._a, q.qdtype, params['scale'], params['zero_point']), self._device)
        return make_quantized(q.with_storage(r._a, axis, **params), self._device)
    kernel.__qualname__ = f'quantizedcpu::{op.schema.full_name}'
    return kernel


STORAGE_OPS = ('view', 'permute', 'transpose.int', 'select.int', 'slice.Tensor', 'unsqueeze', 'expand', 't',
               'alias', 'detach', 'squeeze.dims', '_unsafe_view', 'as_strided')


def _clone(ks, self, memory_format=None):
    return make_quantized(self._a.with_storage(np.array(self._a.int_repr, order='C')), self._device)


def _cat(ks, tensors, dim=0):
    """torch's quantized cat: every input dequantized, the result quantized with the first one's parameters."""
    return quantized.cat.default(list(tensors), dim, None, None)


def register_storage_ops():
    """QuantizedCPU kernels of the dense operators that only move storage (views, clone, cat)."""
    ops = dispatcher.all_ops()
    for name in STORAGE_OPS:
        op = ops[f'aten::{name}']
        op.register(DispatchKey.QuantizedCPU, _on_storage(op))
    ops['aten::clone'].register(DispatchKey.QuantizedCPU, _clone)
    ops['aten::cat'].register(DispatchKey.QuantizedCPU, _cat)
    ops['aten::relu_'].register(DispatchKey.QuantizedCPU, _relu_)


def _relu_(ks, self):
    """In-place ReLU of a quantized tensor (nn.ReLU(inplace=True)): integers below the zero point become it."""
    q = self._a
    np.maximum(q.int_repr, q.zero_points(), out=q.int_repr)
    self._vc[0] += 1        # NOTE [version counter]
    return self


# --- declarations: quantized tensors (QuantizedCPU kernels in ember/_backends/quantized) ---------------------

def _check_qdtype(dtype):
    if dtype not in RANGE:
        raise RuntimeError(f"ScalarType {scalar_name(dtype)} is not supported in new_qtensor.")


def _check_float(self, what="Quantize only works on Float Tensor, got"):
    if self.dtype is not float32:
        raise RuntimeError(f"{what} {scalar_name(self.dtype)}")


def _check_zero_point(zero_point, dtype, fn):
    lo, hi = RANGE[dtype]
    if zero_point > hi:
        raise RuntimeError(f"{fn} zero_point {zero_point} is above upper bound.")
    if zero_point < lo:
        raise RuntimeError(f"{fn} zero_point {zero_point} is below lower bound.")


def _quantize_meta(self, scale, zero_point, dtype):
    """torch's checks of quantize_per_tensor, in its order: the input's dtype, the quantized dtype, the zero point."""
    _check_float(self)
    _check_qdtype(dtype)
    zp = zero_point if isinstance(zero_point, int) else int(zero_point.reshape(-1)[0].item())
    _check_zero_point(zp, dtype, 'quantize_tensor_per_tensor_affine')
    return tuple(self.shape), dtype


def _quantize_tensors_meta(tensors, scales, zero_points, dtype):
    return [_quantize_meta(t, s, z, dtype) for t, s, z in zip(tensors, scales, zero_points)]


def _quantize_dynamic_meta(self, dtype, reduce_range):
    _check_float(self)
    if dtype not in (qint8, quint8):
        raise RuntimeError(f"dtype {scalar_name(dtype)}not supported")
    return tuple(self.shape), dtype


def _quantize_channel_meta(self, scales, zero_points, axis, dtype):
    """torch's checks of quantize_per_channel: the parameters' shapes and types (make_per_channel_affine_quantizer),
    the quantized dtype, the input, the zero points' range, the axis, the lengths."""
    if scales.dim() != 1:
        raise RuntimeError("scale tensor must have dimension 1")
    if zero_points.dim() != 1:
        raise RuntimeError("zero_points tensor must have dimension 1")
    if scales.numel() != zero_points.numel():
        raise RuntimeError("number of elements in scales and zero_points must match")
    if not scales.dtype.is_floating_point:
        raise RuntimeError("scale tensor must be floating point")
    _check_qdtype(dtype)
    floats = zero_points.dtype.is_floating_point
    _check_float(self, "Quantize only works on Float Tensor, got" if floats else
                 "quantize_tensor_per_channel_affine expects a Float Tensor, got")
    if not floats:
        for z in zero_points.tolist():
            _check_zero_point(z, dtype, 'quantize_tensor_per_channel_affine')
    if not 0 <= axis < self.dim():
        raise RuntimeError(f"Channel axis out of range in per channel {'float qparams' if floats else 'affine'} "
                           f"quantization. Got: {axis}Expected: [0, {self.dim()})")
    channels = self.shape[axis]
    if scales.numel() != channels:
        raise RuntimeError(f"length of scales must equal to channel, expected {channels} got, {scales.numel()}")
    if zero_points.numel() != channels:
        raise RuntimeError(f"length of zero_points must equal to channel expected {channels} got, "
                           f"{zero_points.numel()}")
    return tuple(self.shape), dtype


_Q = dict(differentiable=False, tags=('quantized',))
declare('quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor', method=False,
        meta=_quantize_meta, **_Q)
declare('quantize_per_tensor.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype) -> Tensor',
        method=False, meta=_quantize_meta, **_Q)
declare('quantize_per_tensor.tensors(Tensor[] tensors, Tensor scales, Tensor zero_points, ScalarType dtype) -> Tensor[]',
        method=False, meta=_quantize_tensors_meta, **_Q)
overloads('quantize_per_tensor', 'quantize_per_tensor', 'quantize_per_tensor.tensor_qparams',
          'quantize_per_tensor.tensors', method=False)
declare('quantize_per_tensor_dynamic(Tensor self, ScalarType dtype, bool reduce_range) -> Tensor', method=False,
        meta=_quantize_dynamic_meta, **_Q)
declare('quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor',
        method=False, meta=_quantize_channel_meta, **_Q)
declare('_make_per_tensor_quantized_tensor(Tensor self, float scale, int zero_point) -> Tensor', method=False, **_Q)
declare('_make_per_channel_quantized_tensor(Tensor self, Tensor scale, Tensor zero_point, int axis) -> Tensor',
        method=False, **_Q)
declare('dequantize.self(Tensor self) -> Tensor', **_Q)
declare('dequantize.tensors(Tensor[] tensors) -> Tensor[]', method=False, **_Q)
overloads('dequantize', 'dequantize.self', 'dequantize.tensors')
declare('int_repr(Tensor self) -> Tensor', **_Q)
declare('q_per_channel_scales(Tensor self) -> Tensor', **_Q)
declare('q_per_channel_zero_points(Tensor self) -> Tensor', **_Q)

# the quantized:: namespace (torch.ops.quantized): arithmetic with an output scale and zero point
_QNS = dict(ns='quantized', method=False, function=False, **_Q)
for _n in ('add', 'add_relu', 'mul', 'mul_relu'):
    declare(f'{_n}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc', name=f'quantized_{_n}', **_QNS)
declare('cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor', name='quantized_cat', **_QNS)
declare('add_scalar(Tensor qa, Scalar b) -> Tensor qc', name='quantized_add_scalar', **_QNS)
declare('mul_scalar(Tensor qa, Scalar b) -> Tensor qc', name='quantized_mul_scalar', **_QNS)


def _qmatmul_meta(qa, qb, scale, zero_point):
    """torch's checks of quantized::matmul, in its order."""
    if qa.dtype not in (qint8, quint8):
        raise RuntimeError("MatMul operands should use QInt8 or QUInt8 data types.")
    if qa.dtype is not qb.dtype:
        raise RuntimeError("MatMul operands should have same data type.")
    if qa._a.axis is not None or qb._a.axis is not None:
        raise RuntimeError("Only per-tensor quantization is supported in Matmul.")
    return tuple(qa.shape[:-1]) + tuple(qb.shape[-1:]), qa.dtype


declare('matmul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc', name='quantized_matmul',
        meta=_qmatmul_meta, **_QNS)
declare('hardswish(Tensor input, float output_scale, int output_zero_point) -> Tensor', name='quantized_hardswish',
        **_QNS)
declare('relu6(Tensor qx, bool inplace=False) -> Tensor', name='quantized_relu6', **_QNS)
declare('max_pool2d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) -> '
        'Tensor', name='quantized_max_pool2d', **_QNS)
# torch passes a packed-weight object (LinearPackedParamsBase); ember passes the quantized weight and float bias
# themselves: these are ember's own spellings (the leading underscore), called by ember.nn.quantized's modules
for _n in ('_linear_unpacked', '_linear_relu_unpacked'):
    declare(f'{_n}(Tensor X, Tensor W, Tensor? B, float Y_scale_i, int Y_zero_point_i) -> Tensor Y',
            name=f'quantized{_n}', **_QNS)
for _n in ('_conv2d_unpacked', '_conv2d_relu_unpacked'):
    declare(f'{_n}(Tensor qx, Tensor W, Tensor? B, int[] stride, int[] padding, int[] dilation, int groups, '
            'float output_scale, int output_zero_point) -> Tensor', name=f'quantized{_n}', **_QNS)
declare('_linear_dynamic_unpacked(Tensor X, Tensor W, Tensor? B, bool reduce_range=True) -> Tensor Y',
        name='quantized_linear_dynamic_unpacked', **_QNS)


# --- Tensor methods that read the quantizer (metadata; data goes through operators) -------------------------

def _qarray(t, what):
    a = t._a
    if a.__class__ is not QArray:
        raise RuntimeError(f"{what}: expected a quantized tensor, got a {t._dtype} tensor")
    return a


def _per_tensor(t, what):
    a = _qarray(t, what)
    if a.axis is not None:
        raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    return a


def _q_per_channel_axis(self):
    a = _qarray(self, 'q_per_channel_axis')
    if a.axis is None:
        raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                           "kPerChannelAffineFloatQParams to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    return a.axis


METHODS = {
    'is_quantized': property(lambda self: self._a.__class__ is QArray),
    'q_scale': lambda self: float(_per_tensor(self, 'q_scale').scale),
    'q_zero_point': lambda self: int(_per_tensor(self, 'q_zero_point').zero_point),
    'q_per_channel_axis': _q_per_channel_axis,
    'qscheme': lambda self: _qarray(self, 'qscheme').scheme,
}


def install_methods(T):
    for k, v in METHODS.items():
        setattr(T, k, v)


# --- fake quantization: float operators with straight-through gradients (kernels: _backends/cpu/fake_quantize) ---

def _fq_check(quant_min, quant_max, zero_point=None):
    if quant_min > quant_max:
        # torch's message, with the spaces its C++ line continuation leaves
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")
    if zero_point is not None and not quant_min <= zero_point <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def _fq_meta(self, scale, zero_point, *rest):
    quant_min, quant_max = rest[-2:]
    _fq_check(quant_min, quant_max, zero_point if isinstance(zero_point, int) else None)
    return [(tuple(self.shape), self.dtype), (tuple(self.shape), bool_)]


_SCALAR_NAMES = {'float32': 'Float', 'float64': 'Double', 'bfloat16': 'BFloat16', 'float16': 'Half', 'int32': 'Int',
                 'int64': 'Long'}


def _fq_channel_meta(self, scale, zero_point, axis, quant_min, quant_max):
    _fq_check(quant_min, quant_max)
    if scale.dtype.name not in ('float32', 'bfloat16'):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_SCALAR_NAMES.get(scale.dtype.name)}")
    if zero_point.dtype.name not in ('int32', 'float32', 'float16', 'bfloat16'):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {_SCALAR_NAMES.get(zero_point.dtype.name)}")
    if scale.dim() != 1 or zero_point.dim() != 1 or scale.shape[0] != self.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    return [(tuple(self.shape), self.dtype), (tuple(self.shape), bool_)]


def _masked(grad, result1):
    return grad * result1


_FQ = dict(forward='not_implemented', output_differentiability=[True, False], method=False,
           derivatives={'self': _masked})
declare('fake_quantize_per_tensor_affine_cachemask(Tensor self, float scale, int zero_point, int quant_min, '
        'int quant_max) -> (Tensor output, Tensor mask)', meta=_fq_meta, **_FQ)
declare('_fake_quantize_per_tensor_affine_cachemask_tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, '
        'Tensor fake_quant_enabled, int quant_min, int quant_max) -> (Tensor output, Tensor mask)',
        meta=lambda self, scale, zero_point, enabled, qmin, qmax: _fq_meta(self, scale, None, qmin, qmax), **_FQ)
declare('fake_quantize_per_channel_affine_cachemask(Tensor self, Tensor scale, Tensor zero_point, int axis, '
        'int quant_min, int quant_max) -> (Tensor output, Tensor mask)', meta=_fq_channel_meta, **_FQ)


def _fake_quantize_per_tensor(self, scale, zero_point, quant_min, quant_max):
    """Quantize and dequantize in float (QAT): ``(clamp(round(x / scale) + zp) - zp) * scale``.

    >>> import ember
    >>> ember.fake_quantize_per_tensor_affine(ember.tensor([0.04, 0.26, 9.0]), 0.1, 0, 0, 10)
    tensor([0.0000, 0.3000, 1.0000])
    """
    return aten.fake_quantize_per_tensor_affine_cachemask.default(self, scale, zero_point, quant_min, quant_max)[0]


def _not_differentiable(op, **inputs):
    for name, t in inputs.items():
        if t.requires_grad:
            raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{name}'. This "
                               "input cannot have requires_grad True.")


def _fake_quantize_per_tensor_tq(self, scale, zero_point, quant_min, quant_max):
    _not_differentiable('_fake_quantize_per_tensor_affine_cachemask_tensor_qparams', scale=scale,
                        zero_point=zero_point)
    on = aten.ones.default([1], dtype=int64, device=self.device)
    return aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default(
        self, scale, zero_point, on, quant_min, quant_max)[0]


def _fake_quantize_per_channel(self, scale, zero_point, axis, quant_min, quant_max):
    _not_differentiable('fake_quantize_per_channel_affine_cachemask', scale=scale, zero_point=zero_point)
    return aten.fake_quantize_per_channel_affine_cachemask.default(self, scale, zero_point, axis, quant_min,
                                                                   quant_max)[0]


declare('fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max) '
        '-> Tensor', composite=_fake_quantize_per_tensor, method=False)
declare('fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, '
        'int quant_min, int quant_max) -> Tensor', composite=_fake_quantize_per_tensor_tq, method=False)
overloads('fake_quantize_per_tensor_affine', 'fake_quantize_per_tensor_affine',
          'fake_quantize_per_tensor_affine.tensor_qparams', method=False)
declare('fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min, '
        'int quant_max) -> Tensor', composite=_fake_quantize_per_channel, method=False)


def _learnable_grads(grad, self, scale, zero_point, quant_min, quant_max, grad_factor):
    return _learnable(grad, self, scale, zero_point, quant_min, quant_max, grad_factor, None)


def _learnable(grad, self, scale, zero_point, quant_min, quant_max, grad_factor, axis):
    """torch's gradients of the learnable fake quantizers (its _fake_quantize_grad_learnable kernels): the input's
    passes inside the range; the scale's is ``(x_fq - x) / scale`` inside and ``q_min - zp`` / ``q_max - zp``
    below / above; the zero point's is ``-scale`` outside. Scale's and zero point's are summed per channel."""
    shape = [1] * self.dim()
    if axis is None:
        s, zp = scale.reshape(()), zero_point.reshape(())
        zp = (zp.float() + 0.5).clamp(quant_min, quant_max).trunc()
    else:
        shape[axis] = -1
        s = scale.reshape(shape)
        zp = zero_point.float().round().clamp(quant_min, quant_max).reshape(shape)
    inv = 1.0 / s.float()
    # torch's kernel rounds fma(x, 1/scale, zp): one rounding of the exact value (float64 holds it) to float32
    xq = (self.double() * inv.double() + zp.double()).to(self.dtype).round()
    inside = (xq >= quant_min) & (xq <= quant_max)
    xfq = (xq.clamp(quant_min, quant_max) - zp) * s
    outer = aten.where.self(xq < quant_min, quant_min - zp, quant_max - zp)
    dscale = aten.where.self(inside, (xfq - self) * inv, outer) * grad * grad_factor
    dzp = aten.where.self(inside, aten.zeros_like.default(grad), -s * grad * grad_factor)
    dims = [d for d in range(self.dim()) if d != axis]
    red = (lambda t: t.sum()) if axis is None else (lambda t: t.sum(dims) if dims else t)
    return grad * inside, red(dscale).reshape(scale.shape), red(dzp).reshape(zero_point.shape)


def _learnable_channel_grads(grad, self, scale, zero_point, axis, quant_min, quant_max, grad_factor):
    return _learnable(grad, self, scale, zero_point, quant_min, quant_max, grad_factor, axis)


declare('_fake_quantize_learnable_per_tensor_affine(Tensor self, Tensor scale, Tensor zero_point, int quant_min, '
        'int quant_max, float grad_factor=1.) -> Tensor', forward='not_implemented', method=False,
        meta=lambda self, *a: (_fq_check(a[-3], a[-2]), (tuple(self.shape), self.dtype))[1],
        derivatives={('self', 'scale', 'zero_point'): _learnable_grads})
declare('_fake_quantize_learnable_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, '
        'int quant_min, int quant_max, float grad_factor=1.) -> Tensor', forward='not_implemented', method=False,
        meta=lambda self, *a: (_fq_check(a[-3], a[-2]), (tuple(self.shape), self.dtype))[1],
        derivatives={('self', 'scale', 'zero_point'): _learnable_channel_grads})
