"""The operators of jagged nested tensors (torch/nested/_internal/ops.py's table, at the public-call level).

``jagged_torch_function`` receives every public call that has a NestedTensor argument (NOTE [nested tensors]): a
Tensor method, Python operator or property (``Tensor.add``, ``Tensor.shape.__get__``) or a function (``ember.add``,
``F.linear``). It finds the handler by the call's name in ``TABLE``; pointwise operators (``'pointwise'`` among the
tags of ``ember.ops.aten.<name>``) share one handler; a name in ``_AS_IS`` (dtype, device, ...) runs on the wrapper
itself. Handlers run with subclass handlers off and call ``func`` (or another public function) on the values: the
results are plain tensors that the handler wraps with the input's offsets. Anything else raises NotImplementedError
naming the operator, as torch's table does.

Dimensions: an outer dim ``d`` of a (B, ..., j, ...) nested tensor is dim ``d - 1`` of its values; the batch dim
and the ragged dim both map to the packed dim ``ragged_idx - 1`` (torch's ``_outer_to_inner_dim``).
"""
import functools
import math

import ember
from ember import Tensor
from ember.ops import aten

from .nested_tensor import NestedTensor, components, wrap_like, nested_view_from_values_offsets_lengths

TABLE = {}


def register(*names):
    def deco(fn):
        for n in names:
            TABLE[n] = fn
        return fn
    return deco


# --- finding the handler -----------------------------------------------------------------------------------------

# a Python operator's core name -> the operator it computes; ``__r<op>__`` computes it too (with the operands the
# other way round, which calling ``func`` itself on the values keeps), ``__i<op>__`` is its in-place form
_DUNDER = {'add': 'add', 'sub': 'sub', 'mul': 'mul', 'truediv': 'div', 'div': 'div', 'floordiv': 'floor_divide',
           'mod': 'remainder', 'pow': 'pow', 'matmul': 'matmul', 'and': 'bitwise_and', 'or': 'bitwise_or',
           'xor': 'bitwise_xor', 'lshift': 'bitwise_left_shift', 'rshift': 'bitwise_right_shift', 'neg': 'neg',
           'pos': 'positive', 'abs': 'abs', 'invert': 'bitwise_not', 'eq': 'eq', 'ne': 'ne', 'lt': 'lt', 'le': 'le',
           'gt': 'gt', 'ge': 'ge'}

_PROPERTY_NAMES = {}


def _call_name(func):
    """(name, kind): ``('shape', 'get')`` for a property read, ``('add', 'call')`` for ``Tensor.add``/``ember.add``
    and ``2 + x``, ``('add_', 'call')`` for ``x += 1``, ``('__len__', 'call')`` for ``len(x)``."""
    name = getattr(func, '__name__', '')
    if name in ('__get__', '__set__'):
        prop = getattr(func, '__self__', None)
        if not _PROPERTY_NAMES:
            _PROPERTY_NAMES.update({id(v): k for k, v in vars(Tensor).items() if isinstance(v, property)})
        return _PROPERTY_NAMES.get(id(prop), getattr(getattr(prop, 'fget', None), '__name__', '?')), name[2:5]
    name = name.split('.')[0]
    if name.startswith('__') and name.endswith('__'):
        core = name[2:-2]
        if core in _DUNDER:
            return _DUNDER[core], 'call'
        if core[:1] == 'r' and core[1:] in _DUNDER:
            return _DUNDER[core[1:]], 'call'
        if core[:1] == 'i' and core[1:] in _DUNDER:
            return _DUNDER[core[1:]] + '_', 'call'
    return name, 'call'


@functools.lru_cache(maxsize=None)
def _is_pointwise(name):
    packet = getattr(aten, name[:-1] if name.endswith('_') else name, None)
    if packet is None or not hasattr(packet, 'overloads'):
        return False
    return any(ember.Tag.pointwise in getattr(getattr(packet, o), 'tags', ()) for o in packet.overloads())


def jagged_torch_function(func, *args, **kwargs):
    name, kind = _call_name(func)
    handler = TABLE.get(name if kind == 'call' else f'{name}.{kind}')
    if handler is not None:
        return handler(func, *args, **kwargs)
    if kind == 'get' and name in _AS_IS_PROPERTIES or kind == 'call' and name in _AS_IS:
        return func(*args, **kwargs)
    if kind == 'call' and _is_pointwise(name):
        return pointwise(func, name, *args, **kwargs)
    raise NotImplementedError(f'aten.{name}: not supported for nested tensors' if kind == 'call' else
                              f'Tensor.{name}: not supported for nested tensors')


