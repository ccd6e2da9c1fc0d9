"""Complex views: ``real``, ``imag``, ``view_as_real`` and ``view_as_complex`` (torch's aten::real, aten::imag,
aten::view_as_real, aten::view_as_complex), declared as operators whose kernels make the view.

NOTE [complex views]: ``z.real``, ``z.imag``, ``view_as_real(z)`` and ``view_as_complex(x)`` share storage
with their input but reinterpret its dtype (complex64 <-> pairs of float32), which the operator table's views
(sizes, strides and offset in elements of one dtype) cannot express; so their kernels (CompositeImplicitAutograd, on every backend including Meta) make them here, and when the
input requires grad they get a node of their own (RealBackward0, ...; NOTE [complex gradients] in
autograd/kernels.py has the derivatives). Writing into one in place while autograd records rebases the base's
history as for any view (autograd/views.py, neuraloperator's ``out_fft[..., 0].imag.zero_()``): the view's
region in its base is counted in real units, a complex gradient read as its ``view_as_real`` pairs.
"""

from .._core import dtype as D
from .._core.dtype import scalar_name
from .._core.dispatch_key import AUTOGRAD_BIT
from .._core.storage import MetaArray
from .._core.tensor_impl import make_tensor, note_view, _xp_view
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node, gradient_edge
from .._dispatch.ops_namespace import aten
from .registry import declare



class _ComplexViewNode(Node):
    _fresh_outputs = True     # NOTE [gradient ownership]
    backward = None           # grad of the view -> grad of the input, in operators (so it differentiates again)

    def apply(self, grads):
        g = grads[0]
        return (None if g is None else type(self).backward(g),)


def _node(name, backward):
    return type(name, (_ComplexViewNode,), {'backward': staticmethod(backward)})


_REAL_NODE = _node('RealBackward0', lambda g: g * (1 + 0j))
_IMAG_NODE = _node('ImagBackward0', lambda g: g * 1j)
_AS_REAL_NODE = _node('ViewAsRealBackward0', lambda g: aten.view_as_complex.default(g.contiguous()))
_AS_COMPLEX_NODE = _node('ViewAsComplexBackward0', lambda g: aten.view_as_real.default(g))


def _dtype_view(self, va, dtype, node_cls, offset):
    t = make_tensor(va, dtype, self._device)
    t._vc = self._vc
    t._storage = self._storage
    t._offset = offset      # in elements of the view's dtype
    t._base = self._base if self._base is not None else self
    if self._keys & AUTOGRAD_BIT and is_grad_enabled():
        node = node_cls()
        node.next_functions = (gradient_edge(self),)
        t._grad_fn, t._output_nr = node, 0
        t._keys |= AUTOGRAD_BIT
        t._hist = t._base._hist
    elif not t._base._keys & AUTOGRAD_BIT:
        note_view(t._base, t)
    return t


def _part_view(self, part):
    """A real view of the real or imaginary part of a complex tensor, sharing its storage."""
    a = self._a
    rd = self._dtype.to_real()
    if isinstance(a, MetaArray):
        va = MetaArray(a.shape, rd.np, tuple(a.strides), a.offset * 2 + part)
    else:
        self._storage_or_make()
        va = a.real if part == 0 else a.imag     # byte strides from the tensor's strides (an empty array's are 0)
        strided = self._device._iface.xp.lib.stride_tricks.as_strided     # NumPy's, or the device's (CuPy)
        va = strided(va, a.shape, tuple(st * a.itemsize for st in self.stride()))
    return _dtype_view(self, va, rd, _REAL_NODE if part == 0 else _IMAG_NODE, self.storage_offset() * 2 + part)


def _real(input):
    """The real part: a view for complex tensors, the tensor itself otherwise."""
    return _part_view(input, 0) if input._dtype.is_complex else input


def _imag(input):
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part_view(input, 1)


def _view_as_real(input):
    """A real view of a complex tensor with a last dimension of size 2 (real, imaginary)."""
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    a = input._a
    rd = input._dtype.to_real()
    if isinstance(a, MetaArray):
        va = MetaArray(tuple(a.shape) + (2,), rd.np, tuple(a.strides) + (rd.itemsize,), a.offset * 2)
    else:
        input._storage_or_make()
        va = input._device._iface.xp.lib.stride_tricks.as_strided(a.real, tuple(a.shape) + (2,),
                                             tuple(st * a.itemsize for st in input.stride()) + (rd.itemsize,))
    return _dtype_view(input, va, rd, _AS_REAL_NODE, input.storage_offset() * 2)


def _view_as_complex(input):
    """A complex view of a real tensor whose last dimension has size 2 and stride 1."""
    if input._dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError("view_as_complex is only supported for floating point tensors, but got a tensor of "
                           f"scalar type: {scalar_name(input._dtype)}")
    shape, st = tuple(input._a.shape), input.stride()
    if not shape or shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(x % 2 for x in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    cd = input._dtype.to_complex()
    a = input._a
    if isinstance(a, MetaArray):
        va = MetaArray(shape[:-1], cd.np, tuple(a.strides[:-1]), a.offset // 2)
    else:
        input._storage_or_make()
        va = a.view(cd.np)[..., 0] if a.size else input._device._iface.xp.empty(shape[:-1], cd.np)
    return _dtype_view(input, va, cd, _AS_COMPLEX_NODE, input.storage_offset() // 2)


declare('real(Tensor(a) self) -> Tensor(a)', composite=_real, method=False)
declare('imag(Tensor(a) self) -> Tensor(a)', composite=_imag, method=False)
declare('view_as_real(Tensor(a) self) -> Tensor(a)', composite=_view_as_real, method=False)
declare('view_as_complex(Tensor(a) self) -> Tensor(a)', composite=_view_as_complex, method=False)


# --- view(dtype): the same bytes read as another dtype -------------------------------------------------------

def _view_dtype(self, dtype):
    """torch's ``x.view(dtype)``: a view of the same memory read as ``dtype``. Between dtypes of different sizes the
    last dimension must be contiguous; it grows (or shrinks) by the ratio of the sizes, and so do the other strides
    and the storage offset. Not differentiable, as torch's (``output_differentiability: [False]``)."""
    old = self._dtype
    osz, nsz = old.itemsize, dtype.itemsize
    shape, strides, off = list(self._a.shape), list(self.stride()), self.storage_offset()
    if osz != nsz:
        what = f"to view {scalar_name(old)} as {scalar_name(dtype)} (different element sizes)"
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if osz > nsz:
            r = osz // nsz
            shape[-1], strides, off = shape[-1] * r, [st * r for st in strides[:-1]] + [1], off * r
        else:
            r = nsz // osz
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
            if off % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
            for i, st in enumerate(strides[:-1]):
                if st % r:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {st}")
            shape[-1], strides, off = shape[-1] // r, [st // r for st in strides[:-1]] + [1], off // r
    a = self._a
    if isinstance(a, MetaArray):
        va = MetaArray(tuple(shape), dtype.np, tuple(st * nsz for st in strides), off)
    else:
        va = _xp_view(self._storage_or_make().data, dtype.np, tuple(shape), strides, off)
    t = make_tensor(va, dtype, self._device)
    t._vc = self._vc
    t._storage = self._storage
    t._offset = off
    t._base = self._base if self._base is not None else self
    return t


declare('view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)', composite=_view_dtype, method=False,
        function=False, differentiable=False, name='_view_dtype')     # Tensor.view chooses it (_python_functions/shape.py)
