"""CPU kernels for fused attention: torch's ``_scaled_dot_product_flash_attention_for_cpu`` and its backward.

NOTE [fused attention] -- softmax(Q K^T * scale + mask) V as one operator instead of eight (matmul, mul,
ones, tril, logical_not, masked_fill, softmax, matmul), each with its own autograd node and temporaries.
The forward returns the output and the row log-sum-exp ``lse`` (what torch's kernel returns); the backward
recomputes the probabilities P = exp(S - lse) from Q and K rather than keeping the (L, S) matrix, as torch's
flash kernel does. With dO the output gradient:
    dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)),  dQ = dS K * scale,  dK = dS^T Q * scale.
A fully masked row gives output 0 and lse 0, as torch's CPU kernel does.
"""
import math

import numpy as np

from ._fp import quiet
from ._sums import rowsum as _rowsum, exp_safe as _exp_safe
from ._parallel import parallel_for

_CAUSAL = {}


def _causal_bias(L, S, dtype):
    """The (L, S) additive mask of is_causal: 0 on and below the diagonal (top-left aligned), -inf above."""
    key = (L, S, np.dtype(dtype).str, np.ndarray)      # by array type: the CUDA backend's twin caches its own
    b = _CAUSAL.get(key)
    if b is None:
        if len(_CAUSAL) > 32:
            _CAUSAL.clear()
        b = np.triu(np.full((L, S), -np.inf, dtype), 1)
        if b.__class__.__module__ == 'numpy':             # read-only, where the array type can say so
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
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale     # a Python float on every array module


# As in softmax (NOTE [softmax over short rows] in reductions.py): below |s| = 60 the row maximum need not
# be subtracted, and over short rows it is the dearest pass of the forward (16x4x64x64 floats: 240 us,
# against 2 x 30 us for the whole-array bounds).


def _forward(q, k, v, is_causal, mask, sc):
    """(out, lse[..., None]) for inputs in the computation dtype."""
    s = np.matmul(q * sc, k.swapaxes(-1, -2))
    shift = mask is not None or not _exp_safe(s)
    if is_causal:           # every row keeps its first column: no row is fully masked
        s += _causal_bias(q.shape[-2], k.shape[-2], s.dtype)
    if mask is not None:
        s += mask
    if shift:
        m = np.maximum.reduce(s, axis=-1, keepdims=True)
        # fully masked rows, written with copyto's where= (a boolean index would make a device wait for the count
        # of its True values)
        dead = m == -np.inf
        np.copyto(m, 0, where=dead)
        s -= m
    np.exp(s, out=s)
    total = _rowsum(s)[..., None]
    lse = np.log(total)
    inv = np.reciprocal(total)
    if shift:
        lse += m
        np.copyto(lse, 0, where=dead)
        np.copyto(inv, 0, where=dead)
    s *= inv
    return np.matmul(s, v), lse


# NOTE [half-precision attention]: for float16/bfloat16 torch's CPU kernel computes in float32 and rounds two
# intermediates to the input's dtype before their matrix products: exp(S - max) before P V (the float32 row sum
# divides afterwards), and, in the backward, P and dS before theirs; it scales Q K^T after the product. The half
# kernels below do the same, so half-precision attention gives torch's bits (float32 keeps the faster forms above).

def _scores_scaled_after(q, k, is_causal, mask, sc):
    """S = (Q K^T) * scale (+ causal) (+ mask): torch's order of rounding for half precision."""
    s = np.matmul(q, k.swapaxes(-1, -2))
    s *= sc
    if is_causal:
        s += _causal_bias(q.shape[-2], k.shape[-2], s.dtype)
    if mask is not None:
        s += mask
    return s


def _forward_half(q, k, v, is_causal, mask, sc, dt):
    s = _scores_scaled_after(q, k, is_causal, mask, sc)
    m = np.maximum.reduce(s, axis=-1, keepdims=True)
    dead = m == -np.inf
    np.copyto(m, 0, where=dead)
    s -= m
    np.exp(s, out=s)
    total = _rowsum(s)[..., None]
    out = np.matmul(s.astype(dt).astype(s.dtype), v)
    out /= total
    np.copyto(out, 0, where=dead)
    lse = np.log(total) + m
    np.copyto(lse, 0, where=dead)
    return out, lse


def _backward_half(g, q, k, v, out, lse, is_causal, mask, sc, dt):
    p = _scores_scaled_after(q, k, is_causal, mask, sc)
    p -= lse[..., None]
    np.exp(p, out=p)
    rounded = lambda a: a.astype(dt).astype(a.dtype)
    dv = np.matmul(rounded(p).swapaxes(-1, -2), g)
    dp = np.matmul(g, v.swapaxes(-1, -2))
    dp -= _rowsum(g * out)[..., None]
    ds = rounded(p * dp)
    dq = np.matmul(ds, k)
    dq *= sc
    dk = np.matmul(ds.swapaxes(-1, -2), q)
    dk *= sc
    return dq, dk, dv