# answered by the wrapper itself: it has the values' dtype and device
_AS_IS_PROPERTIES = frozenset({'dtype', 'device', 'is_cpu', 'is_cuda', 'is_meta', 'is_sparse', 'is_quantized',
                               'is_mkldnn', 'is_mps', 'is_xpu', 'is_sparse_csr', 'itemsize', 'names', '__class__'})
_AS_IS = frozenset({'is_floating_point', 'is_complex', 'element_size', 'get_device', '__format__', 'is_signed'})


# --- metadata ---------------------------------------------------------------------------------------------------

def _ndim(t):
    """The rank a caller sees (inside a handler ``t.dim()`` reads the wrapper's own, the values' rank)."""
    return len(t._size) if isinstance(t, NestedTensor) else t.dim()


def _is_strided(nt):
    return nt._nt_layout is ember.strided


def _canon(ndim, dim):
    if not -ndim <= dim < ndim:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})')
    return dim % ndim


@register('shape.get')
def _shape(func, nt):
    if _is_strided(nt):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an issue.")
    return ember.Size(nt._size)


@register('size')
def _size(func, nt, dim=None):
    if dim is None:
        return _shape(func, nt)
    d = _canon(len(nt._size), dim)
    if _is_strided(nt) and d == nt._ragged_idx and not _regular(nt):
        raise RuntimeError(f'Given dimension {d} is irregular and does not have a size.')
    return nt._size[d] if not _is_strided(nt) or d != nt._ragged_idx else int(nt._seq_lengths()[0])


def _regular(nt):
    lens = nt._seq_lengths()
    return bool((lens == lens[0]).all())


@register('stride')
def _stride(func, nt, dim=None):
    if _is_strided(nt):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please file an issue.")
    return nt._nt_strides if dim is None else nt._nt_strides[_canon(len(nt._size), dim)]


@register('dim', 'ndimension', 'ndim.get')
def _dim(func, nt):
    return len(nt._size)


@register('__len__')
def _len(func, nt):
    return _shape(func, nt)[0]      # torch's __len__ reads the shape, which a strided nested tensor lacks


@register('numel', 'nelement')
def _numel(func, nt):
    if nt._lengths is None:
        return nt._values.numel()
    fixed = math.prod(s for i, s in enumerate(nt._size) if i not in (0, nt._ragged_idx))
    return int(nt._lengths.sum().item()) * fixed


@register('layout.get')
def _layout(func, nt):
    return nt._nt_layout


@register('is_nested.get')
def _is_nested(func, nt):
    return True


@register('is_contiguous')
def _is_contiguous(func, nt, memory_format=None):
    return nt._is_contiguous()


@register('__repr__', '__str__')
def _repr(func, nt, *args, **kwargs):
    return NestedTensor.__repr__(nt)


# --- autograd: answered by the values (NOTE [nested tensors]) ---------------------------------------------------

@register('requires_grad.get', 'is_leaf.get', 'grad_fn.get', 'retains_grad.get', '_version.get')
def _values_property(func, nt):
    name, _ = _call_name(func)
    return getattr(nt._values, name)


@register('requires_grad.set')
def _set_requires_grad(func, nt, flag):
    nt._values.requires_grad = flag


@register('grad.get')
def _grad(func, nt):
    g = nt._values.grad
    return None if g is None else wrap_like(g, nt)


@register('grad.set')
def _set_grad(func, nt, g):
    nt._values.grad = g._values if isinstance(g, NestedTensor) else g


@register('requires_grad_')
def _requires_grad_(func, nt, requires_grad=True):
    nt._values.requires_grad_(requires_grad)
    return nt


@register('retain_grad')
def _retain_grad(func, nt):
    nt._values.retain_grad()


def _unwrap(ts):
    if ts is None:
        return None
    if isinstance(ts, Tensor):
        return ts._values if isinstance(ts, NestedTensor) else ts
    return tuple(_unwrap(t) for t in ts)


@register('backward')
def _backward(func, tensors, *args, **kwargs):
    """``nt.backward(gradient)`` and ``torch.autograd.backward(tensors, grad_tensors)``: on the values."""
    if func is ember.autograd.backward:
        kwargs = {k: _unwrap(v) if k in ('grad_tensors', 'inputs') else v for k, v in kwargs.items()}
        return func(_unwrap(tensors), *_unwrap(args), **kwargs)
    kwargs = {k: _unwrap(v) if k in ('gradient', 'inputs') else v for k, v in kwargs.items()}
    args = tuple(_unwrap(a) if i in (0, 3) else a for i, a in enumerate(args))
    tensors._values.backward(*args, **kwargs)


