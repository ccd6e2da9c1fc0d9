"""Large pointwise kernels and copies split over the intra-op threads (``_parallel``).

NOTE [split pointwise]: torch runs a 1M-element add on every core (``at::parallel_for`` with a grain of 32,768
elements); a NumPy ufunc runs on the calling thread only. NumPy releases the GIL inside a ufunc's inner loop, so
the output can be cut into blocks and each block computed by one call on one of ember's threads, writing into
its slice of one preallocated result (``out=``):

- **Which**: kernels that are one elementwise ufunc call (or a fixed chain of them, like add with ``alpha``),
  wrapped by ``split_pointwise``, and ``clone``'s copy (``split_copy``). Their values do not depend on where a
  block starts, so the result is bit-for-bit the unsplit one (tests/test_split_pointwise.py checks odd sizes,
  broadcasting, non-contiguous inputs and transcendental functions against the whole call).
- **How**: when every array is C-contiguous with the output's shape, the flat element range is cut at multiples
  of 64 elements (the SIMD loops see the same alignment and the same tail as one call); otherwise the output's
  first dimension is cut, each array sliced where it has that dimension and passed whole where it broadcasts.
  The result dtype comes from the ufunc's own type resolution, by calling it on empty arrays of the inputs'
  dtypes (Python numbers passed as they are, so NumPy 2's weak-scalar rule still decides).
- **When**: when the call's work is worth a hand-off to another thread (~20-40 us on the 2-core VM): an output
  of at least ``SPLIT_WORK // cost`` elements, where ``cost`` is 1 for a memory-bound ufunc (add, mul,
  comparisons, copies: ~0.1 ns per float32 element, so 512K elements are ~55 us) and 8 for a transcendental
  one (sin, exp, log: ~1 ns per element and more); more than one intra-op thread; not already inside a
  parallel region (``parallel_for`` runs it inline there). Below it, the kernel is called as before. The output
  counts, not only the operands: small operands that broadcast to a large result (an outer product, as vmap's
  per-sample weight gradients (B, m, 1) * (B, 1, n) are) are split by rows too (per-sample gradients of the
  784-512-512-10 MLP over 64 samples: 16.4 -> 9.9 ms, two outer products writing 171 MB).
  Measurements and the shared-machine caveat: BENCHMARKS.md, issue 15.
- **Whether it pays, measured**: a split only pays when another core is free to take the second block; on a
  machine whose other core runs someone else's process the worker computes its block at half speed and the
  caller waits for it (a 1M-element add took 185-215 us split against 120 us whole on the shared VM). So each
  wrapped kernel keeps a ``_Choice``: the time per element of its recent whole and split calls (moving
  averages), runs the faster way, and tries the other one every 64th large call to notice when the machine
  changes (a retry of the slow way costs ~1 us per call on average). Only the speed depends on this choice: both ways give the same bits.
"""
import time

import numpy as np

from ._parallel import parallel_for, get_num_threads, large_work_inline
from ._fp import _EXT, _IGNORE, quiet as _fp_quiet

SPLIT_WORK = 1 << 19    # elements of a cost-1 kernel's output worth a split; NOTE [split pointwise]
_ALIGN = 64             # flat blocks start at multiples of this many elements
_ndarray = np.ndarray
ADAPTIVE = True         # choose between whole and split calls by their measured speed (tests turn it off)
_perf_counter = time.perf_counter


class _Choice:
    """Whole or split, by the measured time per element of each (NOTE [split pointwise])."""
    __slots__ = ('whole', 'split', 'calls')

    def __init__(self):
        self.whole = self.split = None      # moving averages of seconds per element
        self.calls = 0

    def split_now(self):
        if not ADAPTIVE:
            return True
        self.calls += 1
        if self.whole is None or self.split is None:
            return self.whole is not None           # one whole call first, then one split call
        faster_split = self.split <= self.whole
        return faster_split != (self.calls % 64 == 0)   # every 64th call tries the other way

    def record(self, was_split, seconds, n):
        t = seconds / n
        if was_split:
            self.split = t if self.split is None else 0.75 * self.split + 0.25 * t
        else:
            self.whole = t if self.whole is None else 0.75 * self.whole + 0.25 * t


def _c_ordered(a):
    """Strides in C order (non-increasing over the dimensions longer than 1), as a C-contiguous array's."""
    prev = None
    for n, st in zip(a.shape, a.strides):
        if n > 1:
            if st < 0 or (prev is not None and st > prev):
                return False
            prev = st
    return True


