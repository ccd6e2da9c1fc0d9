"""Complex-number helpers of the CPU kernels that NumPy lacks (NOTE [complex gradients] in autograd/kernels.py
has the autograd side)."""
import numpy as np


def logaddexp_complex(a, b):
    """log(e^a + e^b) for complex a, b (NumPy's logaddexp is real only): m + log1p(e^(other - m)) with m the
    operand of larger real part, so nothing overflows."""
    a, b = np.broadcast_arrays(a, b)
    first = a.real >= b.real
    m = np.where(first, a, b)
    return m + np.log1p(np.exp(np.where(first, b, a) - m))
