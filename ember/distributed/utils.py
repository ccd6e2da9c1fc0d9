"""``torch.distributed.utils``: the helpers DDP and FSDP share, which libraries import (Lightning's
``_sync_module_states`` in predict): make a module's parameters and buffers equal on every rank
(``_sync_module_states``: one broadcast per bucket of ``broadcast_bucket_size`` bytes, torch's
``_broadcast_coalesced``), check that every rank holds the same parameter shapes
(``_verify_param_shape_across_processes``), pack/unpack keyword arguments, move and cast nested inputs.

>>> import ember
>>> from ember.distributed.utils import _pack_kwargs, _unpack_kwargs
>>> flat, keys = _pack_kwargs(1, 2, a=3)
>>> _unpack_kwargs(flat, keys)
((1, 2), {'a': 3})
"""
import dataclasses
import traceback
from collections import OrderedDict

import ember
from .distributed_c10d import broadcast, all_gather_object, get_rank

__all__ = []


# --- what torch has in C++ (torch.distributed._broadcast_coalesced, _verify_params_across_processes) ---------

def _buckets(tensors, buffer_size):
    """The tensors grouped by dtype (first appearance order, the same on every rank), each group cut into runs of
    at most ``buffer_size`` bytes (a larger tensor goes alone): BatchNorm's float and int64 buffers make two
    buckets, not two per layer."""
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    out = []
    for group in by_dtype.values():
        cur, nbytes = [], 0
        for t in group:
            size = t.numel() * t.element_size()
            if cur and nbytes + size > buffer_size:
                out.append(cur)
                cur, nbytes = [], 0
            cur.append(t)
            nbytes += size
        out.append(cur)
    return out


def _broadcast_coalesced(process_group, tensors, buffer_size, src=0):
    """Copy group rank ``src``'s ``tensors`` into every rank's, in place: each bucket of at most
    ``buffer_size`` bytes travels as one flat broadcast (torch's ``dist._broadcast_coalesced``)."""
    from .._utils import _flatten_dense_tensors, _unflatten_dense_tensors     # ember._utils imports the front end
    with ember.no_grad():
        for bucket in _buckets(list(tensors), buffer_size):
            flat = _flatten_dense_tensors(bucket)
            broadcast(flat, group=process_group, group_src=src)
            if get_rank(process_group) != src:
                for t, v in zip(bucket, _unflatten_dense_tensors(flat, bucket)):
                    t.copy_(v)


def _verify_params_across_processes(process_group, tensors, logger=None):
    """Raise torch's RuntimeError unless every rank of the group has as many tensors, with the same shapes and
    strides, as this one (``dist._verify_params_across_processes``, run by DDP at construction)."""
    mine = [(tuple(t.shape), tuple(t.stride())) for t in tensors]
    everyone = [None] * ember.distributed.get_world_size(process_group)
    all_gather_object(everyone, mine, group=process_group)
    rank = get_rank(process_group)
    for r, theirs in enumerate(everyone):
        if len(theirs) != len(mine):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {rank} has {len(mine)} params, "
                               f"while rank {r} has inconsistent {len(theirs)} params.")
    for i, (a, b) in enumerate(zip(mine, everyone[0])):     # torch compares each rank with rank 0's metadata
        what = 'sizes' if a[0] != b[0] else 'strides' if a[1] != b[1] else None
        if what:
            raise RuntimeError(f"[{rank}]: params[{i}] in this process with {what} "
                               f"{list(a[0] if what == 'sizes' else a[1])} appears not to match {what} of the same "
                               f"param in process 0.")


# --- torch/distributed/utils.py -----------------------------------------------------------------------------

def _verify_param_shape_across_processes(process_group, tensors, logger=None):
    return _verify_params_across_processes(process_group, tensors, logger)


def _sync_module_states(module, process_group, broadcast_bucket_size, src, params_and_buffers_to_ignore,
                        broadcast_buffers=True):
    """Make ``module``'s parameters (and buffers) on every rank equal to group rank ``src``'s, skipping the names
    in ``params_and_buffers_to_ignore``. Assumes equal shapes (``_verify_param_shape_across_processes``)."""
    states = [p.detach() for n, p in module.named_parameters() if n not in params_and_buffers_to_ignore]
    if broadcast_buffers:
        states += [b.detach() for n, b in module.named_buffers() if n not in params_and_buffers_to_ignore]
    _sync_params_and_buffers(process_group, states, broadcast_bucket_size, src)


def _sync_params_and_buffers(process_group, module_states, broadcast_bucket_size, src):
    if len(module_states) > 0:
        _broadcast_coalesced(process_group, module_states, broadcast_bucket_size, src)


