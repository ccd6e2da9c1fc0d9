"""Products: matmul and its fixed-rank forms (mm, bmm, mv, dot), the fused ``add*`` products, linear and
bilinear, einsum and friends (tensordot, kron, outer, ...), diagonals and the cross product. The
``ember.linalg`` decompositions, solvers and norms are in linalg.py.

Meta functions reproduce torch's checks in torch's order (shapes, then dtypes) and its wording, which
names the operands' shapes: "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)". matmul follows
torch's dimension cases (at::native::_matmul_impl): dot, mv, mm, "folding" a batched left operand into
a matrix when the right one is 1-D or 2-D, else a broadcast bmm; the errors raised are the ones of the
operator torch calls in each case.

Derivatives are written in ember operators, so they differentiate again; batch broadcasting is
undone by the engine (it sums a gradient to its input's shape), so formulas just use matmul.
"""
from .._core import dtype as D
from .._core.dtype import scalar_name as _tname, cpp_name, SAME_DTYPE
from .pointwise import broadcast_shapes
from .._core.dispatch_key import DispatchKey, AUTOGRAD_BIT
from .._core.storage import contiguous_strides
from .registry import declare
from .views import view_strides
from .._dispatch.ops_namespace import aten
from .linear_graph import linear_node_name, linear_nodes



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
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_name(d1)} != {cpp_name(d2)}")
    _no_bool(d1, 'addmm_impl_cpu_')


def _mv_shapes(m, v, inp=None):
    n = m[0] if inp is None else inp
    if m[1] != v[0] or n not in (1, m[0]):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({_x(m)}), vec ({v[0]})")


def _mv_dtypes(dm, dv):
    if dm is not dv:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_tname(dv)}, {_tname(dm)}, "
                           f"and {_tname(dv)}")
    _no_bool(dm, 'addmv_impl_cpu')


def _dot_checks(a, b, da, db):
    # vdot's errors say dot too, as torch's
    if len(a) != 1 or len(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a)}D and {len(b)}D tensors")
    if da is not db:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_tname(da)} and "
                           f"{_tname(db)}")
    if a[0] != b[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same "
                           f"number of elements, but got {a[0]} and {b[0]} elements respectively")
    _no_bool(da, 'dot')


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


# each formula reads only the other operand and this operand's rank, so an operand is saved only when the
# other one needs a gradient (as torch's mm/bmm save)
def _matmul_grad_self(grad, self_ndim, other):
    if other.dim() == 1:
        if self_ndim == 1:
            return grad * other
        return grad.unsqueeze(-1) * other
    if self_ndim == 1:
        return grad.unsqueeze(-2).matmul(other.mT).squeeze(-2)
    return grad.matmul(other.mT)


def _matmul_grad_other(grad, self, other_ndim):
    if self.dim() == 1:
        if other_ndim == 1:
            return grad * self
        return self.unsqueeze(-1) * grad.unsqueeze(-2)
    if other_ndim == 1:
        return grad.unsqueeze(-2).matmul(self).squeeze(-2)
    return self.mT.matmul(grad)


# NOTE [matmul's graph]: torch's matmul is a composite (at::native::_matmul_impl): dot, mv or mm for operands of
# at most two dimensions; for a batched operand against a vector or matrix it folds the batch into the rows of
# one matrix (always when the other operand requires grad, else only when the batch is contiguous), and it
# otherwise expands both batches to their broadcast shape and runs bmm. The folding and the expanding end in
# reshapes, and a reshape that cannot view its tensor copies it: mm/bmm then save the copy, and a later write
# to the operand goes unnoticed. Where every reshape is a view, torch's pieces save the operands or views of them
# (one version counter), which is what the formulas' one node saves; there ember keeps its fused kernel and
# one node. Only the copying cases are built from torch's pieces (`_matmul_graph`).

def _matmul_graph(t1, t2):
    """torch's matmul graph where its pieces save a copy of an operand (NOTE [matmul's graph]); None elsewhere."""
    a1, a2 = t1._a, t2._a
    d1, d2 = a1.ndim, a2.ndim
    if d1 <= 2 and d2 <= 2 or not d1 or not d2 or (t1._keys | t2._keys) & _SPARSE_BIT:
        return None     # dot, mv, mm (0-d operands: the kernel's meta raises torch's error)
    s1, s2 = a1.shape, a2.shape
    b1, b2 = s1[:-2], s2[:-2]
    if b1 == b2:        # equal batches: expanding them is a no-op, only merging one can copy (strides in bytes)
        if d1 == 3 or (not t2._keys & AUTOGRAD_BIT or _merges(s1, a1.strides, d1 - 2)) and \
                (not t1._keys & AUTOGRAD_BIT or _merges(s2, a2.strides, d2 - 2)):
            return None     # bmm of the operands, or of views of them
    elif d1 <= 2 or d2 <= 2:
        transpose = d2 > d1     # torch folds other.mT against self (or self.t())
        if transpose:
            st = t2.stride()
            shape, strides = s2[:-2] + (s2[-1], s2[-2]), st[:-2] + (st[-1], st[-2])
        else:
            shape, strides = s1, t1.stride()
        if (t1 if transpose else t2).requires_grad or d1 != 2 and (0 in shape or _foldable(shape, strides)):
            if _merges(shape, strides, len(shape) - 1):
                return None
            _matmul_meta(t1, t2)
            return _matmul_folded(t1, t2, transpose)
    _matmul_meta(t1, t2)        # torch's errors, before any piece runs
    if d1 == 3 and d2 == 3 and b1[0] != b2[0]:      # a batch of 1 that requires grad is squeezed away
        if b1[0] == 1 and t1.requires_grad:
            return _matmul_graph(t1.squeeze(0), t2)
        if b2[0] == 1 and t2.requires_grad:
            return _matmul_graph(t1, t2.squeeze(0))
    batch = tuple(broadcast_shapes(b1, b2))
    n, m1 = (s1[-2] if d1 > 1 else 1), s1[-1]
    mat2 = s2[-2:] if d2 > 1 else s2
    if (not t2.requires_grad or _expanded_merges(t1, batch + (n, m1), len(batch))) and \
            (not t1.requires_grad or _expanded_merges(t2, batch + mat2, len(batch))):
        return None
    B = _prod(batch)
    e1 = t1.expand(batch + (n, m1)).reshape(B, n, m1)
    e2 = t2.expand(batch + mat2).reshape((B,) + mat2)
    uv = aten._unsafe_view.default
    if d2 == 1:
        return uv(e1.bmm(e2.unsqueeze(2)).squeeze(-1), batch + ((n,) if d1 > 1 else ()))
    return uv(e1.bmm(e2), batch + ((n,) if d1 > 1 else ()) + (mat2[1],))


