"""The array of a quantized tensor, and the quantization schemes.

NOTE [quantized tensors]: a quantized tensor (torch's QuantizedCPU) is an ordinary TensorImpl whose ``_a`` is a
`QArray` instead of a NumPy array, as a sparse tensor's is a COOArray (NOTE [sparse COO layout] in coo.py), and
whose key set holds ``QuantizedCPU`` instead of ``CPU``. A QArray holds

``int_repr``  the integer storage: int8 (qint8), uint8 (quint8) or int32 (qint32), any strides, and
``scheme``    its quantizer: per-tensor affine (``scale``: float, ``zero_point``: int) or per-channel affine
              (``scale``: float64 array, ``zero_point``: int64 array, one per index of dimension ``axis``), or
              per-channel with float zero points (per_channel_affine_float_qparams: both float32 arrays);
``qdtype``    the tensor's ember dtype (qint8, quint8, qint32), which its storage dtype alone cannot tell.

The real value of entry ``q`` is ``(q - zero_point) * scale``. Quantizing computes torch's rounding bit for
bit: ``nearbyint(fma(x, 1/scale, zero_point))`` in float32 for per-tensor 8-bit types (fbgemm's AVX2 loop), and
``nearbyint(x * (1/scale) + zero_point)`` with two float32 roundings for qint32 and per-channel (the scalar
loop), ``zero_point + nearbyint(x * (1/scale))`` to requantize kernel outputs, then clamped to the type's range (ember/_backends/quantized/kernels.py).

Why arrays inside, as for sparse: backends know arrays only (ARCHITECTURE rule 2), so the QuantizedCPU kernels
in ``ember/_backends/quantized`` take and return QArrays. ``shape``, ``ndim``, ``size``, ``strides``,
``itemsize`` and ``dtype`` (the storage's) answer like an ndarray's, so shape-reading layers work unchanged.
Views of a quantized tensor are QArrays over a NumPy view of the same integer storage (ember/_ops/quantized.py
runs the dense view operator on the storage and keeps the quantizer), so they share memory as torch's do.
A quantized tensor's storage is its integers' (``untyped_storage()``, ``stride()``), so ember.save writes it as torch
does: ``torch._utils._rebuild_qtensor`` over a ``torch.QUInt8Storage`` with the quantizer as a tuple (serialization.py).
Quantized tensors have no autograd (torch's neither); the float fake-quantize operators are the differentiable
side of quantization (ember/_ops/quantized.py).
"""
import numpy as np

from . import naming
from .dtype import qint8, quint8, qint32

# the storage type and the representable range of each quantized dtype
STORAGE = {qint8: np.dtype(np.int8), quint8: np.dtype(np.uint8), qint32: np.dtype(np.int32)}
RANGE = {qint8: (-128, 127), quint8: (0, 255), qint32: (-2 ** 31, 2 ** 31 - 1)}


class qscheme:
    """A quantization scheme (``ember.per_tensor_affine``, ...), compared by identity as torch's are.

    >>> import ember
    >>> ember.per_tensor_affine
    ember.per_tensor_affine
    """
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'{naming.shown}.{self.name}'

    def __reduce__(self):
        return (_scheme_by_name, (self.name,))


per_tensor_affine = qscheme('per_tensor_affine')
per_channel_affine = qscheme('per_channel_affine')
per_tensor_symmetric = qscheme('per_tensor_symmetric')
per_channel_symmetric = qscheme('per_channel_symmetric')
per_channel_affine_float_qparams = qscheme('per_channel_affine_float_qparams')
_SCHEMES = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
                                per_channel_affine_float_qparams)}


def _scheme_by_name(name):
    return _SCHEMES[name]


class QArray:
    """Integer storage and its quantizer (NOTE [quantized tensors])."""
    __slots__ = ('int_repr', 'scheme', 'scale', 'zero_point', 'axis', 'qdtype')

    def __init__(self, int_repr, qdtype, scale, zero_point, axis=None, scheme=None):
        self.int_repr = int_repr
        self.qdtype = qdtype
        self.scale = scale
        self.zero_point = zero_point
        self.axis = axis
        self.scheme = scheme or (per_tensor_affine if axis is None else per_channel_affine)

    def with_storage(self, int_repr, axis=None, scale=None, zero_point=None):
        """The same quantizer over other storage (a view or a copy), with per-channel parameters changed."""
        per_channel = self.axis is not None
        return QArray(int_repr, self.qdtype, self.scale if scale is None else scale,
                      self.zero_point if zero_point is None else zero_point,
                      (self.axis if axis is None else axis) if per_channel else None, self.scheme)

    def zero_points(self):
        """The zero point in the storage's type, broadcasting against it (per channel: along the axis)."""
        if self.axis is None:
            return self.int_repr.dtype.type(self.zero_point)
        shape = [1] * self.int_repr.ndim
        shape[self.axis] = -1
        return np.asarray(self.zero_point).astype(self.int_repr.dtype).reshape(shape)

    def dequantize(self):
        """float32 values, as torch's dequantize computes them: ``(q - zero_point) * scale`` in float32."""
        q = self.int_repr.astype(np.float32)
        if self.axis is None:
            return (q - np.float32(self.zero_point)) * np.float32(self.scale)
        shape = [1] * q.ndim
        shape[self.axis] = -1
        zp = self.zero_point.astype(np.float32).reshape(shape)
        return (q - zp) * self.scale.astype(np.float32).reshape(shape)

    shape = property(lambda self: self.int_repr.shape)
    ndim = property(lambda self: self.int_repr.ndim)
    size = property(lambda self: self.int_repr.size)
    strides = property(lambda self: self.int_repr.strides)
    itemsize = property(lambda self: self.int_repr.itemsize)
    dtype = property(lambda self: self.int_repr.dtype)
    flags = property(lambda self: self.int_repr.flags)

    def copy(self):
        return self.with_storage(self.int_repr.copy())

    def __repr__(self):
        return f'QArray(shape={self.shape}, dtype={self.qdtype}, scheme={self.scheme.name})'
