"""torch's CPU rejection samplers: gamma, Poisson, binomial and Dirichlet, drawing what torch draws.

NOTE [torch's rejection samplers]: torch samples ``_standard_gamma``, ``poisson``, ``binomial`` and
``_sample_dirichlet`` on the CPU with serial kernels, element after element in the output's (C) order, each
element taking as many draws from the generator as its rejection loop needs. The draws are torch's double ones
(NOTE [torch's random streams] in _torch_random.py): a uniform in [0, 1) from one 64-bit output's low 53 bits,
and a standard normal from ``normal_distribution<double>``, a Box-Muller pair (the first uniform for the angle,
the second for the radius through log1p) whose cosine is returned and whose sine the generator keeps for the
next normal draw, here or in a later ``normal_`` (``next_double_normal``, part of the saved state). So the
samples, and the generator after them, are torch's only if every draw is made in torch's order, and each
element's algorithm takes the same branches; the loops below run in Python, one element at a time (torch's
algorithms, written out again here), with the per-element constants computed in NumPy beforehand:

- **Gamma** (Marsaglia and Tsang): alpha < 1 first draws ``(1 - u) ** (1 / alpha)`` as a scale and samples
  alpha + 1; then ``d = alpha - 1/3``, ``c = 1 / sqrt(9 d)``, and per try a normal x (redrawn while
  ``1 + c x <= 0``) and a uniform u (as ``1 - u``), accepted by the squeeze ``u < 1 - 0.0331 x^4`` or the
  log test. torch's float32 kernel keeps alpha in float32: ``1 / alpha``, ``alpha + 1`` and ``alpha - 1/3``
  are float32 operations (with 1/3 and 0.0331 float32 constants), the rest is double, the result rounded
  to float32 and raised to the smallest normal number. alpha = 0 gives that smallest number with no draw; a
  NaN alpha (and most negative ones) too, after its draws, as torch (which checks nothing).
- **Poisson**: rate >= 10 by Hoermann's transformed rejection (PTRS, two uniforms per try, glibc's lgamma in
  the log test), rate < 10 by multiplying uniforms until the product falls to ``exp(-rate)``, rate 0 with
  no draw.
- **Binomial**: BTRS (Hormann's transformed rejection, two uniforms per try) where ``count * p >= 10``,
  otherwise inversion by geometric waiting times (one uniform each); p > 1/2 samples ``count - X`` with
  ``1 - p``. For float32 tensors ``count`` and ``p`` stay float32 where torch's template does float32
  arithmetic on them (``count * p``, ``sqrt``, ``log1p(-p)`` are float32 operations).
- **Dirichlet**: a double gamma per element (the float32 alpha widened first, so the constants are double),
  then each one divided by its row's sum as torch's ``sum`` adds a contiguous row (its cascade of vector
  lanes, ``torch_row_sum``), rounded to the dtype and clamped to [tiny, the float below 1].

Speed: about 0.5 to 2 microseconds per element against torch's 0.03 to 0.1 (BENCHMARKS.md, "Rejection
samplers"), so a million gamma draws take about half a second. The engine is read in blocks of double
uniforms; at the end it is rewound and moved on by exactly what was consumed, and the kept normal written back.
"""
import ctypes
import ctypes.util
import math

import numpy as np

from ._torch_random import uniform01

_f32, _f64 = np.float32, np.float64
_TWO_PI = 2.0 * math.pi
_THIRD_F32 = _f32(1) / _f32(3)          # the float32 constant 1.0f / 3.0f
_SQUEEZE = float(_f32(0.0331))          # the float32 constant 0.0331f, widened


