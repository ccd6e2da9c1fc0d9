"""torch's CPU random streams, drawn from the Mersenne Twister that ember's Generator holds.

NOTE [torch's random streams]: ``torch.manual_seed(123); torch.rand(3)`` gives the same three numbers on
every x86 machine, and programs, tutorials and tests print or assert them (rasbt's LLMs-from-scratch tests
compare generated token ids with hard-coded ones). ember draws the same bits the same way:

- **Engine**: torch's CPU generator is mt19937, seeded with init_genrand on the low 32 bits of the seed; the
  ``Generator`` (ember/random.py) holds NumPy's MT19937 in that state, and ``random_raw`` gives its 32-bit
  outputs in order. torch's ``random64()`` is two of them, the first one high.
- **Uniform** (``rand``, ``uniform_``, the ``nn.init`` uniform initialisers): one output per element, its
  low 24 bits (float32, and float16/bfloat16, drawn as float32) or one 64-bit output's low 53 bits (float64)
  scaled by 2^-digits in double, then ``x * (to - from) + from`` with ``to - from`` in float32 (float64).
- **Normal** (``randn``, ``normal_``): a contiguous float32 tensor of at least 16 elements is filled with
  uniforms first, then every block of 16 becomes 16 normals by Box-Muller (radius from the first 8, angle
  from the last 8), with a tail shorter than 16 recomputed from 16 fresh uniforms over the last 16 places
  (float16 and bfloat16: computed in float32, with uniforms drawn for the whole blocks only before the tail's).
  torch computes these with the float32 ``log256_ps``/``sincos256_ps`` of avx_mathfun.h (Cephes
  polynomials) in AVX2 code that the compiler contracts to fused multiply-adds; _box_muller32.py repeats
  those polynomials in NumPy float32 passes, each fused multiply-add computed in float64 and rounded once
  (NOTE [float32 Box-Muller passes]). float64 tensors take the scalar Box-Muller in double
  (glibc's ``log`` through ``math``, as NumPy's differs in the last bit now and then); fewer than 16 elements
  or a non-contiguous tensor: one double Box-Muller pair per two elements, the second kept in the generator
  for the next draw (``next_double_normal``), as torch's ``normal_distribution<double>`` does.
- **Integers**: ``randint``/``random_`` take one 32-bit output per element (``% range``), or one 64-bit
  output where the range needs 33 bits or more; ``randperm`` is torch's Fisher-Yates, one output per swap.
- **Bernoulli and dropout**: one uniform per element (double for a scalar or float64 p, float for a float
  p tensor), 1 where it is below p; dropout is torch's CPU composite: ``bernoulli_(1 - p)``, divided by
  ``1 - p`` in the input's dtype. **Exponential**: ``-log1p(-u) / lambd`` from a double uniform.
  **Multinomial**: without replacement (and any single sample) the top p / Exp(1) keys, as torch's fast
  path; with replacement a double uniform per sample searched in the row's cumulative distribution.
- A tensor written in place that is not contiguous gets its draws in memory order (``in_memory_order``),
  as torch's serial kernels walk it.

``geometric_``, ``cauchy_`` and ``log_normal_`` are torch's transforms of double uniforms and normals too; double
results of ``x * std + mean`` are fused multiply-adds in torch's compiled code (``fma64``). The rejection
samplers (gamma, Poisson, binomial, Dirichlet) draw these double uniforms and normals element by element
(NOTE [torch's rejection samplers] in _torch_samplers.py). Checked value for value against torch in
tests/test_random_streams.py and tests/test_random_samplers.py; the cost of being exact: BENCHMARKS.md,
"Random streams" and "Rejection samplers".
"""
import math

import numpy as np

from ._box_muller32 import box_muller_16 as _box_muller_16_f32, scratch as _scratch_f32
from ._parallel import parallel_for

_f32, _f64 = np.float32, np.float64
_CHUNK = 4096           # blocks of 16 per step of the Box-Muller transform (64K numbers; 2048: ~5% slower)
_GRAIN = 2048           # the fewest blocks worth handing to another thread


def raw32(rng, n):
    """The next ``n`` 32-bit outputs of the generator's mt19937 (uint64 array)."""
    return rng.bit_generator.random_raw(n)


def raw64(rng, n):
    """torch's ``random64()``, ``n`` times: two 32-bit outputs, the first one the high half."""
    r = raw32(rng, 2 * n)
    return (r[0::2] << np.uint64(32)) | r[1::2]


