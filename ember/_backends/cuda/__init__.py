"""The CUDA backend: CuPy arrays, with kernels registered through ember.library as the CPU backend's are.

It loads on first use of a ``cuda`` device (``device('cuda')``, ``x.cuda()``, ``ember.cuda.is_available()``),
and only where CuPy is installed and sees a GPU; elsewhere ``cuda`` stays the absent device of a CPU-only
torch (NOTE [absent devices] in _core/device.py), and importing ember never imports CuPy.

NOTE [cuda backend]
The CPU kernels are written against NumPy's API, and CuPy implements that API on the GPU. So the CUDA
backend does not repeat them: each CPU kernel gets a device twin, the same code object run with globals in
which ``np`` is CuPy (``kernels.XP``: CuPy's function of each name, NumPy's where CuPy has none, such as
dtypes and ``errstate``), NumPy's ufuncs are CuPy's, and the helpers it calls are twins too (``_Twins``).
``np.empty``, ``np.add.reduce``, ``np.lib.stride_tricks.as_strided`` then make and read device arrays, and
the NumPy functions a kernel calls on its arguments reach CuPy through NumPy's dispatch protocols
(``__array_ufunc__``, ``__array_function__``) as well. Three kinds of helper are different: the CPU's
threaded GEMM becomes one cuBLAS call (``kernels.HELPERS``), and the thread pool and torch's random streams
stay on the host (``kernels.HOST_MODULES``), so random operators draw the CPU's values and copy them over.
Where the CPU kernels choose for a host (intra-op threads, cache-sized blocks, a pass skipped after reading
the data), the twins are given the device's choices instead (NOTE [device choices] in _choices.py).

A twin that needs something only the host has (a ctypes BLAS call, a host array it mixes with device arrays)
fails loudly, since CuPy never converts device arrays to host ones implicitly. The CPU kernel then runs on
host copies of the arguments and its results are copied to the device: the CPU fallback torch offers new
backends (``at::native::cpu_fallback``; MPS's ``PYTORCH_ENABLE_MPS_FALLBACK``). Before that run, a
generator's state and the arguments the kernel writes into are restored, so the host run draws and writes
what the failed attempt did. The fallback is never silent: the first one of each operator warns with the MPS
fallback's message, ``FALLBACKS`` counts them, ``REASONS`` keeps why the twin failed, and later calls with the
same argument dtypes and ranks go to the host directly. An error the host run raises too (a bad index, a
singular matrix) is the operator's own error and reaches the caller as on the CPU.

A few kernels written for the device (``kernels.KERNELS``) replace twins that would not do (a constructor
with another signature, host threads splitting a copy); linear algebra runs on the host
(``kernels.HOST_ONLY``), because its CPU kernels raise on singular inputs where CuPy's routines return NaNs
without a word.
"""
import functools
import importlib
import pkgutil
import types

import numpy as np

from ..._warn import warnings

_state = {'checked': False, 'cp': None, 'why': None}
FALLBACKS = {}          # operator name -> calls that ran on the host
REASONS = {}            # operator name -> why its device twin failed, the first time


def cupy_or_none():
    """The CuPy module when it is installed and sees at least one GPU, else None (checked once)."""
    if not _state['checked']:
        _state['checked'] = True
        from ..._core.device import CUDA_AS_CPU
        if CUDA_AS_CPU:         # NOTE [cuda as cpu]: the run asked for its cuda devices to be the CPU
            _state['why'] = 'ember run --cuda-as-cpu (EMBER_CUDA_AS_CPU=1)'
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
    _state['lib'] = register_kernels(kernels)
    return iface


# --- registration --------------------------------------------------------------------------------------------