_SPARSE_BIT = 1 << DispatchKey.SparseCPU


def _foldable(shape, strides):
    """torch's test for folding a batch without a copy (its leading dimensions nested, size-1 ones included)."""
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _merges(shape, strides, k):
    """Whether dimensions [0, k) merge into one without a copy (torch's computeStride, for a reshape that keeps
    the dimensions after them): each one not of size 1 nests the next such one; an empty tensor always views."""
    if k < 3:       # the common batches, without the loop
        return k < 2 or shape[0] == 1 or shape[1] == 1 or strides[0] == strides[1] * shape[1] or 0 in shape
    nest = None
    for i in range(k - 1, -1, -1):
        n = shape[i]
        if n != 1:
            if nest is not None and strides[i] != nest:
                return 0 in shape
            nest = strides[i] * n
    return True


def _expanded_merges(t, target, k):
    """Whether ``t.expand(target)`` with its first k dimensions merged, an operand of torch's broadcast bmm, is a
    view of t (an expanded dimension has stride 0)."""
    shape, strides = t._a.shape, t.stride()
    off = len(target) - len(shape)
    st = tuple(0 if i < off or shape[i - off] != target[i] else strides[i - off] for i in range(len(target)))
    return _merges(target, st, k)


def _matmul_folded(t1, t2, transpose):
    """The batched operand folded into one matrix (a copy here), times the other by mm or mv."""
    big = t2.mT if transpose else t1
    small = (t1.t() if t1.ndim == 2 else t1) if transpose else t2
    rows = tuple(big.shape[:-1])
    folded = big.reshape(_prod(rows), big.shape[-1])
    uv = aten._unsafe_view.default
    if small.ndim == 1:
        return uv(folded.mv(small), rows)
    out = uv(folded.mm(small), rows + (small.shape[1],))
    return out.mT.contiguous() if transpose else out


def _matmul_node_name(a, b):
    """torch's matmul node for these ranks (NOTE [node names by arguments] in autograd/kernels.py)."""
    a, b = a._a.shape, b._a.shape
    na, nb = len(a), len(b)
    if na <= 2 and nb <= 2:
        return {(1, 1): 'DotBackward0', (1, 2): 'SqueezeBackward4', (2, 1): 'MvBackward0'}.get((na, nb), 'MmBackward0')
    if na == 2 or (na >= 3 and nb >= 3 and _prod(a[:-2]) == 1 < _prod(b[:-2])):
        return 'CloneBackward0'         # torch folds through transposes and a contiguous copy there
    return 'UnsafeViewBackward0'



declare('matmul(Tensor self, Tensor other) -> Tensor', forward='multilinear', meta=_matmul_meta, out=True,
        grad_name=_matmul_node_name,
        derivatives={'self': _matmul_grad_self, 'other': _matmul_grad_other}, autograd_composite=_matmul_graph,
        primitive_because="one BLAS call per dimension case; under autograd, autograd_composite records torch's pieces where they save other tensors")


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
    _dot_checks(self._a.shape, other._a.shape, self._dtype, other._dtype)
    return (), self._dtype


def _int_mm_meta(self, mat2):
    # torch's int_mm_out_cpu allocates the result from self.size(0) and mat2.size(1) before any check
    if self._a.ndim < 1 or mat2._a.ndim < 2:
        t, dim = (self, 0) if self._a.ndim < 1 else (mat2, 1)
        n = max(t._a.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    for name, t in (('self', self), ('mat2', mat2)):
        if t._a.ndim != 2:
            raise RuntimeError(f"int_mm_out_cpu: Expected {name} to be of dimension 2 but got {t._a.ndim}")
    (m, k), (k2, n) = self._a.shape, mat2._a.shape
    if k != k2:
        raise RuntimeError(f"int_mm_out_cpu: self.size(1) needs to match mat2.size(0) but got {k} and {k2}")
    if self._dtype not in (D.int8, D.uint8):
        raise RuntimeError(f"int_mm_out_cpu: Expected self dtype to be int8 or uint8 but got {cpp_name(self._dtype)}")
    if mat2._dtype is not D.int8:
        raise RuntimeError(f"int_mm_out_cpu: Expected mat2 dtype to be of type int8 but got {cpp_name(mat2._dtype)}")
    return (m, n), D.int32


# torch._int_mm: the 8-bit integer matrix product with 32-bit results (torchao's int8 dynamic quantization)
declare('_int_mm(Tensor self, Tensor mat2) -> Tensor', meta=_int_mm_meta, out=True, differentiable=False,
        method=False)
_GROUPED_DTYPES = {'float32': 'Float32', 'bfloat16': 'BFloat16', 'float16': 'Float16'}


def _grouped_strides_check(mat):
    # torch's check_valid_strides_and_return_transposed: one of the two last dimensions is contiguous and the
    # other's stride is a multiple of 16 bytes
    st, sz, align = mat.stride(), tuple(mat.shape), 16 // mat.dtype.itemsize
    if st[-2] == 1 and st[-1] >= max(1, sz[-2]):
        lead = st[-1]
    elif st[-1] == 1 and st[-2] >= max(1, sz[-1]):
        lead = st[-2]
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(st)} for strides and {list(sz)} for sizes")
    if lead % align:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _grouped_mm_checks(a, b, offs, bias, out_dtype):
    for name, m in (('mat_a', a), ('mat_b', b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    for name, m in (('mat_a', a), ('mat_b', b)):
        if m.dtype.name not in _GROUPED_DTYPES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got {_tname(m.dtype)}")
    if out_dtype is not None and out_dtype != a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if b.dtype != a.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_name(b.dtype)}, but got {cpp_name(a.dtype)} "
                           f"instead")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if (offs is not None) != (a.dim() == 2 or b.dim() == 2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dtype != D.int32:
            raise RuntimeError("Offsets have to be int32")
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
    _grouped_strides_check(a)
    _grouped_strides_check(b)
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if a.dim() == 3 and b.dim() == 3 and a.shape[0] != b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    groups = a.shape[0] if a.dim() == 3 else b.shape[0] if b.dim() == 3 else None
    if offs is not None and groups is not None and offs.shape[0] != groups:
        raise RuntimeError("matrix batch sizes have to match")


def _grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None):
    """torch._grouped_mm: one matrix product per group. 3d x 3d: a batched product; 2d x 3d: rows of ``self``
    between consecutive ``offs`` times that group's matrix; 3d x 2d: that group's matrix times the columns of
    ``mat2`` between consecutive ``offs``; 2d x 2d: the product of each slice of the shared dimension (one
    (M, N) result per group). Rows or columns past the last offset are zero."""
    _grouped_mm_checks(self, mat2, offs, bias, out_dtype)
    if offs is None:
        return aten.bmm.default(self, mat2)
    ends = [int(e) for e in offs.tolist()]
    bounds = list(zip([0] + ends[:-1], ends))
    if self.dim() == 2 and mat2.dim() == 3:
        parts = [aten.mm.default(self[s:e], mat2[g]) for g, (s, e) in enumerate(bounds)]
        rest = self.shape[0] - ends[-1] if ends else self.shape[0]
        return aten.cat.default(parts + [self.new_zeros((rest, mat2.shape[-1]))], 0)
    if self.dim() == 3:
        parts = [aten.mm.default(self[g], mat2[:, s:e]) for g, (s, e) in enumerate(bounds)]
        rest = mat2.shape[1] - ends[-1] if ends else mat2.shape[1]
        return aten.cat.default(parts + [self.new_zeros((self.shape[1], rest))], 1)
    return aten.stack.default([aten.mm.default(self[:, s:e], mat2[s:e]) for s, e in bounds], 0)


