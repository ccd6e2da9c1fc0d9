"""NestedTensor: a batch of tensors that differ in one dimension, packed into one dense tensor.

NOTE [nested tensors] -- as torch's jagged layout (torch/nested/_internal/nested_tensor.py), a nested tensor of
shape (B, j1, D) holds ``_values``, the components concatenated along their ragged dimension (sum_j, D), and
``_offsets``, B + 1 int64 positions where each component starts (``_lengths`` too for one with holes: then a component
is ``_values[offsets[b]:offsets[b] + lengths[b]]``). ``_ragged_idx`` says which outer dimension is ragged (1 unless a
transpose moved it); the ragged size is a nested int (NOTE [nested ints]).

It is a wrapper subclass (``Tensor._make_wrapper_subclass``: dtype, device, no data of its own). Where torch's class
answers aten operators in ``__torch_dispatch__`` and records autograd on the nested tensor itself (its gradients are
nested tensors, every backward operator has a jagged kernel), ember's answers the public call in
``__torch_function__`` (ops.py): each operator runs on ``_values``, a plain tensor, and the result is wrapped with the
same offsets. Autograd therefore records on the values: gradients reach the values and the dense inputs through
ember's ordinary formulas, and what a nested tensor reports about autograd (``requires_grad``, ``grad_fn``,
``is_leaf``, ``grad``, ``backward``) is its values' (``grad`` wrapped as a nested tensor). The visible differences: a
``grad_fn`` is the values' node (``AddBackward0`` where torch's may read ``...AutogradNestedTensor0``), and an
operator reaching the aten level with a nested tensor (a function ember writes in other operators that is not in the
table) raises NotImplementedError naming it, as torch's table does for an operator it lacks.

torch's default layout, strided (``nested_tensor(list)``), is kept by the same class with ``_nt_layout`` strided: it
reports ``layout``, ``values()`` (the flat buffer), ``shape`` (an error) and ``repr`` as torch's strided nested tensors
do and runs the same operators. Unlike torch's, it holds components that differ in one dimension at most.
"""
import ember
from ember import Tensor
from ember._C import DisableTorchFunctionSubclass

from .nested_int import NestedInt, get_tensor_nested_int


