"""torch.backends.mkl: ember does not link Intel MKL (NumPy's own BLAS does the work)."""


def is_available():
    return False