# torch._grouped_mm (mixture-of-experts layers: torchao, torchtitan): composite of mm per group
declare('_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None) '
        '-> Tensor', composite=_grouped_mm, method=False)
declare('mm(Tensor self, Tensor mat2) -> Tensor', forward='multilinear', meta=_mm_meta, out=True,
        derivatives={'self': lambda grad, mat2: grad.mm(mat2.t()), 'mat2': lambda grad, self: self.t().mm(grad)})
declare('bmm(Tensor self, Tensor mat2) -> Tensor', forward='multilinear', meta=_bmm_meta, out=True,
        derivatives={'self': lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                     'mat2': lambda grad, self: self.transpose(1, 2).bmm(grad)})
declare('mv(Tensor self, Tensor vec) -> Tensor', forward='multilinear', meta=_mv_meta, out=True,
        derivatives={'self': lambda grad, vec: grad.unsqueeze(-1) * vec, 'vec': lambda grad, self: self.t().mv(grad)})
declare('dot(Tensor self, Tensor tensor) -> Tensor', forward='multilinear', meta=_dot_meta, out=True,
        derivatives={'self': lambda grad, tensor: grad * tensor, 'tensor': lambda grad, self: grad * self})
declare('vdot(Tensor self, Tensor other) -> Tensor', forward='multilinear', meta=_vdot_meta, out=True,
        derivatives={'self': lambda grad, other: grad * other, 'other': lambda grad, self: grad * self})


# --- linear ----------------------------------------------------------------------------
# A primitive with a fused kernel (x @ w.T, then + b in place on the fresh result) and its own formula.
# Measured on the MLP benchmark's layer, x (128, 784) float32, w (512, 784), b (512,), best of 7, CPU
# time with one BLAS thread: forward 1.26 ms fused vs 1.35-1.6 ms for the composite matmul(x, w.t()) + b
# (a second output array for the add); forward + backward 3.0 ms vs 4.1-4.3 ms (the composite's backward
# also runs the add's node and sums the bias gradient separately). For inputs with batch dimensions the
# weight gradient is one 2-D matmul instead of a batched one the engine must sum.

def _linear_meta(input, weight, bias=None):
    a, w = input._a.shape, weight._a.shape
    if len(a) == 0 or len(w) == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(a)}D and {len(w)}D")
    if len(w) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(w)}D")
    # torch's paths with a bias: addmm for a 2-D input, and for a contiguous input with a 1-D bias (flattened to
    # 2-D); otherwise matmul then ``output.add_(bias)``, which casts the bias and needs it to fit the output
    addmm = bias is not None and (len(a) == 2 or bias._a.ndim == 1 and input.is_contiguous())
    if addmm:       # addmm(bias, input, weight.t()): its dtype checks come before its shape checks
        _addmm_dtypes(bias._dtype, input._dtype, weight._dtype)
        if len(w) == 1:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    shape = matmul_shape(a, w[::-1], input._dtype, weight._dtype)
    if bias is not None:
        b = bias._a.shape
        fits = len(b) <= len(shape) and all(x == 1 or x == y for x, y in zip(b[::-1], shape[::-1]))
        if not addmm:
            if not D.can_cast(D._PROMOTE[input._dtype, bias._dtype], input._dtype):
                raise RuntimeError(f"result type {_tname(D._PROMOTE[input._dtype, bias._dtype])} can't be cast to "
                                   f"the desired output type {_tname(input._dtype)}")
            if not fits:
                raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                                   f"{list(broadcast_shapes(shape, b))}")
        elif not fits:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 1}) must match the existing "
                               f"size ({b[-1]}) at non-singleton dimension {len(shape) - 1}.  Target sizes: "
                               f"{list(shape)}.  Tensor sizes: {list(b)}")
    return shape, input._dtype


def _linear_grad_input(grad, weight):
    if weight.dim() == 1:
        return grad.unsqueeze(-1) * weight
    return grad.matmul(weight)


def _linear_grad_weight(grad, input, weight_ndim):
    if weight_ndim == 1:
        return (grad.unsqueeze(-1) * input) if input.dim() > 1 else grad * input
    if input.dim() == 1:
        return grad.unsqueeze(-1) * input
    if input.dim() == 2:
        return grad.t().mm(input)
    g = grad.reshape(-1, grad.shape[-1])
    return g.t().mm(input.reshape(-1, input.shape[-1]))


def _linear_grads(grad, input, weight, weight_sizes, output_mask):
    """All three gradients at once, in ember ops (they differentiate again). ``input`` is saved only for the
    weight's gradient and ``weight`` only for the input's (saved_for, as torch's addmm saves them): a step that
    changes the weight before the backward of an input that needs no gradient is allowed."""
    return [_linear_grad_input(grad, weight) if output_mask[0] else None,
            _linear_grad_weight(grad, input, len(weight_sizes)) if output_mask[1] else None,
            grad if output_mask[2] else None]


def _linear_grads_fused(grad, input, weight, weight_sizes, bias_ndim, output_mask):
    """A first-order backward of a matrix weight runs the fused ``linear_backward`` kernel (its two GEMMs on
    two intra-op threads, one hand-off instead of a split of each). The operand it was not given (not saved: its
    gradient partner needs none) is a stand-in of the right shape that the kernel does not read. The kernel sums
    the bias's gradient over rows; a bias of another rank gets ``grad``, which the engine sums to its shape."""
    if output_mask[2] and bias_ndim != 1:
        gi, gw = (_linear_grads_fused(grad, input, weight, weight_sizes, 1, [output_mask[0], output_mask[1], False])[:2]
                  if output_mask[0] or output_mask[1] else (None, None))
        return [gi, gw, grad]
    if len(weight_sizes) == 2 and grad.dim() >= 1 and (input is None or input.dim() >= 1 and not input.is_sparse):
        if weight is None:
            weight = _stand_in(grad, tuple(weight_sizes))
        if input is None:
            input = _stand_in(grad, tuple(grad.shape[:-1]) + (weight_sizes[1],))
        return aten.linear_backward.default(input, grad, weight, tuple(output_mask))
    return _linear_grads(grad, input, weight, weight_sizes, output_mask)


