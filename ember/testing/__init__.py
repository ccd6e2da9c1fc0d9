"""ember.testing: ``assert_close`` and ``make_tensor``, as torch.testing, for programs' own checks.

``assert_close(actual, expected)`` compares tensors (and Python numbers, and
sequences and mappings of them, recursively) with torch's default tolerances
per dtype, checks shape, dtype and device unless told not to, and raises
``AssertionError`` with torch's report (mismatched elements, greatest absolute
and relative difference and where).

>>> import ember
>>> ember.testing.assert_close(ember.tensor([1., 2.]), ember.tensor([1., 2. + 1e-7]))
"""
import collections.abc
import math

import numpy as np

# torch's default (rtol, atol) per dtype name
_TOL = {'float16': (1e-3, 1e-5), 'bfloat16': (1.6e-2, 1e-5), 'float32': (1.3e-6, 1e-5),
        'float64': (1e-7, 1e-7), 'complex64': (1.3e-6, 1e-5), 'complex128': (1e-7, 1e-7)}


def _E():
    import ember
    return ember


def _is_number(x):
    return isinstance(x, (int, float, complex)) and not isinstance(x, bool) or isinstance(x, bool)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close (see the module docstring)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    E = _E()
    if isinstance(actual, E.Tensor) or isinstance(expected, E.Tensor):
        if not (isinstance(actual, E.Tensor) and isinstance(expected, E.Tensor)):
            raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                            f"{type(expected)}.")
        return _tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg)
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):     # as tensors, as torch's pair does
        return _tensors(E.as_tensor(actual), E.as_tensor(expected), rtol, atol, equal_nan, check_device,
                        check_dtype, check_stride, msg)
    if isinstance(actual, (np.number, np.bool_)):       # NumPy scalars compare as the Python numbers they hold
        actual = actual.item()
    if isinstance(expected, (np.number, np.bool_)):
        expected = expected.item()
    if _is_number(actual) and _is_number(expected):
        if type(actual) is not type(expected) and check_dtype:
            raise AssertionError(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        return _numbers(actual, expected, rtol, atol, equal_nan, msg)
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match:\n{sorted(map(str, actual))} != "
                                 f"{sorted(map(str, expected))}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, check_stride=check_stride, msg=msg)
        return None
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, b in zip(actual, expected):
            assert_close(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                         check_dtype=check_dtype, check_stride=check_stride, msg=msg)
        return None
    if actual is None and expected is None:
        return None
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def _numbers(a, b, rtol, atol, equal_nan, msg):
    """Two Python numbers, with torch's report: bools must be equal, ints equal, floats and complex numbers
    close with float64's (or complex128's) default tolerances."""
    if isinstance(a, bool) or isinstance(b, bool):
        if a != b:
            raise AssertionError(msg if isinstance(msg, str) else f"Booleans mismatch: {a} is not {b}")
        return None
    exact = isinstance(a, int) and isinstance(b, int)
    if rtol is None:
        rtol, atol = (0.0, 0.0) if exact else _TOL['float64']
    diff = abs(a - b)
    if diff <= atol + rtol * abs(b) or equal_nan and (a != a) and (b != b):
        return None
    if msg is not None:
        raise AssertionError(msg if isinstance(msg, str) else msg(''))
    rel = diff / abs(b) if b != 0 else (math.inf if diff else math.nan)
    allowed = (lambda tol: '') if exact else (lambda tol: f" (up to {tol} allowed)")
    raise AssertionError(f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {b} but got {a}.\n"
                         f"Absolute difference: {diff}{allowed(atol)}\nRelative difference: {rel}{allowed(rtol)}")


def _tensors(a, b, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg):
    for attr, ok in (('shape', True), ('device', check_device), ('dtype', check_dtype)):
        if ok and getattr(a, attr) != getattr(b, attr):
            raise AssertionError(f"The values for attribute '{attr}' do not match: {getattr(a, attr)} != "
                                 f"{getattr(b, attr)}.")
    if check_stride and a.stride() != b.stride():
        raise AssertionError(f"The values for attribute 'stride()' do not match: {a.stride()} != {b.stride()}.")
    if rtol is None:
        ra, aa = _TOL.get(a.dtype.name, (0.0, 0.0))
        rb, ab = _TOL.get(b.dtype.name, (0.0, 0.0))
        rtol, atol = max(ra, rb), max(aa, ab)
    x = np.asarray(a.detach().cpu().double().tolist() if not a.is_complex() else a.detach().tolist())
    y = np.asarray(b.detach().cpu().double().tolist() if not b.is_complex() else b.detach().tolist())
    exact = rtol == 0 and atol == 0
    with np.errstate(invalid='ignore', divide='ignore'):
        close = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan) if x.size else np.ones(0, bool)
    if close.all():
        return None
    if msg is not None:
        raise AssertionError(msg if isinstance(msg, str) else msg(''))
    bad = ~close
    with np.errstate(invalid='ignore', divide='ignore'):
        diff = np.abs(x - y).astype(np.float64)
        rel = diff / np.abs(y)
    def where(m):
        i = int(np.nanargmax(np.where(bad, m, -np.inf))) if not np.isnan(m[bad]).any() else \
            int(np.flatnonzero(bad & np.isnan(m))[0])
        return np.unravel_index(i, x.shape), m.reshape(-1)[i]
    ia, da = where(diff.reshape(x.shape))
    ir, dr = where(rel.reshape(x.shape))
    kind = 'equal' if exact else 'close'
    n, tot = int(bad.sum()), x.size
    fmt = (lambda v: f'{int(v)}') if exact and not a.is_floating_point() else (lambda v: f'{v}')
    lines = [f"Tensor-likes are not {kind}!", '', f"Mismatched elements: {n} / {tot} ({100 * n / tot:.1f}%)",
             f"Greatest absolute difference: {fmt(da)} at index {tuple(int(i) for i in ia)}" +
             ('' if exact else f" (up to {atol} allowed)"),
             f"Greatest relative difference: {dr} at index {tuple(int(i) for i in ir)}" +
             ('' if exact else f" (up to {rtol} allowed)")]
    raise AssertionError('\n'.join(lines))


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=''):
    """Deprecated torch name: ``assert_close`` without the dtype check, NaNs equal."""
    from .._warn import warn
    warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. Please "
         "use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
         "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning)
    E = _E()
    if not isinstance(actual, E.Tensor):
        actual = E.tensor(actual)
    if not isinstance(expected, E.Tensor):
        expected = E.tensor(expected, dtype=actual.dtype)
    return assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                        msg=msg or None)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False):
    """A random tensor of ``shape`` and ``dtype`` with values in [low, high) (torch's defaults: -9..9)."""
    E = _E()
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    lo = -9 if low is None else low
    hi = 9 if high is None else high
    if dtype is E.bool:
        t = E.randint(0, 2, shape).bool()
    elif not dtype.is_floating_point and not dtype.is_complex:
        t = E.randint(int(math.ceil(lo)), int(math.ceil(hi)), shape, dtype=dtype)
    else:
        t = (E.rand(shape, dtype=E.float64) * (hi - lo) + lo).to(dtype)
    if exclude_zero:
        t = t.masked_fill(t == 0, 1)
    if device is not None:
        t = t.to(device)
    return t.requires_grad_() if requires_grad else t