@register('grad')
def _autograd_grad(func, outputs, inputs, grad_outputs=None, **kwargs):
    """``torch.autograd.grad`` with nested outputs or inputs: on the values; a nested input's gradient is nested."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    res = func(_unwrap(outputs), _unwrap(inputs), _unwrap(grad_outputs), **kwargs)
    return tuple(wrap_like(g, i) if isinstance(i, NestedTensor) and g is not None else g for g, i in zip(res, inputs))


@register('detach')
def _detach(func, nt):
    return wrap_like(nt._values.detach(), nt)


@register('data.get')
def _data(func, nt):
    return wrap_like(nt._values.detach(), nt)


# --- copies and conversions --------------------------------------------------------------------------------------

@register('clone')
def _clone(func, nt, memory_format=None):
    if nt._lengths is not None:     # a copy without the holes, as torch's
        comps = components(nt)
        from .nested_tensor import jagged_from_list
        return jagged_from_list(list(comps), layout=nt._nt_layout)[0]
    return wrap_like(nt._values.clone(), nt)


@register('contiguous')
def _contiguous(func, nt, memory_format=None):
    if nt._is_contiguous():
        return nt
    return _clone(func, nt) if nt._lengths is not None else wrap_like(nt._values.contiguous(), nt)


@register('to', 'float', 'double', 'half', 'bfloat16', 'int', 'long', 'bool', 'cpu', 'cuda', 'type_as')
def _to(func, nt, *args, **kwargs):
    args = tuple(a._values if isinstance(a, NestedTensor) else a for a in args)
    values = func(nt._values, *args, **kwargs)
    if values is nt._values:
        return nt
    offsets = nt._offsets if values.device == nt._offsets.device else nt._offsets.to(values.device)
    lengths = nt._lengths if nt._lengths is None or values.device == nt._lengths.device else \
        nt._lengths.to(values.device)
    return wrap_like(values, nt, offsets=offsets, lengths=lengths)


@register('__deepcopy__')
def _deepcopy(func, nt, memo):
    """A copy with its own values and offsets and the same shape (the same nested int), as torch's."""
    import copy
    from .nested_int import set_tensor_nested_int
    offsets = copy.deepcopy(nt._offsets, memo)
    lengths = None if nt._lengths is None else copy.deepcopy(nt._lengths, memo)
    set_tensor_nested_int(offsets if lengths is None else lengths, nt._size[nt._ragged_idx])
    out = NestedTensor(copy.deepcopy(nt._values, memo), offsets, lengths=lengths, _ragged_idx=nt._ragged_idx,
                       _metadata_cache=dict(nt._metadata_cache), _layout=nt._nt_layout)
    memo[id(nt)] = out
    return out


@register('type')
def _type(func, nt, *args, **kwargs):
    return func(nt, *args, **kwargs) if not args and not kwargs else _to(func, nt, *args, **kwargs)


@register('__reduce_ex__')
def _reduce_ex(func, nt, proto):
    """Pickled as its parts (torch's ``_rebuild_njt``): the values and offsets pickle as the tensors they are."""
    from .nested_tensor import _rebuild_njt
    return _rebuild_njt, ({'values': nt._values, 'offsets': nt._offsets, 'lengths': nt._lengths,
                           '_ragged_idx': nt._ragged_idx, '_layout': nt._nt_layout,
                           'requires_grad': nt._values.requires_grad},)     # (torch's reader reads this flag)


# --- pointwise ---------------------------------------------------------------------------------------------------

def _raggedness_matches(nt, other):
    """Jagged: the same nested int at the same dim (torch's ``raggedness_matches``); strided (no nested ints): the
    same component lengths, as torch compares nested sizes."""
    if len(nt._size) != len(other._size) or nt._ragged_idx != other._ragged_idx:
        return False
    if _is_strided(nt) or _is_strided(other):
        return _is_strided(nt) and _is_strided(other) and nt._seq_lengths().tolist() == other._seq_lengths().tolist()
    return nt._size[nt._ragged_idx] == other._size[nt._ragged_idx]


def _squeeze_leading_ones(t):
    while t.dim() > 0 and t.shape[0] == 1:
        t = t.squeeze(0)
    return t