def _pack_kwargs(*args, **kwargs):
    """``(args + kwargs values, kwargs keys)``; ``_unpack_kwargs`` undoes it."""
    return tuple(args) + tuple(kwargs.values()), tuple(kwargs)


def _unpack_kwargs(flat_args, kwarg_keys):
    if len(kwarg_keys) > len(flat_args):
        raise AssertionError(f"too many keys {len(kwarg_keys)} vs. {len(flat_args)}")
    if len(kwarg_keys) == 0:
        return flat_args, {}
    return flat_args[:-len(kwarg_keys)], dict(zip(kwarg_keys, flat_args[-len(kwarg_keys):]))


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, '_asdict') and hasattr(x, '_fields')


def _apply_to_tensors(fn, container):
    """``fn`` applied to every tensor in nested dataclasses, dicts, lists, tuples, sets and namedtuples."""
    from ..nn.utils.rnn import PackedSequence

    def apply(x):
        if isinstance(x, ember.Tensor):
            return fn(x)
        if hasattr(x, '__dataclass_fields__'):
            dc = dataclasses.replace(x)
            return dataclasses.replace(dc, **{f.name: apply(getattr(dc, f.name)) for f in dataclasses.fields(dc)})
        if isinstance(x, OrderedDict):
            return x.__class__((k, apply(v)) for k, v in x.items())
        if isinstance(x, PackedSequence):
            apply(x.data)
            return x
        if isinstance(x, dict):
            return {k: apply(v) for k, v in x.items()}
        if _is_namedtuple(x):
            return type(x)(*(apply(e) for e in x))
        if isinstance(x, (list, tuple, set)):
            return type(x)(apply(e) for e in x)
        return x
    return apply(container)


def _cast_forward_inputs(dtype, *args, **kwargs):
    """Floating-point tensors in ``args``/``kwargs`` cast to ``dtype`` (None: unchanged)."""
    if dtype is None:
        return args, kwargs

    def cast(x):
        return x if not ember.is_floating_point(x) or x.dtype == dtype else x.to(dtype)
    return _apply_to_tensors(cast, args), _apply_to_tensors(cast, kwargs)


def _recursive_to(inputs, target_device, use_side_stream_for_tensor_copies):
    """``inputs`` moved to ``target_device``, as one-element lists/tuples in torch's scatter layout (ember has no
    side streams: the copy is plain)."""
    from ..nn.utils.rnn import PackedSequence

    def to_map(obj):
        if isinstance(obj, (ember.Tensor, PackedSequence)):
            device = obj.data.device if isinstance(obj, PackedSequence) else obj.device
            return (obj,) if device == ember.device(target_device) else (obj.to(target_device),)
        if _is_namedtuple(obj):
            return [type(obj)(*a) for a in zip(*map(to_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(to_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(to_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(to_map, obj.items()))]
        return [obj]
    return to_map(inputs)


def _to_kwargs(inputs, kwargs, target_device, use_side_stream_for_tensor_copies):
    moved_inputs = _recursive_to(inputs, target_device, use_side_stream_for_tensor_copies) if inputs else []
    moved_kwargs = _recursive_to(kwargs, target_device, use_side_stream_for_tensor_copies) if kwargs else []
    if len(moved_inputs) < len(moved_kwargs):
        moved_inputs.extend([() for _ in range(len(moved_kwargs) - len(inputs))])
    elif len(moved_kwargs) < len(moved_inputs):
        moved_kwargs.extend([{} for _ in range(len(moved_inputs) - len(moved_kwargs))])
    return tuple(moved_inputs), tuple(moved_kwargs)


def _p_assert(cond, s, raise_assertion_error=True):
    """``assert`` that prints ``s`` and the stack first (an error in backward is otherwise swallowed)."""
    if not cond:
        print(s)
        traceback.print_stack()
        if raise_assertion_error:
            raise AssertionError(s)


def _replace_by_prefix(state_dict, old_prefix, new_prefix):
    """Rename, in place, the keys of ``state_dict`` that start with ``old_prefix``."""
    if old_prefix == new_prefix:
        raise ValueError("old_prefix and new_prefix must be distinct")
    for key in list(state_dict.keys()):
        if key.startswith(old_prefix):
            state_dict[new_prefix + key[len(old_prefix):]] = state_dict.pop(key)


def _get_root_modules(modules):
    """The modules of ``modules`` that are not a submodule of another one of them."""
    subs = {m: set(m.modules()) for m in modules}
    return [c for c in modules if not any(c is not m and c in s for m, s in subs.items())]
