"""Floating-point error state for CPU kernels (NOTE [silent floating-point errors] in pointwise.py).

torch computes 1/0, log(0), inf - inf silently; NumPy warns. ``quiet(fn)`` runs a kernel with NumPy's
error state set to 'ignore' through the context variable behind ``np.errstate`` (about 0.7 us a call,
against 4 us for the context manager), so user code's NumPy settings are untouched.
"""
import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar as _EXT
    from numpy._core.umath import _make_extobj
    _IGNORE = _make_extobj(all='ignore')
except ImportError:      # pragma: no cover - other NumPy versions
    _EXT = _IGNORE = None


def is_half(dt):
    """float16 or bfloat16 (ml_dtypes' bfloat16 has kind 'V'): the dtypes torch computes in float32 and rounds once."""
    return dt.itemsize == 2 and dt.kind in 'fV'


_INT_RANGE = {}      # dtype -> (min, max) of the integer dtypes fills have met


def half_ready(value, dt):
    """A number (or 0-d array) to fill an array of dtype ``dt`` with: for float16/bfloat16, a double goes through
    float32 first, as torch makes its Half and BFloat16 values from a float (NOTE [half-precision scalars])."""
    if is_half(dt) and (type(value) is float or getattr(value, 'dtype', None) == np.float64):
        return np.float32(value)
    if type(value) is int and dt.kind in 'iu' and dt.itemsize < 8:
        if dt == np.uint8 and -255 <= value < 0:        # torch's uint8 takes a negative int, wrapped
            return value + 256
        lo, hi = _INT_RANGE.get(dt) or _INT_RANGE.setdefault(dt, (int(np.iinfo(dt).min), int(np.iinfo(dt).max)))
        if not lo <= value <= hi:
            raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    return value


def result_type(arrays):
    """NumPy's promotion of the arrays' dtypes; float16 with bfloat16 (which NumPy cannot promote) is float32, as
    torch's promotion gives."""
    try:
        return np.result_type(*arrays)
    except TypeError:
        return np.dtype(np.float32)


def quiet(fn):
    """``fn`` with NumPy floating-point warnings off for the call (NOTE [silent floating-point errors])."""
    if _EXT is None:
        def kernel(*args, **kw):
            with np.errstate(all='ignore'):
                return fn(*args, **kw)
    else:
        set_state, reset_state = _EXT.set, _EXT.reset

        def kernel(*args, **kw):
            token = set_state(_IGNORE)
            try:
                return fn(*args, **kw)
            finally:
                reset_state(token)
    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    kernel.__wrapped__ = fn     # generated graph code calls fn inside one quiet region for the whole graph
    code = getattr(fn, '__code__', None)     # its parameters only: a local variable named out does not count
    kernel.accepts_out = getattr(fn, 'accepts_out', None)
    if kernel.accepts_out is None:
        kernel.accepts_out = isinstance(fn, np.ufunc) or (code is not None and 'out' in code.co_varnames[
            :code.co_argcount + code.co_kwonlyargcount])
    return kernel