def _dense_as_values(nt, t, name):
    """A dense operand of a binary operator with ``nt``, as an operand of ``nt._values`` (torch's
    ``jagged_binary_pointwise``): one that broadcasts over the trailing non-ragged dims as it is, one of the nested
    tensor's rank (B, 1, ...) repeated along each component's length."""
    if t.dim() > _ndim(nt):
        raise NotImplementedError('NYI: broadcasting NT with T with larger dim')
    ts = _squeeze_leading_ones(t)
    if _ndim(nt) >= ts.dim() + 2:
        return ts
    r = nt._ragged_idx
    if t.dim() == _ndim(nt) and t.shape[0] == nt._size[0] and t.shape[r] == 1:
        batch_of_row = ember.repeat_interleave(ember.arange(nt._size[0], device=t.device), nt._seq_lengths())
        return t.select(r, 0)[batch_of_row].movedim(0, r - 1)
    raise RuntimeError(f'cannot call binary pointwise function {name} with inputs of shapes {_shape_str(nt)} and '
                       f'{tuple(t.shape)}')


def _shape_str(t):
    return '(' + ', '.join(str(s) for s in t._size) + ')' if isinstance(t, NestedTensor) else str(tuple(t.shape))


def pointwise(func, name, *args, **kwargs):
    """A unary or binary pointwise operator (the first two arguments may be nested tensors, dense tensors, numbers);
    an in-place one writes the values and returns the nested tensor."""
    nts = [a for a in args[:2] if isinstance(a, NestedTensor)]
    nt = nts[0]
    if len(nts) == 2 and not _raggedness_matches(nts[0], nts[1]):
        raise RuntimeError(f'cannot call binary pointwise function {name} with inputs of shapes '
                           f'{_shape_str(nts[0])} and {_shape_str(nts[1])}')
    new = []
    for i, a in enumerate(args):
        if isinstance(a, NestedTensor):
            a = a._values
        elif i < 2 and isinstance(a, Tensor) and _ndim(a) > 0:
            a = _dense_as_values(nt, a, name)
        new.append(a)
    kwargs = {k: (v._values if isinstance(v, NestedTensor) else v) for k, v in kwargs.items()}
    out = func(*new, **kwargs)
    if name.endswith('_') or out is new[0]:
        return args[0]
    return wrap_like(out, nt)


@register('dropout', 'alpha_dropout', 'feature_alpha_dropout_', 'dropout_')
def _dropout(func, nt, *args, **kwargs):
    out = func(nt._values, *args, **kwargs)
    return nt if out is nt._values else wrap_like(out, nt)


@register('where')
def _where(func, cond, *args, **kwargs):
    if not args:
        raise NotImplementedError('aten.where(condition): not supported for nested tensors')
    a, b = (x._values if isinstance(x, NestedTensor) else x for x in args)
    out = func(cond._values if isinstance(cond, NestedTensor) else cond, a, b)
    like = next(x for x in (cond,) + args if isinstance(x, NestedTensor))
    return wrap_like(out, like)


# --- dims ---------------------------------------------------------------------------------------------------------

def _inner(nt, dim, op, allow_ragged=False, allow_batch=False):
    """The values' dim for outer ``dim`` (torch's ``_wrap_jagged_dim``)."""
    d = _canon(len(nt._size), dim)
    if d == nt._ragged_idx and not allow_ragged:
        raise RuntimeError(f'{op}(): not supported for NestedTensor on ragged dim')
    if d == 0 and not allow_batch:
        raise RuntimeError(f'{op}(): not supported for NestedTensor on dim=0')
    return nt._ragged_idx - 1 if d == 0 else d - 1


def _dims(nt, dims):
    """(inner dims, on batch, on ragged, on another dim) for outer ``dims`` (torch's ``_wrap_jagged_dims``)."""
    ds = [_canon(len(nt._size), d) for d in dims]
    inner = tuple(dict.fromkeys(nt._ragged_idx - 1 if d == 0 else d - 1 for d in ds))
    return inner, 0 in ds, nt._ragged_idx in ds, any(d not in (0, nt._ragged_idx) for d in ds)


@register('unbind')
def _unbind(func, nt, dim=0):
    if dim != 0:
        raise RuntimeError('unbind(): only supported for NestedTensor on dim=0')
    return components(nt)


