"""CPU kernels for random operators. ``rng`` is a NumPy Generator on torch's engine (ember's Generator
unwrapped by the adapters): every sampler draws torch's values (NOTE [torch's random streams] in
_torch_random.py; gamma, Poisson, binomial and Dirichlet: NOTE [torch's rejection samplers] in
_torch_samplers.py)."""
import math

import numpy as np

from ._torch_samplers import poisson as _ts_poisson, standard_gamma as _ts_standard_gamma, dirichlet as _ts_dirichlet, \
    binomial as _ts_binomial
from ._torch_random import cauchy as _t_cauchy, exponential as _t_exponential, geometric as _t_geometric, log_normal as _t_log_normal, in_memory_order as _t_in_memory_order, uniform01 as _t_uniform01, uniform01_below as _t_uniform01_below, integers as _t_integers, normal as _t_normal, uniform as _t_uniform


def _fdt(a):
    """The dtype NumPy samples in for an array of ``a``'s dtype."""
    return np.float32 if a.dtype == np.float32 else np.float64


def _real_view_draws(a, draw):
    """A complex tensor's draws as torch makes them: over its real view, real and imaginary parts in turn."""
    real = np.float32 if a.dtype == np.complex64 else np.float64
    return _t_in_memory_order(draw(real, 2 * a.size).view(a.dtype), a)


def _uniform(a, lo, hi, rng):
    if a.dtype.kind == 'c':         # each part uniform(lo, hi), as torch's complex uniform_
        return _real_view_draws(a, lambda dt, n: _t_uniform(rng, (n,), dt, lo, hi))
    return _t_in_memory_order(_t_uniform(rng, (a.size,), a.dtype, lo, hi), a)


def _normal_fill(a, mean, std, rng):
    if a.dtype.kind == 'c':         # each part normal_(mean, std / sqrt 2), as torch's complex normal_
        return _real_view_draws(a, lambda dt, n: _t_normal(rng, (n,), dt, mean, std / math.sqrt(2)))
    return _t_in_memory_order(_t_normal(rng, (a.size,), a.dtype, mean, std, a.flags.c_contiguous), a)


def _exponential(a, lambd, rng):
    return _t_in_memory_order(_t_exponential(rng, a.size, a.dtype, lambd), a)


def _random(a, lo, hi, rng):
    return _t_in_memory_order(_t_integers(rng, lo, hi, (a.size,), a.dtype), a)


def _bernoulli_tensor(a, rng, p=None, fresh=False):
    """``fresh``: the out-of-place form, which torch draws into a new contiguous tensor (row by row, whatever
    the input's layout); in place, the draws follow the destination's memory order."""
    p = a if p is None else p
    if p.size and not (np.all(p >= 0) and np.all(p <= 1)):        # also catches NaN
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    # torch's bernoulli_distribution per element, in the output's memory order: double uniforms for a float64
    # p, float ones (24 bits) for any other, compared with p in that type
    wide = p.dtype == np.float64
    u = _t_uniform01(rng, a.size, np.dtype(np.float64 if wide else np.float32))
    u = u.reshape(a.shape) if fresh else _t_in_memory_order(u, a)
    return (u < np.broadcast_to(p if wide else p.astype(np.float32), a.shape)).astype(a.dtype)


def _bernoulli_p(a, p, rng):
    # bernoulli_(p) in place fills the destination in its memory order, as torch's
    return (_t_in_memory_order(_t_uniform01(rng, a.size, np.dtype(np.float64)), a) < p).astype(a.dtype)


def _bernoulli_into(a, p, rng):
    return _bernoulli_tensor(a, rng, p)


