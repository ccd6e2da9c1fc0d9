"""Matrix products and linear algebra: matmul and its fixed-rank forms (mm, bmm, mv, dot), the fused
``add*`` products, linear/bilinear, einsum and friends, and the ``ember.linalg`` decompositions.

Meta functions reproduce torch's checks in torch's order (shapes, then dtypes) and its wording, which
names the operands' shapes: "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)". matmul follows
torch's dimension cases (at::native::_matmul_impl): dot, mv, mm, "folding" a batched left operand into
a matrix when the right one is 1-D or 2-D, else a broadcast bmm; the errors raised are the ones of the
operator torch calls in each case.

Derivatives are written in ember operators, so they differentiate again; batch broadcasting is
undone by the engine (it sums a gradient to its input's shape), so formulas just use matmul.
"""
from .._core import dtype as D
from .pointwise import broadcast_shapes
from .registry import declare, DECLS

# c10's type names, as torch's dtype-mismatch messages spell them ("float != double")
_CNAME = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16',
          'int64': 'long int', 'int32': 'int', 'int16': 'short int', 'int8': 'signed char',
          'uint8': 'unsigned char', 'bool': 'bool', 'complex64': 'c10::complex<float>',
          'complex128': 'c10::complex<double>'}


def _tname(d):
    from .adapters import _tname as t
    return t(d)


def _x(shape):
    return 'x'.join(str(s) for s in shape)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _no_bool(d, kernel):
    if d is D.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _mm_shapes(a, b):
    if a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(a)} and {_x(b)})")


def _mm_dtypes(d1, d2):
    if d1 is not d2:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CNAME[d1.name]} != {_CNAME[d2.name]}")
    _no_bool(d1, 'addmm_impl_cpu_')


def _mv_shapes(m, v):
    if m[1] != v[0]:
        raise RuntimeError(f"size mismatch, got input ({m[0]}), mat ({_x(m)}), vec ({v[0]})")


def _mv_dtypes(dm, dv):
    if dm is not dv:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_tname(dv)}, {_tname(dm)}, "
                           f"and {_tname(dv)}")
    _no_bool(dm, 'addmv_impl_cpu')


def _dot_checks(a, b, da, db, name='dot'):
    if len(a) != 1 or len(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a)}D and {len(b)}D tensors")
    if da is not db:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found {_tname(da)} and "
                           f"{_tname(db)}")
    if a[0] != b[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same "
                           f"number of elements, but got {a[0]} and {b[0]} elements respectively")
    _no_bool(da, name)


def _bmm_checks(a, b, d1, d2):
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] but "
                           f"got: [{b[0]}, {b[1]}].")
    if d1 is not d2:
        raise RuntimeError(f"expected scalar type {_tname(d1)} but found {_tname(d2)}")
    _no_bool(d1, 'bmm')


# --- matmul ------------------------------------------------------------------------

def matmul_shape(a, b, d1, d2):
    """Result shape of ``matmul`` for operand shapes ``a``, ``b`` (dtypes ``d1``, ``d2``), with torch's errors."""
    na, nb = len(a), len(b)
    if na == 2 and nb == 2:          # the hot path first
        _mm_shapes(a, b)
        _mm_dtypes(d1, d2)
        return (a[0], b[1])
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        _dot_checks(a, b, d1, d2)
        return ()
    if na == 2 and nb == 1:
        _mv_shapes(a, b)
        _mv_dtypes(d1, d2)
        return (a[0],)
    if na == 1 and nb == 2:
        _mm_shapes((1, a[0]), b)
        _mm_dtypes(d1, d2)
        return (b[1],)
    if na >= 3 and nb <= 2:          # torch folds the batch into the rows of one matrix
        m = (_prod(a[:-1]), a[-1])
        if nb == 1:
            _mv_shapes(m, b)
            _mv_dtypes(d1, d2)
            return a[:-1]
        _mm_shapes(m, b)
        _mm_dtypes(d1, d2)
        return a[:-1] + (b[1],)
    # broadcast batched product (bmm over the expanded batch)
    n = a[-2] if na >= 2 else 1
    p = b[-1] if nb >= 2 else 1
    batch = broadcast_shapes(a[:-2], b[:-2])
    B = _prod(batch)
    _bmm_checks((B, n, a[-1]), (B, b[-2] if nb >= 2 else b[0], p), d1, d2)
    return batch + ((n,) if na >= 2 else ()) + ((p,) if nb >= 2 else ())


def _matmul_meta(self, other):
    return matmul_shape(self._a.shape, other._a.shape, self._dtype, other._dtype), self._dtype


def _matmul_grad_self(grad, self, other):
    if other.dim() == 1:
        if self.dim() == 1:
            return grad * other
        return grad.unsqueeze(-1) * other
    if self.dim() == 1:
        return grad.unsqueeze(-2).matmul(other.mT).squeeze(-2)
    return grad.matmul(other.mT)