@register('__getitem__', 'select')
def _getitem(func, nt, *args):
    name, _ = _call_name(func)
    dim, index = (0, args[0]) if name == '__getitem__' else args
    if dim == 0 and isinstance(index, int) and not isinstance(index, bool):
        comps = _unbind(func, nt)
        return comps[index]
    raise NotImplementedError(f'aten.{"select" if name == "select" else "index"}: nested tensors support an integer '
                              f'index along the batch dim only')


@register('__iter__')
def _iter(func, nt):
    return iter(_unbind(func, nt))


@register('transpose')
def _transpose(func, nt, dim0, dim1):
    n = len(nt._size)
    d0, d1 = _canon(n, dim0), _canon(n, dim1)
    r = nt._ragged_idx
    if r in (d0, d1):
        if 0 in (d0, d1):
            raise ValueError('Transpose is not supported on the batch dimension for jagged NT')
        to = d1 if d0 == r else d0
        values = nt._values.transpose(d0 - 1, d1 - 1)
        return wrap_like(values, nt, _ragged_idx=to)
    return wrap_like(nt._values.transpose(_inner(nt, d0, 'transpose'), _inner(nt, d1, 'transpose')), nt)


@register('unflatten')
def _unflatten(func, nt, dim, sizes):
    d = _canon(len(nt._size), dim)
    k = _inner(nt, d, 'unflatten')
    values = nt._values.unflatten(k, sizes)
    r = nt._ragged_idx + (len(sizes) - 1 if d < nt._ragged_idx else 0)
    return wrap_like(values, nt, _ragged_idx=r)


@register('flatten')
def _flatten(func, nt, start_dim=0, end_dim=-1):
    n = len(nt._size)
    s, e = _canon(n, start_dim), _canon(n, end_dim)
    for d in (s, e):
        _inner(nt, d, 'flatten')
    if s == e:
        return nt
    if s < nt._ragged_idx < e:
        raise RuntimeError('flatten(): not supported for NestedTensor across the ragged dim')
    values = nt._values.flatten(s - 1, e - 1)
    r = nt._ragged_idx - (e - s if e < nt._ragged_idx else 0)
    return wrap_like(values, nt, _ragged_idx=r)


@register('unsqueeze')
def _unsqueeze(func, nt, dim):
    d = _canon(len(nt._size) + 1, dim)
    if d == 0:
        raise RuntimeError('unsqueeze(): not supported for NestedTensor on dim=0')
    r = nt._ragged_idx + (1 if d <= nt._ragged_idx else 0)
    return wrap_like(nt._values.unsqueeze(d - 1), nt, _ragged_idx=r)


@register('squeeze')
def _squeeze(func, nt, dim=None):
    if dim is None:
        raise RuntimeError('squeeze(): For nested tensors, squeeze without the dim argument is not supported')
    d = _canon(len(nt._size), dim)
    k = _inner(nt, d, 'squeeze')
    r = nt._ragged_idx - (1 if d < nt._ragged_idx else 0)
    return wrap_like(nt._values.squeeze(k), nt, _ragged_idx=r)


