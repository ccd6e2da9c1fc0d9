"""The CUDA backend: CuPy arrays, with kernels registered through ember.library as the CPU backend's are.

It loads on first use of a ``cuda`` device (``device('cuda')``, ``x.cuda()``, ``ember.cuda.is_available()``),
and only where CuPy is installed and sees a GPU; elsewhere ``cuda`` stays the absent device of a CPU-only
torch (NOTE [absent devices] in _core/device.py), and importing ember never imports CuPy.

NOTE [cuda backend]
The CPU kernels are written against NumPy's API, and CuPy implements that API on the GPU: NumPy hands
``np.add(a, b)``, ``np.matmul``, ``np.where``, ``np.sum`` and the rest to CuPy when an operand is a CuPy array
(the ``__array_ufunc__`` and ``__array_function__`` protocols). So every CPU kernel is first tried
unchanged on the device arrays. A kernel that needs something only the host has (a ctypes BLAS call, a
NumPy array it makes itself and mixes with device arrays, ``np.array(x)`` of a device array) fails loudly
there, since CuPy never converts device arrays to host ones implicitly. Such a kernel then runs on host
copies of its arguments, and its results are copied to the device: the CPU fallback torch offers new
backends (``at::native::cpu_fallback``; MPS's ``PYTORCH_ENABLE_MPS_FALLBACK``). The fallback is never silent:
the first one of each operator warns with the MPS fallback's message, ``FALLBACKS`` counts them, and after
one the operator goes to the host directly. An error the host run raises too (a bad index, a singular
matrix) is the operator's own error and reaches the caller as on the CPU.

Kernels written for the device (``kernels.py``) replace the tried ones where CuPy has the better primitive
(matrix products, factories, copies) or where a CPU kernel's checks read data (linear algebra raises on a
singular input: those run on the host, as torch's CUDA checks sync on the result too).
"""
import importlib
import os
import pkgutil

from ..._warn import warnings

_state = {'checked': False, 'cp': None, 'why': None}
FALLBACKS = {}          # operator name -> calls that ran on the host


def cupy_or_none():
    """The CuPy module when it is installed and sees at least one GPU, else None (checked once)."""
    if not _state['checked']:
        _state['checked'] = True
        if os.environ.get('EMBER_DISABLE_CUDA') == '1':
            _state['why'] = 'EMBER_DISABLE_CUDA=1'
            return None
        if importlib.util.find_spec('cupy') is None:
            _state['why'] = 'CuPy is not installed'
            return None
        try:
            import cupy
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:      # CuPy without a driver or a device
            _state['why'] = f'CuPy sees no GPU ({type(e).__name__}: {e})'
            return None
        if n < 1:
            _state['why'] = 'CuPy sees no GPU'
            return None
        _state['cp'] = cupy
    return _state['cp']


def load():
    """Register the ``cuda`` device and its kernels; returns its DeviceInterface (None without a GPU)."""
    cp = cupy_or_none()
    if cp is None:
        return None
    if _state.get('iface') is not None:
        return _state['iface']
    from ..._core.device import DeviceInterface, register_device
    from ..._core.dispatch_key import DispatchKey
    from . import kernels
    iface = DeviceInterface('cuda', DispatchKey.CUDA, kernels.CuPyAllocator(), xp=cp, to_host=kernels.to_host,
                            from_host=kernels.from_host, device_count=cp.cuda.runtime.getDeviceCount())
    _state['iface'] = iface
    register_device(iface)
    _register_kernels(kernels)
    return iface


# --- registration --------------------------------------------------------------------------------------------

def _register_kernels(kernels):
    from ...library import Library
    from .. import cpu as cpu_pkg
    lib = _state['lib'] = Library('aten', 'IMPL')
    own = kernels.KERNELS
    for m in sorted(pkgutil.iter_modules(cpu_pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{cpu_pkg.__name__}.{m.name}')
        for name, fn in getattr(mod, 'KERNELS', {}).items():
            if name in own:
                continue
            op = lib._find(name)
            tensors_out = all(r.startswith('Tensor') for r in op.schema.returns)
            host = name in kernels.HOST_ONLY or op.schema.name.startswith('linalg_')
            lib.impl(name, tried_kernel(op.schema.full_name, fn, kernels, tensors_out, host), 'CUDA')
    for name, fn in own.items():
        lib.impl(name, fn, 'CUDA')


def tried_kernel(name, fn, kernels, tensors_out, host_only=False):
    """The CPU kernel ``fn`` run on device arrays, or on host copies when it cannot (NOTE [cuda backend])."""
    to_dev, to_host_args = kernels.to_device, kernels.host_args
    dev_args = kernels.device_args
    out_ok = _accepts_out(fn)
    state = {'host': host_only}

    def on_host(args, out):
        r = fn(*to_host_args(args))
        if name not in FALLBACKS:
            warnings.warn(f"The operator 'aten::{name}' is not currently supported on the CUDA backend and will fall "
                          f"back to run on the CPU. This may have performance implications.", UserWarning)
        FALLBACKS[name] = FALLBACKS.get(name, 0) + 1
        r = to_dev(r) if tensors_out else r
        if out is not None:
            out[...] = r
            return out
        return r

    def kernel(*args, out=None):
        if state['host']:
            return on_host(args, out)
        dargs = dev_args(args)
        try:
            r = fn(*dargs) if out is None else fn(*dargs, out=out)
        except Exception:
            pass
        else:
            return to_dev(r) if tensors_out else r
        r = on_host(args, out)      # outside the handler: an error raised here is the operator's own
        state['host'] = True
        return r

    kernel.__name__ = getattr(fn, '__name__', 'kernel')
    kernel.__qualname__ = f'cuda({kernel.__name__})'
    kernel.accepts_out = out_ok
    kernel.cpu_kernel = fn
    return kernel


def _accepts_out(fn):
    from ..._ops.adapters import accepts_out
    return accepts_out(fn)


def why_unavailable():
    cupy_or_none()
    return _state['why']