def _plan(arrays, shape, out):
    """'flat' when every array is C-contiguous with the output's shape, 'rows' to cut the first dimension,
    or None when the work is not cut. Without ``out``, a ufunc lays its result out like its inputs (a transposed
    input gives a transposed result, as torch's TensorIterator does), so only inputs in C order are cut by rows:
    the C-ordered result allocated here is then the layout the ufunc would have chosen."""
    if out is not None:
        start = out.__array_interface__['data'][0]
        for a in arrays:      # a partial overlap (x[1:] += x[:-1]) needs NumPy's own buffered whole call:
            if a is not out and np.may_share_memory(a, out) and (        # blocks would read what others wrote
                    a.__array_interface__['data'][0] != start or a.strides != out.strides):
                return None
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays) and \
            (out is None or out.flags.c_contiguous):
        return 'flat'
    if len(shape) and shape[0] >= 2 and (out is not None or all(_c_ordered(a) for a in arrays)):
        return 'rows'
    return None


def _broadcast_large(a, b, lim):
    """Whether two small arrays of different shapes broadcast to an output of at least ``lim`` elements (an
    outer product: vmap's per-sample weight gradients, (B, m, 1) * (B, 1, n)); the caller has checked that both
    are arrays of different shapes, so the common small call (same shapes) pays one tuple comparison."""
    if a.size * b.size < lim or a.ndim != b.ndim:
        return False
    n = 1
    for x, y in zip(a.shape, b.shape):
        n *= x if x > y else y
    return n >= lim


def _into(r, block):
    """A block's result where it belongs: a kernel that returned a new array instead of writing into ``out``
    (a fallback path) would leave the block of the preallocated result unwritten."""
    if r is not block and r.__array_interface__['data'][0] != block.__array_interface__['data'][0]:
        np.copyto(block, r)