def _libm():
    """glibc's lgamma (CPython's math.lgamma is its own Lanczos sum) and log1pf, or stand-ins elsewhere."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library('m') or 'libm.so.6')
        lg, l1pf = lib.lgamma, lib.log1pf
        lg.restype, lg.argtypes = ctypes.c_double, [ctypes.c_double]
        l1pf.restype, l1pf.argtypes = ctypes.c_float, [ctypes.c_float]
        return lg, l1pf
    except (OSError, AttributeError, TypeError):      # not glibc: the nearest we have
        return math.lgamma, lambda x: float(_f32(math.log1p(x)))


_lgamma, _log1pf = _libm()


def _round32(x):
    """A double rounded to float32 (the result of a float32 +, -, *, / or sqrt of float32 operands, which the
    double operation followed by this rounding gives exactly)."""
    return float(_f32(x))


class _Draws:
    """torch's double uniform and standard normal draws, one at a time, from ``rng``'s engine."""
    __slots__ = ('rng', 'start', 'buf', 'i', 'n', 'drawn', 'block', 'kept')

    def __init__(self, rng, hint):
        self.rng = rng
        self.start = rng.bit_generator.state
        self.buf, self.i, self.n, self.drawn = [], 0, 0, 0
        self.block = max(64, min(int(hint), 1 << 16))
        self.kept = rng.next_double_normal

    def _refill(self):
        self.buf = uniform01(self.rng, self.block, np.dtype(_f64)).tolist()
        self.drawn += self.block
        self.i, self.n = 0, self.block
        self.block = min(2 * self.block, 1 << 16)

    def uniform(self):
        i = self.i
        if i == self.n:
            self._refill()
            i = 0
        self.i = i + 1
        return self.buf[i]

    def normal(self):
        k = self.kept
        if k is not None:
            self.kept = None
            return k
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = _TWO_PI * u1
        self.kept = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self):
        """Leave the engine where torch's is: rewound, then moved on by the uniforms used (two outputs each)."""
        used = self.drawn - (self.n - self.i)
        bg = self.rng.bit_generator
        if used != self.drawn:
            bg.state = self.start
            if used:
                bg.random_raw(2 * used, output=False)
        self.rng.next_double_normal = self.kept


# --- gamma ---------------------------------------------------------------------------------------------

def _gamma_constants(alpha, single):
    """Per element: alpha == 0, alpha < 1, 1 / alpha, d and c of Marsaglia and Tsang, as torch computes them
    (float32 steps for a float32 alpha)."""
    if single:
        a = alpha.astype(_f32)
        one, third = _f32(1), _THIRD_F32
    else:
        a = alpha.astype(_f64)
        one, third = 1.0, float(_THIRD_F32)
    small, zero = a < one, a == 0
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        inv = (one / a).astype(_f64)
        a = np.where(small, a + one, a)
        d = (a - third).astype(_f64)
        c = 1.0 / np.sqrt(9.0 * d)
    return zero, small, inv, d, c


def _gamma_loop(draws, zero, small, inv, d, c):
    """The double samples, element by element (0 where alpha is 0)."""
    uniform, normal, log, pow_ = draws.uniform, draws.normal, math.log, math.pow
    out = [0.0] * len(d)
    for k, (z, s, e, dd, cc) in enumerate(zip(zero.tolist(), small.tolist(), inv.tolist(), d.tolist(), c.tolist())):
        if z:
            continue
        scale = pow_(1.0 - uniform(), e) if s else 1.0
        while True:
            while True:
                x = normal()
                y = 1.0 + cc * x
                if not y <= 0:          # as C's do-while: a NaN (NaN or negative alpha) leaves the loop
                    break
            v = y * y * y
            u = 1.0 - uniform()
            xx = x * x
            if u < 1.0 - _SQUEEZE * xx * xx:
                break
            if log(u) < 0.5 * xx + dd * (1.0 - v + log(v)):
                break
        out[k] = scale * dd * v
    return np.array(out, _f64)


def standard_gamma(rng, alpha):
    """``torch._standard_gamma(alpha)`` for a float32 or float64 array."""
    a = np.ascontiguousarray(alpha).ravel()
    single = alpha.dtype == _f32
    draws = _Draws(rng, 2 * a.size + 8)
    try:
        x = _gamma_loop(draws, *_gamma_constants(a, single))
    finally:
        draws.finish()
    x = x.astype(alpha.dtype)
    return np.fmax(x, np.finfo(alpha.dtype).tiny).reshape(alpha.shape)      # NaN (a negative alpha) too


# --- Poisson -------------------------------------------------------------------------------------------

