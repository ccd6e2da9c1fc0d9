"""Autocast as a dispatch key: the thread-local state and the AutocastCPU kernels.

NOTE [autocast key]: enabling CPU autocast puts the AutocastCPU key in the
thread-local include set (as inference mode does with its key), so every
operator call reaches the AutocastCPU entry of its kernel table first; with
autocast off the key is absent and the hot path pays nothing. Operators named
in the policy table (`ember/_ops/autocast_policy.py`) get an AutocastCPU kernel
that casts their eligible inputs (floating, not float64, on the CPU) and
redispatches below itself with the key excluded, so the operator's own
decomposition is not cast again (torch's ExcludeDispatchKeyGuard). Every other
operator falls through. The key sits above Autograd, so the casts are recorded
and gradients reach float32 leaves in float32.

The cast cache (``cache_enabled``) keeps the low-precision copy of a leaf that
requires grad (a weight) for the rest of the outermost autocast region, so a
weight used by several ops is cast once; it is emptied when that region ends.
"""
import threading

from .._core.dispatch_key import DispatchKey, below
from .._core import dtype as _dt
from .dispatcher import STATE, all_ops, lookup_op, register_fallback

AUTOCAST_CPU_BIT = 1 << DispatchKey.AutocastCPU
_BELOW = below(DispatchKey.AutocastCPU)
# device types that torch's autocast accepts, with their default dtypes; only 'cpu' has kernels here
# (CUDA is refused by the front end without a GPU; the others only keep their flags, as torch's CPU build)
_DEFAULT_DTYPES = {'cpu': _dt.bfloat16, 'cuda': _dt.float16, 'xpu': _dt.float16, 'mps': _dt.float16,
                   'hpu': _dt.bfloat16, 'xla': _dt.bfloat16, 'ipu': _dt.float16, 'mtia': _dt.float16,
                   'maia': _dt.float16, 'privateuseone': _dt.float16}
_DEVICE_TYPES = tuple(_DEFAULT_DTYPES)


class _AutocastState(threading.local):
    def __init__(self):
        self.enabled = {t: False for t in _DEVICE_TYPES}
        self.dtype = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}            # id(leaf) -> (leaf, its cast): the leaf is kept so the id stays unique


AUTOCAST = _AutocastState()


def _check_device_type(device_type):
    if device_type is None:
        return 'cuda'              # torch: is_autocast_enabled() with no argument asks about CUDA
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a str, not {type(device_type).__name__}")
    return device_type


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (CUDA when omitted, as torch).

    >>> import ember
    >>> with ember.autocast('cpu'):
    ...     ember.is_autocast_enabled('cpu')
    True
    """
    return AUTOCAST.enabled.get(_check_device_type(device_type), False)


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for a device type (``set_autocast_enabled('cpu', True)``)."""
    if enabled is None:        # torch's deprecated one-argument form: the flag for CUDA
        device_type, enabled = 'cuda', device_type
    device_type = _check_device_type(device_type)
    AUTOCAST.enabled[device_type] = bool(enabled)
    if device_type == 'cpu':
        if enabled:
            STATE.include |= AUTOCAST_CPU_BIT
        else:
            STATE.include &= ~AUTOCAST_CPU_BIT


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on CPU, float16 on CUDA by default).

    >>> import ember
    >>> ember.get_autocast_dtype('cpu')
    ember.bfloat16
    """
    return AUTOCAST.dtype.get(_check_device_type(device_type), _dt.float16)


def set_autocast_dtype(device_type, dtype):
    AUTOCAST.dtype[_check_device_type(device_type)] = dtype


def is_autocast_cpu_enabled():
    """Deprecated: ``is_autocast_enabled('cpu')``."""
    return AUTOCAST.enabled['cpu']


def set_autocast_cpu_enabled(enabled):
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``."""
    set_autocast_enabled('cpu', enabled)


def set_autocast_cpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``."""
    AUTOCAST.dtype['cpu'] = dtype


def set_autocast_gpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``."""
    AUTOCAST.dtype['cuda'] = dtype


def get_autocast_cpu_dtype():
    return AUTOCAST.dtype['cpu']


def get_autocast_gpu_dtype():
    return AUTOCAST.dtype['cuda']


def is_autocast_cache_enabled():
    return AUTOCAST.cache_enabled


def set_autocast_cache_enabled(enabled):
    AUTOCAST.cache_enabled = bool(enabled)


def clear_autocast_cache():
    AUTOCAST.cache.clear()


def autocast_increment_nesting():
    AUTOCAST.nesting += 1
    return AUTOCAST.nesting


def autocast_decrement_nesting():
    AUTOCAST.nesting -= 1
    return AUTOCAST.nesting


# --- the AutocastCPU kernels ---------------------------------------------------

_to_copy = None


def _eligible(t):
    d = t._dtype
    return d.is_floating_point and d is not _dt.float64 and t._device.type == 'cpu'


def _cast(t, dtype):
    if t._dtype is dtype:
        return t
    cache = AUTOCAST.cache_enabled and t._requires_grad and t._grad_fn is None and t._dtype is _dt.float32
    if cache:
        hit = AUTOCAST.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1]._dtype is dtype:
            return hit[1]
    out = _to_copy(t, dtype=dtype)
    if cache:
        AUTOCAST.cache[id(t)] = (t, out)
    return out


