"""Hand-written entry points for joining and shape operators whose torch signatures are not one schema:
varargs forms (``meshgrid(a, b)``,
``atleast_2d(a, b)``) and Python-value results (``unique`` returning a tensor or a tuple)."""
from .._tensor import Tensor
from ..ops import aten
from .._core.dtype import SAME_DTYPE
from ._out import write_out

__all__ = ['split', 'broadcast_shapes', 'cat', 'concat', 'concatenate', 'stack', 'meshgrid', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'unique',
           'unique_consecutive', 'broadcast_tensors', 'cartesian_prod', 'block_diag']


def _joiner(name, empty_error):
    op = getattr(aten, name)

    def fn(tensors, dim=0, *, axis=None, out=None):
        if axis is not None:        # torch accepts NumPy's name for dim
            dim = axis
        if isinstance(tensors, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
        if len(tensors) == 0:
            raise empty_error
        if out is not None:
            return op.out(tensors, dim, out=out)
        return op.default(tensors, dim)
    fn.__name__ = fn.__qualname__ = name
    fn._op = op.default
    fn.__doc__ = f"""torch.{name}: join tensors along ``dim`` (an empty list is an error, as in torch).

    >>> import ember
    >>> tuple(ember.{name}([ember.zeros(2, 3), ember.zeros(2, 3)]).shape)
    {(4, 3) if name != 'stack' else (2, 2, 3)}
    """
    return fn


cat = _joiner('cat', ValueError("torch.cat(): expected a non-empty list of Tensors"))
concat = concatenate = cat
stack = _joiner('stack', RuntimeError("stack expects a non-empty TensorList"))


def split(tensor, split_size_or_sections, dim=0):
    """torch.split, torch/functional.py's function: its parameter is ``split_size_or_sections`` where the
    method's (``Tensor.split``) is ``split_size``.

    >>> import ember
    >>> [t.tolist() for t in ember.split(ember.arange(5), split_size_or_sections=[2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    return tensor.split(split_size_or_sections, dim)


def _seq(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors (``indexing='ij'`` or ``'xy'``); the results are views.

    >>> import ember
    >>> x, y = ember.meshgrid(ember.tensor([1, 2]), ember.tensor([3, 4, 5]), indexing='ij')
    >>> tuple(x.shape)
    (2, 3)
    """
    ts = _seq(tensors)
    if indexing is None:
        from ember._warn import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = 'ij'
    if indexing not in ('ij', 'xy'):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not ts:
        return ()
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    dt, dev = ts[0].dtype, ts[0].device
    for t in ts[1:]:
        if t.dtype is not dt:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != dev:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == 'xy' and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    n = len(ts)
    shape = tuple(t.numel() for t in ts)
    out = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(shape) for i, t in enumerate(ts)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _atleast(n):
    atleast_nd = getattr(aten, f'atleast_{n}d').default

    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return atleast_nd(tensors[0])
        return tuple(atleast_nd(t) for t in _seq(tensors))
    fn.__name__ = fn.__qualname__ = f'atleast_{n}d'
    fn.__doc__ = f"""Views of the inputs with at least {n} dimensions.

    >>> import ember
    >>> ember.atleast_{n}d(ember.tensor(1.)).dim()
    {n}
    """
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (sorted), optionally with the inverse indices and the counts.

    >>> import ember
    >>> ember.unique(ember.tensor([3, 1, 3]))
    tensor([1, 3])
    """
    if dim is None:
        out, inv, cnt = aten._unique2.default(input, sorted, return_inverse, return_counts)
    else:
        out, inv, cnt = aten.unique_dim.default(input, dim, sorted, return_inverse, return_counts)
    return _pick(out, inv, cnt, return_inverse, return_counts)


def _pick(out, inv, cnt, return_inverse, return_counts):
    if return_inverse and return_counts:
        return out, inv, cnt
    if return_inverse:
        return out, inv
    if return_counts:
        return out, cnt
    return out


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements.

    >>> import ember
    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    out, inv, cnt = aten.unique_consecutive.default(input, return_inverse, return_counts, dim)
    return _pick(out, inv, cnt, return_inverse, return_counts)


def broadcast_tensors(*tensors):
    """Expand tensors to one broadcast shape (views).

    >>> import ember
    >>> [tuple(t.shape) for t in ember.broadcast_tensors(ember.zeros(3, 1), ember.zeros(4))]
    [(3, 4), (3, 4)]
    """
    return aten.broadcast_tensors.default(_seq(tensors))


def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors.

    >>> import ember
    >>> tuple(ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4])).shape)
    (4, 2)
    """
    return aten.cartesian_prod.default(_seq(tensors))


def block_diag(*tensors):
    """Block-diagonal matrix from the given tensors.

    >>> import ember
    >>> tuple(ember.block_diag(ember.ones(2, 2), ember.ones(1, 3)).shape)
    (3, 5)
    """
    return aten.block_diag.default(list(tensors))


def _method_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted, return_inverse, return_counts, dim)


def _method_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse, return_counts, dim)