def _stand_in(like, shape):
    """A tensor of ``shape`` and ``like``'s dtype and device that the kernel does not read: ``like``'s first
    element expanded (views only: no allocation, no copy, and the code generator lowers them)."""
    if like.numel() == 0:
        return aten.zeros.default(shape, dtype=like.dtype, device=like.device)
    while like.dim():
        like = aten.select.int(like, 0, 0)
    return aten.expand.default(like, shape)


def _linear_jvp(input, input_t, weight, weight_t, bias_t):
    """Forward derivative of linear: bilinear in (input, weight) plus the bias."""
    out = None if input_t is None else aten.linear.default(input_t, weight)
    if weight_t is not None:
        t = aten.linear.default(input, weight_t)
        out = t if out is None else out + t
    if bias_t is not None:
        out = bias_t if out is None else out + bias_t
    return out


declare('linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor', meta=_linear_meta, nn=True,
        function=False, method=False, derivatives={('input', 'weight', 'bias'): _linear_grads}, forward=_linear_jvp,
        grad_name=linear_node_name, torch_graph=linear_nodes,     # NOTE [linear's graph]
        first_order={('input', 'weight', 'bias'): _linear_grads_fused},
        saved_for={'input': ('weight',), 'weight': ('input',)},
        primitive_because="one fused GEMM plus bias with a fused first-order backward, instead of torch's addmm/matmul composite")


def _linear_backward_meta(self, grad_output, weight, output_mask):
    x, g, w = tuple(self.shape), tuple(grad_output.shape), tuple(weight.shape)
    if len(w) != 2 or not x or not g or x[-1] != w[1] or g[-1] != w[0] or x[:-1] != g[:-1]:
        raise RuntimeError(f"linear_backward: got input {list(x)}, grad_output {list(g)} and weight {list(w)}; "
                           f"expected [*, in], [*, out] and [out, in]")
    mask = tuple(bool(m) for m in output_mask)
    return [(x, self._dtype) if mask[0] else None, (w, weight._dtype) if mask[1] else None,
            ((w[0],), grad_output._dtype) if mask[2] else None]


declare('linear_backward(Tensor self, Tensor grad_output, Tensor weight, bool[3] output_mask) '
        '-> (Tensor, Tensor, Tensor)', meta=_linear_backward_meta, method=False)


# --- fused add-products: beta * input + alpha * (product) ------------------------------------

def _expand_check(shape, target, name='torch.FloatTensor'):
    """torch's expand(): ``shape`` must broadcast to exactly ``target``; the error names the rightmost clash."""
    shape, target = tuple(shape), tuple(target)
    if len(shape) > len(target):
        raise RuntimeError(f"expand({name}{{{list(shape)}}}, size={list(target)}): the number of sizes provided "
                           f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    off = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and shape[i] != target[off + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[off + i]}) must match the existing size "
                               f"({shape[i]}) at non-singleton dimension {off + i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(shape)}")


def _addmm_meta(self, mat1, mat2, beta=1, alpha=1):
    a, b = mat1._a.shape, mat2._a.shape
    if len(a) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(a)}-D tensor")
    if len(b) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(b)}-D tensor")
    _mm_shapes(a, b)
    shape = (a[0], b[1])
    _expand_check(self._a.shape, shape)
    _addmm_dtypes(self._dtype, mat1._dtype, mat2._dtype)
    return shape, self._dtype


def _addmm_dtypes(d_self, d1, d2):
    """addmm's dtype checks in torch's order and words (mm's own say "expected m1 and m2 ...")."""
    for name, d in (('self', d_self), ('mat1', d1)):
        if d is not d2:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_tname(d)} and {_tname(d2)}")
    _no_bool(d1, 'addmm_impl_cpu_')


def _addmv_meta(self, mat, vec, beta=1, alpha=1):
    a, b = mat._a.shape, vec._a.shape
    if len(a) != 2 or len(b) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self._a.ndim}, {len(a)}, {len(b)}")
    _mv_shapes(a, b, self._a.shape[0] if self._a.ndim == 1 else None)
    _expand_check(self._a.shape, (a[0],))
    if not self._dtype is mat._dtype is vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_tname(self._dtype)}, "
                           f"{_tname(mat._dtype)}, and {_tname(vec._dtype)}")
    _no_bool(mat._dtype, 'addmv_impl_cpu')
    return (a[0],), self._dtype


def _baddbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    a, b = batch1._a.shape, batch2._a.shape
    if len(a) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _bmm_checks(a, b, batch1._dtype, batch1._dtype)
    shape = (a[0], a[1], b[2])
    _expand_check(self._a.shape, shape)
    if not self._dtype is batch1._dtype is batch2._dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(self._dtype)}, batch1: "
                           f"{cpp_name(batch1._dtype)}, batch2: {cpp_name(batch2._dtype)}")
    _no_bool(self._dtype, 'baddbmm_cpu')
    return shape, self._dtype


def _addbmm_meta(self, batch1, batch2, beta=1, alpha=1):
    a, b = batch1._a.shape, batch2._a.shape
    if len(a) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a[0] != b[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {a[0]} and {b[0]}")
    if a[2] != b[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({a[1]}x{a[2]} and {b[1]}x{b[2]})")
    shape = (a[1], b[2])
    _expand_check(self._a.shape, shape)
    if self._dtype is not batch2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_tname(self._dtype)} and "
                           f"{_tname(batch2._dtype)}")
    _mm_dtypes(batch1._dtype, batch2._dtype)
    return shape, self._dtype


def _scaled(g, s):
    return g if s == 1 else g * s


_ADD = 'Scalar beta=1, Scalar alpha=1'
declare(f'addmm(Tensor self, Tensor mat1, Tensor mat2, *, {_ADD}) -> Tensor', forward='transpose', meta=_addmm_meta, out=True,
        inplace=True, derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'mat1': lambda grad, mat2, alpha: _scaled(grad.mm(mat2.t()), alpha),
            'mat2': lambda grad, mat1, alpha: _scaled(mat1.t().mm(grad), alpha)})
