"""torch.nested: tensors whose components differ in one dimension (NOTE [nested tensors]).

``nested_tensor`` copies a list into a new leaf; ``as_nested_tensor`` keeps the components' history;
``nested_tensor_from_jagged`` and ``narrow`` view an existing dense tensor; ``to_padded_tensor`` goes back to dense.
The jagged layout (``layout=ember.jagged``) is the one transformer code uses; the default strided layout is kept by
the same implementation and reports itself as torch's does.
"""
import ember
from ember import Tensor

from ._internal.nested_tensor import (NestedTensor as _NestedTensor, jagged_from_list as _jagged_from_list,
                                      nested_view_from_values_offsets_lengths as _view, _rebuild_njt)
from ._internal.ops import to_padded_tensor

ember.serialization.add_safe_globals([_NestedTensor, _rebuild_njt])     # as torch.nested does: weights_only loads

__all__ = ['to_padded_tensor', 'as_nested_tensor', 'nested_tensor', 'nested_tensor_from_jagged', 'narrow',
           'masked_select']

_STRIDED_WARNED = []


def _warn_strided():
    """torch warns once per process (TORCH_WARN_ONCE) when a strided nested tensor is made."""
    if not _STRIDED_WARNED:
        _STRIDED_WARNED.append(True)
        import warnings
        warnings.warn('The PyTorch API of nested tensors is in prototype stage and will change in the near future. '
                      'We recommend specifying layout=torch.jagged when constructing a nested tensor, as this layout '
                      'receives active development, has better operator coverage, and works with torch.compile.',
                      UserWarning, stacklevel=3)


def _check_layout(layout, what='Specified layout is unsupported for nested tensors'):
    if layout is None:
        return ember.strided
    if layout is not ember.strided and layout is not ember.jagged:
        raise RuntimeError(f'{what}: {layout}')
    return layout


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A nested tensor with no autograd history (a leaf) holding copies of ``tensor_list``'s tensors (or of what
    ``ember.tensor`` makes of its nested lists).

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.arange(3.), ember.arange(5.)], layout=ember.jagged, requires_grad=True)
    >>> nt.is_leaf, nt.shape[0], nt.size(0)
    (True, 2, 2)
    """
    layout = _check_layout(layout)
    if layout is ember.strided:
        _warn_strided()
    tensors = [t if isinstance(t, Tensor) else ember.as_tensor(t) for t in tensor_list]
    with ember.no_grad():
        nt, _ = _jagged_from_list(tensors, None, dtype=dtype, device=device, layout=layout)
        if nt._values is tensors[0] or nt._values._base is not None:     # one component: cat may hand it back
            nt = _NestedTensor(nt._values.clone(), nt._offsets, _ragged_idx=nt._ragged_idx,
                               _metadata_cache=nt._metadata_cache, _layout=layout)
    nt._values.requires_grad_(requires_grad)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor that keeps autograd history: from a list of tensors (copied, gradients flow back to each) or
    from a tensor (B, N, ...) whose rows are the components.

    >>> import ember
    >>> a, b = ember.ones(3, requires_grad=True), ember.ones(5, requires_grad=True)
    >>> nt = ember.nested.as_nested_tensor([a, b], layout=ember.jagged)
    >>> nt.is_leaf
    False
    """
    is_list = isinstance(ts, (list, tuple)) and all(isinstance(t, Tensor) for t in ts)
    if not isinstance(ts, Tensor) and not is_list:
        raise TypeError('as_nested_tensor(): Expected first argument to be a tensor or a list / tuple of tensors ')
    if isinstance(ts, Tensor) and ts.dim() < 2:
        raise RuntimeError('as_nested_tensor(): Expected tensor argument to have dim() > 1')
    if isinstance(ts, Tensor) and ts.is_nested:
        if layout == ts.layout:
            return ts.to(device=device, dtype=dtype)
        raise RuntimeError('as_nested_tensor(): Converting between nested tensor layouts is not supported')
    layout = _check_layout(layout)
    if layout is ember.strided:
        _warn_strided()
    if isinstance(ts, Tensor):
        device = ts.device if device is None else device
        values = ts.contiguous().flatten(0, 1).to(device=device, dtype=dtype)
        n = ts.shape[1]
        offsets = ember.arange(0, ts.shape[0] * n + 1, n, device=device, dtype=ember.int64)
        nt = _view(values, offsets, min_seqlen=n, max_seqlen=n)
        nt._nt_layout = layout
        return nt
    return _jagged_from_list(list(ts), None, dtype=dtype, device=device, layout=layout)[0]


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None, max_seqlen=None):
    """A jagged nested tensor viewing ``values`` (sum_B(*), D_1, ..., D_N), split by ``offsets`` (B + 1) and/or
    ``lengths`` (B; with offsets too: a nested tensor with holes).

    >>> import ember
    >>> nt = ember.nested.nested_tensor_from_jagged(ember.randn(12, 5), ember.tensor([0, 3, 5, 6, 10, 12]))
    >>> nt.shape[0], nt.shape[2]
    (5, 5)
    """
    if offsets is None:
        if lengths is None:
            raise RuntimeError('nested_tensor_from_jagged(): At least one of offsets or lengths is required.')
        offsets = ember.nn.functional.pad(lengths.cumsum(0), (1, 0))
        lengths = None
    if jagged_dim is None:
        jagged_dim = 1
    elif jagged_dim < 1:
        raise ValueError(f'Expected jagged_dim >=1, but got {jagged_dim}.')
    return _view(values, offsets, lengths, ragged_idx=jagged_dim, min_seqlen=min_seqlen, max_seqlen=max_seqlen)