Tensor.unique = _method_unique
Tensor.unique_consecutive = _method_unique_consecutive


# --- copies of views: narrow_copy and the unsafe_* splits --------------------------------------------------
def narrow_copy(input, dim, start, length, *, out=None):
    """``input.narrow(dim, start, length)`` copied into a new contiguous tensor.

    >>> import ember
    >>> ember.narrow_copy(ember.arange(6).reshape(2, 3), 1, 1, 2)
    tensor([[1, 2],
            [4, 5]])
    """
    r = aten.narrow.default(input, dim, start, length).clone(memory_format=_contiguous())
    if out is None:
        return r
    if out.dtype != r.dtype:        # torch's narrow_copy_dense_cpu_out check, in its words
        raise RuntimeError("Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    return out.resize_(r.shape).copy_(r)        # silently, as torch's (no resize warning)


def _contiguous():
    import ember
    return ember.contiguous_format


# NOTE [unsafe splits]: torch's unsafe_split/unsafe_chunk/unsafe_split_with_sizes are split without view
# tracking, so that autograd lets their outputs be modified in place (split's outputs may not be: they are
# several views of one base). ember has no untracked views in its public API; the pieces are copies, which give
# the same values and gradients and may be modified in place. Writes to a piece do not reach the input, which
# torch's documentation already tells users not to rely on.
def unsafe_split(input, split_size, dim=0):
    """split's pieces as separate tensors (NOTE [unsafe splits])."""
    return tuple(p.clone() for p in aten.split.Tensor(input, split_size, dim))


def unsafe_chunk(input, chunks, dim=0):
    """chunk's pieces as separate tensors (NOTE [unsafe splits])."""
    return tuple(p.clone() for p in aten.chunk.default(input, chunks, dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes's pieces as separate tensors (NOTE [unsafe splits])."""
    return tuple(p.clone() for p in aten.split_with_sizes.default(input, split_sizes, dim))


def _copied(view, out):
    """A view's values in a new contiguous tensor, or written into ``out`` (torch's ``*_copy`` functions: out's
    dtype must be the input's)."""
    r = view.clone(memory_format=_contiguous())
    return r if out is None else write_out(out, r, same_dtype=SAME_DTYPE)


def t_copy(input, *, out=None):
    """``input.t()`` copied (torch.t_copy).

    >>> import ember
    >>> ember.t_copy(ember.tensor([[1, 2]]))
    tensor([[1],
            [2]])
    """
    return _copied(aten.t.default(input), out)


def squeeze_copy(input, dim=None, *, out=None):
    """``input.squeeze(dim)`` copied (torch.squeeze_copy): ``dim`` an int, a sequence of them, or None for all."""
    if dim is None:
        v = aten.squeeze.default(input)
    elif isinstance(dim, int):
        v = aten.squeeze.dim(input, dim)
    else:
        v = aten.squeeze.dims(input, list(dim))
    return _copied(v, out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """``input.diagonal(offset, dim1, dim2)`` copied (torch.diagonal_copy)."""
    return _copied(aten.diagonal.default(input, offset, dim1, dim2), out)


__all__ += ['narrow_copy', 'unsafe_split', 'unsafe_chunk', 'unsafe_split_with_sizes', 't_copy', 'squeeze_copy',
            'diagonal_copy']
Tensor.narrow_copy = lambda self, dim, start, length: narrow_copy(self, dim, start, length)
Tensor.unsafe_split = lambda self, split_size, dim=0: unsafe_split(self, split_size, dim)
Tensor.unsafe_chunk = lambda self, chunks, dim=0: unsafe_chunk(self, chunks, dim)
Tensor.unsafe_split_with_sizes = lambda self, split_sizes, dim=0: unsafe_split_with_sizes(self, split_sizes, dim)


# Tensor.view: torch's two overloads, view(*size) and view(dtype) (aten::view.dtype in _ops/complex_views.py)
def _make_view(view_size):
    from .._core.dtype import dtype as _dtype
    view_dtype = aten.view.dtype

    def view(self, *size, dtype=None):
        if dtype is not None or (len(size) == 1 and size[0].__class__ is _dtype):
            return view_dtype(self, dtype if dtype is not None else size[0])
        return view_size(self, *size)
    view.__doc__ = view_size.__doc__
    return view


Tensor.view = _make_view(Tensor.view)


def broadcast_shapes(*shapes):
    """The shape tensors of ``shapes`` broadcast to (torch.broadcast_shapes): a Size; an int is a 1-D shape.

    >>> broadcast_shapes((2, 1), (1, 3))
    ember.Size([2, 3])
    """
    from .._tensor import Size
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    common = [1] * max((len(s) for s in shapes), default=0)
    for k, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if common[i] == 1:
                common[i] = shape[i]
            elif shape[i] != 1 and shape[i] != common[i]:     # torch's words (its Python broadcast_shapes)
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching "
                                   f"argument at index {k} had {shape}; but expected shape should be broadcastable "
                                   f"to {common}")
    return Size(common)
