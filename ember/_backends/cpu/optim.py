"""CPU kernels of the fused optimizer steps (NOTE [fused optimizer steps] in ember/_ops/optim_ops.py).

Each parameter is updated with the NumPy operations of Adam's single-tensor update (optim/algorithms.py's
``adam``: lerp_, mul_, addcmul_, sqrt, div, add_, addcdiv_), in that order and with Python numbers rounded to
the array's dtype as there, so the two give the same bits; the arrays are written in place.
"""
import math

import numpy as np

from ._lerp import lerp as _lerp, addcmul as _addcmul, addcdiv as _addcdiv


def _work(a, half):
    """The array the update runs on: float32 for half precision (written back after), and a 0-d array as a
    1-element view (NumPy returns scalars, not arrays, for 0-d operations)."""
    if half:
        a = a.astype(np.float32)
    return a[None] if a.ndim == 0 else a


def _adam_one(p, g, m, v, vmax, step, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled):
    if maximize:
        g = np.negative(g)
    if weight_decay:
        if decoupled:
            np.multiply(p, 1 - lr * weight_decay, out=p)
        else:
            g = np.add(g, np.multiply(p, p.dtype.type(weight_decay)))
    _lerp(m, g, 1 - beta1, out=m)
    np.multiply(v, beta2, out=v)                       # mul_(beta2).addcmul_(g, g, value=1 - beta2)
    _addcmul(v, g, g, v.dtype.type(1 - beta2), out=v)
    if amsgrad:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = np.sqrt(v)
    np.true_divide(denom, math.sqrt(bc2), out=denom)
    np.add(denom, eps, out=denom)
    _addcdiv(p, m, denom, -lr / bc1, out=p)          # addcdiv_(m, denom, value=-lr / bc1)


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay,
                eps, amsgrad, maximize, grad_scale=None, found_inf=None, decoupled=False):
    if found_inf is not None and float(found_inf):
        return ()
    for i, p in enumerate(params):
        g = grads[i]
        if grad_scale is not None:
            np.true_divide(g, grad_scale.astype(g.dtype), out=g)
        arrays = [p, g, exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None]
        half = p.dtype.itemsize == 2 and p.dtype.kind == 'f'
        work = [None if a is None else _work(a, half) for a in arrays]
        _adam_one(*work, float(state_steps[i]), lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled)
        if half:                                       # computed in float32, rounded once (torch's opmath)
            for a, w in zip(arrays, work):
                if a is not None and a is not g:
                    np.copyto(a, w, casting='unsafe')
    return ()


def _fused_adamw(*args, **kwargs):
    return _fused_adam(*args, decoupled=True, **kwargs)


KERNELS = {
    '_fused_adam_': _fused_adam,
    '_fused_adamw_': _fused_adamw,
}
