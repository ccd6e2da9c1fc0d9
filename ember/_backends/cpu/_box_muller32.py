"""torch's float32 Box-Muller (normal_fill_16_AVX2) in NumPy passes over preallocated buffers.

NOTE [float32 Box-Muller passes]: torch turns each block of 16 float32 uniforms into 16 normals with the
float32 ``log256_ps``/``sincos256_ps`` of avx_mathfun.h (Cephes polynomials), compiled to fused multiply-adds
(NOTE [torch's random streams] in _torch_random.py). Every value here is the one that code computes; the cost
is the number of passes over a chunk, so each step takes the cheapest form that rounds the same way:

- A fused multiply-add ``a * b + c`` whose product is exact in float32 (a small integer times a constant of
  a few bits, a power-of-two factor) is a float32 multiply and a float32 add.
- Any other one is the product in float64 (exact: a float32 product fits a double), the add in float64, then
  rounded to float32 (``_round32``). A Horner chain keeps its running value in float64 between the steps,
  so a step is four native passes (multiply, add, round to float32, back to float64); NumPy's mixed-dtype
  ufunc calls (casting buffers) and ``astype`` copies cost more (measured: ~15% per step).
- No masked or selecting passes: NumPy's ``where=`` and ``np.where`` run 5-15x slower than a plain pass,
  so ``x < sqrt(1/2)`` enters as a 0/1 factor and the octant picks sine and cosine by XOR on the bits.
- Each chunk's radius and angle halves are split apart and joined again by 32-byte copies (a loop over
  rows of 8 floats costs twice as much), so every other pass runs over contiguous arrays; the temporaries
  are ``_Scratch`` arrays that one thread reuses from chunk to chunk, constants are 0-d arrays of the pass's
  dtype and outputs are positional (NumPy's per-call cost is a good part of a pass over 32K floats).

Checked against the per-step emulation it replaced on every float32 uniform (2^24 inputs each for the log and
the sincos) and against torch in tests/test_random_normal.py.
"""
import math

import numpy as np

_f32, _f64, _i32 = np.float32, np.float64, np.int32
mul, add, sub, copy = np.multiply, np.add, np.subtract, np.copyto
band, bxor = np.bitwise_and, np.bitwise_xor


def _c32(v):
    """A float32 constant as a 0-d array: NumPy takes one in ~0.6 us, a scalar in ~1 us."""
    return np.array(v, _f32)


def _c64(v):
    """A float32 constant widened to a 0-d float64 array, for the float64 halves of fused multiply-adds."""
    return np.array(_f32(v), _f64)


def _ci(v):
    return np.array(v, _i32)


_ONE, _HALF, _MINUS_TWO = _c32(1), _c32(0.5), _c32(-2)
_TWO_PI = _c32(2.0 * math.pi)
_SQRT_HALF = _c32(0.707106781186547524)
_LOG_POLY = tuple(map(_c64, (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                             1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                             3.3333331174e-1)))
_LOG_Q1, _LOG_Q2 = _c32(-2.12194440e-4), _c32(0.693359375)
_COS_POLY = tuple(map(_c64, (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)))
_SIN_POLY = tuple(map(_c64, (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)))
_FOUR_OVER_PI = _c32(1.27323954473516)
# Cody-Waite split of pi/4: DP1 (8 bits) and DP2 (11 bits) times the octant j <= 8 are exact in float32
_DP1, _DP2, _DP3 = _c32(0.78515625), _c32(2.4187564849853515625e-4), _c64(3.77489497744594108e-8)
_HALF64 = np.array(0.5)
_I1, _I2, _I4, _NOT1, _I29 = _ci(1), _ci(2), _ci(4), _ci(~1), _ci(29)


