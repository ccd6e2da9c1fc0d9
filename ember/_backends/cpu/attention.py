"""CPU kernels for fused attention: torch's ``_scaled_dot_product_flash_attention_for_cpu`` and its backward.

NOTE [fused attention] -- softmax(Q K^T * scale + mask) V as one operator instead of eight (matmul, mul,
ones, tril, logical_not, masked_fill, softmax, matmul), each with its own autograd node and temporaries.
The forward returns the output and the row log-sum-exp ``lse`` (what torch's kernel returns); the backward
recomputes the probabilities P = exp(S - lse) from Q and K rather than keeping the (L, S) matrix, as torch's
flash kernel does. With dO the output gradient:
    dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),  dQ = dS K * scale,  dK = dS^T Q * scale.
A fully masked row gives output 0 and lse 0, as torch's CPU kernel does.
"""
import numpy as np

from ._fp import quiet

_CAUSAL = {}


def _causal_bias(L, S, dtype):
    """The (L, S) additive mask of is_causal: 0 on and below the diagonal (top-left aligned), -inf above."""
    key = (L, S, np.dtype(dtype).str)
    b = _CAUSAL.get(key)
    if b is None:
        if len(_CAUSAL) > 32:
            _CAUSAL.clear()
        b = np.triu(np.full((L, S), -np.inf, dtype), 1)
        b.flags.writeable = False
        _CAUSAL[key] = b
    return b


def _acc(dtype):
    """The computation dtype: half precision computes in float32, as torch's kernel accumulates."""
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _scores(q, k, is_causal, mask, scale):
    """S = (Q * scale) K^T (+ causal) (+ mask), a new (B, H, L, S) array."""
    s = np.matmul(q * q.dtype.type(scale), k.swapaxes(-1, -2))
    if is_causal:
        s += _causal_bias(q.shape[-2], k.shape[-2], s.dtype)
    if mask is not None:
        s += mask
    return s


def _scale(q, scale):
    return 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale


def _rowsum(a):
    """Sum over the last axis as a matrix-vector product: NumPy's reduction over a short last axis costs
    ~1 ns per element (16x4x64x64 floats: 110 us), BLAS's gemv ~0.1 ns (20 us)."""
    return np.matmul(a, np.ones(a.shape[-1], a.dtype))


# Below |s| = 60 every exp(s) is a normal float32 far from overflow, so the row maximum need not be
# subtracted first: the softmax is the same to rounding, and the maximum over short rows is the dearest
# pass of the forward (16x4x64x64 floats: 240 us, against 2 x 30 us for the whole-array bounds).
_NO_SHIFT = 60.0


def sdpa_flash_cpu(q, k, v, dropout_p, is_causal, attn_mask, scale):
    dt = q.dtype
    acc = _acc(dt)
    q, k, v = q.astype(acc, copy=False), k.astype(acc, copy=False), v.astype(acc, copy=False)
    s = np.matmul(q * acc.type(_scale(q, scale)), k.swapaxes(-1, -2))
    shift = attn_mask is not None or not (s.size and -_NO_SHIFT < s.min() and s.max() < _NO_SHIFT)
    if is_causal:           # every row keeps its first column: no row is fully masked
        s += _causal_bias(q.shape[-2], k.shape[-2], s.dtype)
    if attn_mask is not None:
        s += attn_mask.astype(acc, copy=False)
    if shift:
        m = np.maximum.reduce(s, axis=-1, keepdims=True)
        dead = m == -np.inf                             # fully masked rows
        m[dead] = 0
        s -= m
    np.exp(s, out=s)
    total = _rowsum(s)[..., None]
    lse = np.log(total)
    inv = np.reciprocal(total)
    if shift:
        lse += m
        lse[dead] = 0
        inv[dead] = 0
    s *= inv
    out = np.matmul(s, v).astype(dt, copy=False)
    B, H, L = lse.shape[:3]
    lse_out = np.empty((B, L, H), np.float32 if dt.itemsize < 4 else dt).transpose(0, 2, 1)   # torch's layout
    lse_out[...] = lse[..., 0]
    return out, lse_out


def sdpa_flash_cpu_backward(g, q, k, v, out, lse, dropout_p, is_causal, attn_mask, scale):
    dt = q.dtype
    acc = _acc(dt)
    g, q, k, v, out = (a.astype(acc, copy=False) for a in (g, q, k, v, out))
    mask = None if attn_mask is None else attn_mask.astype(acc, copy=False)
    sc = acc.type(_scale(q, scale))
    p = _scores(q, k, is_causal, mask, sc)
    p -= lse.astype(acc, copy=False)[..., None]
    np.exp(p, out=p)                                    # fully masked rows: exp(-inf - 0) = 0
    dv = np.matmul(p.swapaxes(-1, -2), g)
    dp = np.matmul(g, v.swapaxes(-1, -2))
    dp -= _rowsum(g * out)[..., None]
    dp *= p                                             # dS
    dq = np.matmul(dp, k)
    dq *= sc
    dk = np.matmul(dp.swapaxes(-1, -2), q)
    dk *= sc
    return dq.astype(dt, copy=False), dk.astype(dt, copy=False), dv.astype(dt, copy=False)


KERNELS = {     # log(0) and 1/0 on fully masked rows are expected: no NumPy warnings
    '_scaled_dot_product_flash_attention_for_cpu': quiet(sdpa_flash_cpu),
    '_scaled_dot_product_flash_attention_for_cpu_backward': quiet(sdpa_flash_cpu_backward),
}
