"""ember.cuda: torch.cuda, answered by the CUDA backend on CuPy where a GPU is present.

With CuPy installed and a GPU visible (NOTE [cuda backend] in ember/_backends/cuda), the queries answer about
that GPU: ``is_available()``, ``device_count()``, ``get_device_name()``, ``synchronize()``, the memory
statistics of CuPy's pool, ``Event`` timing. Elsewhere they answer what a CPU-only torch answers:
``is_available()`` is False, ``device_count()`` is 0, seeding is accepted and does nothing (as torch seeds
lazily, only once a GPU exists), memory statistics are zero, and anything that needs a device raises torch's
``AssertionError: Torch not compiled with CUDA enabled``. Nothing here pretends a GPU exists (NOTE [absent
devices] in ember/_core/device.py).

Random numbers on a CUDA device are drawn on the host by the default generator and copied over, so a seeded
program draws the values it draws on the CPU (torch's CUDA generator is another stream); ``manual_seed`` here
seeds that same default generator, as ``ember.manual_seed`` does.

>>> import ember
>>> ember.cuda.is_available() == (ember.cuda.device_count() > 0)
True
"""
import collections as _collections

from .._legacy_types import CUDA_LEGACY as _CUDA_LEGACY

_NO_CUDA = "Torch not compiled with CUDA enabled"
globals().update(_CUDA_LEGACY)        # the legacy typed-tensor classes (torch.cuda.FloatTensor, ...)


def _cp():
    """The CuPy module when the CUDA backend runs in this process, else None."""
    from .._core import device as _device
    iface = _device.device_interface('cuda')
    return iface.xp if isinstance(iface, _device.DeviceInterface) else None


_initialized = False      # torch.cuda._initialized: set by the first _lazy_init (reversible networks read it)


def _lazy_init():
    global _initialized
    cp = _cp()
    if cp is None:
        raise AssertionError(_NO_CUDA)
    _initialized = True
    return cp


def is_available():
    """Whether the CUDA backend runs here (CuPy installed and a GPU visible)."""
    return _cp() is not None


def device_count():
    """The number of CUDA devices CuPy sees (0 without the backend)."""
    cp = _cp()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def is_initialized():
    return _cp() is not None


def init():
    _lazy_init()


def manual_seed(seed):
    """Seeds the default generator that CUDA tensors draw from (see the module's note); without a GPU it is
    accepted and ignored, as torch queues it until CUDA starts."""
    int(seed)
    if _cp() is not None:
        from .. import random
        random.default_generator.manual_seed(seed)


def manual_seed_all(seed):
    """As ``manual_seed``: one generator serves every device."""
    manual_seed(seed)


def seed():
    """Accepted and ignored without a GPU."""


def seed_all():
    """Accepted and ignored without a GPU."""


def initial_seed():
    _lazy_init()
    from .. import random
    return random.initial_seed()


def get_rng_state(device='cuda'):
    _lazy_init()
    from .. import random
    return random.get_rng_state()


def set_rng_state(new_state, device='cuda'):
    """Sets the default generator's state with a GPU; accepted and ignored without one (torch queues it)."""
    if _cp() is not None:
        from .. import random
        random.set_rng_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)


def current_device():
    return _lazy_init().cuda.runtime.getDevice()


def _as_cpu():
    """Is this run's ``cuda`` the CPU (``ember run --cuda-as-cpu``, NOTE [cuda as cpu])?"""
    from .._core.device import CUDA_AS_CPU
    return CUDA_AS_CPU


def _index(device):
    from .._core.device import device as _dev
    if device is None:
        return current_device()
    idx = device if isinstance(device, int) else _dev(device).index
    return current_device() if idx is None else idx