@register('reshape', 'view')
def _reshape(func, nt, *shape):
    """Sizes that keep the batch dim and the ragged dim where they are (``nt.reshape(B, j, H, E)``)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    r = nt._ragged_idx
    name, _ = _call_name(func)
    ok = len(shape) > r and shape[0] in (nt._size[0], -1) and shape[r] == nt._size[r] and \
        tuple(shape[1:r]) == tuple(nt._size[1:r])
    if not ok:
        raise RuntimeError(f'{name}(): nested tensors support sizes that keep the batch and ragged dims only, got '
                           f'{tuple(shape)} for a nested tensor of size {_shape_str(nt)}')
    inner = tuple(nt._values.shape[:r]) + tuple(shape[r + 1:])
    return wrap_like(getattr(nt._values, name)(inner), nt)


@register('permute')
def _permute(func, nt, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    n = len(nt._size)
    if len(dims) != n:
        raise ValueError(f'permute(): number of dimensions in the tensor input ({n}) does not match the length of '
                         f'the desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = '
                         f'{len(dims)}')
    dims = [_canon(n, d) for d in dims]
    if dims[0] != 0:
        raise ValueError('Permute is not supported on the batch dimension for jagged NT')
    values = nt._values.permute(*[d - 1 for d in dims[1:]])
    return wrap_like(values, nt, _ragged_idx=dims.index(nt._ragged_idx))


@register('cat', 'concat', 'concatenate')
def _cat(func, tensors, dim=0):
    tensors = list(tensors)
    nt = next(t for t in tensors if isinstance(t, NestedTensor))
    if not all(isinstance(t, NestedTensor) and _raggedness_matches(nt, t) for t in tensors):
        raise RuntimeError('cat(): expected nested tensors with the same raggedness (the same offsets)')
    k = _inner(nt, dim, 'cat')
    return wrap_like(ember.cat([t._values for t in tensors], k), nt)


@register('split', 'chunk', 'split_with_sizes', 'tensor_split')
def _split(func, nt, sizes, dim=0):
    name, _ = _call_name(func)
    if _canon(len(nt._size), dim) == 0 and name == 'chunk' and nt._lengths is None:
        return _chunk_batch(nt, sizes)
    k = _inner(nt, dim, name)
    return tuple(wrap_like(v, nt) for v in func(nt._values, sizes, k))


def _chunk_batch(nt, chunks):
    """``chunk`` along the batch dim: each piece is a nested tensor of its own (new offsets, a new nested int)."""
    b = nt._size[0]
    step = -(-b // chunks)
    off = nt._offsets.tolist()
    k = nt._ragged_idx - 1
    pieces = []
    for s in range(0, b, step):
        e = min(s + step, b)
        values = nt._values.narrow(k, off[s], off[e] - off[s])
        offsets = nt._offsets[s:e + 1] - off[s]
        pieces.append(NestedTensor(values, offsets, _ragged_idx=nt._ragged_idx, _layout=nt._nt_layout))
    return tuple(pieces)


@register('zeros_like', 'ones_like', 'empty_like', 'rand_like', 'randn_like', 'full_like', 'randint_like')
def _like(func, nt, *args, **kwargs):
    return wrap_like(func(nt._values, *args, **kwargs), nt)


@register('masked_fill', 'masked_fill_')
def _masked_fill(func, *args, **kwargs):
    name, _ = _call_name(func)
    return pointwise(func, name, *args, **kwargs)


@register('expand_as', 'broadcast_to')
def _expand_as(func, nt, other):
    if isinstance(nt, NestedTensor) and (other is nt or (isinstance(other, NestedTensor) and
                                                         _raggedness_matches(nt, other) and
                                                         tuple(other._values.shape) == tuple(nt._values.shape))):
        return nt
    raise NotImplementedError('aten.expand_as: nested tensors expand to themselves only')


# --- reductions and normalizations --------------------------------------------------------------------------------

def _reduce(func, name, nt, dim, keepdim, **kwargs):
    """torch's ``_apply_reduction`` for sum and mean."""
    if dim is None or isinstance(dim, (tuple, list)) and len(dim) == 0:
        out = func(nt._values, **kwargs)
        return out.unsqueeze(nt._ragged_idx) if keepdim else out
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    inner, on_batch, on_ragged, on_other = _dims(nt, dims)
    inner = list(inner) if isinstance(dim, (tuple, list)) else inner[0]
    if on_ragged and nt._lengths is not None:
        raise RuntimeError(f'{name}(): reducing across the ragged dimension is not supported for non-contiguous '
                           f'nested tensors with holes')
    if on_ragged and on_batch:
        out = func(nt._values, inner, keepdim=keepdim, **kwargs)
        return out.unsqueeze(0) if keepdim else out
    if on_ragged:
        if on_other:
            raise RuntimeError(f'{name}(): reducing along a ragged and non-batch dimension is not supported for '
                               f'nested tensors')
        k = nt._ragged_idx - 1
        return ember.stack([func(c, k, keepdim=keepdim, **kwargs) for c in _unbind(func, nt)])
    if on_batch:
        raise RuntimeError(f'{name}(): reducing along the batch dimension but not the ragged dimension is not '
                           f'supported for nested tensors')
    out = func(nt._values, inner, keepdim=keepdim, **kwargs)
    r = nt._ragged_idx
    if not keepdim:
        r -= sum(1 for d in (inner if isinstance(inner, list) else [inner]) if d < nt._ragged_idx - 1)
    return wrap_like(out, nt, _ragged_idx=r)


@register('sum', 'mean', 'nansum', 'amax', 'amin')
def _sum_mean(func, nt, dim=None, keepdim=False, *, dtype=None, **kwargs):
    name, _ = _call_name(func)
    if dtype is not None:
        kwargs['dtype'] = dtype
    if isinstance(dim, ember.dtype):        # nt.sum(ember.float64)
        kwargs['dtype'], dim = dim, None
    return _reduce(func, name, nt, dim, keepdim, **kwargs)