declare(f'addmv(Tensor self, Tensor mat, Tensor vec, *, {_ADD}) -> Tensor', forward='transpose', meta=_addmv_meta, out=True,
        inplace=True, derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'mat': lambda grad, vec, alpha: _scaled(grad.unsqueeze(-1) * vec, alpha),
            'vec': lambda grad, mat, alpha: _scaled(mat.t().mv(grad), alpha)})
declare(f'baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, {_ADD}) -> Tensor', forward='transpose', meta=_baddbmm_meta, out=True,
        inplace=True, derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'batch1': lambda grad, batch2, alpha: _scaled(grad.bmm(batch2.transpose(1, 2)), alpha),
            'batch2': lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).bmm(grad), alpha)})
declare(f'addbmm(Tensor self, Tensor batch1, Tensor batch2, *, {_ADD}) -> Tensor', forward='transpose', meta=_addbmm_meta, out=True,
        inplace=True, derivatives={
            'self': lambda grad, beta: _scaled(grad, beta),
            'batch1': lambda grad, batch2, alpha: _scaled(grad.unsqueeze(0).matmul(batch2.transpose(1, 2)), alpha),
            'batch2': lambda grad, batch1, alpha: _scaled(batch1.transpose(1, 2).matmul(grad.unsqueeze(0)), alpha)})


# --- einsum ----------------------------------------------------------------------------------------
# torch's einsum is a composite (at::native::einsum): each operand's repeated labels become diagonals, its
# dimensions are permuted to one order (output labels, then the summed ones) with size-1 dimensions for labels it
# lacks; operands are then contracted pairwise, left to right (or along ``path``), by sumproduct_pair: dims found
# in one operand only are summed first, the rest permuted and reshaped into a bmm (or a mul when nothing is
# summed). What that graph saves (views of the operands, or copies where a reshape cannot view) decides where the
# version check fires. ember keeps one fused operator, NumPy's einsum (BLAS-backed contraction paths), whose
# derivative is einsum again: d/dA_k of "s_1,...,s_n->out" is "out,s_1..(not k)..,s_n->s_k" applied to grad and
# the other operands (a label repeated within s_k gets a fresh name tied to the first by an identity matrix;
# labels found nowhere but in s_k get a ones operand of A_k's shape). That node saves every operand, which is
# what torch's graph checks when every operand requires grad and reaches a bmm or mul as a view (most
# contractions); elsewhere (one operand, a constant operand, an operand summed or copied on the way) the
# operator records torch's graph itself (`_einsum_graph`, which first runs the same steps on shapes alone).

_LETTERS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
_EINSUM_CACHE = {}


def parse_einsum(equation, ndims):
    """``(input subscripts, output subscript)`` of an equation (ellipsis kept as '...', output made explicit),
    checked against the operands' numbers of dimensions with torch's errors."""
    key = (equation, tuple(ndims))
    hit = _EINSUM_CACHE.get(key)
    if hit is not None:
        return hit
    eq = equation.replace(' ', '')
    lhs, arrow, rhs = eq.partition('->')
    subs = lhs.split(',')
    for i, ch in enumerate(eq):
        if ch not in _LETTERS and ch not in ',.->':
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               f"must be in [a-zA-Z]")
    if len(subs) > len(ndims):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(subs) < len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for k, (s, n) in enumerate(zip(subs, ndims)):
        letters = len(s.replace('...', ''))
        if '.' in s.replace('...', '') or s.count('...') > 1:
            raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part of any ellipsis")
        if '...' in s:
            if letters > n:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) is more than the "
                                   f"number of dimensions ({n}) for operand {k}")
        elif letters != n:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) does not match the "
                               f"number of dimensions ({n}) for operand {k} and no ellipsis was given")
    if not arrow:
        counts = {}
        for s in subs:
            for ch in s.replace('...', ''):
                counts[ch] = counts.get(ch, 0) + 1
        rhs = ('...' if any('...' in s for s in subs) else '') + ''.join(sorted(c for c, n in counts.items() if n == 1))
    else:
        seen = set()
        for ch in rhs.replace('...', ''):
            if ch in seen:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
            seen.add(ch)
            if not any(ch in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any input "
                                   f"operand")
    res = (tuple(subs), rhs)
    _EINSUM_CACHE[key] = res
    return res


def _einsum_meta(equation, tensors, path=None):
    shapes = [t._a.shape for t in tensors]
    subs, out = parse_einsum(equation, [len(s) for s in shapes])
    sizes, ell = {}, ()
    for k, (s, shape) in enumerate(zip(subs, shapes)):
        pre, _, post = s.partition('...') if '...' in s else (s, '', '')
        n_ell = len(shape) - len(pre) - len(post)
        dims = list(zip(pre, shape[:len(pre)])) + list(zip(post, shape[len(shape) - len(post):]))
        own = {}
        for ch, n in dims:
            if ch in own and own[ch] != n:
                raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {k} but the sizes don't match, "
                                   f"{n} != {own[ch]}")
            own[ch] = n
            prev = sizes.get(ch)
            if prev is None or prev == 1:
                sizes[ch] = n
            elif n != 1 and n != prev:
                raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {prev}")
        if '...' in s:
            ell = broadcast_shapes(ell, shape[len(pre):len(pre) + n_ell])
    d0 = tensors[0]._dtype
    if any(t._dtype is not d0 for t in tensors[1:]) or not (d0.is_floating_point or d0.is_complex):
        d0 = _einsum_dtype(equation, tensors, path)
    pre, _, post = out.partition('...') if '...' in out else (out, '', '')
    return tuple(sizes[c] for c in pre) + (ell if '...' in out else ()) + tuple(sizes[c] for c in post), d0


# NOTE [einsum dtypes]: torch's einsum takes operands of different dtypes as far as its pieces do: a pair
# contracted with nothing summed is a mul (type promotion: "lk,k,l->lk" of float64, float64, float32 is float64),
# a pair with a summed label is a bmm, which wants one dtype ("lk,l->k" of float64, float32 raises "expected
# scalar type Double but found Float"), and an integral operand's lone labels are summed first (to int64). The
# dtype of mixed or integral operands is therefore found by a dry run of the pieces on their dtypes alone
# (`_Plan`), along the same path; floating operands of one dtype (nearly every call) skip it.
_EINSUM_DTYPES = {}


def _einsum_dtype(equation, tensors, path):
    key = (equation, None if path is None else tuple(path), tuple((t._a.shape, t._dtype) for t in tensors))
    d = _EINSUM_DTYPES.get(key)
    if d is None:
        saved = set()
        r = _einsum_pieces(equation, [_Plan(t._a.shape, t.stride(), k, saved, t._dtype)
                                      for k, t in enumerate(tensors)], path)
        if len(_EINSUM_DTYPES) > 1024:
            _EINSUM_DTYPES.clear()
        d = _EINSUM_DTYPES[key] = r.dtype
    return d


