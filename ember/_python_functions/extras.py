"""torch names from its documentation that ember lacked (found running every docstring example of torch under
ember): ``range`` (the deprecated inclusive arange), ``empty_permuted``, ``nonzero_static``, ``as_strided_scatter``,
``histogramdd``, ``set_flush_denormal``, ``Tensor.dim_order``. Each is written in ember operators."""
import math
from ember._warn import warnings

from .._tensor import Tensor
from .._core.dtype import scalar_name as _scalar_name

__all__ = ['range', 'empty_permuted', 'nonzero_static', 'as_strided_scatter', 'histogramdd', 'set_flush_denormal',
           '_segment_reduce', '_has_compatible_shallow_copy_type']

_builtin_range = range


def _E():
    import ember
    return ember


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The deprecated ``torch.range``: like ``arange`` but including ``end``, in the default float dtype.

    >>> import ember
    >>> ember.range(1, 4).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    E = _E()
    if out is not None and dtype is not None and dtype != out.dtype:
        raise RuntimeError(f"dtype {_scalar_name(dtype)} does not match dtype of out parameter "
                           f"({_scalar_name(out.dtype)})")
    n = int(math.floor((end - start) / step)) + 1
    t = (E.arange(n, dtype=E.float64, device=device) * step + start).to(dtype or E.get_default_dtype())
    if requires_grad:
        t.requires_grad_()
    return t if out is None else out.resize_(t.shape).copy_(t)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of ``size`` whose memory holds the dimensions in ``physical_layout`` order
    (outermost first), e.g. (0, 2, 3, 1) for channels-last.

    >>> empty_permuted((2, 3, 5), (0, 2, 1)).stride()
    (15, 1, 3)
    """
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(_builtin_range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"or physical_layout is not a permutation of dims: {list(order)}")
    t = _E().empty(tuple(size[d] for d in order), dtype=dtype, device=device)
    inverse = [order.index(d) for d in _builtin_range(len(size))]
    t = t.permute(inverse)
    return t.requires_grad_() if requires_grad else t


def nonzero_static(input, *, size, fill_value=-1):
    """``nonzero(input)`` with exactly ``size`` rows: truncated, or padded with ``fill_value``."""
    E = _E()
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size = {size}")
    idx = E.nonzero(input)[:size]
    pad = size - idx.shape[0]
    if pad:
        idx = E.cat([idx, E.full((pad, idx.shape[1]), fill_value, dtype=idx.dtype, device=idx.device)])
    return idx


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written where ``input.as_strided(size, stride, storage_offset)`` looks."""
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the N points ``input`` (N, D): ``(hist, bin_edges)``, with ``bins`` an int, D
    ints, or D edge tensors, over ``range`` (2D floats) or the data's extent; the last bin of each dimension
    includes its right edge.

    >>> import ember
    >>> histogramdd(ember.tensor([[0., 0.], [1., 0.], [1., 1.]]), bins=[2, 2]).hist.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    E = _E()
    from ..return_types import _structseq
    result = _structseq('histogramdd', ['hist', 'bin_edges'])
    x = input.reshape(-1, input.shape[-1])
    d = x.shape[1]
    edges = []
    for k in _builtin_range(d):
        b = bins if not isinstance(bins, (list, tuple)) else bins[k]
        if isinstance(b, Tensor):
            edges.append(b.to(input.dtype))
            continue
        if range is not None:
            lo, hi = float(range[2 * k]), float(range[2 * k + 1])
        elif x.shape[0]:
            lo, hi = x[:, k].min().item(), x[:, k].max().item()
        else:
            lo, hi = 0.0, 0.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5 if range is None else hi
        edges.append(E.linspace(lo, hi, int(b) + 1, dtype=input.dtype))
    shape = tuple(e.numel() - 1 for e in edges)
    flat = E.zeros(int(math.prod(shape)), dtype=input.dtype)
    inside = E.ones(x.shape[0], dtype=E.bool)
    index = E.zeros(x.shape[0], dtype=E.int64)
    for k, e in enumerate(edges):
        col = x[:, k]
        pos = (E.searchsorted(e, col, right=True) - 1).clamp(max=e.numel() - 2)
        inside &= (col >= e[0]) & (col <= e[-1])
        index = index * shape[k] + pos.clamp(min=0)
    w = E.ones(x.shape[0], dtype=input.dtype) if weight is None else weight.reshape(-1).to(input.dtype)
    flat.index_add_(0, index[inside], w[inside])
    hist = flat.reshape(shape)
    if density:
        widths = [e[1:] - e[:-1] for e in edges]
        vol = widths[0]
        for wk in widths[1:]:
            vol = vol.unsqueeze(-1) * wk
        hist = hist / (hist.sum() * vol)
    return result(hist, tuple(edges))


