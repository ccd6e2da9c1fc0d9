"""NOTE [process settings] -- the two process-wide changes ember's CPU backend makes, when, and how to undo them.

1. The BLAS on one thread (NOTE [BLAS threads] in _blas.py): ember's intra-op pool runs the GEMMs, split by
   rows or columns, so OpenBLAS's own threads would fight it for the cores.
2. glibc's malloc keeps freed memory (NOTE [host malloc tuning] in _core/allocator.py): NumPy's temporaries
   are reused instead of being mmap()ed and page-faulted afresh each time.

Neither happens at import. Both are applied, once, the first time a kernel hands work to ember's thread pool
(``parallel_for`` with enough work to split: large GEMMs, convolutions, attention, GELU), which is where they
pay; with one intra-op thread (``set_num_threads(1)``, a machine with one core), the first time a kernel runs
such work on the calling thread alone (``_parallel.large_work_inline``): its large temporaries page-fault
just the same (256K-float ELU on one thread: 2.5 ms before, 0.29 ms after). ``EMBER_BLAS_THREADS=native`` and ``EMBER_HOST_MALLOC_TUNING=0`` switch each off before it happens;
``ember.backends.cpu.set_process_tuning(False)`` undoes both at run time (the BLAS gets back the thread count
it had; malloc gets glibc's documented defaults, 128 KiB thresholds, though glibc's dynamic raising of the
mmap threshold stays off once set) and ember's pool then stays at one thread. ``process_tuning()`` reports
the state. Measured effect: NOTE [BLAS threads] (char-GPT step 94 -> 71 ms on 2 cores) and NOTE [host malloc
tuning] (float32 GELU 16x64x512: 11.5 -> 2.4 ms).
"""
import os
import sys
import threading

from ._blas import controlled as _blas_controlled, blas_threads, set_blas_threads, core_name

_lock = threading.Lock()
_state = {'applied': False, 'enabled': True, 'blas_before': None, 'malloc': False}

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_GLIBC_DEFAULT = 128 * 1024


def _mallopt(threshold):
    if not sys.platform.startswith('linux'):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL('libc.so.6')
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, threshold))
    except (OSError, AttributeError):
        return False


def apply():
    """Make both changes (idempotent); called by the thread pool's first split."""
    with _lock:
        if _state['applied'] or not _state['enabled']:
            return
        _state['applied'] = True
        if _blas_controlled:
            _state['blas_before'] = blas_threads()
            set_blas_threads(1)
        if os.environ.get('EMBER_HOST_MALLOC_TUNING', '1') != '0':
            _state['malloc'] = _mallopt(1 << 30)


def restore():
    """Undo both changes and keep them off."""
    with _lock:
        _state['enabled'] = False
        if not _state['applied']:
            return
        if _state['blas_before'] is not None:
            set_blas_threads(_state['blas_before'])
        if _state['malloc']:
            _mallopt(_GLIBC_DEFAULT)
        _state.update(applied=False, blas_before=None, malloc=False)


def enable():
    with _lock:
        _state['enabled'] = True


def status():
    return {'enabled': _state['enabled'], 'applied': _state['applied'], 'blas_threads': blas_threads(),
            'blas_controlled': _blas_controlled, 'malloc_tuned': _state['malloc'], 'blas_core': core_name()}


def applied():
    return _state['applied']
