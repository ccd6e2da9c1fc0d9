"""CUDA kernels and memory on CuPy (NOTE [cuda backend] in __init__.py).

This module describes the device to the twin machinery of __init__.py: ``XP``, CuPy in the place of NumPy
for the CPU kernels' twins; ``HELPERS``, ``HOST_MODULES`` and ``DRAWS_MODULES``, how their helpers are
treated; the moves between host and device; ``KERNELS``, the few kernels written for the device (strided
empties, fill with a tensor, copies, linear's backward, sinc); and ``HOST_ONLY``, the CPU kernels that go to
the host directly, since their results depend on checks that read the data (linear algebra's singular
inputs), which CuPy does not raise on. Nothing else imports CuPy.
"""
import functools
import math

import numpy as np
import cupy as cp

from ._choices import HELPERS as _DEVICE_HELPERS, CONSTANTS as _DEVICE_CONSTANTS


# --- memory --------------------------------------------------------------------------------------------------

class CuPyAllocator:
    """Device memory from CuPy's memory pool, which is a caching allocator as torch's CUDA one is (freed
    blocks stay in the pool for the next request of a similar size; ``empty_cache`` returns them). Every
    CuPy allocation, the kernels' own included, goes through ``_malloc``, which keeps the peak."""
    alignment = 256

    def __init__(self):
        self.pool = cp.get_default_memory_pool()
        self.peak = 0
        cp.cuda.set_allocator(self._malloc)

    def _malloc(self, nbytes):
        mem = self.pool.malloc(nbytes)
        used = self.pool.used_bytes()
        if used > self.peak:
            self.peak = used
        return mem

    def allocate(self, nbytes):
        return cp.empty(nbytes, cp.uint8)

    def memory_allocated(self):
        return self.pool.used_bytes()

    def memory_reserved(self):
        return self.pool.total_bytes()

    def memory_stats(self):
        return {'allocated_bytes': self.pool.used_bytes(), 'peak_allocated_bytes': self.peak,
                'reserved_bytes': self.pool.total_bytes()}

    def reset_peak_stats(self):
        self.peak = self.pool.used_bytes()

    def empty_cache(self):
        self.pool.free_all_blocks()


def to_host(a):
    return cp.asnumpy(a)


def from_host(a, index=None):
    if index:
        with cp.cuda.Device(index):
            return cp.asarray(a)
    return cp.asarray(a)


# --- moving a fallback's arguments and results ---------------------------------------------------------------

def host_args(args):
    """Arguments for a CPU kernel: device arrays copied to the host (lists of them too)."""
    return tuple(_host(a) for a in args)


def _host(a):
    if isinstance(a, cp.ndarray):
        return cp.asnumpy(a)
    if isinstance(a, list) and any(isinstance(x, cp.ndarray) for x in a):
        return [_host(x) for x in a]
    return a


def device_args(args):
    """Arguments tried on the device: a 0-d host array (a CPU scalar tensor may join a CUDA operation, as
    in torch) becomes a device one, so the kernel sees one kind of array."""
    for a in args:
        if a.__class__ is np.ndarray:
            return tuple(cp.asarray(x) if x.__class__ is np.ndarray else x for x in args)
    return args


def to_device(r):
    """A kernel's result on the device: host arrays (and NumPy scalars) are copied over."""
    if isinstance(r, cp.ndarray) or r is None:
        return r
    if isinstance(r, (np.ndarray, np.generic)):
        return cp.asarray(r)
    if isinstance(r, tuple):
        return tuple(to_device(x) for x in r)
    if isinstance(r, list):
        return [to_device(x) for x in r]
    return r


# --- kernels -------------------------------------------------------------------------------------------------