def _backward(g, q, k, v, out, lse, is_causal, mask, sc):
    p = _scores(q, k, is_causal, mask, sc)
    p -= lse[..., None]
    np.exp(p, out=p)                                    # fully masked rows: exp(-inf - 0) = 0
    dv = np.matmul(p.swapaxes(-1, -2), g)
    dp = np.matmul(g, v.swapaxes(-1, -2))
    dp -= _rowsum(g * out)[..., None]
    dp *= p                                             # dS
    dq = np.matmul(dp, k)
    dq *= sc
    dk = np.matmul(dp.swapaxes(-1, -2), q)
    dk *= sc
    return dq, dk, dv


def _like(a, shape, dtype):
    """A new ``shape`` array whose dimensions are laid out in the order of ``a``'s strides, as torch's
    kernel allocates its output and gradients (empty_like): after the usual ``q = qkv_part.view(B, L, H,
    E).transpose(1, 2)``, ``out.transpose(1, 2)`` is contiguous, so ``.contiguous().view(B, L, H * E)``
    (and the gradients' way back to the qkv projection) copies nothing."""
    order = sorted(range(a.ndim), key=lambda d: (-a.strides[d], d))
    inverse = [0] * a.ndim
    for i, d in enumerate(order):
        inverse[d] = i
    return np.empty([shape[d] for d in order], dtype).transpose(inverse)


def _by_batch(B, H, L, S, mask, body):
    """Run ``body(lo, hi, mask_slice)`` over batch ranges on the intra-op threads (NOTE [fused attention]);
    a mask with a batch dimension is sliced along with the inputs."""
    per_mask = mask is not None and mask.ndim == 4 and mask.shape[0] == B and B > 1

    def run(lo, hi):
        body(lo, hi, mask[lo:hi] if per_mask else mask)
    parallel_for(B, run, max(1, 65536 // max(H * L * S, 1)))


def _share_heads(q, k, v):
    """Grouped-query attention: each key/value head serves q_heads // kv_heads consecutive query heads
    (torch's repeat_interleave); returns k and v with one head per query head, and that group size."""
    rep = q.shape[1] // k.shape[1]
    if rep == 1:
        return k, v, 1
    return np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1), rep


def _sum_groups(d, rep):
    """The gradient of a repeated key/value head: the sum over the query heads it served."""
    if rep == 1:
        return d
    B, H = d.shape[:2]
    return d.reshape((B, H // rep, rep) + d.shape[2:]).sum(2)


def sdpa_flash_cpu(q, k, v, dropout_p, is_causal, attn_mask, scale):
    dt = q.dtype
    acc = _acc(dt)
    k, v, _ = _share_heads(q, k, v)
    q, k, v = q.astype(acc, copy=False), k.astype(acc, copy=False), v.astype(acc, copy=False)
    mask = None if attn_mask is None else attn_mask.astype(acc, copy=False)
    sc = acc.type(_scale(q, scale))
    B, H, L, S = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    out = _like(q, q.shape[:3] + v.shape[3:], dt)
    lse_out = np.empty((B, L, H), np.float32 if dt.itemsize < 4 else dt).transpose(0, 2, 1)   # torch's layout

    def body(lo, hi, m):
        o, lse = _forward(q[lo:hi], k[lo:hi], v[lo:hi], is_causal, m, sc) if dt.itemsize >= 4 else \
            _forward_half(q[lo:hi], k[lo:hi], v[lo:hi], is_causal, m, sc, dt)
        out[lo:hi] = o
        lse_out[lo:hi] = lse[..., 0]
    _by_batch(B, H, L, S, mask, body)
    return out, lse_out


def sdpa_flash_cpu_backward(g, q, k, v, out, lse, dropout_p, is_causal, attn_mask, scale):
    dt = q.dtype
    acc = _acc(dt)
    k0, v0 = k, v
    k, v, rep = _share_heads(q, k, v)
    g, q, k, v, out, lse = (a.astype(acc, copy=False) for a in (g, q, k, v, out, lse))
    mask = None if attn_mask is None else attn_mask.astype(acc, copy=False)
    sc = acc.type(_scale(q, scale))
    B, H, L, S = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    dq = _like(q, q.shape, dt)
    dk, dv = (_like(k0, k0.shape, dt), _like(v0, v0.shape, dt)) if rep == 1 else \
        (np.empty(k.shape, acc), np.empty(v.shape, acc))

    def body(lo, hi, m):
        args = (g[lo:hi], q[lo:hi], k[lo:hi], v[lo:hi], out[lo:hi], lse[lo:hi], is_causal, m, sc)
        r = _backward(*args) if dt.itemsize >= 4 else _backward_half(*args, dt)
        dq[lo:hi], dk[lo:hi], dv[lo:hi] = r
    _by_batch(B, H, L, S, mask, body)
    if rep > 1:
        dk, dv = _sum_groups(dk, rep).astype(dt, copy=False), _sum_groups(dv, rep).astype(dt, copy=False)
    return dq, dk, dv


KERNELS = {     # log(0) and 1/0 on fully masked rows are expected: no NumPy warnings
    '_scaled_dot_product_flash_attention_for_cpu': quiet(sdpa_flash_cpu),
    '_scaled_dot_product_flash_attention_for_cpu_backward': quiet(sdpa_flash_cpu_backward),
}