def _map(args, fn):
    from .._core.tensor_impl import TensorImpl
    out = []
    for a in args:
        if isinstance(a, TensorImpl):
            out.append(fn(a) if _eligible(a) else a)
        elif isinstance(a, (list, tuple)) and any(isinstance(e, TensorImpl) for e in a):
            out.append(type(a)(fn(e) if isinstance(e, TensorImpl) and _eligible(e) else e for e in a))
        else:
            out.append(a)
    return out


def _widest(args):
    from .._core.tensor_impl import TensorImpl
    best = AUTOCAST.dtype['cpu']
    for a in args:
        for e in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(e, TensorImpl) and _eligible(e) and e._dtype.itemsize > best.itemsize:
                best = e._dtype
    return best


def _make_kernel(op, policy):
    def autocast_cpu(ks, *args):
        dt = _target_dtype(policy, args)
        args = _map(args, lambda t: _cast(t, dt))
        prev = STATE.keep
        STATE.keep = prev & ~AUTOCAST_CPU_BIT      # the op's decomposition is not cast again
        try:
            return op.redispatch(ks & _BELOW, *args)
        finally:
            STATE.keep = prev
    autocast_cpu.__qualname__ = f'autocast_cpu[{policy}]'
    return autocast_cpu


def cast_for_mode(op, args):
    """The arguments ``op`` gets under CPU autocast, or None when autocast leaves it alone: for a dispatch mode
    that sees calls before the AutocastCPU key does (make_fx's tracer), so that it can record the casts
    (``_to_copy`` calls, made by the caller's mode) and then the operator on the cast arguments. Fake tensors
    (meta) count as the CPU tensors they stand for; no cast is taken from the cast cache, whose tensors a
    tracer would not know."""
    if not AUTOCAST.enabled['cpu'] or 'inplace' in op.tags or 'out' in op.tags or op.schema.is_mutable:
        return None
    policy = _POLICY.get(op.schema.name)
    if policy is None or policy == 'unchanged':
        return None
    from .._core.tensor_impl import TensorImpl

    def eligible(t):
        d = t._dtype
        return d.is_floating_point and d is not _dt.float64 and t._device.type in ('cpu', 'meta')
    dt = AUTOCAST.dtype['cpu'] if policy == 'lower' else _dt.float32 if policy == 'fp32' else None
    if dt is None:
        dt = AUTOCAST.dtype['cpu']
        for a in args:
            for e in (a if isinstance(a, (list, tuple)) else (a,)):
                if isinstance(e, TensorImpl) and eligible(e) and e._dtype.itemsize > dt.itemsize:
                    dt = e._dtype

    def cast(t):
        return _to_copy(t, dtype=dt) if isinstance(t, TensorImpl) and eligible(t) and t._dtype is not dt else t
    return [type(a)(cast(e) for e in a) if isinstance(a, (list, tuple)) else cast(a) for a in args]


class excluded:
    """``with excluded():`` calls skip the AutocastCPU key (what the autocast kernel does below itself)."""

    def __enter__(self):
        self.prev = STATE.keep
        STATE.keep = self.prev & ~AUTOCAST_CPU_BIT

    def __exit__(self, *exc):
        STATE.keep = self.prev


def _fallthrough(op, ks, *args):
    return op.redispatch(ks & _BELOW, *args)


_POLICY = {}      # the table given to register_all (ember/_ops/autocast_policy.py)


def _target_dtype(policy, args):
    if policy == 'lower':
        return AUTOCAST.dtype['cpu']
    if policy == 'fp32':
        return _dt.float32
    return _widest(args)


def autocast_composite(name):
    """Apply the policy table's entry ``name`` to a Python composite (a loss that ember writes in
    ``nn.functional`` where torch has one ATen operator): under CPU autocast its eligible tensor
    arguments are cast and its body runs with the key excluded, as an AutocastCPU kernel would."""
    def wrap(fn):
        import functools

        @functools.wraps(fn)
        def autocast_wrapper(*args, **kwargs):
            if not (STATE.include & STATE.keep & AUTOCAST_CPU_BIT):
                return fn(*args, **kwargs)
            policy = _POLICY.get(name)
            if policy is None:
                return fn(*args, **kwargs)
            if policy != 'unchanged':
                dt = _target_dtype(policy, list(args) + list(kwargs.values()))
                cast = lambda t: _cast(t, dt)
                args = _map(args, cast)
                kwargs = dict(zip(kwargs, _map(kwargs.values(), cast)))
            prev = STATE.keep
            STATE.keep = prev & ~AUTOCAST_CPU_BIT
            try:
                return fn(*args, **kwargs)
            finally:
                STATE.keep = prev
        return autocast_wrapper
    return wrap


def register_all(policy_table):
    """Give every overload of each operator in ``policy_table`` its AutocastCPU kernel."""
    global _to_copy
    _POLICY.update(policy_table)
    _to_copy = lookup_op('aten::_to_copy')
    for op in all_ops().values():
        policy = policy_table.get(op.schema.name)
        if policy is None or policy == 'unchanged' or 'inplace' in op.tags or 'out' in op.tags or op.schema.is_mutable:
            continue
        op.register(DispatchKey.AutocastCPU, _make_kernel(op, policy))
    register_fallback(DispatchKey.AutocastCPU, _fallthrough)