def _empty_strided(size, stride, dtype, device):
    if not size:
        return cp.empty((), dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = cp.zeros(max(extent, 1), dtype)
    isz = base.itemsize
    return cp.ndarray(tuple(size), dtype, base.data, tuple(s * isz for s in stride))


def _clone(a, memory_format):
    if memory_format in ('channels_last', 'channels_last_3d'):
        perm = (0,) + tuple(range(2, a.ndim)) + (1,)
        back = (0, a.ndim - 1) + tuple(range(1, a.ndim - 1))
        return cp.ascontiguousarray(a.transpose(perm)).transpose(back)
    if memory_format == 'contiguous_format' or a.flags.c_contiguous:
        return cp.array(a, copy=True, order='C')
    return cp.array(a, copy=True, order='K')


def _linear_backward(x, g, w, output_mask):
    g2 = g.reshape(-1, g.shape[-1])
    gx = cp.matmul(g2, w).reshape(x.shape) if output_mask[0] else None
    gw = cp.matmul(g2.T, x.reshape(-1, x.shape[-1])) if output_mask[1] else None
    gb = g2.sum(0) if output_mask[2] else None
    return gx, gw, gb


def _sinc(x):
    """NumPy's sinc formula (CuPy's rounds differently), so the device gives the CPU kernel's values."""
    y = cp.pi * cp.where(x == 0, 1.0e-20, x)
    return cp.sin(y) / y


# NOTE [fused optimizer steps] on the device: the CPU kernel's twin would launch ~14 CuPy operations per parameter
# (~150 us of host time each step and parameter in the char-GPT's profile, BENCHMARKS.md); one elementwise kernel
# does the whole update of a parameter. It computes in the CPU kernel's dtype (float32 for half precision, as
# torch's opmath) with the same Python numbers rounded to it, in the same order; the compiler may contract a
# multiply and an add into one rounding, so the values agree with the CPU's to float rounding, not bit for bit.
_ADAM_KERNELS = {}


def _adam_kernel(compute, maximize, weight_decay_mode, low, amsgrad):
    """The update of one parameter as CUDA C++ (compiled once per variant), computing in ``compute`` (float32 or
    float64): ``weight_decay_mode`` 0 none, 1 added to the gradient (Adam), 2 decoupled (AdamW); ``low``: lerp's
    weight below one half (torch's two-sided lerp)."""
    key = (compute, maximize, weight_decay_mode, low, amsgrad)
    k = _ADAM_KERNELS.get(key)
    if k is None:
        c = 'float' if compute == np.float32 else 'double'      # the scalars' C type: CuPy binds T from arrays only
        body = [f'{c} grad = {"-" if maximize else ""}({c})g;', f'{c} pp = ({c})p;', f'{c} mm = ({c})m;',
                f'{c} vv = ({c})v;']
        if weight_decay_mode == 2:
            body.append('pp = pp * shrink;')
        elif weight_decay_mode == 1:
            body.append('grad = grad + pp * wd;')
        body += [f'{c} d = grad - mm;', f'mm = {"mm + d * w" if low else "grad - d * w"};',
                 'vv = vv * b2 + (grad * grad) * omb2;']
        use = 'vv'
        if amsgrad:
            body += [f'{c} vm = ({c})vmax;', 'vm = (vm < vv || vv != vv) ? vv : vm;', 'vmax = (T)vm;']   # NaN wins
            use = 'vm'
        body += [f'pp = pp + (mm / (sqrt({use}) / bc2s + eps)) * step;', 'p = (T)pp;', 'm = (T)mm;', 'v = (T)vv;']
        scalars = ', '.join(f'{np.dtype(compute).name} {n}' for n in
                            ('shrink', 'wd', 'w', 'b2', 'omb2', 'bc2s', 'eps', 'step'))
        k = _ADAM_KERNELS[key] = cp.ElementwiseKernel(
            'T g, ' + scalars, 'T p, T m, T v' + (', T vmax' if amsgrad else ''), '\n'.join(body), 'ember_fused_adam')
    return k


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay,
                eps, amsgrad, maximize, grad_scale=None, found_inf=None, decoupled=False):
    if found_inf is not None and float(found_inf):
        return ()
    w = 1 - beta1
    low = abs(w) < 0.5
    mode = 0 if not weight_decay else 2 if decoupled else 1
    for i, p in enumerate(params):
        g = grads[i]
        if grad_scale is not None:
            cp.true_divide(g, grad_scale.astype(g.dtype), out=g)
        c = np.float32 if p.dtype.itemsize < 8 else np.float64
        step = float(state_steps[i])
        bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
        outs = (p, exp_avgs[i], exp_avg_sqs[i]) + ((max_exp_avg_sqs[i],) if amsgrad else ())
        _adam_kernel(c, bool(maximize), mode, low, bool(amsgrad))(
            g, c(1 - lr * weight_decay), c(weight_decay), c(w if low else 1 - w), c(beta2), c(1 - beta2),
            c(math.sqrt(bc2)), c(eps), c(-lr / bc1), *outs)
    return ()