def _einsum_graph(equation, tensors, path=None):
    """torch's einsum graph where it saves other tensors than the fused node; None where the node saves the same:
    a dry run of the pieces on shapes and strides (`_Plan`) finds each operand saved as a view. The answer depends
    on the equation and the operands' shapes and strides only, and is kept for the next call with the same."""
    # operands of several dtypes: torch's pieces (NOTE [einsum dtypes]) record the graph, whose muls' gradients
    # come back in each operand's dtype; the fused node's einsum formulas would contract mixed dtypes
    mixed = any(t._dtype is not tensors[0]._dtype for t in tensors)
    if len(tensors) > 1 and not mixed and all(t.requires_grad for t in tensors):
        key = (equation, None if path is None else tuple(path), tuple((t._a.shape, t.stride()) for t in tensors))
        fused = _FUSED.get(key)
        if fused is None:
            _einsum_meta(equation, tensors, path)
            saved = set()
            _einsum_pieces(equation, [_Plan(t._a.shape, t.stride(), k, saved) for k, t in enumerate(tensors)], path)
            if len(_FUSED) > 4096:
                _FUSED.clear()
            fused = _FUSED[key] = len(saved) == len(tensors)
        if fused:
            return None     # the kernel's meta function checks the dtypes
    _einsum_meta(equation, tensors, path)
    return _einsum_pieces(equation, tensors, path)


_FUSED = {}     # (equation, path, operands' shapes and strides) -> whether the fused node saves what torch's graph does


def _einsum_pieces(equation, tensors, path):
    """torch's einsum from its pieces, on tensors (or `_Plan` geometries); errors were the meta function's."""
    subs, out = parse_einsum(equation, [t.dim() for t in tensors])
    labels = [_einsum_labels(sub) for sub in subs]
    counts = {}
    for ls in labels:
        for c in ls:
            if c != '...':
                counts[c] = counts.get(c, 0) + 1
    n_ell = max([t.dim() - len(ls) + 1 for t, ls in zip(tensors, labels) if '...' in ls], default=0)
    # each label's position in the aligned operands: the output's, then the ellipsis if summed, then the summed
    # labels in torch's subscript order (A-Z before a-z, which is ASCII order)
    perm_index, ell_index, pos = 0, None, {}
    for c in _einsum_labels(out):
        if c == '...':
            ell_index, perm_index = perm_index, perm_index + n_ell
        else:
            pos[c], perm_index = perm_index, perm_index + 1
    n_out = perm_index
    if ell_index is None:
        ell_index, perm_index = perm_index, perm_index + n_ell
    for c in sorted(counts):
        if c not in pos:
            pos[c], perm_index = perm_index, perm_index + 1
    dim_counts = [0] * perm_index       # how many operands have each aligned dimension with a size other than 1
    ops = []
    for t, ls in zip(tensors, labels):
        op, perm, dim = t, [-1] * perm_index, 0
        for c in ls:
            if c == '...':
                k = t.dim() - len(ls) + 1
                for j in range(n_ell - k, n_ell):
                    dim_counts[ell_index + j] += op.shape[dim] != 1
                    perm[ell_index + j] = dim
                    dim += 1
            elif perm[pos[c]] == -1:
                dim_counts[pos[c]] += op.shape[dim] != 1
                perm[pos[c]] = dim
                dim += 1
            else:       # a repeated label: its diagonal, where the label first was
                prev = perm[pos[c]]
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for i, v in enumerate(perm):
            if v == -1:
                op = op.unsqueeze(dim)
                perm[i] = dim
                dim += 1
        ops.append(op.permute(perm))
    steps = list(path) if path is not None else None
    while len(ops) > 1:
        i, j = 0, 1
        if steps is not None:
            i, j = sorted(steps[:2])
            steps = steps[2:]
            if i == j or i < 0 or j >= len(ops):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) " + (
                    "cannot contract an operand with itself" if i == j else "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, perm_index):
            sa, sb = a.shape[d] != 1, b.shape[d] != 1
            if sa and sb:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1 and (sa or sb):
                (a_sum if sa else b_sum).append(d)
                dim_counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, keepdim=True)
        if b_sum:
            b = b.sum(b_sum, keepdim=True)
        r = _sumproduct_pair(a, b, sum_dims)
        ops.insert(len(ops) if steps is not None else 0, r)
    if perm_index > n_out:
        if len(tensors) > 1:        # the summed dimensions have size 1 by now
            return ops[0].view(tuple(ops[0].shape[:n_out]))
        return ops[0].sum(list(range(n_out, perm_index)))
    return ops[0]


class _Plan:
    """A tensor's geometry in a dry run of `_einsum_pieces`: shape, strides, and the operand it is a view of (None
    once copied or computed). A bmm or mul adds the operands its arguments view to ``saved``."""

    def __init__(self, shape, strides, origin, saved, dtype=None):
        self.shape, self.strides, self.origin, self.saved, self.dtype = shape, strides, origin, saved, dtype

    def dim(self):
        return len(self.shape)

    def _view(self, shape, strides):
        return _Plan(tuple(shape), tuple(strides), self.origin, self.saved, self.dtype)

    def _fresh(self, shape, dtype=None):
        return _Plan(tuple(shape), contiguous_strides(tuple(shape)), None, self.saved, dtype or self.dtype)

    def permute(self, perm):
        return self._view([self.shape[d] for d in perm], [self.strides[d] for d in perm])

    def unsqueeze(self, d):
        st = self.strides[d] * self.shape[d] if d < len(self.shape) else 1
        return self._view(self.shape[:d] + (1,) + self.shape[d:], self.strides[:d] + (st,) + self.strides[d:])

    def diagonal(self, offset, d1, d2):
        keep = [d for d in range(len(self.shape)) if d not in (d1, d2)]
        return self._view([self.shape[d] for d in keep] + [min(self.shape[d1], self.shape[d2])],
                          [self.strides[d] for d in keep] + [self.strides[d1] + self.strides[d2]])

    def movedim(self, src, dst):        # only movedim(-1, d), as einsum's diagonals use it
        perm = list(range(len(self.shape) - 1))
        perm.insert(dst, len(self.shape) - 1)
        return self.permute(perm)

    def sum(self, dims, keepdim=False):
        dims = [dims] if isinstance(dims, int) else dims
        dt = self.dtype
        if dt is not None and not (dt.is_floating_point or dt.is_complex):     # sum's integral result
            dt = D.int64
        return self._fresh([1 if d in dims else n for d, n in enumerate(self.shape)], dt)

    def reshape(self, *shape):
        st = view_strides(self.shape, self.strides, shape)
        return self._fresh(shape) if st is None else self._view(shape, st)

    def view(self, shape):
        return self.reshape(*shape)

    def bmm(self, other):
        self.saved.update(x.origin for x in (self, other) if x.origin is not None)
        if self.dtype is not None:      # NOTE [einsum dtypes]
            if self.dtype is not other.dtype:
                raise RuntimeError(f"expected scalar type {_tname(self.dtype)} but found {_tname(other.dtype)}")
            if self.dtype is D.bool_:
                raise NotImplementedError('"bmm" not implemented for \'Bool\'')
        return self._fresh((self.shape[0], self.shape[1], other.shape[2]))

    def __mul__(self, other):
        self.saved.update(x.origin for x in (self, other) if x.origin is not None)
        d = None if self.dtype is None else D.promote_types(self.dtype, other.dtype)
        return self._fresh(broadcast_shapes(self.shape, other.shape), d)