def register_kernels(kernels, key='CUDA'):
    """Register, for ``key``, the device twin of every CPU kernel and the kernels of ``kernels.KERNELS``;
    ``kernels`` describes the device's array module (for CUDA, the module kernels.py; tests describe a NumPy
    stand-in and register it for PrivateUse1). Returns the Library, whose ``_destroy()`` undoes it."""
    from ...library import Library
    from .. import cpu as cpu_pkg
    lib = Library('aten', 'IMPL')
    own = kernels.KERNELS
    twins = _Twins(cpu_pkg.__name__, kernels)
    for m in sorted(pkgutil.iter_modules(cpu_pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f'{cpu_pkg.__name__}.{m.name}')
        for name, fn in getattr(mod, 'KERNELS', {}).items():
            if name in own:
                continue
            op = lib._find(name)
            host = name in kernels.HOST_ONLY or op.schema.name.startswith('linalg_')
            lib.impl(name, tried_kernel(op, twins(fn), fn, kernels, host), key)
    for name, fn in own.items():
        lib.impl(name, fn, key)
    return lib


class _Twins:
    """Device twins of the CPU kernels (NOTE [cuda backend]): the same code objects, run with globals in which
    ``np`` is CuPy (``kernels.XP``), NumPy's ufuncs are CuPy's, and every function of the CPU package they call is
    itself a twin; a few host-only helpers get device versions (``kernels.HELPERS``), some module constants
    other values (``kernels.CONSTANTS``; NOTE [device choices]), and the helper modules that must stay on the
    host keep their own (``kernels.HOST_MODULES``). Closures made at import (the split
    wrappers around a ufunc) are twinned cell by cell."""

    def __init__(self, package, kernels):
        self.package, self.k = package, kernels
        self.xp = kernels.XP()
        self.memo, self.globals = {}, {}

    def __call__(self, obj):
        if isinstance(obj, types.FunctionType):
            mod = obj.__module__ or ''
            if mod.startswith('numpy'):         # imported by name from NumPy: CuPy's function of that name
                return self.k.numpy_function(obj) or obj
            if not mod.startswith(self.package):
                return obj
            hit = self.memo.get(obj)
            if hit is None:
                name = mod.rpartition('.')[2]
                helper = self.k.HELPERS.get((name, obj.__name__))
                if helper is None and name in self.k.HOST_MODULES:     # its own globals; a wrapper's cells twinned
                    helper = self._twin(obj, host=True) if obj.__closure__ else obj
                    if name in self.k.DRAWS_MODULES:        # host draws, handed to the device
                        helper = self.k.results_to_device(helper)
                hit = self.memo[obj] = helper or self._twin(obj)
            return hit
        if obj is np:
            return self.xp
        if isinstance(obj, np.ufunc):
            return self.k.device_ufunc(obj.__name__) or obj
        if isinstance(obj, functools.partial):      # KERNELS entries such as partial(_max_pool, nd=2)
            return functools.partial(self(obj.func), *map(self, obj.args), **{k: self(v) for k, v in
                                                                               obj.keywords.items()})
        if isinstance(obj, dict) and any(isinstance(v, np.ufunc) for v in obj.values()):
            return {k: self(v) for k, v in obj.items()}     # a table of ufuncs (scatter's reductions)
        return obj

    def _twin(self, fn, host=False):
        cells = None
        if fn.__closure__:
            cells = tuple(types.CellType(self(c.cell_contents)) if _filled(c) else c for c in fn.__closure__)
        f = types.FunctionType(fn.__code__, fn.__globals__ if host else self._globals(fn.__globals__), fn.__name__,
                               tuple(self(d) for d in fn.__defaults__) if fn.__defaults__ else None, cells)
        f.__kwdefaults__, f.__qualname__ = fn.__kwdefaults__, fn.__qualname__
        f.__dict__.update(fn.__dict__)
        return f

    def _globals(self, g):
        key = id(g)
        twin = self.globals.get(key)
        if twin is None:
            twin = self.globals[key] = dict(g)       # filled after it is registered: functions refer to each other
            for k, v in g.items():
                if v is np or isinstance(v, (types.FunctionType, np.ufunc, dict)):
                    twin[k] = self(v)
            module = g.get('__name__', '').rpartition('.')[2]
            for (mod, name), v in self.k.CONSTANTS.items():     # NOTE [device choices]: blocks as large as arrays
                if mod == module and name in twin:
                    twin[name] = v
        return twin


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def tried_kernel(op, fn, host_fn, kernels, host_only=False):
    """The device twin ``fn`` of a CPU kernel, or ``host_fn`` on host copies where the twin fails
    (NOTE [cuda backend]). A Generator's state is restored before the host run (so it draws what the device
    attempt drew), and so are the arguments the operator writes into (``Tensor(a!)``), which the host run's
    results are then copied back into."""
    name = op.schema.full_name
    args_spec = op.schema.arguments
    tensors_out = all(r.startswith('Tensor') for r in op.schema.returns)
    gens = [i for i, a in enumerate(args_spec) if a.base_type == 'Generator']
    writes = [i for i, a in enumerate(args_spec) if a.is_write and a.base_type == 'Tensor'] + \
        list(kernels.WRITES.get(name, ()))
    to_dev, to_host_args, dev_args = kernels.to_device, kernels.host_args, kernels.device_args
    state, host_sigs = {'host': host_only}, set()

    def on_host(args, out):
        hargs = to_host_args(args)
        r = host_fn(*hargs)
        for i in writes:            # the host run wrote into its copies: the device arrays get the result
            if args[i] is not None:
                args[i][...] = to_dev(hargs[i])
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
        if state['host'] or (host_sigs and _signature(args) in host_sigs):
            return on_host(args, out)
        dargs = dev_args(args)
        saved = [(i, _rng_state(args[i])) for i in gens if args[i] is not None] + \
            [(i, args[i].copy()) for i in writes if args[i] is not None]
        try:
            r = fn(*dargs) if out is None else fn(*dargs, out=out)
        except Exception as e:
            REASONS.setdefault(name, f'{type(e).__name__}: {e}'[:300])
        else:
            return to_dev(r) if tensors_out else r
        for i, s in saved:          # undo what the failed attempt drew or wrote
            if i in gens:
                _set_rng_state(args[i], s)
            else:
                args[i][...] = s
        r = on_host(args, out)      # outside the handler: an error raised here is the operator's own
        host_sigs.add(_signature(args))     # calls of this kind go to the host from now on
        return r

    kernel.__name__ = getattr(host_fn, '__name__', 'kernel')
    kernel.__qualname__ = f'cuda({kernel.__name__})'
    kernel.accepts_out = _accepts_out(host_fn)
    kernel.cpu_kernel = host_fn
    return kernel


def _signature(args):
    """What a failed call is remembered by: each argument's dtype and rank, or its type."""
    return tuple((a.dtype.char, a.ndim) if hasattr(a, 'dtype') else type(a) for a in args)


def _rng_state(rng):
    return rng.bit_generator.state, getattr(rng, 'next_double_normal', None)


def _set_rng_state(rng, s):
    rng.bit_generator.state = s[0]
    if hasattr(rng, 'next_double_normal'):
        rng.next_double_normal = s[1]


def _accepts_out(fn):
    from ..._ops.adapters import accepts_out
    return accepts_out(fn)


def why_unavailable():
    cupy_or_none()
    return _state['why']