def uniform01(rng, n, dt):
    """``n`` draws of torch's ``uniform_real_distribution`` in (0, 1] for ``dt``, as float64 (exact): 53 bits
    for float64, 24 for the others (float16 and bfloat16 are drawn as their float32 opmath type)."""
    if dt == np.float64:
        return (raw64(rng, n) & np.uint64((1 << 53) - 1)).astype(_f64) * 2.0 ** -53
    return (raw32(rng, n) & np.uint64((1 << 24) - 1)).astype(_f64) * 2.0 ** -24


def uniform01_below(rng, n, threshold):
    """``uniform01(rng, n, float64) < threshold`` without forming the doubles: a draw is ``k * 2^-53`` with ``k``
    its 53 random bits, and ``k * 2^-53 < t`` exactly when ``k < ceil(t * 2^53)`` (t * 2^53 is exact). Dropout's
    and bernoulli's masks at a third of the memory traffic (20M elements: no 160 MB of doubles)."""
    import math
    scaled = float(threshold) * 2.0 ** 53
    bound = np.uint64(min(max(math.ceil(scaled), 0), 1 << 53))
    r = raw64(rng, n)
    np.bitwise_and(r, np.uint64((1 << 53) - 1), out=r)
    return np.less(r, bound)


def _uniform01_f32(rng, n):
    """The float32 draws of ``uniform01`` as float32 (24 bits scaled by 2^-24: exact in float32)."""
    r = raw32(rng, n)
    np.bitwise_and(r, np.uint64((1 << 24) - 1), out=r)
    out = r.astype(_f32)
    out *= _f32(2.0 ** -24)
    return out


def uniform(rng, shape, dt, lo=0.0, hi=1.0):
    """``torch.empty(shape, dtype=dt).uniform_(lo, hi)``."""
    dt = np.dtype(dt)
    if dt == np.float32 and lo == 0 and hi == 1:       # rand: x * 1 + 0, exact in float32
        return _uniform01_f32(rng, math.prod(shape)).reshape(shape)
    x = uniform01(rng, math.prod(shape), dt)
    if dt == np.float64:
        return fma64(x, hi - lo, lo).reshape(shape)
    lo_t, hi_t = _f32(lo), _f32(hi)     # from and to in float32 (the opmath type of float16 and bfloat16)
    r = _fma(x, hi_t - lo_t, lo_t)      # x * (to - from) + from, contracted to one rounding in float32
    if dt == np.float32:
        return r.reshape(shape)
    # rounded to float16/bfloat16 a draw may reach `to`: torch gives `from` then, so results stay in [from, to)
    r = r.astype(dt)
    r[r == dt.type(hi)] = dt.type(lo)
    return r.reshape(shape)