def _multinomial(probs, n, replacement, rng):
    p = np.atleast_2d(probs).astype(np.float64)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(-1)
    if np.any(total <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows, k = p.shape
    if replacement and n > 1:
        # torch's CPU kernel, row by row: the cumulative distribution in the input's dtype (summed in order,
        # divided by its total, the last bucket set to 1), then per sample a double uniform and the first
        # bucket whose cumulative probability is not below it
        p = np.atleast_2d(probs)
        cum = np.add.accumulate(p, axis=-1, dtype=p.dtype)
        cum = cum / cum[:, -1:]
        cum[:, -1] = 1
        u = _t_uniform01(rng, rows * n, np.dtype(np.float64)).reshape(rows, n)
        idx = np.stack([np.searchsorted(cum[r].astype(np.float64), u[r], side='left') for r in range(rows)])
    else:
        # torch's fast path without replacement (or one sample): argmax / top-n of p / q, q ~ Exp(1) drawn
        # for every category in order (the Gumbel-max trick); zero categories follow once the others run out
        src = np.atleast_2d(probs)
        keys = src / _t_exponential(rng, src.size, src.dtype).reshape(src.shape)
        idx = np.argmax(keys, axis=-1)[:, None] if n == 1 else np.argsort(-keys, axis=-1, kind='stable')[:, :n]
    idx = idx.astype(np.int64)
    return idx[0] if probs.ndim == 1 else idx


def _normal(mean, std, rng):
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    dt = np.result_type(mean, std) if isinstance(mean, np.ndarray) and isinstance(std, np.ndarray) else \
        (mean.dtype if isinstance(mean, np.ndarray) else std.dtype)
    if isinstance(std, np.ndarray) and std.size and not np.all(std >= 0):
        raise RuntimeError(f"normal expects all elements of std >= 0.0")
    if isinstance(std, np.ndarray):       # torch: normal_(0, 1), then mul_(std).add_(mean)
        r = _t_normal(rng, shape, dt)
        return (r * std + mean).astype(dt, copy=False)
    return (_t_normal(rng, shape, dt, 0.0, std) + mean).astype(dt, copy=False)     # normal_(0, std).add_(mean)


def _normal_ff(mean, std, size, rng, dtype, device):
    return _t_normal(rng, tuple(size), dtype, mean, std)


def _native_dropout(x, p, train, rng):
    if train is not None and not train:        # None means training, as in torch
        return x.copy(), np.ones(x.shape, np.bool_)
    # torch's CPU dropout: a bernoulli_(1 - p) noise tensor (double uniforms), divided by 1 - p in the input's
    # dtype, times the input
    mask = _t_in_memory_order(_t_uniform01_below(rng, x.size, 1.0 - p), x, like=True)
    one = x.dtype.type(1)
    scale = x.dtype.type(0) if p >= 1 else one / x.dtype.type(1.0 - p)
    out = np.multiply(x, scale)
    out *= mask
    return out, mask


def _poisson(rate, rng):
    if rate.size and not np.all(rate >= 0):      # also NaN
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _ts_poisson(rng, rate)


def _standard_gamma(alpha, rng):
    # no check, as torch: a NaN or negative alpha (below -1, or one of them) gives the smallest normal number
    return _ts_standard_gamma(rng, alpha)


def _sample_dirichlet(alpha, rng):
    return _ts_dirichlet(rng, alpha)


def _binomial(count, prob, rng):
    return _ts_binomial(rng, count, prob)


def _digamma(a):
    """psi(a) for a > 0 in float64: shift a up past 6 by psi(a) = psi(a + 1) - 1/a, then the asymptotic series."""
    a = np.array(a, dtype=np.float64, copy=True)
    r = np.zeros_like(a)
    small = a < 6
    while small.any():
        r[small] -= 1.0 / a[small]
        a[small] += 1.0
        small = a < 6
    f = 1.0 / (a * a)
    return r + np.log(a) - 0.5 / a - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def _gamma_lower(a, x):
    """R = P(a, x) / p(x; a) and dR/da from the series P = p * sum_n x^(n+1) / (a (a+1) ... (a+n))."""
    t = x / a
    d = -t / a
    r, dr = t.copy(), d.copy()
    for n in range(1, 100000):
        t = t * x / (a + n)
        d = d * x / (a + n) - t / (a + n)
        r += t
        dr += d
        if np.all((np.abs(t) <= 1e-16 * np.abs(r)) & (np.abs(d) <= 1e-16 * np.abs(dr))):
            break
    return r, dr


def _gamma_upper(a, x):
    """S = Q(a, x) / p(x; a) and dS/da: the continued fraction for the upper incomplete gamma (modified Lentz),
    run in complex arithmetic with a complex step on a, so the derivative has no cancellation error."""
    h_step = 1e-30
    ac = a + 1j * h_step
    tiny = 1e-300
    b = x + 1 - ac
    c = np.full_like(b, 1 / tiny)
    d = 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - ac)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1) <= 1e-15):     # a few ulps: 1e-16 is below float64's resolution at 1
            break
    return x * h.real, x * h.imag / h_step


def _standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1), by implicit differentiation of the CDF (torch computes the same
    derivative with a fitted approximation, accurate to ~5e-4 relative; this one is exact to float64 rounding)."""
    shape = np.broadcast_shapes(alpha.shape, x.shape)
    dt = np.result_type(alpha, x)
    a, x = np.broadcast_arrays(alpha.astype(np.float64), x.astype(np.float64))
    a, x = a.ravel(), x.ravel()
    out = np.empty_like(a)
    logx_psi = np.log(x) - _digamma(a) if a.size else a
    low = x < a + 1
    if low.any():
        r, dr = _gamma_lower(a[low], x[low])
        out[low] = -(dr + r * logx_psi[low])
    if (~low).any():
        s, ds = _gamma_upper(a[~low], x[~low])
        out[~low] = ds + s * logx_psi[~low]
    return out.reshape(shape).astype(dt, copy=False)


KERNELS = {
    '_standard_gamma': _standard_gamma,
    '_sample_dirichlet': _sample_dirichlet,
    '_standard_gamma_grad': _standard_gamma_grad,
    'binomial': _binomial,
    'poisson': _poisson,
    'uniform': _uniform,
    'normal_functional': _normal_fill,
    'exponential': _exponential,
    'geometric': lambda a, p, rng: _t_in_memory_order(_t_geometric(rng, a.size, a.dtype, p), a),
    'cauchy': lambda a, median, sigma, rng: _t_in_memory_order(_t_cauchy(rng, a.size, a.dtype, median, sigma), a),
    'log_normal': lambda a, mean, std, rng: _t_in_memory_order(_t_log_normal(rng, a.size, a.dtype, mean, std), a),
    'random.from': _random,
    'bernoulli': lambda a, rng: _bernoulli_tensor(a, rng, fresh=True),
    'bernoulli.p': _bernoulli_p,
    'bernoulli.Tensor': _bernoulli_into,
    'multinomial': _multinomial,
    'normal.Tensor_float': lambda mean, std, rng: _normal(mean, std, rng),
    'normal.float_Tensor': lambda mean, std, rng: _normal(mean, std, rng),
    'normal.Tensor_Tensor': _normal,
    'normal.float_float': _normal_ff,
    'native_dropout': _native_dropout,
}
