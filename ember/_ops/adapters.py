"""Adapters: turn a backend's array kernel into a dispatcher kernel.

Backends know arrays; the dispatcher calls kernels with tensors. An adapter is
generated per (operator, backend) and does the operator-layer work that every
backend must agree on, so that no kernel repeats it:

1. run the operator's meta function (shapes, dtypes, errors; see registry.py),
2. unwrap tensors to arrays, casting pointwise inputs to the computation dtype,
3. call the array kernel (or, on Meta, make shape-only outputs),
4. wrap results as tensors on the input's device.

In-place and ``out=`` variants are generated from the functional kernel: the
result is computed first and written only once it is known to fit, so a failed
in-place op leaves its tensor as it was; then the version counter is bumped
(NOTE [version counter] in _core/tensor_impl.py).
"""
import numpy as np

from .._dispatch.codegen import compile_function
from .._core import device as _devmod
from .._core.dtype import ALL as _ALL_DTYPES, from_numpy_dtype, check_cast, check_same_dtype, float16 as _float16, bfloat16 as _bfloat16
from .._core.storage import MetaArray, iterator_strides, is_dense
from .._core.dispatch_key import DispatchKey, AUTOGRAD_BIT, INFERENCE_BIT
from .._core.tensor_impl import TensorImpl, CreationMeta, make_tensor, adopt, make_view
from .._dispatch.dispatcher import STATE as _STATE

# the NumPy scalar types a kernel may return for a 0-d result (ml_dtypes' bfloat16 and float8 among them), which
# the adapters make 0-d arrays again
def _numpy_scalar_types():
    out = set()
    for d in _ALL_DTYPES:
        try:
            out.add(type(np.zeros((), d.np)[()]))
        except ImportError:         # bfloat16 and float8 without the optional ml_dtypes
            pass
    return frozenset(out)


_SCALARS = _numpy_scalar_types()


def _int_scalar(x, cd):
    """A Python int operand of an integer-dtype pointwise op: torch wraps it modulo 2**bits (``uint8 + 300``
    is ``uint8 + 44``) where NumPy 2 raises OverflowError; past int64 both raise OverflowError."""
    lo, hi = _IRANGE.get(cd) or _IRANGE.setdefault(cd, (int(np.iinfo(cd.np).min), int(np.iinfo(cd.np).max)))
    if lo <= x <= hi:
        return x
    return np.array(x, dtype=np.int64).astype(cd.np)[()]


_IRANGE = {}


def _is_meta_key(key):
    return key == DispatchKey.Meta


# --- codegen helpers -------------------------------------------------------

def _signature(op):
    return [a.name for a in op.schema.arguments]


# NOTE [half-precision scalars]: a float16/bfloat16 tensor with a number (a Python number, or a 0-d tensor of
# another dtype: torch's CPU scalar) computes in float32 and rounds once, but what it computes with differs by
# operator, as torch's CPU kernels do (established bit for bit on 10^5 values, tests/test_half_scalars.py):
#   * mul, div (all rounding modes), floor_divide with the number second, and lerp's weight: the number in
#     float32 (TensorIterator's original_scalar_value<opmath_t>): bf16(x * float32(s));
#   * every other pointwise operator (add, sub, rsub, remainder, fmod, pow, comparisons, clamp, where, and a
#     number first in mul/div): the number rounded to the tensor's dtype first: bf16(x + bf16(s)).
# Scalar arguments are the kernels' business: alpha is rounded (add/sub: x + y * bf16(alpha) in float32), value
# and weight are not (addcmul, addcdiv, lerp). NumPy alone would do otherwise: float16 rounds a Python number
# (weak scalar), ml_dtypes' bfloat16 promotes it to float32. So the adapter hands a number to the kernel as the
# dtype's scalar (rounded) or a float32 one (_half_scalar); float32 and float64 computations never get here.
# Not followed: torch's non-vectorised loop (a tensor shorter than two SIMD vectors, the leftover at the end of
# each thread's range, non-contiguous inputs) computes add/sub with alpha in the tensor's dtype, rounding alpha * y
# first; ember gives every element the vectorised loop's value. _foreach_mul_ with numbers: _by_number in foreach.py.
_HALVES = frozenset((_float16, _bfloat16))
_FLOAT32_SCALAR = {('mul', 'other'), ('div', 'other'), ('floor_divide', 'other'), ('lerp', 'weight')}