class NestedTensor(Tensor):
    """A jagged (or strided) nested tensor; made by ``ember.nested.nested_tensor`` and friends, not by hand.

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(4, 3)], layout=ember.jagged)
    >>> nt.values().shape, nt.offsets()
    (ember.Size([6, 3]), tensor([0, 2, 6]))
    """

    @staticmethod
    def __new__(cls, values, offsets, *, lengths=None, _ragged_idx=1, _metadata_cache=None, _layout=None, **kwargs):
        if offsets is None or offsets.dim() != 1:
            raise AssertionError('offsets must be a 1-D tensor')
        if isinstance(values, NestedTensor):
            raise AssertionError('values must not be a NestedTensor')
        if values.device != offsets.device:
            raise AssertionError(f'values and offsets must be on the same device, but got values.device='
                                 f'{values.device} and offsets.device={offsets.device}')
        r = Tensor._make_wrapper_subclass(cls, values.shape, dtype=values.dtype, device=values.device)
        # a strided nested tensor shows no nested int (its shape is an error): it takes none from the counter
        ragged = NestedInt(0) if _layout is ember.strided else \
            get_tensor_nested_int(offsets if lengths is None else lengths)
        k = _ragged_idx - 1
        r._values, r._offsets, r._lengths, r._ragged_idx = values, offsets, lengths, _ragged_idx
        r._size = (offsets.shape[0] - 1, *values.shape[:k], ragged, *values.shape[k + 1:])
        stride = values.stride()
        r._nt_strides = (ragged * stride[k], *stride)
        r._metadata_cache = _metadata_cache if _metadata_cache is not None else {}
        r._nt_layout = ember.jagged if _layout is None else _layout
        return r

    def __init__(self, *args, **kwargs):
        pass

    def values(self):
        """The packed components: (sum_j, ...) for the jagged layout, the flat buffer for the strided one."""
        if self._nt_layout is ember.strided:
            return ember.cat([c.reshape(-1) for c in components(self)])
        return self._values.view(self._values.shape)    # a new view each time, as torch's _nested_get_values

    def offsets(self):
        if self._nt_layout is ember.strided:
            raise AttributeError("'Tensor' object has no attribute 'offsets'")
        return self._offsets

    def lengths(self):
        if self._nt_layout is ember.strided:
            raise AttributeError("'Tensor' object has no attribute 'lengths'")
        return self._lengths

    def _nested_tensor_size(self):
        """The components' sizes, one row each (the strided layout's; torch's jagged layout lacks it)."""
        if self._nt_layout is not ember.strided:
            raise NotImplementedError('aten._nested_tensor_size.default')
        return ember.tensor([list(c.shape) for c in components(self)], dtype=ember.int64)

    def to_padded_tensor(self, padding, output_size=None):
        """``torch.nested.to_padded_tensor(self, padding, output_size)`` as a method."""
        from .ops import to_padded_tensor
        return to_padded_tensor(self, padding, output_size)

    def _get_max_seqlen(self):
        if 'max_seqlen' not in self._metadata_cache:
            self._metadata_cache['max_seqlen'] = int(self._seq_lengths().max().item())
        return self._metadata_cache['max_seqlen']

    def _get_min_seqlen(self):
        if 'min_seqlen' not in self._metadata_cache:
            self._metadata_cache['min_seqlen'] = int(self._seq_lengths().min().item())
        return self._metadata_cache['min_seqlen']

    @property
    def _maybe_max_seqlen(self):
        return self._metadata_cache.get('max_seqlen')

    @property
    def _maybe_min_seqlen(self):
        return self._metadata_cache.get('min_seqlen')

    def _seq_lengths(self):
        return self._offsets.diff() if self._lengths is None else self._lengths

    def _is_contiguous(self):
        return self._lengths is None and self._values.is_contiguous()

    def __repr__(self):
        with DisableTorchFunctionSubclass():
            if self._nt_layout is ember.strided:
                return _strided_repr(self)
            v = self._values
            grad = f', requires_grad={v.requires_grad}' if v.requires_grad else ''
            if v.grad_fn is not None:
                grad = f', grad_fn={v.grad_fn}'
            size = '(' + ', '.join(str(s) for s in self._size) + ')'
            return f'NestedTensor(size={size}, offsets={self._offsets}{grad}, contiguous={self._is_contiguous()})'

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from .ops import jagged_torch_function
        with DisableTorchFunctionSubclass():
            return jagged_torch_function(func, *args, **(kwargs or {}))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        # every public call is answered in __torch_function__; an operator that still reaches the aten level with a
        # nested tensor is one the table lacks
        raise NotImplementedError(f'{func}: not supported for nested tensors')


def _rebuild_njt(kwargs):
    """Unpickling (``__reduce_ex__`` in ops.py): a nested tensor over the unpickled parts."""
    kwargs = dict(kwargs)
    return NestedTensor(kwargs.pop('values'), kwargs.pop('offsets'), **kwargs)


def _strided_repr(nt):
    """torch's ``nested_tensor([...])`` form: each component's repr, indented by two spaces, then the autograd state
    (components of a nested tensor that requires grad print ``requires_grad=True``, as torch's do)."""
    v = nt._values
    comps = [c.detach().requires_grad_(v.requires_grad) for c in components(nt)]
    shown = [repr(c).replace('\n', '\n  ') for c in comps]
    tail = f', grad_fn=<{type(v.grad_fn).__name__}>' if v.grad_fn is not None else \
        ', requires_grad=True' if v.requires_grad else ''
    return 'nested_tensor([\n' + ',\n'.join('  ' + c for c in shown) + '\n]' + tail + ')'