def narrow(tensor, dim, start, length, layout=ember.strided):
    """The rows of ``tensor`` narrowed along ``dim`` to ``[start, start + length)``, where start and length may
    differ per row (tensors of shape B). Jagged layout: a view of ``tensor`` (a nested tensor with holes unless the
    rows stay contiguous); strided layout: a copy, integer start and length only.

    >>> import ember
    >>> nt = ember.nested.narrow(ember.randn(3, 4, 2), 1, ember.tensor([0, 1, 2]), ember.tensor([3, 2, 1]),
    ...                          layout=ember.jagged)
    >>> [tuple(c.shape) for c in nt.unbind()]
    [(3, 2), (2, 2), (1, 2)]
    """
    if not isinstance(start, (int, Tensor)):
        raise RuntimeError('start must be an integer or a tensor')
    if not isinstance(length, (int, Tensor)):
        raise RuntimeError('length must be an integer or a tensor')
    if layout is ember.strided:
        if isinstance(start, Tensor) or isinstance(length, Tensor):
            raise RuntimeError('start and length must be integers for the strided layout NT impl')
        if dim == 0:
            raise RuntimeError('narrow(): only supported for dim != 0 on a nested tensor')
        return as_nested_tensor([t.narrow(dim - 1, start, length) for t in ember.unbind(tensor)], layout=layout)
    if layout is not ember.jagged:
        raise RuntimeError(f'Specified layout is unsupported for nested narrow: {layout}')
    if dim != 1:
        raise RuntimeError('jagged layout only supports dim=1')
    b = tensor.shape[0]
    start = ember.tensor([start], dtype=ember.int64) if isinstance(start, int) else start
    length = ember.tensor([length], dtype=ember.int64) if isinstance(length, int) else length
    starts, lengths = start.expand(b), length.expand(b)
    n = tensor.shape[1]
    offsets = starts + n * ember.arange(b, dtype=ember.int64, device=tensor.device)
    offsets = ember.cat([offsets, (offsets[-1] + lengths[-1]).unsqueeze(0)])
    values = tensor.view(-1, *tensor.shape[2:]) if tensor.dim() > 2 else tensor.view(-1)
    lo, hi = int(lengths.min().item()), int(lengths.max().item())
    contiguous = bool((lengths[1:-1] == n).all()) and bool((offsets[1:-2].diff() == n).all()) and \
        int(offsets[0] + lengths[0]) == n
    if contiguous:
        return _view(values[int(offsets[0]):int(offsets[-1])], offsets - offsets[0], min_seqlen=lo, max_seqlen=hi)
    return _view(values, offsets, lengths, min_seqlen=lo, max_seqlen=hi)


def masked_select(tensor, mask):
    """The elements of ``tensor`` where ``mask`` is True, as a jagged nested tensor with one component per row.

    >>> import ember
    >>> nt = ember.nested.masked_select(ember.arange(6.).reshape(2, 3), ember.tensor([[True, False, True],
    ...                                 [False, False, True]]))
    >>> [c.tolist() for c in nt.unbind()]
    [[0.0, 2.0], [5.0]]
    """
    if tensor.layout is not ember.strided:
        raise RuntimeError(f'torch.nested.masked_select requires a strided tensor, given {tensor.layout}')
    if mask.layout is not ember.strided:
        raise RuntimeError(f'torch.nested.masked_select requires a strided mask, given: {mask.layout}')
    values = tensor.masked_select(mask)
    counts = mask.expand(tensor.shape).sum(-1).reshape(-1)
    offsets = ember.cat([ember.zeros(1, dtype=ember.int64, device=tensor.device), counts.cumsum(0)])
    return _view(values, offsets)
