"""torch's lerp formula, shared by the pointwise kernel and the fused optimizer steps (optim.py)."""
import numpy as np


def lerp(a, end, w, out=None):
    """torch's two-sided lerp, exact at both ends: ``a + w (end - a)`` where |w| < 1/2, else
    ``end - (1 - w)(end - a)``; the pointwise kernel and the fused optimizer steps' ``lerp_``."""
    d = np.asarray(end - a)      # an array even for 0-d operands (NumPy gives a scalar there), written in place below
    if np.ndim(w) == 0:      # a scalar weight picks one side for every element
        w = complex(w) if np.iscomplexobj(w) else float(w)
        if abs(w) < 0.5:
            return np.add(a, np.multiply(d, w, out=d), out=out)
        return np.subtract(end, np.multiply(d, 1 - w, out=d), out=out)
    r = np.where(np.abs(w) < 0.5, a + w * d, end - d * (1 - w))
    if out is None:
        return r
    out[...] = r
    return out