class _Scratch:
    """The arrays one thread reuses for chunks of up to ``n`` blocks' halves (8 values per block)."""

    def __init__(self, n, parent=None):
        if parent is None:
            self.f = [np.empty(n, _f32) for _ in range(8)]
            self.d = [np.empty(n, _f64) for _ in range(4)]
            self.i = [np.empty(n, _i32) for _ in range(2)]
            self.b = np.empty(n, np.bool_)
        else:           # the first n of each: a chunk shorter than the others
            self.f = [a[:n] for a in parent.f]
            self.d = [a[:n] for a in parent.d]
            self.i = [a[:n] for a in parent.i]
            self.b = parent.b[:n]

    def sized(self, n):
        return self if n == len(self.b) else _Scratch(n, self)


def _round32(t, y):
    """float64 ``t`` rounded to float32 into ``y`` and back into ``t`` (now exact in either)."""
    copy(y, t)          # copyto casts 'same_kind': float64 to float32 rounds to nearest
    copy(t, y)


def _horner(t, x64, coeffs, y):
    """``t = fma(t, x, c)`` for each c, rounded to float32 after each step; the result in ``y`` (every caller
    goes on in float32, so the last step skips the copy back into ``t``)."""
    for i, c in enumerate(coeffs):
        mul(t, x64, t)
        add(t, c, t)
        copy(y, t)      # copyto casts 'same_kind': float64 to float32 rounds to nearest
        if i < len(coeffs) - 1:
            copy(t, y)


def _radius(u1, s, out):
    """sqrt(-2 log(u1)) for float32 ``u1`` in (0, 1] into ``out``: log256_ps."""
    x, m, e, y, small = s.f[0], s.f[1], s.f[2], s.f[3], s.f[4]
    x64, t, z64 = s.d[0], s.d[1], s.d[2]
    np.frexp(u1, m, s.i[0])                         # m in [0.5, 1); the exponent, one above the unbiased one
    copy(small, np.less(m, _SQRT_HALF, s.b))       # 1 or 0 (NumPy's where= and masked ops are slow)
    copy(e, s.i[0])
    sub(e, small, e)
    sub(m, _ONE, x)                                 # x - 1, or 2x - 1 below sqrt(1/2): exact either way
    mul(m, small, m)
    add(x, m, x)
    copy(x64, x)
    z = mul(x, x, m)
    _poly2(x64, _LOG_POLY, t, y)
    mul(y, x, y)                                    # fma(y * x, z, e * -2.12194440e-4)
    copy(t, y)
    copy(z64, z)
    mul(t, z64, t)
    mul(e, _LOG_Q1, y)
    copy(z64, y)
    add(t, z64, t)
    copy(y, t)
    mul(z, _HALF, z)                                # fma(z, -0.5, y): the product is exact
    sub(y, z, y)
    add(x, y, x)                                    # fma(e, 0.693359375, x + y): e * 0.693359375 is exact
    mul(e, _LOG_Q2, e)
    add(e, x, out)
    mul(out, _MINUS_TWO, out)
    np.sqrt(out, out)


def _poly2(z64, coeffs, t, y):
    """fma(fma(z, c0, c1), z, c2) rounded to float32 into ``y``."""
    mul(z64, coeffs[0], t)
    add(t, coeffs[1], t)
    _round32(t, y)
    _horner(t, z64, coeffs[2:], y)


def _octant(x, yf, j, tmp):
    """sincos256_ps's argument reduction: the even octant j (0 to 8) of x >= 0, x reduced by j pi/4."""
    mul(x, _FOUR_OVER_PI, yf)
    copy(j, yf, 'unsafe')                          # truncated, as the float-to-int conversion
    add(j, _I1, j)
    band(j, _NOT1, j)
    copy(yf, j)
    mul(yf, _DP1, tmp)
    sub(x, tmp, x)
    mul(yf, _DP2, tmp)
    sub(x, tmp, x)


