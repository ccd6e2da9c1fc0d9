"""torch's lerp, addcmul and addcdiv formulas, shared by the pointwise kernels and the fused optimizer steps
(optim.py), so that the two give the same bits."""
import numpy as np

from ._parallel import parallel_for

# NOTE [fused multiply-add in float32]: torch's CPU kernels for lerp and addcmul are vectorised with fused
# multiply-adds (one rounding for ``a + w * d``); NumPy rounds the product and then the sum, which differs from
# torch in the last bit of about one element in five (Adam's moments drift apart by an ulp a step, and SAC's
# log-probabilities, near saturation, by much more). For float32 the product of two floats is exact in float64
# and the sum rounds once there, so computing in float64 and rounding to float32 gives the fused result (a second
# rounding can differ only when the float64 sum lies exactly halfway between two floats, which it practically
# never does). Other dtypes keep NumPy's two roundings.
_F32 = np.dtype(np.float32)


_BLOCK = 1 << 16         # float64 temporaries of 512 KB: in cache while a block's two passes run


def fma32(x, y, z, out=None):
    """``x * y + z`` rounded once, for float32 operands (scalars are float32 values). Large operands of one
    shape run in cache-sized blocks over the intra-op threads, so the float64 temporaries stay in cache."""
    if max(np.size(x), np.size(y), np.size(z)) < 4 * _BLOCK:
        return _fma32_whole(x, y, z, out)
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
    flat = [_flat(v, shape) for v in (x, y, z)]
    n = int(np.prod(shape))
    if any(f is None for f in flat) or (out is not None and not out.flags.c_contiguous):
        return _fma32_whole(x, y, z, out)
    result = np.empty(shape, np.float32) if out is None else out
    dst = result.reshape(-1)
    fx, fy, fz = flat

    def run(lo, hi):
        t = np.empty(_BLOCK, np.float64)
        for i in range(lo * _BLOCK, min(hi * _BLOCK, n), _BLOCK):
            j = min(i + _BLOCK, n)
            part = t[:j - i]
            _to64(_part(fx, i, j), part)
            np.multiply(part, _64(_part(fy, i, j)), out=part)
            np.add(part, _64(_part(fz, i, j)), out=part)
            np.copyto(dst[i:j], part, casting='unsafe')
    parallel_for(-(-n // _BLOCK), run, 4)
    return result


def _64(v):
    """``v`` in float64: an array converted whole (the casts inside a mixed-dtype ufunc run in small
    buffers, ~2x slower), a number or 0-d array as a float64 number."""
    return v.astype(np.float64) if np.ndim(v) else np.float64(v)


def _to64(v, dst):
    if np.ndim(v):
        np.copyto(dst, v)
    else:
        dst.fill(v)


def _fma32_whole(x, y, z, out):
    r = np.add(np.multiply(_64(x), _64(y)), _64(z))
    if out is None:
        return r.astype(np.float32)
    np.copyto(out, r, casting='unsafe')
    return out


def _flat(v, shape):
    """``v`` as a 1-D view over ``shape``'s elements (a 0-d value as itself), or None where it would need
    broadcasting or is not C-contiguous."""
    if np.ndim(v) == 0:
        return v
    if np.shape(v) != shape or not v.flags.c_contiguous:
        return None
    return v.reshape(-1)


def _part(v, i, j):
    return v if np.ndim(v) == 0 else v[i:j]


def lerp(a, end, w, out=None):
    """torch's two-sided lerp, exact at both ends: ``a + w (end - a)`` where |w| < 1/2, else
    ``end - (1 - w)(end - a)``, each a fused multiply-add for float32 (NOTE [fused multiply-add in float32]);
    the pointwise kernel and the fused optimizer steps' ``lerp_``."""
    fused = np.result_type(a, end) == _F32
    if fused and np.ndim(w) == 0 and not np.iscomplexobj(w) and _blocked(a, end, out=out):
        return _lerp32_blocks(a, end, float(w), out)
    d = np.asarray(end - a)      # an array even for 0-d operands (NumPy gives a scalar there), written in place below
    if np.ndim(w) == 0:      # a scalar weight picks one side for every element
        w = complex(w) if np.iscomplexobj(w) else float(w)
        if fused:
            w32 = np.float32(w)
            if abs(w) < 0.5:
                return fma32(d, w32, a, out)
            return fma32(d, -(np.float32(1) - w32), end, out)
        if abs(w) < 0.5:
            return np.add(a, np.multiply(d, w, out=d), out=out)
        return np.subtract(end, np.multiply(d, 1 - w, out=d), out=out)
    if fused:
        w = np.asarray(w, dtype=_F32)
        r = np.where(np.abs(w) < 0.5, fma32(d, w, a), fma32(d, -(np.float32(1) - w), end))
    else:
        r = np.where(np.abs(w) < 0.5, a + w * d, end - d * (1 - w))
    if out is None:
        return r
    out[...] = r
    return out


def _blocked(a, *others, out=None):
    """Large float32 operands of one shape, C-contiguous (``out`` too, or absent): the kernel runs in blocks."""
    return (a.__class__ is np.ndarray and a.size >= 4 * _BLOCK and a.dtype == _F32 and a.flags.c_contiguous
            and all(o.__class__ is np.ndarray and o.shape == a.shape and o.dtype == _F32 and o.flags.c_contiguous
                    for o in others)
            and (out is None or out.shape == a.shape and out.dtype == _F32 and out.flags.c_contiguous))


def _lerp32_blocks(a, end, w, out):
    """lerp with a scalar weight for large float32 arrays: the float32 difference ``end - a`` (rounded, as
    torch's), then the fused multiply-add on the side ``w`` picks (``_fma32_blocks``)."""
    low = abs(w) < 0.5
    scale = np.float64(np.float32(w) if low else -(np.float32(1) - np.float32(w)))
    fa, fe = a.reshape(-1), end.reshape(-1)
    return _fma32_blocks(a.shape, out, lambda i, j, d: np.subtract(fe[i:j], fa[i:j], out=d), scale,
                         fa if low else fe)


def _addcmul32_blocks(a, t1, t2, value, out):
    """addcmul for large float32 arrays: ``value * t1`` rounded to float32 (torch's order), then the fused
    multiply-add with ``t2`` and ``a`` (``_fma32_blocks``)."""
    f1, v = t1.reshape(-1), np.float32(value)
    return _fma32_blocks(a.shape, out, lambda i, j, d: np.multiply(f1[i:j], v, out=d), t2.reshape(-1),
                         a.reshape(-1))


def _fma32_blocks(shape, out, first, y, z):
    """``first * y + z`` rounded once to float32, block by block over the intra-op threads, into ``out`` (or a new
    array): ``first(i, j, d)`` writes the block's float32 first factor into ``d``; ``y`` is a float64 number or a
    flat array, ``z`` a flat array. ``out`` may be any of the operands: each block reads its inputs before
    writing."""
    result = np.empty(shape, _F32) if out is None else out
    dst, n = result.reshape(-1), result.size

    def run(lo, hi):
        d = np.empty(_BLOCK, _F32)
        t = np.empty(_BLOCK, np.float64)
        u = np.empty(_BLOCK, np.float64)
        for i in range(lo * _BLOCK, min(hi * _BLOCK, n), _BLOCK):
            j = min(i + _BLOCK, n)
            k = j - i
            first(i, j, d[:k])
            np.copyto(t[:k], d[:k])
            if np.ndim(y):
                np.copyto(u[:k], y[i:j])
                np.multiply(t[:k], u[:k], out=t[:k])
            else:
                np.multiply(t[:k], y, out=t[:k])
            np.copyto(u[:k], z[i:j])
            np.add(t[:k], u[:k], out=t[:k])
            np.copyto(dst[i:j], t[:k], casting='unsafe')
    parallel_for(-(-n // _BLOCK), run, 4)
    return result


def addcmul(a, t1, t2, value, out=None):
    """torch's order: ``(value * t1) * t2 + a``, the last two fused for float32 (NOTE [fused multiply-add in
    float32]); ``value`` already in the operands' dtype where that is integral."""
    if _blocked(a, t1, t2, out=out) and not np.iscomplexobj(value):
        return _addcmul32_blocks(a, t1, t2, value, out)
    vt1 = t1 if value == 1 else np.multiply(t1, value)
    if np.result_type(a, vt1, t2) == _F32:
        return fma32(vt1, t2, a, out)
    return np.add(a, np.multiply(vt1, t2), out=out)


def addcdiv(a, t1, t2, value, out=None):
    """torch's order: ``a + (value * t1) / t2``, each step rounded."""
    vt1 = t1 if value == 1 else np.multiply(t1, value)
    return np.add(a, np.true_divide(vt1, t2), out=out)