@register('softmax', 'log_softmax')
def _softmax(func, nt, dim=None, *args, **kwargs):
    name, _ = _call_name(func)
    if isinstance(dim, tuple):
        raise RuntimeError(f"{name}(): not supported for dimensions of type 'tuple' for NestedTensor")
    inner, on_batch, on_ragged, _ = _dims(nt, [dim])
    if on_batch:
        raise RuntimeError(f'{name}(): not supported when reducing across the batch dimension for NestedTensor')
    if on_ragged and nt._ragged_idx > 1:
        raise RuntimeError(f'{name}(): not supported when reducing along the ragged dimension for ragged_idx > 1 '
                           f'for NestedTensor')
    if on_ragged and nt._lengths is not None:
        raise RuntimeError(f'{name}(): not supported where lengths is not None if reducing across the ragged '
                           f'dimension for NestedTensor')
    if on_ragged:       # each component on its own: what padding with -inf computes
        parts = [func(c, 0, *args, **kwargs) for c in _unbind(func, nt)]
        return wrap_like(ember.cat(parts, 0), nt)
    return wrap_like(func(nt._values, inner[0], *args, **kwargs), nt)


def _normalized_dims_ok(nt, normalized_shape, name):
    if len(normalized_shape) > _ndim(nt) - nt._ragged_idx - 1:
        raise RuntimeError(f'{name}(): normalizing over the ragged dim is not supported for nested tensors')


@register('layer_norm')
def _layer_norm(func, nt, normalized_shape, weight=None, bias=None, eps=1e-5, *args, **kwargs):
    normalized_shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else \
        (normalized_shape,)
    _normalized_dims_ok(nt, normalized_shape, 'layer_norm')
    return wrap_like(func(nt._values, normalized_shape, weight, bias, eps, *args, **kwargs), nt)


@register('rms_norm')
def _rms_norm(func, nt, normalized_shape, weight=None, eps=None):
    normalized_shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else \
        (normalized_shape,)
    if len(normalized_shape) > _ndim(nt) - nt._ragged_idx - 1:
        raise ValueError('rms_norm(): Normalization over the ragged dim not supported for nested tensors')
    return wrap_like(func(nt._values, normalized_shape, weight, eps), nt)


# --- linear algebra -----------------------------------------------------------------------------------------------

@register('linear')
def _linear(func, nt, weight, bias=None):
    if isinstance(weight, NestedTensor) or isinstance(bias, NestedTensor):
        raise NotImplementedError('aten.linear: a nested weight or bias is not supported')
    if nt._ragged_idx == _ndim(nt) - 1:
        raise RuntimeError('linear(): not supported for NestedTensor ragged in its last dim')
    return wrap_like(func(nt._values, weight, bias), nt)


@register('matmul', 'mm', 'bmm')
def _matmul(func, a, b):
    if isinstance(a, NestedTensor) and not isinstance(b, NestedTensor) and b.dim() <= 2 and \
            a._ragged_idx < _ndim(a) - 1:
        return wrap_like(func(a._values, b), a)
    raise NotImplementedError(f'aten.matmul: nested tensors support (B, j, ..., D) @ (D, E) only, got '
                              f'{_shape_str(a)} @ {_shape_str(b)}')


# --- stacking, padding ---------------------------------------------------------------------------------------------

def to_padded_tensor(nt, padding, output_size=None):
    """torch.nested.to_padded_tensor: components padded with ``padding`` to one dense tensor (B, max_j, ...).
    For the jagged layout ``output_size`` sets the padded length of the ragged dim alone (as torch's).

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.ones(1, 2), ember.ones(2, 2)], layout=ember.jagged)
    >>> ember.nested.to_padded_tensor(nt, 0.).tolist()
    [[[1.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]]]
    """
    if not isinstance(nt, NestedTensor):
        raise RuntimeError('to_padded_tensor(): expected a nested tensor')
    if nt._lengths is not None:
        raise RuntimeError('to_padded_tensor(): not supported for nested tensors with holes')
    comps = list(components(nt))
    k = nt._ragged_idx - 1
    if nt._nt_layout is ember.strided:
        target = [max(c.shape[d] for c in comps) for d in range(comps[0].dim())]
        if output_size is not None:
            out = list(output_size)
            if len(out) != len(target) + 1 or any(o < t for o, t in zip(out[1:], target)):
                raise RuntimeError('Value in output_size is less than NestedTensor padded size. Truncation is not '
                                   'supported.')
            target = out[1:]
        padded = [_pad_to(c, target, padding) for c in comps]
        stacked = ember.stack(padded)
        if output_size is not None and output_size[0] > stacked.shape[0]:
            fill = ember.full((output_size[0] - stacked.shape[0], *target), padding, dtype=stacked.dtype)
            stacked = ember.cat([stacked, fill])
        return stacked
    if output_size is not None:
        length = output_size[nt._ragged_idx]
    else:
        length = nt._maybe_max_seqlen if nt._maybe_max_seqlen is not None else nt._values.size(0)
    target = list(comps[0].shape)
    target[k] = length
    return ember.stack([_pad_to(c.narrow(k, 0, min(length, c.shape[k])), target, padding) for c in comps])


