"""NOTE [Hurwitz zeta] -- zeta(x, q) = sum_{k >= 0} (q + k)^-x by Euler-Maclaurin summation, as torch computes it.

The sum is taken term by term while fewer than 9 terms are in or q + k <= 9, stopping early once a term no
longer changes it (|term / sum| < 2^-53); then the tail is the Euler-Maclaurin formula at w = q + N:

    w^(1-x) / (x - 1) - w^-x / 2 + sum_j B_2j / (2j)! x (x+1) ... (x+2j-2) w^(-x-2j+1),   j = 1 .. 12,

stopping at the first correction below 2^-53 of the sum. B_2j are the Bernoulli numbers.
The special cases are torch's: inf at x = 1; nan for x < 1; for q <= 0, inf at the integers and nan unless x
is an integer (the sum then runs through negative q + k). torch has no large-q shortcut: where q^-x
underflows, so does the result (zeta(1.5, 1e300) is 0, not 2e-150), and ember follows it. The arithmetic is
torch's too, term for term in the same order, so float64 values agree to an ulp or two of the largest term.
float32 inputs are computed in float64 and rounded once; torch's float32 kernel is less exact (zeta(5, -1.5) is
off by 3e-7 of its value), so there the two differ by a few float32 ulps of the largest term.

An integer x with a very negative q makes the first sum run for 9 - q terms, as in torch; those elements sum
their terms in blocks (a cumulative sum, which adds in the same order) rather than one vector step each.
"""
from math import factorial

import numpy as np

from ._fp import quiet

_MACHEP = 1.11022302462515654042e-16
_BLOCK = 4096
# B_2, B_4, ..., B_24 as (numerator, denominator); tests/test_special_functions.py checks them against the
# recurrence sum_{k<=m} C(m+1, k) B_k = 0
BERNOULLI_EVEN = ((1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510), (43867, 798),
                  (-174611, 330), (854513, 138), (-236364091, 2730))
# (2j)! / B_2j, the divisors of the Euler-Maclaurin corrections (an exact integer ratio, rounded once)
_DIVISORS = [factorial(2 * j) * den / num for j, (num, den) in enumerate(BERNOULLI_EVEN, start=1)]


def _direct(x, q):
    """The first sum for 1-D x, q: (s, a, b, done) with a = q + N and b = a^-x its last term."""
    s = q ** -x
    a = q.copy()
    b = np.zeros_like(q)
    done = np.zeros(q.shape, bool)
    idx = np.arange(q.size)                 # elements still summing
    i = 0
    while idx.size:
        go = (i < 9) | (a[idx] <= 9.0)
        idx = idx[go]
        if i >= 64 and idx.size:           # only integer x with q far below 0 gets here
            for e in idx:
                _direct_blocks(x, s, a, b, done, e)
            break
        i += 1
        a[idx] += 1.0
        b[idx] = a[idx] ** -x[idx]
        s[idx] += b[idx]
        small = np.abs(b[idx] / s[idx]) < _MACHEP
        done[idx[small]] = True
        idx = idx[~small]
    return s, a, b, done


def _direct_blocks(x, s, a, b, done, e):
    """The rest of the first sum for element e, a block of terms at a time: the loop would add a term while
    a <= 9 before it, and a cumulative sum adds them in the loop's order."""
    while a[e] <= 9.0:
        before = a[e] + np.arange(0.0, _BLOCK)
        after = before[before <= 9.0] + 1.0
        terms = after ** -x[e]
        sums = np.cumsum(np.concatenate(([s[e]], terms)))[1:]
        small = np.flatnonzero(np.abs(terms / sums) < _MACHEP)
        stop = small[0] if small.size else after.size - 1
        s[e], a[e], b[e] = sums[stop], after[stop], terms[stop]
        if small.size:
            done[e] = True
            return


def _tail(x, s, a, b):
    """The Euler-Maclaurin tail, added to s for the elements given (1-D)."""
    w = a
    s = s + b * w / (x - 1.0)
    s = s - 0.5 * b
    fac = np.ones_like(s)
    k = 0.0
    live = np.ones(s.shape, bool)
    for div in _DIVISORS:
        fac = np.where(live, fac * (x + k), fac)
        b = np.where(live, b / w, b)
        t = fac * b / div
        s = np.where(live, s + t, s)
        live &= ~(np.abs(t / s) < _MACHEP)
        k += 1.0
        fac = np.where(live, fac * (x + k), fac)
        b = np.where(live, b / w, b)
        k += 1.0
    return s


def zeta(x_in, q_in):
    dt = np.result_type(x_in, q_in)
    x, q = np.broadcast_arrays(np.asarray(x_in, np.float64), np.asarray(q_in, np.float64))
    shape = x.shape
    x, q = x.ravel(), q.ravel().copy()
    res = np.full(x.shape, np.nan)
    pole = x == 1.0
    res[pole] = np.inf
    rest = ~pole & ~(x < 1.0)
    neg = rest & (q <= 0.0)
    res[neg & (q == np.floor(q))] = np.inf
    rest &= ~(neg & ((q == np.floor(q)) | (x != np.floor(x))))
    xs, qs = x[rest], q[rest]
    s, a, b, done = _direct(xs, qs)
    more = ~done
    s[more] = _tail(xs[more], s[more], a[more], b[more])
    res[rest] = s
    return res.reshape(shape).astype(dt, copy=False)


KERNELS = {'special_zeta': quiet(zeta)}