def _einsum_labels(sub):
    """An operand's (or the output's) labels, the ellipsis as one '...' entry."""
    pre, ell, post = sub.partition('...')
    return list(pre) + (['...'] if ell else []) + list(post)


def _sumproduct_pair(left, right, sum_dims):
    """torch's sumproduct_pair: (left * right).sum(sum_dims, keepdim=True) of two aligned operands, as a bmm of the
    dimensions in both (batch), in left only (rows), summed (inner) and in right only (columns)."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_n = lo_n = ro_n = sum_n = 1
    for i in range(left.dim()):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_n *= left.shape[i]
            elif sl:
                left = left.sum(i, keepdim=True)
            elif sr:
                right = right.sum(i, keepdim=True)
        elif sl and sr:
            lro.append(i)
            lro_n *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_n *= left.shape[i]
        else:
            ro.append(i)
            ro_n *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:    # right's dims first in the output: swapped, bmm writes them in order
        left, right, lo, ro, lo_n, ro_n = right, left, ro, lo, ro_n, lo_n
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    left = left.permute(lro + lo + sum_dims + ro).reshape(lro_n, lo_n, sum_n)
    right = right.permute(lro + sum_dims + ro + lo).reshape(lro_n, sum_n, ro_n)
    return left.bmm(right).view(out_size).permute(operm)


def _einsum_backward(grad, equation, tensors):
    subs, out = parse_einsum(equation, [t.dim() for t in tensors])
    grads = []
    for k, t in enumerate(tensors):
        others = [(s, x) for j, (s, x) in enumerate(zip(subs, tensors)) if j != k]
        target, extra = _grad_target(subs[k], t, out, [s for s, _ in others])
        ops = [(out, grad)] + others + extra
        eq = ','.join(s for s, _ in ops) + '->' + target
        grads.append(aten.einsum.default(eq, [x for _, x in ops]))
    return grads


def _grad_target(s, t, out, other_subs):
    """Output subscript for d/d(operand with subscript ``s``) and the helper operands it needs."""
    used = set(out) | set(''.join(other_subs)) | set(s)
    fresh = (c for c in sorted(_LETTERS) if c not in used)
    target, extra, seen = '', [], {}
    body = s.replace('...', '.')
    pos = 0
    shape = tuple(t.shape)
    n_ell = len(shape) - len(body.replace('.', ''))
    for ch in body:
        if ch == '.':
            target += '...'
            pos += n_ell
            continue
        if ch in seen:       # a diagonal: name the repeat afresh and tie it to the first with an identity
            f = next(fresh)
            extra.append((ch + f, aten.eye.default(shape[pos], dtype=t.dtype, device=t.device)))
            target += f
        else:
            seen[ch] = True
            target += ch
        pos += 1
    known = set(out) | set(''.join(other_subs)) | set(''.join(e for e, _ in extra))
    lonely = any(ch not in known for ch in target.replace('...', '')) or ('...' in target and '...' not in out
                                                                         and not any('...' in o for o in other_subs))
    if lonely:
        extra.append((target, aten.ones.default(shape, dtype=t.dtype, device=t.device)))
    return target, extra


declare('einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor', forward='multilinear', meta=_einsum_meta,
        method=False, derivatives={'tensors': _einsum_backward}, autograd_composite=_einsum_graph,
        primitive_because="one NumPy einsum/BLAS call is the fast path; under autograd, autograd_composite records torch's pieces")


# --- composites over the products --------------------------------------------------------------------

def _tensordot(a, b, dims):
    """Contract the dims ``dims[0]`` of ``a`` with ``dims[1]`` of ``b`` (ember.tensordot, _python_functions/linalg.py, turns
    an int ``dims`` into these lists)."""
    da, db = dims[0], dims[1]
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    from .views import wrap_dim
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y] and a.shape[x] != 1 and b.shape[y] != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and "
                               f"second has size {b.shape[y]} in dim {y}")
    da = [wrap_dim(d, a.dim()) for d in da]
    db = [wrap_dim(d, b.dim()) for d in db]
    ka = [d for d in range(a.dim()) if d not in da]
    kb = [d for d in range(b.dim()) if d not in db]
    n = _prod(max(a.shape[x], b.shape[y]) for x, y in zip(da, db))
    if not all(a.shape[x] == b.shape[y] for x, y in zip(da, db)):
        # size-1 contracted dims broadcast (torch sums the other side over them)
        return aten.einsum.default(_tensordot_eq(a.dim(), b.dim(), da, db), [a, b])
    # aten operators, not Tensor methods (which a profiler may patch: torch's composite is C++)
    reshape, permute = aten.reshape.default, aten.permute.default
    pa = reshape(permute(a, ka + da), [_prod(a.shape[d] for d in ka), n])
    pb = reshape(permute(b, db + kb), [n, _prod(b.shape[d] for d in kb)])
    return reshape(aten.mm.default(pa, pb), [a.shape[d] for d in ka] + [b.shape[d] for d in kb])


def _tensordot_eq(na, nb, da, db):
    L = sorted(_LETTERS)
    sa = [L[i] for i in range(na)]
    sb = [L[na + i] for i in range(nb)]
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out = [c for i, c in enumerate(sa) if i not in da] + [c for i, c in enumerate(sb) if i not in db]
    return ''.join(sa) + ',' + ''.join(sb) + '->' + ''.join(out)


def _inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(self.shape)} and {list(other.shape)}")
    return _tensordot(self, other, ([-1], [-1]))


def _outer(self, vec2):
    if self.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {self.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return self.reshape(-1, 1) * vec2


def _ger(self, vec2):
    from ember._warn import warnings
    warnings.warn_once("torch.ger is deprecated and will be removed in a future PyTorch release. Use torch.outer "
                       "instead.", UserWarning)       # torch's TORCH_WARN_ONCE
    return _outer(self, vec2)


def _kron(self, other):
    """torch's kron: the operands seen as (a0, 1, a1, 1, ...) and (1, b0, 1, b1, ...) through _unsafe_view, their
    product seen as (a0 b0, a1 b1, ...). The mul saves the _unsafe_views, whose version counters are their own:
    as in torch, writing to an operand afterwards does not trip the check."""
    n = max(self.dim(), other.dim())
    a = (1,) * (n - self.dim()) + tuple(self.shape)
    b = (1,) * (n - other.dim()) + tuple(other.shape)
    uv = aten._unsafe_view.default
    prod = uv(self, [x for s in a for x in (s, 1)]) * uv(other, [x for s in b for x in (1, s)])
    return uv(prod, [x * y for x, y in zip(a, b)])


def _bilinear(input1, input2, weight, bias=None):
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.dim()}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1] if bias.dim() else 0} "
                           f"but expected {weight.shape[0]}")
    # torch's bilinear: both inputs as matrices of rows, one _trilinear (which saves the three operands), the rows
    # seen with the inputs' batch shape again
    t = aten._trilinear.default(input1.reshape(-1, input1.shape[-1]), weight,
                                    input2.reshape(-1, input2.shape[-1]), [1, 3], [0], [1, 2], [2, 3])
    y = t.reshape(tuple(input1.shape[:-1]) + (weight.shape[0],))
    return y if bias is None else y + bias


def _trilinear_meta(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    total = i1._a.ndim + len(expand1)
    shapes = []
    for k, (t, e) in enumerate(((i1, expand1), (i2, expand2), (i3, expand3))):
        if t._a.ndim + len(e) != total:
            raise RuntimeError(f"_trilinear: i{k + 1} has {t._a.ndim} dimensions and {len(e)} to insert, but i1 "
                               f"has {total} in all")
        it = iter(t._a.shape)
        shapes.append(tuple(1 if d in e else next(it) for d in range(total)))
        if t._dtype is not i1._dtype:
            raise RuntimeError(f"expected scalar type {_tname(i1._dtype)} but found {_tname(t._dtype)}")
    if not 0 <= unroll_dim < total:
        raise RuntimeError(f"unroll_dim must be in [0,{total - 1}]")
    full = broadcast_shapes(*shapes)
    return tuple(n for d, n in enumerate(full) if d not in sumdim), i1._dtype


# torch's _trilinear: (i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim), one
# kernel (NumPy's einsum) whose derivatives are _trilinear again, an input's expanded dims and the sum swapped;
# an operand is saved when another one's gradient is wanted (torch's wrap_opt_if)
declare('_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, int[] sumdim, '
        'int unroll_dim=1) -> Tensor', forward='multilinear', meta=_trilinear_meta, method=False, derivatives={
            'i1': lambda grad, i2, i3, expand1, expand2, expand3, sumdim:
                aten._trilinear.default(grad, i2, i3, sumdim, expand2, expand3, expand1),
            'i2': lambda grad, i1, i3, expand1, expand2, expand3, sumdim:
                aten._trilinear.default(i1, grad, i3, expand1, sumdim, expand3, expand2),
            'i3': lambda grad, i1, i2, expand1, expand2, expand3, sumdim:
                aten._trilinear.default(i1, i2, grad, expand1, expand2, sumdim, expand3)})


declare('tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor', name='_tensordot',
        composite=lambda a, b, da, db: _tensordot(a, b, (list(da), list(db))), method=False, function=False)
declare('inner(Tensor self, Tensor other) -> Tensor', composite=_inner, out=True,    # torch's inner.out is tensordot's
        out_dtype="tensordot: Expected the output tensor to have dtype {res}, but got an output tensor with dtype {out}")
declare('outer(Tensor self, Tensor vec2) -> Tensor', composite=_outer, out=True)
declare('ger(Tensor self, Tensor vec2) -> Tensor', composite=_ger, out=True)
declare('kron(Tensor self, Tensor other) -> Tensor', composite=_kron, out=True)
declare('bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor', composite=_bilinear,
        nn=True, method=False)


# --- diagonals -------------------------------------------------------------------------------------

def _diag_embed_meta(self, offset=0, dim1=-2, dim2=-1):
    from .views import wrap_dim
    n = self._a.ndim + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(self._a.shape)
    m = (shape.pop() if shape else 1) + abs(offset)
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    return tuple(shape), self._dtype


declare('diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor', forward='linear', meta=_diag_embed_meta,
        derivatives={'self': lambda grad, offset, dim1, dim2: grad.diagonal(offset, dim1, dim2)})


def _diag(self, diagonal=0):
    if self.dim() == 1:
        return self.diag_embed(diagonal)
    if self.dim() == 2:
        return self.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")


def _diag_out_dtype(res, out, self, diagonal=0):
    """torch's diag.out: out's dtype must be the result's; for a 1-D input a dtype the result cannot be cast to is
    first refused in diag_embed's words."""
    if self.dim() == 1 and not D.can_cast(res, out):
        raise RuntimeError(f"diag: result type {_tname(res)} can't be cast to the desired out= type {_tname(out)}")
    D.check_same_dtype(SAME_DTYPE, res, out)


declare('diag(Tensor self, int diagonal=0) -> Tensor', composite=_diag, out=True, out_dtype=_diag_out_dtype)


# --- cross product ---------------------------------------------------------------------------------

def _cross_meta(self, other, dim=-1):
    from .views import wrap_dim
    if self._a.ndim != other._a.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(self._a.shape, other._a.shape)
    d = wrap_dim(dim, len(shape))
    if self._a.shape[d] != 3 or other._a.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self._a.shape[d]} and "
                           f"{other._a.shape[d]}")
    return shape, D.promote_types(self._dtype, other._dtype)


declare('linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor', forward='multilinear', meta=_cross_meta, method=False, function=False,
        out=True, derivatives={'self': lambda grad, other, dim: aten.linalg_cross.default(other, grad, dim=dim),
                               'other': lambda grad, self, dim: aten.linalg_cross.default(grad, self, dim=dim)})


def _cross(self, other, dim=None):
    if dim is None:
        from ember._warn import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=3)
        shape = broadcast_shapes(tuple(self.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return aten.linalg_cross.default(self, other, dim=dim)


declare('cross(Tensor self, Tensor other, int? dim=None) -> Tensor', composite=_cross, out=True, out_dtype=SAME_DTYPE)