def _pad_to(c, target, padding):
    for d, t in enumerate(target):
        if c.shape[d] < t:
            fill_shape = list(c.shape)
            fill_shape[d] = t - c.shape[d]
            c = ember.cat([c, ember.full(fill_shape, padding, dtype=c.dtype, device=c.device)], dim=d)
    return c


@register('to_padded_tensor')
def _to_padded_method(func, nt, padding, output_size=None):
    return to_padded_tensor(nt, padding, output_size)


# --- attention ----------------------------------------------------------------------------------------------------

def _nested(t):
    return isinstance(t, NestedTensor)


def _validate_sdpa_input(q, k, v, attn_mask):
    if not all(isinstance(t, NestedTensor) for t in (q, k, v)):
        raise ValueError(f'Expected query, key, and value to be nested tensors, but got query.is_nested: '
                         f'{_nested(q)}, key.is_nested: {_nested(k)}, and value.is_nested: {_nested(v)} '
                         f'instead.')
    if q.dtype != k.dtype or q.dtype != v.dtype:
        raise ValueError(f'Expected query, key, and value to have the same dtype, but got query.dtype: {q.dtype}, '
                         f'key.dtype: {k.dtype}, and value.dtype: {v.dtype} instead.')
    if _ndim(q) < 3 or _ndim(k) < 3 or _ndim(v) < 3:
        raise ValueError(f'Expected query, key, and value to all be at least 3 dimensional, but got query.dim: '
                         f'{_ndim(q)}, key.dim: {_ndim(k)} and value.dim: {_ndim(v)} instead.')
    if not q._ragged_idx == k._ragged_idx == v._ragged_idx:
        raise ValueError(f'Expected query, key, and value to all be ragged on the same dimension, but got ragged '
                         f'dims {q._ragged_idx}, {k._ragged_idx}, and {v._ragged_idx}, respectively.')
    if attn_mask is not None:
        raise ValueError('Masks are not yet supported!')


@register('scaled_dot_product_attention')
def _sdpa(func, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """torch's ``jagged_scaled_dot_product_attention`` on CPU (its math backend): each sequence attends on its own,
    (H, l_q, E) against (H, l_k, E); the outputs are packed (sum_l, H, E) and seen as (B, H, j, E)."""
    _validate_sdpa_input(query, key, value, attn_mask)
    kw = dict(dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    if enable_gqa:
        kw['enable_gqa'] = True
    if _ndim(query) > 3 and query._ragged_idx == 1:     # ragged outside the attention dims: the values are a batch
        out = func(query._values, key._values, value._values, **kw)
        return wrap_like(out, query)
    # torch's only CPU backend for jagged inputs (math) takes (B, j, H, E)-contiguous inputs and no causal mask
    if is_causal or not all(_transpose(None, t, 1, 2)._is_contiguous() for t in (query, key, value)):
        raise RuntimeError('No viable backend for scaled_dot_product_attention was found.')
    qs, ks, vs = (_unbind(func, t) for t in (query, key, value))
    if not len(qs) == len(ks) == len(vs):
        raise RuntimeError(f'scaled_dot_product_attention(): query, key and value have batch sizes {len(qs)}, '
                           f'{len(ks)} and {len(vs)}')
    r = query._ragged_idx
    outs = [func(q.movedim(r - 1, -2), k.movedim(r - 1, -2), v.movedim(r - 1, -2), **kw).movedim(-2, 0)
            for q, k, v in zip(qs, ks, vs)]
    values = ember.cat(outs, 0)
    nt = nested_view_from_values_offsets_lengths(values, query._offsets, query._lengths,
                                                 min_seqlen=query._maybe_min_seqlen,
                                                 max_seqlen=query._maybe_max_seqlen)
    return _transpose(None, nt, 1, r) if r != 1 else nt