def fma64(a, b, c):
    """float64 a * b + c rounded once, as the compiler contracts torch's scalar code (``val * std + mean``):
    the product split exactly into two doubles (Dekker's TwoProduct), the sum taken with its error (TwoSum),
    so only a tie between two doubles could round differently from the hardware instruction."""
    a, b, c = np.asarray(a, _f64), np.asarray(b, _f64), np.asarray(c, _f64)
    p = a * b
    t = a * 134217729.0                     # 2^27 + 1: splits a 53-bit mantissa into two 26-bit halves
    a_hi = t - (t - a)
    t = b * 134217729.0
    b_hi = t - (t - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    bb = s - p
    s_err = (p - (s - bb)) + (c - bb)
    r = s + (s_err + p_err)
    return np.where(np.isfinite(p) & np.isfinite(s), r, p + c)


def _fma(a, b, c):
    """float32 a * b + c rounded once, as the compiled FMA instruction."""
    p = np.multiply(a, b, dtype=_f64)           # exact: a float32 product fits a float64
    return np.add(p, c, out=p).astype(_f32)


def _box_muller_16_f64(u, out, mean, std, scratch=None):
    """Blocks of 16 float64 uniforms -> normals in ``out``, as torch's scalar normal_fill_16<double> (``scratch``:
    the float32 kernel's signature; NumPy's float64 passes allocate their own)."""
    u1 = 1.0 - u[:, :8]
    radius = np.fromiter(map(math.log, u1.ravel().tolist()), _f64, u1.size).reshape(u1.shape)     # glibc's log
    radius *= -2.0
    np.sqrt(radius, out=radius)
    theta = 2.0 * math.pi * u[:, 8:]
    out[:, :8] = _scaled64(radius * np.cos(theta), std, mean)
    out[:, 8:] = _scaled64(radius * np.sin(theta), std, mean)


def _scaled64(x, std, mean):
    """``fma64(x, std, mean)``; with std 1 the product is exact and the fused multiply-add is one add."""
    if std == 1:
        x += mean
        return x
    return fma64(x, std, mean)


def _fill(rng, n, dt, mean, std):
    """torch's normal_fill: n >= 16 uniforms, Box-Muller by blocks of 16, the tail redone from 16 fresh ones."""
    if dt == np.float64:
        draw, bm, scratch = (lambda m: uniform01(rng, m, dt)), _box_muller_16_f64, _no_scratch
    else:
        draw, bm, scratch = (lambda m: _uniform01_f32(rng, m)), _box_muller_16_f32, _scratch_f32
    k = n // 16
    # float16 and bfloat16 draw only the whole blocks' uniforms before the tail's 16 fresh ones (measured: their
    # values are float32's, block for block, with 16 * (n // 16 + 1) draws in all)
    u = draw(16 * k if dt.itemsize == 2 else n)
    out = np.empty(n, u.dtype)
    blocks, rows = u[:16 * k].reshape(k, 16), out[:16 * k].reshape(k, 16)

    def run(lo, hi):        # chunks of a few thousand blocks, each thread reusing its scratch arrays
        s = scratch(min(_CHUNK, hi - lo))
        for i in range(lo, hi, _CHUNK):
            j = min(i + _CHUNK, hi)
            bm(blocks[i:j], rows[i:j], mean, std, s)
    parallel_for(k, run, _GRAIN)
    if n % 16:
        last = np.empty((1, 16), out.dtype)
        bm(draw(16).reshape(1, 16), last, mean, std, scratch(1))
        out[n - 16:] = last.ravel()
    return out


def _no_scratch(blocks):
    return None


def _one_by_one(rng, n, mean, std):
    """torch's normal_distribution<double>, n times: Box-Muller pairs (u1 for the angle, u2 for the radius),
    the cosine returned and the sine kept in the generator for the next draw; vectorised over the pairs."""
    vals = []
    if n and rng.next_double_normal is not None:
        vals.append(np.array([rng.next_double_normal]))
        rng.next_double_normal = None
    pairs = (n - len(vals) + 1) // 2
    if pairs:
        u = uniform01(rng, 2 * pairs, np.dtype(_f64))
        log = _glibc(None, math.log1p, -u[1::2], _f64)
        r = np.sqrt(-2.0 * log)
        theta = (2.0 * math.pi) * u[0::2]
        both = np.empty(2 * pairs)
        both[0::2], both[1::2] = r * np.cos(theta), r * np.sin(theta)
        vals.append(both)
    out = np.concatenate(vals) if vals else np.empty(0)
    if len(out) > n:                    # an odd count: the last sine waits for the next draw
        rng.next_double_normal = float(out[-1])
        out = out[:n]
    return _scaled64(out, std, mean)


def _glibc(np_fn, math_fn, x, dt):
    """``np_fn(x)`` for a result rounded to a narrower dtype; glibc's ``math_fn`` element by element for a
    float64 one, where NumPy's vectorised exp/tan/log1p differ from torch's libm in the last bit now and then."""
    if np.dtype(dt) != np.float64:
        return np_fn(x)
    return np.fromiter(map(math_fn, x.tolist()), _f64, x.size)


def log_normal(rng, n, dt, mean, std):
    """``log_normal_(mean, std)``: exp of torch's per-element double normals (``normal_distribution``)."""
    return _glibc(np.exp, math.exp, _one_by_one(rng, n, mean, std), dt).astype(dt)


def cauchy(rng, n, dt, median, sigma):
    """``cauchy_(median, sigma)``: median + sigma * tan(pi * (u - 1/2)), u a double uniform."""
    u = uniform01(rng, n, np.dtype(_f64))
    return fma64(sigma, _glibc(np.tan, math.tan, math.pi * (u - 0.5), dt), median).astype(dt)


def geometric(rng, n, dt, p):
    """``geometric_(p)``: ceil(log(u) / log1p(-p)), u a double uniform."""
    u = uniform01(rng, n, np.dtype(_f64))
    return np.ceil(np.log(u) / math.log1p(-p)).astype(dt)


def in_memory_order(draws, a, like=False):
    """Draws (in the order torch makes them) laid out for writing into ``a``: torch's serial kernels walk a
    non-contiguous tensor in memory order (TensorIterator sorts the dimensions by stride), so the k-th draw
    goes to the k-th element in memory, not in index order. ``like``: the draws fill a new tensor made by
    ``empty_like(a)`` (dropout's noise), which has ``a``'s layout only when ``a`` is non-overlapping and dense
    (an expanded or sliced ``a`` gives a contiguous one)."""
    if a.flags.c_contiguous or a.ndim < 2 or like and not _dense(a):
        return draws.reshape(a.shape)
    axes = sorted(range(a.ndim), key=lambda d: (-abs(a.strides[d]), d))
    return draws.reshape([a.shape[d] for d in axes]).transpose(np.argsort(axes))


def _dense(a):
    """Non-overlapping and dense (torch's is_non_overlapping_and_dense): some order of the dimensions makes the
    strides those of a contiguous array."""
    expected = a.itemsize
    for d in sorted((d for d in range(a.ndim) if a.shape[d] != 1), key=lambda d: a.strides[d]):
        if a.strides[d] != expected:
            return False
        expected *= a.shape[d]
    return True


def normal(rng, shape, dt, mean=0.0, std=1.0, contiguous=True):
    """``torch.empty(shape, dtype=dt).normal_(mean, std)`` (C order, or element by element where the tensor
    written is not contiguous)."""
    dt = np.dtype(dt)
    n = math.prod(shape)
    if n >= 16 and contiguous:
        r = _fill(rng, n, dt, mean, std)
    else:
        r = _one_by_one(rng, n, mean, std)
    return r.astype(dt, copy=False).reshape(shape)


def exponential(rng, n, dt, lambd=1.0):
    """``exponential_(lambd)``, n elements: -1/lambd * log1p(-u) in double, u a 53-bit uniform. float64 takes
    glibc's log1p (``math``); for narrower dtypes NumPy's (which differs from it in the last bit of a double
    now and then) rounds to the same value."""
    u = uniform01(rng, n, np.dtype(_f64))
    return ((-1.0 / lambd) * _glibc(np.log1p, math.log1p, -u, dt)).astype(dt)


_DIGITS = {'float16': 11, 'bfloat16': 8, 'float32': 24, 'float64': 53}      # significant bits of the float types


def _through_float(n, digits):
    """``static_cast<int64_t>(static_cast<scalar_t>(n))``: ``n`` rounded to ``digits`` significant bits, ties to
    even (float16 and bfloat16 convert through float32, as torch's do)."""
    for d in ((24, digits) if digits < 24 else (digits,)):
        shift = abs(n).bit_length() - d
        if shift > 0:
            q, r = divmod(abs(n), 1 << shift)
            q += r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1)
            n = (q << shift) * (1 if n >= 0 else -1)
    return n