def _sincos(u2, s, sin, cos):
    """sincos256_ps(2 pi u2) for float32 uniforms ``u2`` into ``sin`` and ``cos``."""
    x, yf, z, c, sn = s.f[0], s.f[1], s.f[2], s.f[3], s.f[4]
    x64, t, z64, h64 = s.d[0], s.d[1], s.d[2], s.d[3]
    j, sign = s.i
    mul(u2, _TWO_PI, x)
    _octant(x, yf, j, z)
    copy(x64, x)                                    # fma(y, -DP3, x): y * DP3 is exact in float64 only
    copy(t, yf)
    mul(t, _DP3, t)
    sub(x64, t, x64)
    _round32(x64, x)
    mul(x, x, z)
    copy(z64, z)
    _poly2(z64, _COS_POLY, t, c)                    # cos: fma(c * z, z, -(z * 0.5)) + 1
    mul(c, z, c)
    copy(t, c)
    mul(t, z64, t)
    mul(z64, _HALF64, h64)
    sub(t, h64, t)
    copy(c, t)
    add(c, _ONE, c)
    _poly2(z64, _SIN_POLY, t, sn)                   # sin: fma(s * z, x, x)
    mul(sn, z, sn)
    copy(t, sn)
    mul(t, x64, t)
    add(t, x64, t)
    copy(sn, t)
    _place(j, c.view(_i32), sn.view(_i32), z.view(_i32), sign, sin.view(_i32), cos.view(_i32))


def _place(j, c, s, diff, mask, sin, cos):
    """The octant's sine and cosine from the two polynomials (int32 views), by bits: which one is the sine
    (``c ^ ((c ^ s) & mask)``: NumPy's where() costs ~5x more here) and the signs."""
    band(j, _I2, mask)
    np.right_shift(mask, _I1, mask)
    sub(mask, _I1, mask)                            # -1 (all ones) where j & 2 == 0 (s is the sine), else 0
    bxor(c, s, diff)
    band(diff, mask, diff)
    bxor(c, diff, sin)
    bxor(s, diff, cos)
    band(j, _I4, mask)                              # the sine's sign: j & 4
    np.left_shift(mask, _I29, mask)
    bxor(sin, mask, sin)
    add(j, _I2, j)                                  # the cosine's: (~(j - 2)) & 4, that is (j + 2) & 4 (j even)
    band(j, _I4, j)
    np.left_shift(j, _I29, j)
    bxor(cos, j, cos)


def _scaled(n, std, mean, s, out):
    """fma(n, std, mean) into ``out``: one float32 add when std is 1 (the product is exact)."""
    if std == 1:
        add(n, mean, out)
        return
    t = s.d[1]
    copy(t, n)
    mul(t, np.array(std, _f64), t)
    add(t, np.array(mean, _f64), t)
    copy(out, t)


def box_muller_16(u, out, mean, std, s):
    """Blocks of 16 float32 uniforms ``u`` (k, 16) -> normals in ``out`` (k, 16), as torch's
    normal_fill_16_AVX2: radius from the first 8, angle from the last 8; ``s`` a ``_Scratch`` of 8k."""
    k = u.shape[0]
    s = s.sized(8 * k)
    halves = s.f[6:8]                               # the blocks' first and last 8 apart: contiguous passes
    _interleave(halves, u, False)
    u1, u2 = halves
    sub(_ONE, u1, u1)                               # exact: u is k * 2^-24
    radius = s.f[5]
    _radius(u1, s, radius)
    sin, cos = s.f[0], s.f[1]
    _sincos(u2, s, sin, cos)
    mean, std = _c32(mean), _f32(std)
    mul(radius, cos, cos)
    mul(radius, sin, sin)
    _scaled(cos, std, mean, s, halves[0])
    _scaled(sin, std, mean, s, halves[1])
    _interleave(halves, out, True)


def _interleave(halves, blocks, join):
    """Copy the blocks' (k, 16) first and last 8 values to or from two arrays of 8k, 32 bytes at a time
    (a void view: ~2x faster than NumPy's loop over rows of 8 floats)."""
    b = blocks.view('V32')                          # (k, 2): each half block one 32-byte item
    for h in (0, 1):
        a = halves[h].view('V32')
        if join:
            copy(b[:, h], a)
        else:
            copy(a, b[:, h])


def scratch(blocks):
    """A ``_Scratch`` for chunks of up to ``blocks`` blocks of 16."""
    return _Scratch(8 * blocks)
