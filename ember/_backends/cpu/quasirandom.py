"""CPU kernels of torch's Sobol engine operators (aten/src/ATen/native/SobolEngineOps.cpp), vectorised over the
points and dimensions that torch's loops walk one by one.

A state row holds one dimension's direction numbers as MAXBIT-bit integers (bit 29 the coarsest). Point i of the
Gray-code Sobol sequence is point i-1 XOR the direction number at the position of i-1's rightmost zero bit, so a run
of points is a cumulative XOR along the points. The Joe-Kuo table (new-joe-kuo-6.21201, as torch's C++ source) is
package data: ember/data/sobol_directions.npz, written by tools/sobol_directions.py.
"""
import functools
import os

import numpy as np

MAXBIT = 30
_TABLE = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'sobol_directions.npz')


@functools.cache
def _table():
    with np.load(_TABLE) as t:
        return t['poly'].astype(np.int64), t['vinit'].astype(np.int64)


def _rightmost_zero(n):
    """The position of the rightmost zero bit of each of ``n`` (non-negative int64)."""
    lowest = ~n & (n + 1)           # that bit alone
    return np.log2(lowest.astype(np.float64)).astype(np.int64)


def _steps(n, sobolstate, dimension, num_generated):
    """The direction numbers XORed in at each of ``n`` steps from ``num_generated``: (n, dimension)."""
    cols = _rightmost_zero(np.arange(num_generated, num_generated + max(n, 0), dtype=np.int64))
    return sobolstate[:dimension, cols].T


def sobol_engine_draw(quasi, n, sobolstate, dimension, num_generated, dtype):
    points = np.bitwise_xor.accumulate(_steps(n, sobolstate, dimension, num_generated), axis=0) ^ quasi[:dimension]
    new_quasi = points[-1].copy() if len(points) else quasi.copy()
    # torch stores the integers into the result's dtype, then scales by 2**-MAXBIT (exact: a power of two)
    return points.astype(dtype) * np.dtype(dtype).type(1.0 / (1 << MAXBIT)), new_quasi


def sobol_engine_ff(quasi, n, sobolstate, dimension, num_generated):
    return quasi ^ np.bitwise_xor.reduce(_steps(n, sobolstate, dimension, num_generated), axis=0)


def sobol_engine_scramble(sobolstate, ltm, dimension):
    """Owen's linear matrix scrambling: each direction number, as a bit vector, times the dimension's random lower
    triangular bit matrix (its diagonal set to 1) over GF(2)."""
    bits = np.arange(MAXBIT, dtype=np.int64)
    tri = ltm[:dimension].copy()
    tri[:, bits, bits] = 1
    rows = (tri << (MAXBIT - 1 - bits)).sum(-1)                  # torch's cdot_pow2: row p as an integer
    row_bits = (rows[:, :, None] >> bits) & 1                    # (dimension, p, k)
    v_bits = (sobolstate[:dimension, :, None] >> bits) & 1       # (dimension, j, k)
    parity = np.matmul(v_bits, row_bits.transpose(0, 2, 1)) & 1  # (dimension, j, p)
    out = sobolstate.copy()
    out[:dimension] = (parity << (MAXBIT - 1 - bits)).sum(-1)
    return out


def sobol_engine_initialize_state(sobolstate, dimension):
    """Bratley and Fox's recurrence (Algorithm 659, p. 90) from the Joe-Kuo initial numbers, then each column
    scaled to its bit: column j holds bit MAXBIT-1-j."""
    poly, vinit = _table()
    out = sobolstate.copy()
    v = np.zeros((dimension, MAXBIT), dtype=np.int64)
    v[0] = 1
    p = poly[:dimension]
    degree = np.array([int(x).bit_length() - 1 for x in p], dtype=np.int64)
    for m in np.unique(degree[1:]):         # the dimensions of one polynomial degree share the recurrence's shape
        rows = np.nonzero(degree == m)[0]
        rows = rows[rows > 0]
        pr = p[rows]
        v[rows, :m] = vinit[rows, :m]
        for j in range(m, MAXBIT):
            new = v[rows, j - m].copy()
            for k in range(m):
                take = ((pr >> (m - 1 - k)) & 1).astype(bool)
                new[take] ^= v[rows[take], j - k - 1] << (k + 1)
            v[rows, j] = new
    out[:dimension] = v << (MAXBIT - 1 - np.arange(MAXBIT, dtype=np.int64))
    return out


KERNELS = {
    '_sobol_engine_draw': sobol_engine_draw,
    '_sobol_engine_ff': sobol_engine_ff,
    '_sobol_engine_scramble': sobol_engine_scramble,
    '_sobol_engine_initialize_state': sobol_engine_initialize_state,
}