def set_device(device):
    """Selecting a negative index is a no-op, as in torch; any real index needs CUDA (under ``ember run
    --cuda-as-cpu`` it is accepted and does nothing: NOTE [cuda as cpu])."""
    from .._core.device import device as _dev
    if _as_cpu():
        return
    idx = device if isinstance(device, int) else _dev(device).index
    if idx is not None and idx < 0:
        return
    cp = _lazy_init()
    if idx is not None:
        cp.cuda.Device(idx).use()


class _DeviceProperties:
    """torch.cuda.get_device_properties's answer: name, total_memory, major, minor, multi_processor_count."""

    def __init__(self, props):
        self.name = props['name'].decode() if isinstance(props['name'], bytes) else props['name']
        self.total_memory = props['totalGlobalMem']
        self.major, self.minor = props['major'], props['minor']
        self.multi_processor_count = props['multiProcessorCount']
        self.is_integrated = bool(props.get('integrated', 0))
        self.is_multi_gpu_board = bool(props.get('isMultiGpuBoard', 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    cp = _lazy_init()
    return _DeviceProperties(cp.cuda.runtime.getDeviceProperties(_index(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list():
    return []


def synchronize(device=None):
    """Wait for every kernel queued on the device: GPU timings need it, as in torch."""
    cp = _lazy_init()
    with cp.cuda.Device(_index(device)):
        cp.cuda.Device().synchronize()


def current_stream(device=None):
    _lazy_init()
    return Stream(_existing=_lazy_init().cuda.get_current_stream())


def default_stream(device=None):
    cp = _lazy_init()
    return Stream(_existing=cp.cuda.Stream.null)


def mem_get_info(device=None):
    """(free, total) bytes of the device."""
    cp = _lazy_init()
    with cp.cuda.Device(_index(device)):
        return cp.cuda.runtime.memGetInfo()


def _pinned_empty(shape, dtype):
    """A NumPy array in page-locked host memory (CuPy's pinned pool), for ``Tensor.pin_memory``."""
    cp = _lazy_init()
    import cupyx
    return cupyx.empty_pinned(shape, dtype)


def ipc_collect():
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def _memory(fn, device, default=0):
    if _cp() is None:
        return default
    from .. import memory
    return getattr(memory, fn)('cuda' if device is None else device)


def empty_cache():
    """Give the blocks CuPy's pool caches back to the device (a no-op without CUDA, as torch)."""
    _memory('empty_cache', None, None)


def memory_allocated(device=None):
    return _memory('memory_allocated', device)


def max_memory_allocated(device=None):
    return _memory('max_memory_allocated', device)


def memory_reserved(device=None):
    return _memory('memory_reserved', device)


def max_memory_reserved(device=None):
    return _memory('max_memory_reserved', device)


def memory_cached(device=None):
    return memory_reserved(device)


def memory_stats(device=None):
    return _memory('memory_stats', device, _collections.OrderedDict())


def reset_peak_memory_stats(device=None):
    """Set the peaks to the current values (a no-op without CUDA: the peaks are zero)."""
    _memory('reset_peak_memory_stats', device, None)


def reset_accumulated_memory_stats(device=None):
    """Nothing accumulates beyond the peaks: a no-op."""


def reset_max_memory_allocated(device=None):
    """torch's older name: resets all peak statistics."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """torch's older name: resets all peak statistics."""
    reset_peak_memory_stats(device)


class device:
    """Context manager selecting a CUDA device; entering it with a real index needs CUDA."""

    def __init__(self, device):
        from .._core.device import device as _dev
        self.idx = device if isinstance(device, int) else (-1 if device is None else _dev(device).index)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            cp = _lazy_init()
            self.prev_idx = cp.cuda.runtime.getDevice()
            cp.cuda.Device(self.idx).use()

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            _cp().cuda.Device(self.prev_idx).use()
        return False


def _oom_class():
    from .. import OutOfMemoryError
    return OutOfMemoryError


class Stream:
    """A CUDA stream (CuPy's): ``with ember.cuda.stream(s):`` queues the kernels of the block on it."""

    def __new__(cls, device=None, priority=0, _existing=None, **kwargs):
        cp = _cp()
        if cp is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self = object.__new__(cls)
        self._s = _existing if _existing is not None else cp.cuda.Stream(non_blocking=True)
        return self

    def synchronize(self):
        self._s.synchronize()

    def query(self):
        return self._s.done

    def wait_stream(self, other):
        self._s.wait_event(other._s.record())

    def wait_event(self, event):
        self._s.wait_event(event._e)

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    @property
    def cuda_stream(self):
        return self._s.ptr

    def __eq__(self, other):
        return isinstance(other, Stream) and self._s.ptr == other._s.ptr

    def __hash__(self):
        return hash(self._s.ptr)


class Event:
    """A CUDA event (CuPy's): ``record()``, ``synchronize()``, ``query()``, ``elapsed_time(end)`` in ms."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        cp = _cp()
        if cp is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self = object.__new__(cls)
        self._e = cp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)
        return self

    def record(self, stream=None):
        self._e.record(None if stream is None else stream._s)

    def synchronize(self):
        self._e.synchronize()

    def query(self):
        return self._e.done

    def wait(self, stream=None):
        (current_stream() if stream is None else stream)._s.wait_event(self._e)

    def elapsed_time(self, end_event):
        return _cp().cuda.get_elapsed_time(self._e, end_event._e)


def stream(stream):
    """``with ember.cuda.stream(s):`` runs the block's kernels on ``s``; ``stream(None)`` is a no-op, as in
    torch."""
    import contextlib
    if stream is None:
        return contextlib.nullcontext()
    return stream._s


class StreamContext:
    """``torch.cuda.StreamContext(stream)``: the class behind ``cuda.stream(s)``; ``None`` makes it a no-op."""

    def __init__(self, stream):
        self.stream = stream
        self._ctx = None

    def __enter__(self):
        if self.stream is not None:
            self._ctx = self.stream._s
            self._ctx.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            self._ctx = None
        return False


def is_current_stream_capturing():
    """False: ember does not capture CUDA graphs (below), so no stream is ever capturing."""
    if _cp() is None:
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return False


class CUDAGraph:
    """CUDA graph capture and replay. ember's kernels are Python over CuPy, which a graph capture cannot record
    as a whole, so there is none: constructing one raises (on a CPU build with torch's own error)."""

    def __new__(cls, *args, **kwargs):
        if _cp() is None:
            raise RuntimeError("Tried to instantiate dummy base class CUDAGraph")
        raise NotImplementedError("ember.cuda.CUDAGraph: ember does not capture CUDA graphs (its kernels run "
                                  "Python between CuPy calls); run the step eagerly")


class graph:
    """``with torch.cuda.graph(g):`` captures into a CUDAGraph, which ember cannot make (above)."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode='global'):
        if not isinstance(cuda_graph, CUDAGraph):
            raise RuntimeError("torch.cuda.Stream requires CUDA support" if _cp() is None
                               else "graph() expects a CUDAGraph")


def graph_pool_handle():
    if _cp() is None:
        raise RuntimeError("Tried to instantiate dummy base class _graph_pool_handle")
    raise NotImplementedError("ember.cuda.graph_pool_handle: ember does not capture CUDA graphs")


def __getattr__(name):
    """``ember.cuda.amp`` (and any later submodule) loads on first use, as torch's lazy submodules do."""
    if name.startswith('__'):
        raise AttributeError(name)
    if name == 'default_generators':     # one per device; ember's devices share the default generator
        from .. import random
        return tuple(random.default_generator for _ in range(device_count())) if _cp() is not None else ()
    if name == 'OutOfMemoryError':      # the top-level class (ember imports this module before defining it)
        return _oom_class()
    import importlib
    try:
        return importlib.import_module(f'{__name__}.{name}')
    except ModuleNotFoundError:
        raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'") from None
