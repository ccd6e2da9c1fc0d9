"""ember.cuda: torch.cuda as a build without CUDA answers it.

ember has no CUDA backend in this process, so every query answers what is true:
``is_available()`` is False, ``device_count()`` is 0, seeding is accepted and
does nothing (as torch seeds lazily, only once a GPU exists), memory statistics
are zero, and anything that needs a device raises torch's
``AssertionError: Torch not compiled with CUDA enabled``. Nothing here pretends
a GPU exists (NOTE [absent devices] in ember/_core/device.py).

>>> import ember
>>> ember.cuda.is_available(), ember.cuda.device_count()
(False, 0)
"""
import collections as _collections

_NO_CUDA = "Torch not compiled with CUDA enabled"


def _lazy_init():
    raise AssertionError(_NO_CUDA)


def is_available():
    """False: ember has no CUDA device. ``ember.cuda.is_available()`` -> ``False``."""
    return False


def device_count():
    """0, the number of CUDA devices ember can use. ``ember.cuda.device_count()`` -> ``0``."""
    return 0


def is_initialized():
    return False


def init():
    _lazy_init()


def manual_seed(seed):
    """Accepted and ignored without a GPU, as torch queues it until CUDA starts (it never does here)."""
    int(seed)


def manual_seed_all(seed):
    """Accepted and ignored without a GPU (see ``manual_seed``)."""
    int(seed)


def seed():
    """Accepted and ignored without a GPU."""


def seed_all():
    """Accepted and ignored without a GPU."""


def initial_seed():
    _lazy_init()


def get_rng_state(device='cuda'):
    _lazy_init()


def set_rng_state(new_state, device='cuda'):
    """Accepted and ignored without a GPU (torch queues it)."""


def get_rng_state_all():
    return []


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)


def current_device():
    _lazy_init()


def _as_cpu():
    """Is this run's ``cuda`` the CPU (``ember run --cuda-as-cpu``, NOTE [cuda as cpu])?"""
    from .._core.device import CUDA_AS_CPU
    return CUDA_AS_CPU


def set_device(device):
    """Selecting a negative index is a no-op, as in torch; any real index needs CUDA (under ``ember run
    --cuda-as-cpu`` it is accepted and does nothing: NOTE [cuda as cpu])."""
    from .._core.device import device as _dev
    if _as_cpu():
        return
    idx = device if isinstance(device, int) else _dev(device).index
    if idx is not None and idx < 0:
        return
    _lazy_init()


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def get_arch_list():
    return []


def synchronize(device=None):
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def default_stream(device=None):
    _lazy_init()


def mem_get_info(device=None):
    _lazy_init()


def ipc_collect():
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def empty_cache():
    """Nothing is cached without CUDA: a no-op, as torch."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_cached(device=None):
    return 0


def memory_stats(device=None):
    return _collections.OrderedDict()


def reset_peak_memory_stats(device=None):
    """The peaks are zero already: a no-op (torch's CPU build fails here on a missing binding)."""


def reset_accumulated_memory_stats(device=None):
    """Nothing accumulates without CUDA: a no-op."""


def reset_max_memory_allocated(device=None):
    """torch's older name: resets all peak statistics (a no-op here, as reset_peak_memory_stats)."""


def reset_max_memory_cached(device=None):
    """torch's older name: resets all peak statistics (a no-op here, as reset_peak_memory_stats)."""


class device:
    """Context manager selecting a CUDA device; entering it with a real index needs CUDA."""

    def __init__(self, device):
        from .._core.device import device as _dev
        self.idx = device if isinstance(device, int) else (-1 if device is None else _dev(device).index)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            _lazy_init()

    def __exit__(self, *exc):
        return False


def _oom_class():
    from .. import OutOfMemoryError
    return OutOfMemoryError


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


def stream(stream):
    """``with torch.cuda.stream(None):`` is a no-op, as in torch; a real stream cannot exist here."""
    import contextlib
    return contextlib.nullcontext()


def __getattr__(name):
    """``ember.cuda.amp`` (and any later submodule) loads on first use, as torch's lazy submodules do."""
    if name.startswith('__'):
        raise AttributeError(name)
    if name == 'OutOfMemoryError':      # the top-level class (ember imports this module before defining it)
        return _oom_class()
    import importlib
    try:
        return importlib.import_module(f'{__name__}.{name}')
    except ModuleNotFoundError:
        raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'") from None