def components(nt):
    """The components of ``nt`` (torch's ``unbind``): slices of the values along the packed dim, so gradients flow."""
    k = nt._ragged_idx - 1
    if nt._lengths is None:
        return ember.split(nt._values, nt._offsets.diff().tolist(), dim=k)
    return [nt._values.narrow(k, o, n) for o, n in zip(nt._offsets.tolist(), nt._lengths.tolist())]


def extract_kwargs(nt):
    """What a result that keeps ``nt``'s raggedness is made with (torch's ``extract_kwargs``)."""
    return {'offsets': nt._offsets, 'lengths': nt._lengths, '_ragged_idx': nt._ragged_idx,
            '_metadata_cache': nt._metadata_cache, '_layout': nt._nt_layout}


def wrap_like(values, nt, **changes):
    """``values`` as a nested tensor with ``nt``'s offsets (so its nested int), ragged dim and layout."""
    kw = extract_kwargs(nt)
    kw.update(changes)
    return NestedTensor(values, **kw)


def jagged_from_list(tensors, offsets=None, dtype=None, device=None, layout=None):
    """A nested tensor over the concatenation of ``tensors`` (torch's ``jagged_from_list``), and its offsets."""
    if len(tensors) == 0:
        raise RuntimeError('Cannot construct a nested tensor from an empty tensor list')
    for what, key in (('dtype', lambda t: t.dtype), ('device', lambda t: t.device), ('dim', lambda t: t.dim())):
        if len({key(t) for t in tensors}) != 1:
            raise RuntimeError(f'When constructing a nested tensor, all tensors in list must have the same {what}')
    component_dim = tensors[0].dim()
    if component_dim == 0:
        raise RuntimeError('Cannot construct a nested tensor from a list of zero-dim tensors')
    sizes = [tuple(t.shape) for t in tensors]
    ragged = [d for d in range(component_dim) if any(s[d] != sizes[0][d] for s in sizes)]
    if len(ragged) > 1:
        if layout is ember.strided:
            raise NotImplementedError('ember.nested: a strided nested tensor whose components differ in more than '
                                      'one dimension is not supported (ember packs nested tensors in the jagged '
                                      'layout, which allows a single ragged dimension)')
        raise RuntimeError('Cannot represent given tensor list as a nested tensor with the jagged layout. Note that '
                           'the jagged layout only allows for a single ragged dimension. For example: (B, *, D_0, '
                           'D_1, ..., D_N), with ragged * dim.')
    ragged_idx = ragged[0] + 1 if ragged else 1
    values = ember.cat(tensors, dim=ragged_idx - 1)
    to = {k: v for k, v in (('device', device), ('dtype', dtype)) if v is not None}
    values = values.to(**to) if to else values
    if offsets is None:
        lens = ember.tensor([s[ragged_idx - 1] for s in sizes], device=values.device)
        offsets = ember.cat([ember.zeros(1, dtype=ember.int64, device=values.device), lens.cumsum(dim=0)])
    lens = [s[ragged_idx - 1] for s in sizes]
    cache = {'min_seqlen': min(lens), 'max_seqlen': max(lens)}
    nt = NestedTensor(values, offsets, _ragged_idx=ragged_idx, _metadata_cache=cache, _layout=layout)
    return nt, offsets


def nested_view_from_values_offsets_lengths(values, offsets, lengths=None, ragged_idx=1, min_seqlen=None,
                                            max_seqlen=None):
    """A nested tensor over ``values`` itself (torch's ``_nested_view_from_jagged``): gradients reach ``values``."""
    cache = {k: v for k, v in (('min_seqlen', min_seqlen), ('max_seqlen', max_seqlen)) if v is not None}
    return NestedTensor(values, offsets, lengths=lengths, _ragged_idx=ragged_idx, _metadata_cache=cache)


def nested_view_from_values_offsets(values, offsets, ragged_idx=1, min_seqlen=None, max_seqlen=None):
    return nested_view_from_values_offsets_lengths(values, offsets, None, ragged_idx, min_seqlen, max_seqlen)