def split_pointwise(fn, cost=1, quiet=True):
    """``fn(*args, out=None)``, an elementwise kernel, run in blocks over the intra-op threads when its
    output is large: at least ``SPLIT_WORK // cost`` elements (NOTE [split pointwise]). With ``quiet`` the
    wrapper also sets NumPy's error state as ``_fp.quiet`` does (one wrapper, not two, on the small calls'
    hot path); with ``quiet='half'`` only for bfloat16/float8 operands (an exact kernel's)."""
    choice = _Choice()

    def split(args, out):
        if get_num_threads() < 2:
            large_work_inline()
            return fn(*args, out=out)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        shape = arrays[0].shape if len(arrays) == 1 else np.broadcast_shapes(*(a.shape for a in arrays))
        n = 1
        for s in shape:
            n *= s
        lim = SPLIT_WORK // cost
        if n < lim or (out is not None and out.shape != shape):
            return fn(*args, out=out)
        how = _plan(arrays, shape, out)
        if how is None:
            return fn(*args, out=out)
        t0 = _perf_counter()
        if not choice.split_now():
            r = fn(*args, out=out)
            choice.record(False, _perf_counter() - t0, n)
            return r
        if out is None:
            probe = fn(*(np.empty(0, a.dtype) if isinstance(a, np.ndarray) else a for a in args))
            out = np.empty(shape, probe.dtype)
        if how == 'flat':
            flat_out = out.reshape(-1)

            def run(lo, hi):
                lo, hi = lo * _ALIGN, min(hi * _ALIGN, n)
                _into(fn(*(a.reshape(-1)[lo:hi] if isinstance(a, np.ndarray) else a for a in args),
                         out=flat_out[lo:hi]), flat_out[lo:hi])
            parallel_for(-(-n // _ALIGN), run, max(1, lim // (2 * _ALIGN)))
        else:
            rows, nd = shape[0], len(shape)

            def run(lo, hi):
                _into(fn(*(a[lo:hi] if isinstance(a, np.ndarray) and a.ndim == nd and a.shape[0] == rows else a
                           for a in args), out=out[lo:hi]), out[lo:hi])
            parallel_for(rows, run, max(1, lim // (2 * max(n // rows, 1))))
        choice.record(True, _perf_counter() - t0, n)
        return out

    if quiet and _EXT is not None:
        set_state, reset_state = _EXT.set, _EXT.reset

        def kernel(*args, out=None):
            lim = SPLIT_WORK // cost
            token = set_state(_IGNORE)
            try:
                # the small calls (nearly all) leave after one size test per operand, and a shape comparison
                # when two operands broadcast against each other (an outer product's output is large)
                for a in args:
                    if a.__class__ is _ndarray and a.size >= lim:
                        return split(args, out)
                if out is not None and out.size >= lim:
                    return split(args, out)
                if len(args) > 1 and args[0].__class__ is _ndarray and args[1].__class__ is _ndarray and \
                        args[0].shape != args[1].shape and _broadcast_large(args[0], args[1], lim):
                    return split(args, out)
                return fn(*args) if out is None else fn(*args, out=out)
            finally:
                reset_state(token)
    else:
        half = quiet == 'half' and _EXT is not None
        if half:
            set_state, reset_state = _EXT.set, _EXT.reset

        def kernel(*args, out=None):
            a0 = args[0]
            if half and a0.__class__ is _ndarray and a0.dtype.kind == 'V':
                # ml_dtypes' bfloat16/float8 loops raise the invalid flag on NaN (NumPy's own exact loops do not)
                token = set_state(_IGNORE)
                try:
                    return split(args, out)
                finally:
                    reset_state(token)
            lim = SPLIT_WORK // cost
            for a in args:
                if a.__class__ is _ndarray and a.size >= lim:
                    return split(args, out)
            if out is not None and out.size >= lim:
                return split(args, out)
            if len(args) > 1 and args[0].__class__ is _ndarray and args[1].__class__ is _ndarray and \
                    args[0].shape != args[1].shape and _broadcast_large(args[0], args[1], lim):
                return split(args, out)
            return fn(*args) if out is None else fn(*args, out=out)
        if quiet is True:       # pragma: no cover - other NumPy versions
            kernel = _fp_quiet(kernel)
    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    kernel.__wrapped__ = fn
    kernel.accepts_out = True
    return kernel


def split_add(general, ufunc, cost=1):
    """add/sub, ``general(a, b, alpha, out=None)`` (``a + alpha * b``), with the split and the error state of
    ``split_pointwise``; with alpha 1 and small operands ``ufunc(a, b)`` is called directly (two Python frames
    less on the small add and sub, the most frequent calls of all, and on AccumulateGrad's in-place add)."""
    whole = split_pointwise(general, cost)
    if _EXT is None:        # pragma: no cover - other NumPy versions
        return whole
    set_state, reset_state = _EXT.set, _EXT.reset

    def kernel(a, b, alpha, out=None):
        lim = SPLIT_WORK // cost
        if alpha != 1 or (a.__class__ is _ndarray and a.size >= lim) or \
                (b.__class__ is _ndarray and b.size >= lim) or (out is not None and out.size >= lim):
            return whole(a, b, alpha, out=out)
        token = set_state(_IGNORE)
        try:
            return ufunc(a, b) if out is None else ufunc(a, b, out=out)
        finally:
            reset_state(token)
    kernel.__name__ = general.__name__
    kernel.__wrapped__ = general
    kernel.accepts_out = True
    return kernel


def split_copy(a):
    """A new C-contiguous copy of ``a``, in blocks over the intra-op threads when it is large."""
    n = a.size
    if n < SPLIT_WORK or get_num_threads() < 2 or a.ndim == 0:
        if n >= SPLIT_WORK:
            large_work_inline()
        return np.array(a, order='C', copy=True)
    t0 = _perf_counter()
    if not _copy_choice.split_now():
        r = np.array(a, order='C', copy=True)
        _copy_choice.record(False, _perf_counter() - t0, n)
        return r
    out = np.empty(a.shape, a.dtype)
    if a.flags.c_contiguous:
        src, dst = a.reshape(-1), out.reshape(-1)
        units = -(-n // _ALIGN)

        def run(lo, hi):
            lo, hi = lo * _ALIGN, min(hi * _ALIGN, n)
            np.copyto(dst[lo:hi], src[lo:hi])
        parallel_for(units, run, max(1, SPLIT_WORK // (2 * _ALIGN)))
    elif a.shape[0] >= 2:
        per_row = n // a.shape[0]
        parallel_for(a.shape[0], lambda lo, hi: np.copyto(out[lo:hi], a[lo:hi]),
                     max(1, SPLIT_WORK // (2 * max(per_row, 1))))
    else:
        np.copyto(out, a)
    _copy_choice.record(True, _perf_counter() - t0, n)
    return out


_copy_choice = _Choice()