def set_flush_denormal(mode):
    """Whether flushing denormals to zero could be set: False, as torch answers on a CPU without the control:
    NumPy's arithmetic gives ember no access to the FPU's flush-to-zero flags."""
    return False


def _dim_order(self, *, ambiguity_check=False):
    """The dimensions from outermost to innermost in memory (largest stride first; ties in dimension order)."""
    st = self.stride()
    return tuple(sorted(_builtin_range(self.dim()), key=lambda k: -st[k]))


Tensor.dim_order = _dim_order


_SEGMENT_REDUCE = {'sum': ('sum', 0.0), 'mean': ('mean', math.nan), 'max': ('amax', -math.inf),
                   'min': ('amin', math.inf), 'prod': ('prod', 1.0)}
_SEGMENT_REDUCE.update(amax=_SEGMENT_REDUCE['max'], amin=_SEGMENT_REDUCE['min'])       # torch takes both names


def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """torch._segment_reduce: ``reduce`` ('sum', 'mean', 'max', 'min', 'prod') over consecutive segments of
    ``data`` along ``axis``, given by ``lengths`` or ``offsets``; an empty segment gives ``initial``, or the
    reduction's identity (NaN for the mean), and ``initial`` takes part in every segment. A scatter_reduce, so it
    differentiates. PyG aggregates with it when torch_scatter is absent."""
    E = _E()
    if reduce not in _SEGMENT_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, max, min, mean or prod, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if offsets is not None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if lengths is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    if lengths.dim() != 1:
        raise NotImplementedError("segment_reduce: ember takes 1-D lengths or offsets")
    axis = axis + data.dim() if axis < 0 else axis
    if axis != lengths.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    n = lengths.shape[0]
    seg = E.repeat_interleave(E.arange(n, device=data.device), lengths.long())
    if seg.shape[0] != data.shape[axis]:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    view = [-1 if d == axis else 1 for d in _builtin_range(data.dim())]
    index = seg.reshape(view).expand(data.shape)
    how, identity = _SEGMENT_REDUCE[reduce]
    shape = list(data.shape)
    shape[axis] = n
    base = E.full(shape, identity if initial is None else initial, dtype=data.dtype, device=data.device)
    if reduce == 'mean' and initial is not None:     # initial joins each segment's sum, not its count
        out = base.scatter_reduce(axis, index, data, 'sum', include_self=True)
        n = lengths.reshape(view)
        return E.where(n == 0, out, out / n.to(out.dtype))      # an empty segment: initial itself
    out = base.scatter_reduce(axis, index, data, how, include_self=initial is not None)
    if initial is None and reduce in ('sum', 'prod') or initial is not None:
        return out
    empty = (lengths == 0).reshape(view)        # scatter_reduce leaves an untouched identity there, torch's fill
    return E.where(empty, E.full_like(out, identity), out)


_COMPRESSED = ('sparse_csr', 'sparse_csc', 'sparse_bsr', 'sparse_bsc')


def _layout_family(t):
    name = str(t.layout).rsplit('.', 1)[-1]
    # torch compares dispatch keys: the dense backends are one family, Meta is apart
    return ('sparse_compressed' if name in _COMPRESSED else name), t.device.type == 'meta'


def _has_compatible_shallow_copy_type(input, from_):
    """Whether ``from_``'s data could be swapped into ``input`` in place (``param.data = t``): both dense (on
    real devices, or both meta), both sparse COO, or both sparse compressed.

    >>> import ember
    >>> a = ember.ones(2)
    >>> _has_compatible_shallow_copy_type(a, ember.zeros(3)), _has_compatible_shallow_copy_type(a, a.to_sparse())
    (True, False)
    """
    return _layout_family(input) == _layout_family(from_)