def float32_scalar(op, arg):
    """Whether argument ``arg`` of ``op`` (any variant: ``mul_``, ``mul.out``) is a number kept in float32 for a
    float16/bfloat16 computation (NOTE [half-precision scalars])."""
    name = op.schema.name
    return (name[:-1] if name.endswith('_') and not name.endswith('__') else name, arg) in _FLOAT32_SCALAR


def _half_scalar(x, cd, float32):
    """A number (or 0-d array) operand of a float16/bfloat16 computation: NOTE [half-precision scalars]."""
    if x.__class__ is np.ndarray:
        x = x[()]
    if -65504 <= x <= 65504:        # (torch makes a Half or BFloat16 from a float: a double rounds twice)
        return np.float32(x) if float32 else cd.np.type(np.float32(x))
    with np.errstate(over='ignore'):        # 1e6 is inf in float16, silently as in torch
        return np.float32(x) if float32 else cd.np.type(np.float32(x))


def _cast_result(r, od):
    """A kernel's result in the output dtype; a float32 result of a float16/bfloat16 computation (a number kept
    in float32) overflows to inf silently, as torch's does (NOTE [silent floating-point errors])."""
    if od not in _HALVES:
        return r.astype(od.np)
    with np.errstate(over='ignore', invalid='ignore'):
        return r.astype(od.np)


def _unwrap(a, cast, float32_scalar=False):
    """Source that turns argument ``a`` into what the array kernel takes: ``(statements, expression)``,
    one statement per argument so that a traceback points at the argument at fault."""
    n, v = a.name, f'_{a.name}'
    if a.base_type == 'Tensor':
        if cast:   # a Python int in an integer computation dtype wraps as in torch (_int_scalar)
            f32 = 'True' if float32_scalar else 'False'
            cast_tensor = f'(_half_scalar({n}._a, _cd, {f32}) if _cd in _HALVES and not {n}._a.ndim else ' \
                          f'{n}._a.astype(_cd.np))'
            return [f'    if isinstance({n}, _T):',
                    f'        {v} = {n}._a if {n}._dtype is _cd else {cast_tensor}',
                    f'    elif _cd in _HALVES and {n} is not None:',
                    f'        {v} = _half_scalar({n}, _cd, {f32})',
                    f'    else:',
                    f'        {v} = {n} if {n}.__class__ is not int or _cd.category > 1 else _int_scalar({n}, _cd)'], v
        return [f'    {v} = {n}._a if isinstance({n}, _T) else {n}'], v
    if a.base_type == 'Generator':
        return [f'    {v} = ({n} if {n} is not None else _default_gen())._rng'], v
    if a.base_type == 'Tensor[]':
        return [f'    {v} = [_x._a if isinstance(_x, _T) else _x for _x in {n}] if {n} is not None else None'], v
    return [], n


def _unwrap_all(op, cast, meta, kind):
    pre, args = [], []
    for a in op.schema.arguments:
        if a.base_type == 'ScalarType' and a.name == 'dtype' and meta is not None and kind != 'pointwise':
            # the dtype the meta function resolved (the first output's, when there are several)
            args.append('_m[1].np' if len(op.schema.returns) == 1 else '_m[0][1].np')
            continue
        lines, expr = _unwrap(a, cast, float32_scalar(op, a.name))
        pre += lines
        args.append(expr)
    return pre, ', '.join(args)


def _device_expr(op):
    """Source for the device of the outputs: a Device argument, else the first tensor argument."""
    s = op.schema
    dev = next((a.name for a in s.arguments if a.base_type == 'Device'), None)
    first = next((a for a in s.arguments if a.base_type in ('Tensor', 'Tensor[]')), None)
    fallback = '_default_device()'
    if first is not None:
        if first.base_type == 'Tensor[]':
            fallback = f'_first_dev({first.name})'
        else:
            fallback = f'({first.name}._device if isinstance({first.name}, _T) else _first_dev([{", ".join(a.name for a in s.arguments if a.base_type == "Tensor")}]))'
    if dev:
        return f'(_canon({dev}) if {dev} is not None else {fallback})'
    return fallback