# Only where the twin of the CPU kernel would not do: ``empty_strided`` (NumPy's ndarray constructor takes an
# offset where CuPy's takes strides), ``fill.Tensor`` (a 0-d device array as the fill value), ``clone`` and
# ``linear_backward`` (the CPU kernels split large work over host threads), ``sinc`` (CuPy's rounds differently),
# the fused Adam steps (one elementwise kernel per parameter, above).
# The factories, fill.Scalar and the matrix products are their CPU kernels' twins (``np.zeros``, ``np.matmul``
# and the GEMM helper answer with CuPy's).
KERNELS = {
    'sinc': _sinc,
    'empty_strided': _empty_strided,
    'fill.Tensor': lambda a, value: cp.full(a.shape, value, a.dtype) if isinstance(value, (int, float, bool, complex))
    else cp.broadcast_to(cp.asarray(value, a.dtype), a.shape).copy(),     # value: a 0-d array, on the host or not
    'clone': _clone,
    'linear_backward': _linear_backward,
    '_fused_adam_': _fused_adam,
    '_fused_adamw_': functools.partial(_fused_adam, decoupled=True),
}

# CPU kernels run on host copies from the start: they raise on data (singular or non-positive-definite inputs)
# where CuPy's routines return NaNs silently; every ``linalg_*`` operator is added by the registration
HOST_ONLY = frozenset({'_linalg_solve', 'cholesky_inverse', 'cholesky_solve', 'triangular_solve', 'lu_solve',
                       'inverse', 'det', 'logdet', 'slogdet', 'pinverse', 'matrix_exp', 'lu', 'lu_unpack',
                       'geqrf', 'ormqr', 'orgqr', 'householder_product', 'svd', 'qr', 'cholesky'})


# --- the CPU kernels' NumPy, answered by CuPy ----------------------------------------------------------------

class _ReducingUfunc:
    """A CuPy ufunc whose ``reduce`` CuPy lacks (``maximum``, ``minimum``, ``fmax``, ``fmin``), with it: the
    reduction is CuPy's ``amax``/``amin`` (``nanmax``/``nanmin`` for the f-versions, which skip NaNs)."""

    def __init__(self, ufunc, reducer):
        self._u, self._r = ufunc, reducer

    def __call__(self, *args, **kwargs):
        return self._u(*args, **kwargs)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False):
        r = self._r(a, axis=axis, keepdims=keepdims)
        if out is not None:
            out[...] = r
            return out
        return r

    def __getattr__(self, name):
        return getattr(self._u, name)


_REDUCING = {'maximum': cp.amax, 'minimum': cp.amin, 'fmax': cp.nanmax, 'fmin': cp.nanmin}


def device_ufunc(name):
    """CuPy's ufunc of this name (with ``reduce`` where CuPy has none), or None. ``matmul`` is a ufunc in NumPy
    and a generalized one in CuPy, of another class."""
    u = getattr(cp, name, None)
    if not isinstance(u, cp.ufunc) and name != 'matmul':
        return None
    return _ReducingUfunc(u, _REDUCING[name]) if name in _REDUCING else u