def _matmul_grad_other(grad, self, other):
    if self.dim() == 1:
        if other.dim() == 1:
            return grad * self
        return self.unsqueeze(-1) * grad.unsqueeze(-2)
    if other.dim() == 1:
        return grad.unsqueeze(-2).matmul(self).squeeze(-2)
    return self.mT.matmul(grad)


declare('matmul(Tensor self, Tensor other) -> Tensor', meta=_matmul_meta, out=True,
        derivatives={'self': _matmul_grad_self, 'other': _matmul_grad_other})


# --- fixed-rank products -------------------------------------------------------------

def _mm_meta(self, mat2):
    a, b = self._a.shape, mat2._a.shape
    if len(a) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b) != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_shapes(a, b)
    _mm_dtypes(self._dtype, mat2._dtype)
    return (a[0], b[1]), self._dtype


def _bmm_meta(self, mat2):
    a, b = self._a.shape, mat2._a.shape
    if len(a) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _bmm_checks(a, b, self._dtype, mat2._dtype)
    return (a[0], a[1], b[2]), self._dtype


def _mv_meta(self, vec):
    a, b = self._a.shape, vec._a.shape
    if len(a) != 2 or len(b) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a)}, {len(b)}")
    _mv_shapes(a, b)
    _mv_dtypes(self._dtype, vec._dtype)
    return (a[0],), self._dtype


def _dot_meta(self, tensor):
    _dot_checks(self._a.shape, tensor._a.shape, self._dtype, tensor._dtype)
    return (), self._dtype


def _vdot_meta(self, other):
    _dot_checks(self._a.shape, other._a.shape, self._dtype, other._dtype, 'vdot')
    return (), self._dtype


declare('mm(Tensor self, Tensor mat2) -> Tensor', meta=_mm_meta, out=True,
        derivatives={'self': lambda grad, mat2: grad.mm(mat2.t()), 'mat2': lambda grad, self: self.t().mm(grad)})
declare('bmm(Tensor self, Tensor mat2) -> Tensor', meta=_bmm_meta, out=True,
        derivatives={'self': lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                     'mat2': lambda grad, self: self.transpose(1, 2).bmm(grad)})
declare('mv(Tensor self, Tensor vec) -> Tensor', meta=_mv_meta, out=True,
        derivatives={'self': lambda grad, vec: grad.unsqueeze(-1) * vec, 'vec': lambda grad, self: self.t().mv(grad)})
declare('dot(Tensor self, Tensor tensor) -> Tensor', meta=_dot_meta, out=True,
        derivatives={'self': lambda grad, tensor: grad * tensor, 'tensor': lambda grad, self: grad * self})
declare('vdot(Tensor self, Tensor other) -> Tensor', meta=_vdot_meta, out=True,
        derivatives={'self': lambda grad, other: grad * other, 'other': lambda grad, self: grad * self})


# --- linear ----------------------------------------------------------------------------
# A primitive with a fused kernel (x @ w.T, then + b in place on the fresh result): on the MLP
# benchmark's (128,784)x(784,512) float32 layer the fused op takes 0.53 ms against 0.71 ms for the
# composite matmul(x, w.t()) + b (which allocates a second output for the add), and its backward
# computes the weight gradient with one 2-D matmul instead of a batched one summed by the engine.

def _linear_meta(input, weight, bias=None):
    a, w = input._a.shape, weight._a.shape
    if len(a) == 0 or len(w) == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(a)}D and {len(w)}D")
    if len(w) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(w)}D")
    if bias is not None and len(a) == 2 and len(w) == 1:      # torch's addmm fast path
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    wt = w[::-1]
    shape = matmul_shape(a, wt, input._dtype, weight._dtype)
    if bias is not None:
        b = bias._a.shape
        if bias._dtype is not input._dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_tname(bias._dtype)} and "
                               f"{_tname(input._dtype)}")
        if len(b) > len(shape) or any(x != 1 and x != y for x, y in zip(b[::-1], shape[::-1])):
            raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 1}) must match the existing "
                               f"size ({b[-1]}) at non-singleton dimension {len(shape) - 1}.  Target sizes: "
                               f"{list(shape)}.  Tensor sizes: {list(b)}")
    return shape, input._dtype


def _linear_grad_input(grad, weight):
    if weight.dim() == 1:
        return grad.unsqueeze(-1) * weight
    return grad.matmul(weight)


def _linear_grad_weight(grad, input, weight):
    if weight.dim() == 1:
        return (grad.unsqueeze(-1) * input) if input.dim() > 1 else grad * input
    if input.dim() == 1:
        return grad.unsqueeze(-1) * input
    g = grad.reshape(-1, grad.shape[-1])
    return g.t().mm(input.reshape(-1, input.shape[-1]))


declare('linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor', meta=_linear_meta, nn=True,
        function=False, method=False,
        derivatives={'input': _linear_grad_input, 'weight': _linear_grad_weight, 'bias': lambda grad: grad})