def _iterator_strides(shape, dt, operands):
    """Byte strides of a pointwise result on Meta, as torch's TensorIterator lays it out (NOTE [output strides]),
    or None for contiguous. A Python number is a 0-d input, a None (an absent optional tensor) none; symbolic
    sizes (NOTE [symbolic sizes]) keep the contiguous layout."""
    inputs = []
    for x in operands:
        if isinstance(x, TensorImpl):
            a = x._a
            if not hasattr(a, 'strides') or not all(n.__class__ is int for n in a.shape + a.strides):
                return None
            inputs.append((a.shape, tuple(st // a.itemsize for st in a.strides)))
        elif x is not None:
            inputs.append(((), ()))
    strides = iterator_strides(shape, inputs) if all(n.__class__ is int for n in shape) else None
    return None if strides is None else tuple(st * dt.itemsize for st in strides)


def _torch_layout(r, arrays):
    """``r``, a pointwise result NumPy laid out by its own rule, in the layout torch's TensorIterator gives
    (NOTE [output strides]) where the two differ: where the operands' layouts conflict, NumPy falls back to C
    order and torch follows the first operand (a channels_last ``r + x`` stays channels_last, so the
    ``randn_like`` of it draws in that order). Only called when the first operand is not C-contiguous."""
    full = [a for a in arrays if a.__class__ is np.ndarray and a.ndim]
    if len(full) < 2 or all(a.strides == full[0].strides for a in full):     # no conflict: NumPy followed them
        return r
    inputs = [(a.shape, tuple(st // a.itemsize for st in a.strides)) if a.__class__ is np.ndarray else ((), ())
              for a in arrays]
    want = iterator_strides(r.shape, inputs)
    if want is None:
        return r if r.flags.c_contiguous else np.ascontiguousarray(r)
    want = tuple(st * r.itemsize for st in want)
    if r.strides == want:
        return r
    perm = sorted(range(r.ndim), key=lambda d: -want[d])        # the dimensions from slowest to fastest
    out = np.empty([r.shape[d] for d in perm], r.dtype).transpose(np.argsort(perm))
    out[...] = r
    return out


def _first_dev(ts):
    for t in ts:
        if isinstance(t, TensorImpl):
            return t._device
    return _devmod.get_default_device()


def _default_gen():
    from .. import random
    return random.default_generator


_GLOBALS = lambda: {'_default_gen': _default_gen, '_T': TensorImpl, '_canon': _devmod.canonical, '_default_device': _devmod.get_default_device,
                    '_first_dev': _first_dev, '_iterator_strides': _iterator_strides, '_torch_layout': _torch_layout, '_make': make_tensor,
                    '_wrap_outputs': wrap_outputs,
                    '_MetaArray': MetaArray, 'np': np, '_int_scalar': _int_scalar, '_half_scalar': _half_scalar, '_HALVES': _HALVES, '_cast_result': _cast_result, '_SCALARS': _SCALARS, '_to_numpy': from_numpy_dtype}


def _compile(src, name, g):
    return compile_function(src, f'<ember adapter {name}>', g, 'kernel')


# --- functional kernels ----------------------------------------------------

def functional_kernel(op, fn, key):
    """The dispatcher kernel for a functional op on a backend (``fn`` is None on Meta)."""
    decl = op.decl
    kind = decl.kind if decl is not None else 'generic'
    if kind == 'view':
        return view_kernel(op, key)
    meta = decl.meta if decl is not None else None
    names = _signature(op)
    cast = kind == 'pointwise'
    pre, args = _unwrap_all(op, cast, meta, kind)
    dev = _device_expr(op)
    meta_backend = fn is None
    if meta is None and meta_backend:
        raise RuntimeError(f"{op.name} has no meta function, so it cannot run on the Meta backend")
    lines = [f'def kernel(_ks, {", ".join(names)}):']
    # the kernel's call and the wrapping of its result sit in a try whose handler (run only on an error)
    # explains a user kernel's mistake at this point: NOTE [kernel signatures] in ember/library.py
    explained = ['    except Exception as _e:', '        _explain(_e, locals())', '        raise']
    if kind == 'pointwise':
        lines += [f'    _shape, _od, _cd = _meta({", ".join(names)})']
        if meta_backend:     # the layout torch's TensorIterator gives, computed on Meta only (NOTE [output strides])
            operands = ', '.join(a.name for a in op.schema.arguments if a.base_type == 'Tensor')
            lines += [f'    return _make(_MetaArray(_shape, _od.np, _iterator_strides(_shape, _od, ({operands},))), '
                      f'_od, {dev})']
        else:
            tensors = [f'_{a.name}' for a in op.schema.arguments if a.base_type == 'Tensor']
            layout = [f'        if _r.ndim > 2 and {tensors[0]}.__class__ is np.ndarray and not '
                      f'{tensors[0]}.flags.c_contiguous: _r = _torch_layout(_r, ({", ".join(tensors)},))'] \
                if len(tensors) > 1 else []
            lines += pre + ['    try:',
                            f'        _r = _fn({args})',
                            f'        if _r.__class__ in _SCALARS: _r = np.asarray(_r)',
                            # NumPy's builtin dtypes are singletons: the identity test settles the common case
                            f'        if _r.dtype is not _od._np and _r.dtype != _od.np: _r = _cast_result(_r, _od)']\
                + layout + [f'        return _make(_r, _od, {dev})'] + explained
    else:
        if meta is not None:
            lines += [f'    _m = _meta({", ".join(names)})']
        if not op.schema.returns:      # an operator that only writes its arguments (``-> ()``) returns None
            lines += [] if meta_backend else pre + [f'    _fn({args})']
            lines += ['    return None']
        elif meta_backend:
            lines += ['    try:', f'        return _wrap_outputs(None, _m, {dev})'] + explained
        else:
            single = meta is None and op.schema.returns == ('Tensor',)   # nothing else checks a lone result
            lines += pre + ['    try:',
                            f'        _r = _fn({args})'] + \
                ([f'        if _r.__class__ in _SEQS: _explain(None, locals())'] if single else []) + \
                [f'        return _wrap_outputs(_r, {"_m" if meta is not None else "None"}, {dev})'] + explained
    g = _GLOBALS()
    g.update(_meta=meta, _fn=fn, _explain=_explainer(op, fn, key, meta_backend), _SEQS=(tuple, list))
    k = _compile('\n'.join(lines) + '\n', f'{"meta" if meta_backend else key.name.lower()}::{op.name}', g)
    k.__qualname__ = f'{"meta" if meta_backend else key.name.lower()}::{op.schema.full_name}'
    k.array_fn = fn          # the backend's array kernel, for code that calls it without tensors (ember._inductor)
    if kind == 'pointwise' and not meta_backend and accepts_out(fn):
        k.write_in_place = _inplace_source(op, names, pre, args, meta, fn)
    return k


def _explainer(op, fn, key, meta_backend):
    """The error handler of a generated adapter: turns a user kernel's mistake (Tensors where arrays go, a
    result that is not an array, a result of the wrong size, a malformed meta result) into an error that names
    the operator, the kernel and the signature it must have; anything else propagates unchanged."""
    from ..library import kernel_signature
    where = 'Meta' if meta_backend else key.name

    def explain(exc, frame):
        sig, array = kernel_signature(op, fn, key)
        who = f"the {where} kernel {_fn_name(fn)} registered for {op.name}"
        if '_r' not in frame and not meta_backend:        # the kernel itself raised
            if isinstance(exc, AttributeError) and _is_array(getattr(exc, 'obj', None)) \
                    and hasattr(_tensor_class(), getattr(exc, 'name', None) or '_'):
                exc.add_note(f"ember calls backend kernels with arrays, not Tensors: {who} is called as {sig} "
                             f"with {array} for each Tensor argument ({exc.name!r} is a Tensor method). Compute "
                             f"with the array's own functions and return a new {array} (NOTE [kernel signatures] "
                             f"in ember/library.py).")
            return
        m = frame.get('_m')
        if m is not None and not _meta_ok(m):
            raise TypeError(f"the meta function of {op.name} returned {m!r}, but a meta function returns "
                            f"(shape, dtype) for its output, or a list of those for several outputs "
                            f"(NOTE [kernel signatures] in ember/library.py)") from None
        if '_r' in frame:
            r = frame['_r']
            if exc is None or not _arrays_ok(r):
                got = 'a Tensor' if _holds_tensor(r) else f'{type(r).__name__} {_short(r)}'
                raise TypeError(f"{who} returned {got}, but backend kernels take arrays and return arrays: it is "
                                f"called as {sig} with {array} for each Tensor argument and must return a new "
                                f"{array}{'' if len(op.schema.returns) == 1 else ' for each output, as a tuple'}"
                                f"{'. Return the array (t.numpy()), not a Tensor' if _holds_tensor(r) else ''} "
                                f"(NOTE [kernel signatures] in ember/library.py)") from None
            bad = _size_mismatch(r, m)
            if bad:
                raise RuntimeError(f"{who} returned an array of shape {bad[0]}, but the meta function of "
                                   f"{op.name} says the result has shape {bad[1]}") from None
    return explain


def _fn_name(fn):
    return getattr(fn, '__qualname__', None) or getattr(fn, '__name__', None) or repr(fn)


def _tensor_class():
    from .._core import tensor_impl
    return tensor_impl._tensor_class or TensorImpl


def _holds_tensor(r):
    return isinstance(r, TensorImpl) or (isinstance(r, (tuple, list)) and any(isinstance(x, TensorImpl) for x in r))


def _is_array(x):
    return hasattr(x, 'shape') and hasattr(x, 'dtype') and not isinstance(x, TensorImpl)


def _arrays_ok(r):
    if isinstance(r, (tuple, list)):
        return all(x is None or _is_array(x) for x in r)
    return _is_array(r)


def _short(r):
    text = repr(r)
    return text if len(text) <= 40 else text[:37] + '...'


def _meta_ok(m):
    if isinstance(m, list):
        return all(x is None or _meta_ok(x) for x in m)
    from .._core.dtype import dtype
    return isinstance(m, tuple) and len(m) in (2, 3) and isinstance(m[1], dtype)


def _size_mismatch(r, m):
    """(shape returned, shape the meta function gave) of the first output whose size differs."""
    if m is None or not _meta_ok(m):
        return None
    pairs = zip(r, m) if isinstance(m, list) and isinstance(r, (tuple, list)) else [(r, m)]
    for x, mm in pairs:
        if x is not None and mm is not None and _is_array(x) and x.size != _numel(mm[0]):
            return tuple(x.shape), tuple(mm[0])
    return None


def accepts_out(fn):
    """Can the array kernel write its result into a given array (``out=``)? NumPy ufuncs can; a
    Python kernel says so with an ``out`` parameter (or an ``accepts_out`` attribute on a wrapper)."""
    if isinstance(fn, np.ufunc):
        return True
    flag = getattr(fn, 'accepts_out', None)
    if flag is not None:
        return flag
    import inspect
    try:
        return 'out' in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _inplace_source(op, names, pre, args, meta, fn):
    """NOTE [in-place fast path]: ``x.add_(y)`` where nothing needs casting and no broadcast grows ``x``:
    the kernel writes straight into ``x``'s memory (NumPy ufuncs handle overlapping operands), no temporary
    and no copy. Anything else (casts, errors) returns None and takes the general path."""
    first = names[0]
    src = (f'def kernel({", ".join(names)}):\n'
           f'    _shape, _od, _cd = _meta({", ".join(names)})\n'
           f'    _s = {first}._a\n'
           f'    if _od is not {first}._dtype or _cd is not _od or _shape != _s.shape: return None\n'
           + ''.join(line + '\n' for line in pre) +
           f'    _fn({args}, out=_s)\n'
           f'    {first}._vc[0] += 1\n'
           f'    return {first}\n')
    g = _GLOBALS()
    g.update(_meta=meta, _fn=fn)
    return _compile(src, op.name + '_', g)


def wrap_outputs(r, m, dev):
    """Results of a generic kernel as tensors. ``m`` is the meta result: ``(shape, dtype)`` or
    ``(shape, dtype, strides)`` (strides in elements, for outputs whose layout is not contiguous,
    e.g. clone's preserved layout: an array the kernel laid out otherwise is copied into them), a list of
    those for several outputs, or None (then the arrays' own dtypes count). On Meta (``r`` is None) the meta
    result alone makes the outputs."""
    if m is None:
        if isinstance(r, (tuple, list)):
            return tuple(adopt(np.asarray(x) if isinstance(x, np.generic) else x, dev) for x in r)
        return adopt(np.asarray(r) if isinstance(r, np.generic) else r, dev)
    if isinstance(m, list):     # an entry None: an undefined output (torch's output_mask), returned as None
        if r is None:
            return tuple(None if x is None else _meta_out(x, dev) for x in m)
        return tuple(None if mm is None else _one(x, mm, dev) for x, mm in zip(r, m))
    if r is None:
        return _meta_out(m, dev)
    return _one(r, m, dev)


def _meta_out(m, dev):
    d = m[1]
    strides = tuple(s * d.itemsize for s in m[2]) if len(m) > 2 and m[2] is not None else None
    return make_tensor(MetaArray(m[0], d.np, strides), d, dev)


def _one(r, m, dev):
    shape, dt = m[0], m[1]
    if isinstance(r, np.generic):
        r = np.asarray(r)
    if r.dtype != dt.np:
        r = r.astype(dt.np)
    if r.shape != shape:
        if r.size != _numel(shape):
            raise RuntimeError(f"internal error: kernel returned shape {tuple(r.shape)}, meta says {tuple(shape)}")
        r = r.reshape(shape)
    if len(m) > 2 and m[2] is not None and r.size:
        r = laid_out(r, m[2], dev)
    return make_tensor(r, dt, dev)


def laid_out(r, strides, dev):
    """``r``, or a copy of it with these strides (in elements) where the kernel laid it out otherwise (NumPy's
    order='K' copy of an expanded input; NOTE [output strides] in _core/storage.py)."""
    isz = r.itemsize
    want = tuple(s * isz for s in strides)
    if r.strides == want:
        return r
    xp = dev._iface.xp
    extent = 1 + sum((n - 1) * s for n, s in zip(r.shape, strides))
    out = xp.lib.stride_tricks.as_strided(xp.empty(extent, r.dtype), r.shape, want)
    out[...] = r
    return out


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# --- views -------------------------------------------------------------------

def view_kernel(op, key):
    """Views need no kernel: the meta function gives sizes, strides and offset in elements,
    and the result shares the input's storage and version counter."""
    meta = op.decl.meta
    meta_backend = _is_meta_key(key)

    def kernel(ks, self, *args):
        shape, strides, offset = meta(self, *args)
        out = make_view(self, shape, strides, offset, meta_backend)
        if self._creation_meta or not _STATE.keep & AUTOGRAD_BIT:     # a view of such a view, or grad mode off
            _set_creation_meta(out, self)
        return out
    kernel.__qualname__ = f'view::{op.schema.full_name}'
    return kernel


def dispatch_free_views(self):
    """Whether views of ``self`` may be made by ``make_view`` directly, as the dispatcher would reach
    ``view_kernel`` alone: a dense CPU tensor of ember's own class under no mode, subclass, vmap level or
    autocast (its keys, with the state's, are its device's alone). unbind uses it for its many pieces."""
    return self._a.__class__ is np.ndarray and \
        (self._keys | _STATE.include) & _STATE.keep == self._device._iface.keyset


def finish_view(out, self):
    """What ``view_kernel`` does after ``make_view``, for views made without the dispatcher."""
    if self._creation_meta or not _STATE.keep & AUTOGRAD_BIT:
        _set_creation_meta(out, self)
    return out


def _set_creation_meta(out, self):
    """NOTE [view creation meta] in autograd/views.py: a view made with grad mode off is NO_GRAD_MODE
    (INFERENCE_MODE in inference mode) and requires grad when its base does; a view of a view that is not
    DEFAULT keeps its input's kind (torch's propagate_creation_meta)."""
    cm = self._creation_meta
    grad_off = not _STATE.keep & AUTOGRAD_BIT
    if grad_off and cm is not CreationMeta.INFERENCE_MODE:
        cm = CreationMeta.INFERENCE_MODE if _STATE.include & INFERENCE_BIT else CreationMeta.NO_GRAD_MODE
    out._creation_meta, out._view_version = cm, out._vc[0]
    if grad_off and out._requires_grad_through_base():
        out._keys |= AUTOGRAD_BIT


# --- in-place and out= -------------------------------------------------------

def _shape_str(s):
    return '[' + ', '.join(str(x) for x in s) + ']'


def check_inplace_shape(self_shape, shape):
    if tuple(self_shape) != tuple(shape):
        raise RuntimeError(f"output with shape {_shape_str(self_shape)} doesn't match the broadcast shape "
                           f"{_shape_str(shape)}")


def write_into(dst, src_arr):
    """Copy a result array into a tensor's memory (casting), and bump its version."""
    a = dst._a
    if not isinstance(a, MetaArray):
        if src_arr.dtype != a.dtype:
            src_arr = src_arr.astype(a.dtype)
        a[...] = src_arr
    elif (src_arr.__class__ is MetaArray and src_arr.shape == a.shape and src_arr.strides == a.strides
          and src_arr.dtype == a.dtype and src_arr.offset == a.offset):
        # a meta tensor has nothing to write; taking the result's array instead makes the two one piece of data
        # to a recording mode (TensorDataMap): autograd saves the in-place result as the out-of-place result
        # it was computed as (inplace_autograd_kernel), and make_fx must know that handle as the op's output
        dst._a = src_arr
    dst._vc[0] += 1
    return dst


def check_no_internal_overlap(t):
    """torch's assert_no_internal_overlap: refuse to write into a tensor where several elements share one
    memory location (a stride of 0 on a dimension longer than 1, as ``expand`` makes): the result would
    depend on the order of the writes."""
    strides = t._a.strides
    if 0 in strides and t._a.size > 1:
        for n, st in zip(t._a.shape, strides):
            if st == 0 and n > 1:
                raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers "
                                   "to a single memory location. Please clone() the tensor before performing "
                                   "the operation.")


# NOTE [memory overlap]: torch's TensorIterator refuses an input that shares some, but not all, of its memory with
# the tensor it writes (``x[1:] += x[:-1]``, ``x.copy_(x.t())``), where the result would depend on the order of the
# writes: get_overlap_status says PARTIAL when both tensors are non-overlapping and dense and their byte ranges
# intersect without being the same range with the same strides. Tensors that share memory share a version counter
# here (``_vc``: views, detach), so the check costs one identity test per input when they do not. Where either
# tensor has gaps torch says "too hard" and writes in its loop order; ember computes the result before writing it
# (NumPy buffers), so there the two can differ (``x[:, 1:] = x[:, :-1]``).

def check_no_partial_overlap(out, args):
    """torch's assert_no_partial_overlap between the written-to tensor ``out`` and each tensor in ``args``."""
    vc = out._vc
    for t in args:
        if t.__class__ is not float and isinstance(t, TensorImpl) and t._vc is vc and t is not out \
                and _partial_overlap(out, t):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def _partial_overlap(a, b):
    if not (a._a.size and b._a.size):
        return False
    sa, sb = a.stride(), b.stride()
    if not (is_dense(a._a.shape, sa) and is_dense(b._a.shape, sb)):
        return False        # torch's TOO_HARD
    ia, ib = a._a.itemsize, b._a.itemsize
    a0, b0 = a.storage_offset() * ia, b.storage_offset() * ib
    a1, b1 = a0 + a._a.size * ia, b0 + b._a.size * ib
    if a0 == b0 and a1 == b1:
        return sa != sb or ia != ib
    return a0 < b1 and b0 < a1


def inplace_kernel(decl, functional):
    """``add_`` from ``add``: compute out of place, check it fits ``self``, then write
    (or write directly, NOTE [in-place fast path])."""
    direct = getattr(functional, 'write_in_place', None)
    overlap_ok = 'overlap_ok' in decl.tags
    iterator = decl.kind == 'pointwise'     # NOTE [memory overlap]

    def kernel(ks, self, *args):
        if not overlap_ok:
            check_no_internal_overlap(self)
        if iterator:        # NOTE [memory overlap]: the identity test inline, the check only for shared memory
            vc = self._vc
            for t in args:
                if isinstance(t, TensorImpl) and t._vc is vc:
                    check_no_partial_overlap(self, (t,))
        if direct is not None and not isinstance(self._a, MetaArray):
            r = direct(self, *args)
            if r is not None:
                return r
        r = functional(ks, self, *args)
        check_inplace_shape(self._a.shape, r._a.shape)
        check_cast(r._dtype, self._dtype)
        return write_into(self, r._a)
    kernel.__qualname__ = f'inplace::{decl.inplace_op.schema.full_name}'
    return kernel


def sparse_inplace_kernel(decl, functional):
    """``add_`` on SparseCPU (a sparse argument): a dense ``self`` takes the dense result as ``inplace_kernel``
    writes it (``p.add_(sparse_grad, alpha=-lr)``, SGD's step with an Embedding(sparse=True) gradient); a sparse
    ``self`` takes the result's COO data (its nnz may change, as torch's sparse in-place ops resize)."""
    dense = inplace_kernel(decl, functional)

    def kernel(ks, self, *args):
        if isinstance(self._a, (np.ndarray, MetaArray)):
            return dense(ks, self, *args)
        r = functional(ks, self, *args)
        if r._a.__class__ is not self._a.__class__:
            raise RuntimeError(f"{decl.inplace_op.schema.name}: the result of a sparse tensor's in-place operation "
                               f"is not sparse")
        self._a = r._a
        self._vc[0] += 1
        return self
    kernel.__qualname__ = f'sparse_inplace::{decl.inplace_op.schema.full_name}'
    return kernel


def out_kernel(decl, functional):
    """``add(..., out=t)``: compute, resize ``out`` if needed, check the cast, write. A resized out takes the
    result's layout where ember's layout is torch's (pointwise operators, NOTE [output strides]; cat), else C order."""
    n = len(decl.op.schema.returns)
    keeps_layout = decl.kind == 'pointwise' or decl.name == 'cat'

    def kernel(ks, *args):
        ins, outs = args[:-n], args[-n:]
        res = functional(ks, *ins)
        res = res if isinstance(res, tuple) else (res,)
        for o, r in zip(outs, res):
            if not isinstance(o, TensorImpl):
                raise TypeError(f"{decl.name}(): argument 'out' must be Tensor, not {type(o).__name__}")
            if o._device != r._device:
                raise RuntimeError(f"Expected out tensor to have device {r._device}, but got {o._device} instead")
            if decl.out_dtype is None:
                check_cast(r._dtype, o._dtype)
            elif callable(decl.out_dtype):      # a rule that depends on the arguments (diag of 1-D or 2-D input)
                decl.out_dtype(r._dtype, o._dtype, *ins)
            else:
                check_same_dtype(decl.out_dtype, r._dtype, o._dtype)
            if o._a.shape != r._a.shape:
                resize_out(o, r._a.shape, like=r._a if keeps_layout else None)
            check_no_internal_overlap(o)
            if keeps_layout:
                check_no_partial_overlap(o, ins)
            write_into(o, r._a)
        return outs[0] if n == 1 else tuple(outs)
    kernel.__qualname__ = f'out::{decl.out_op.schema.full_name}'
    return kernel


def resize_out(o, shape, like=None):
    """Resize an ``out=`` tensor that does not have the result's shape: to the result's layout when ``like`` (the
    result) is given and dense (a channels_last result gives a channels_last out, as torch's resize of an out to
    the computed strides), else C-contiguous."""
    if o._a.size != 0:
        from ember._warn import warnings
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(o._a.shape)}, "
                      f"which does not match the required output shape {list(shape)}. This behavior is "
                      "deprecated, and in a future PyTorch release outputs will not be resized unless they "
                      "have zero elements.", UserWarning, stacklevel=4)
    dense = like is not None and like.ndim > 1 and tuple(like.shape) == tuple(shape) and \
        is_dense(like.shape, tuple(st // like.itemsize for st in like.strides))
    if isinstance(o._a, MetaArray):
        strides = tuple(st // like.itemsize * o._a.itemsize for st in like.strides) if dense else None
        o._set_array(MetaArray(shape, o._a.dtype, strides))
    elif dense:
        o._set_array(o._device._iface.xp.empty_like(like, dtype=o._a.dtype))
    else:
        o._set_array(o._device._iface.xp.empty(shape, o._a.dtype))