def poisson(rng, rate):
    """``torch.poisson(rate)`` (any float dtype: the rate is taken as a double, the count rounded back)."""
    lam = np.ascontiguousarray(rate).ravel().astype(_f64).tolist()
    draws = _Draws(rng, 8 * len(lam) + 8)
    uniform, log, sqrt, floor, exp, lgamma = draws.uniform, math.log, math.sqrt, math.floor, math.exp, _lgamma
    out = [0] * len(lam)
    try:
        for i, L in enumerate(lam):
            if L >= 10:         # PTRS
                slam, loglam = sqrt(L), log(L)
                b = 0.931 + 2.53 * slam
                a = -0.059 + 0.02483 * b
                invalpha = 1.1239 + 1.1328 / (b - 3.4)
                vr = 0.9277 - 3.6224 / (b - 2)
                log_invalpha = log(invalpha)
                while True:
                    U = uniform() - 0.5
                    V = uniform()
                    us = 0.5 - abs(U)
                    if us == 0:         # a uniform of 0: k is -inf in C (INT64_MIN), rejected
                        continue
                    k = floor((2 * a / us + b) * U + L + 0.43)
                    if us >= 0.07 and V <= vr:
                        break
                    if k < 0 or (us < 0.013 and V > us):
                        continue
                    # log(V) of V = 0 is -inf in C, accepted
                    if (log(V) if V > 0 else -math.inf) + log_invalpha - log(a / (us * us) + b) <= \
                            -L + k * loglam - lgamma(k + 1.0):
                        break
                out[i] = k
            elif L > 0:         # multiplication of uniforms
                enlam, x, prod = exp(-L), 0, 1.0
                while True:
                    prod *= uniform()
                    if prod > enlam:
                        x += 1
                    else:
                        break
                out[i] = x
    finally:
        draws.finish()
    return np.array(out, _f64).astype(rate.dtype).reshape(rate.shape)


# --- binomial ------------------------------------------------------------------------------------------