# functions the CPU kernels also call on shapes and Python lists (``np.prod(shape)``): CuPy's takes arrays only,
# so these pick by their arguments, as NumPy's own dispatch would
_BY_ARGUMENTS = frozenset({'prod', 'argsort', 'cumprod', 'sort', 'unravel_index', 'ravel_multi_index'})


def _by_arguments(device_fn, host_fn):
    def fn(*args, **kwargs):
        for a in args:
            if isinstance(a, cp.ndarray):
                return device_fn(*args, **kwargs)
        return host_fn(*args, **kwargs)
    fn.__name__ = host_fn.__name__
    return fn


class XP:
    """What the device twins of the CPU kernels see as ``np`` (NOTE [cuda backend]): CuPy's function or ufunc of
    that name where CuPy has one, NumPy's otherwise (dtypes, ``errstate``, ``iinfo``: host-side helpers). A
    submodule (``np.linalg``, ``np.fft``, ``np.lib``) is answered the same way, one level down."""

    def __init__(self, device_mod=cp, host_mod=np):
        self._d, self._h = device_mod, host_mod

    def __getattr__(self, name):
        d = getattr(self._d, name, None)
        h = getattr(self._h, name, None)
        if isinstance(h, np.ufunc):
            d = device_ufunc(name) or d
        elif name in _BY_ARGUMENTS and d is not None:
            d = _by_arguments(d, h)
        if d is None:
            if h is None:
                raise AttributeError(f"neither CuPy nor NumPy has {name!r}")
            v = h
        elif h is not None and type(h).__name__ == 'module':
            v = XP(d, h)
        else:
            v = d
        setattr(self, name, v)          # looked up once
        return v


def gemm(a, b, bias=None):
    """The CPU backend's threaded GEMM helper (``_gemm.gemm``), on the device: one cuBLAS call."""
    out = cp.matmul(a, b)
    if bias is not None:
        out += bias
    return out


# CPU kernels that update arguments in place beyond what their schema says: batch norm's running statistics
# (``Tensor(a!)? running_mean`` in torch's schema); the host fallback copies them back (by argument position)
WRITES = {'native_batch_norm': (3, 4)}

def as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    """NumPy's ``as_strided`` signature on CuPy's (which has no ``subok``/``writeable``)."""
    return cp.lib.stride_tricks.as_strided(x, shape, strides)


def numpy_function(fn):
    """The device counterpart of a NumPy function a CPU kernel module imported by name (``from numpy.lib.
    stride_tricks import as_strided``), or None where CuPy has none."""
    if fn.__name__ == 'as_strided':
        return as_strided
    for where in (getattr(cp.lib, 'stride_tricks', None), cp):
        g = getattr(where, fn.__name__, None)
        if g is not None:
            return g
    return None


# CPU helpers whose device twin is a function written here (by the helper's module and name): the GEMM, and
# the choices the device makes otherwise (NOTE [device choices] in _choices.py); module constants likewise
HELPERS = {('_gemm', 'gemm'): gemm, **_DEVICE_HELPERS}
CONSTANTS = _DEVICE_CONSTANTS
# CPU helper modules that stay on the host in the twins: the thread pool, the process settings, the BLAS
# handle, the error state, and torch's random streams (they draw on the host, so seeded values are the CPU's)
HOST_MODULES = frozenset({'_parallel', '_process', '_blas', '_fp', '_torch_random'})
DRAWS_MODULES = frozenset({'_torch_random'})        # of those, the ones whose array results go to the device


def results_to_device(fn):
    """``fn`` with its host array results copied to the device (a helper that draws random numbers)."""
    def on_device(*args, **kwargs):
        return to_device(fn(*args, **kwargs))
    on_device.__name__ = getattr(fn, '__name__', 'draws')
    return on_device
