"""A matrix product split among the intra-op threads (NOTE [BLAS threads] in _blas.py): the GEMM the
linear, matmul and convolution kernels share."""
import numpy as np

from ._parallel import get_num_threads, parallel_for, large_work_inline


GEMM_GRAIN = 1 << 20      # multiply-adds per task: below ~1M the hand-off costs more than it saves


def gemm(a, b, bias=None):
    """np.matmul of two matrices (plus a row vector ``bias``, added in place), its output rows (or
    columns) shared out among the intra-op threads, each running a single-threaded BLAS GEMM and adding
    the bias to its own block while it is in cache (NOTE [BLAS threads] in _blas.py)."""
    m, k = a.shape
    n = b.shape[1]
    work = m * n * k
    if work < 2 * GEMM_GRAIN or get_num_threads() < 2 or a.dtype != b.dtype or a.dtype.kind != 'f':
        if work >= 2 * GEMM_GRAIN and get_num_threads() < 2:
            large_work_inline()
        out = np.matmul(a, b)
        if bias is not None:
            out += bias
        return out
    out = np.empty((m, n), np.result_type(a, b))
    if m >= n or m >= 256:          # measured: rows unless the output has few of them (MLP batch 128)
        def rows(lo, hi):
            o = np.matmul(a[lo:hi], b, out=out[lo:hi])
            if bias is not None:
                o += bias
        parallel_for(m, rows, max(8, GEMM_GRAIN // max(n * k, 1)))
    else:
        def cols(lo, hi):           # a C-order column block of out: BLAS writes it in place
            o = np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
            if bias is not None:
                o += bias[lo:hi]
        parallel_for(n, cols, max(8, GEMM_GRAIN // max(m * k, 1)))
    return out