# Stirling's series remainder log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi) / 2 for k < 10, to 15
# or 16 digits, as torch's (and TensorFlow's) btrs tabulates it; larger k take the series' first terms
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    if k < 10:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs_constants(count, prob, r32):
    """BTRS's constants for (count, prob): what torch computes in the tensor's dtype rounded by ``r32`` (float32
    rounding, or the identity for float64), the rest in double."""
    stddev = r32(math.sqrt(r32(r32(count * prob) * r32(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = r32(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = r32(prob / r32(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(math.floor(r32(r32(count + 1) * prob)))
    head = (m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
    return (a, b, c, v_r, r, alpha, m, head, _stirling_tail(m), _stirling_tail(count - m), r32(count + 1))


def _btrs(count, prob, uniform, r32, consts):
    """Hormann's BTRS. ``r32`` rounds the float32 operations on k (the identity where they are exact: float64,
    or an integer count below 2^24)."""
    log, floor = math.log, math.floor
    a, b, c, v_r, r, alpha, m, head, tail_m, tail_cm, count1 = consts
    while True:
        U = uniform() - 0.5
        V = uniform()
        us = 0.5 - abs(U)
        if us == 0:             # a uniform of 0: k is -inf in C, rejected
            continue
        k = r32(float(floor((2 * a / us + b) * U + c)))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return k
        w = V * alpha / (a / (us * us) + b)
        V = log(w) if w > 0 else -math.inf
        cmk1 = r32(r32(count - k) + 1)
        upper = (head + count1 * log((count - m + 1) / cmk1) + (k + 0.5) * log(r * cmk1 / r32(k + 1))
                 + tail_m + tail_cm - _stirling_tail(k) - _stirling_tail(r32(count - k)))
        if V <= upper:
            return k


def _inversion(count, logprob, uniform):
    geom_sum, num = 0.0, 0
    while True:
        U = uniform()
        geom_sum += math.ceil((math.log(U) if U > 0 else -math.inf) / logprob)
        if geom_sum > count:
            return float(num)
        num += 1


def binomial(rng, count, prob):
    """``torch.binomial(count, prob)`` for float32 or float64 arrays (broadcast together)."""
    dt = count.dtype
    single = dt == _f32
    r32 = _round32 if single else float
    n_, p_ = np.broadcast_arrays(count, prob.astype(dt, copy=False))
    shape = n_.shape
    ns, ps = n_.ravel().astype(_f64).tolist(), p_.ravel().astype(_f64).tolist()
    draws = _Draws(rng, 4 * len(ns) + 8)
    uniform = draws.uniform
    cache = {}          # per (count, p): the sampler and its constants (parameters are usually expanded)
    out = [0.0] * len(ns)
    try:
        for i, (n, p) in enumerate(zip(ns, ps)):
            if not n < math.inf:        # torch's loops never end on a NaN or infinite count
                out[i] = math.nan
                continue
            if n <= 0.0 or p <= 0.0:
                continue
            if p >= 1.0:
                out[i] = n
                continue
            if not (p <= 0.5 or p > 0.5):
                out[i] = math.nan
                continue
            plan = cache.get((n, p))
            if plan is None:
                q = p if p <= 0.5 else r32(1.0 - p)
                if r32(n * q) >= 10.0:
                    exact = not single or (n == int(n) and n < 2 ** 24)
                    plan = (True, (float if exact else r32, _btrs_constants(n, q, r32)))
                else:
                    plan = (False, float(_log1pf(-q)) if single else math.log1p(-q))
                cache[(n, p)] = plan
            if plan[0]:
                x = _btrs(n, p if p <= 0.5 else r32(1.0 - p), uniform, *plan[1])
            else:
                x = _inversion(n, plan[1], uniform)
            out[i] = x if p <= 0.5 else r32(n - x)
    finally:
        draws.finish()
    return np.array(out, _f64).astype(dt).reshape(shape)


# --- Dirichlet -----------------------------------------------------------------------------------------

def _ceil_log2(n):
    return 1 if n <= 2 else (n - 1).bit_length()


def _add(a, b):
    """a + b for arrays, tensors or tuples of them (vector lanes), None standing for a zero accumulator (0 + b is
    b, exactly, for the positive values summed here)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b))
    return a + b


def _cascade(items):
    """torch's multi_row_sum: ``items`` (n, each a list of 4 values) -> 4 sums, each added down n through a few
    levels of partial sums, a level emptied into the next after every 2^level_power additions."""
    n = len(items)
    power = max(4, _ceil_log2(n) // 4)
    step, mask = 1 << power, (1 << power) - 1
    acc = [[None] * 4 for _ in range(4)]
    i = 0
    while i + step <= n:
        for _ in range(step):
            acc[0] = [_add(a, b) for a, b in zip(acc[0], items[i])]
            i += 1
        for j in range(1, 4):
            acc[j] = [_add(a, b) for a, b in zip(acc[j], acc[j - 1])]
            acc[j - 1] = [None] * 4
            if i & (mask << (j * power)):
                break
    for k in range(i, n):
        acc[0] = [_add(a, b) for a, b in zip(acc[0], items[k])]
    for j in range(1, 4):
        acc[0] = [_add(a, b) for a, b in zip(acc[0], acc[j])]
    return acc[0]


def _row_sum(values):
    """torch's row_sum: four interleaved partial sums (a cascade each), the leftover values added to the
    first, then the other three."""
    m = len(values) // 4
    part = _cascade([values[4 * j:4 * j + 4] for j in range(m)])
    s = part[0]
    for v in values[4 * m:]:
        s = _add(s, v)
    for k in range(1, 4):
        s = _add(s, part[k])
    return s


def torch_row_sum(cols):
    """The sum of a contiguous double row as torch's cascade_sum adds it, given as its columns (arrays or ember
    tensors, one per element of the row, each holding that element for every row): a row of at least 4 as
    vectors of 4 lanes (torch's AVX2 and DEFAULT kernels; its AVX-512 dispatch of sum falls back to AVX2), the
    tail added first and then the lanes in order; a shorter one by row_sum on scalars."""
    n = len(cols)
    if n < 4:
        return _row_sum(list(cols))
    nv = n // 4
    lanes = _row_sum([tuple(cols[4 * i:4 * i + 4]) for i in range(nv)])
    s = None
    for c in cols[4 * nv:]:
        s = _add(s, c)
    for lane in lanes:
        s = _add(s, lane)
    return s


def dirichlet(rng, alpha):
    """``torch._sample_dirichlet(alpha)`` for a float32 or float64 array (the last dimension the simplex)."""
    dt = alpha.dtype
    a = np.ascontiguousarray(alpha, _f64).reshape(-1, alpha.shape[-1] if alpha.ndim else 1)
    draws = _Draws(rng, 2 * a.size + 8)
    try:
        g = _gamma_loop(draws, *_gamma_constants(a.ravel(), False))
    finally:
        draws.finish()
    g = np.fmax(g, np.finfo(_f64).tiny).reshape(a.shape)
    with np.errstate(invalid='ignore', divide='ignore'):
        x = (g / torch_row_sum([g[:, k] for k in range(g.shape[1])])[:, None]).astype(dt)
    return np.fmin(np.fmax(x, np.finfo(dt).tiny), np.nextafter(dt.type(1), dt.type(0))).reshape(alpha.shape)