def random_range(dt, lo, hi):
    """The half-open range ``random_(lo, hi)`` draws for the NumPy dtype ``dt``, as torch's random_from_to_impl
    (the operator's meta function has checked the bounds): ``hi=None`` runs to the largest value ``dt`` holds
    exactly (2**digits for a float type); a float type moves a bound it cannot hold to the nearest one inside
    the range (torch's update_from/update_to). ``lo`` the lowest int64 with ``hi=None`` is the full 64-bit range:
    (None, None)."""
    digits = _DIGITS.get(dt.name)
    if hi is None:
        if lo == -1 << 63:
            return None, None
        hi = (1 << digits if digits else 1 if dt == np.bool_ else int(np.iinfo(dt).max)) + 1
    elif digits:
        if _through_float(hi - 1, digits) >= hi:
            hi = _through_float(hi - 1, digits) - (1 << (abs(hi - 1).bit_length() - digits))
    if digits and _through_float(lo + 1, digits) < lo:
        lo = _through_float(lo + 1, digits) + (1 << (abs(lo + 1).bit_length() - digits))
    return lo, hi


def integers(rng, lo, hi, shape, dt):
    """``random_(lo, hi)``: (output % range) + lo, a 32-bit output per element below a range of 2**28 and a 64-bit
    one from there (torch's uniform_int_from_to_distribution: the wider draw keeps the modulo bias small), over
    ``random_range``'s bounds (``hi=None``: up to the dtype's largest exact value)."""
    lo, hi = random_range(np.dtype(dt), lo, hi)
    n = math.prod(shape)
    if lo is None:      # the full range: a 64-bit output as int64
        return raw64(rng, n).view(np.int64).astype(dt).reshape(shape)
    span = hi - lo
    if span >= 1 << 28:
        v = raw64(rng, n) % np.uint64(span)
    else:
        v = raw32(rng, n) % np.uint64(span)
    r = (v + np.uint64(lo & 0xffff_ffff_ffff_ffff)).view(np.int64)      # int64(val % range + base), wrapping
    return r.astype(dt).reshape(shape)


def permutation(rng, n, dt):
    """torch's randperm on the CPU: Fisher-Yates swapping i with i + output % (n - i), for i < n - 1."""
    perm = list(range(n))
    if n > 1:
        z = (raw32(rng, n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        for i, d in enumerate(z):
            j = i + d
            perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, dtype=dt)
