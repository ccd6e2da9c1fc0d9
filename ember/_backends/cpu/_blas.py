"""NOTE [BLAS threads] -- who parallelises a CPU kernel.

NumPy's OpenBLAS runs each large GEMM on its own thread pool, whose threads busy-wait for a while after
every call. ember's intra-op pool (``_parallel``) splits elementwise chains, attention and normalisation
across threads too, and the two pools fought over the cores: on the char-GPT benchmark (2 cores) a step
took 94 ms with both pools against 78 ms with ember's pool off. So, as torch runs its BLAS inside its own
intra-op threads, ember sets OpenBLAS to one thread and splits GEMMs itself (``_gemm.gemm``: rows or
columns of the output per thread, each a single-threaded GEMM): 71 ms.

The switch is ``openblas_set_num_threads`` of the OpenBLAS that NumPy loaded, found by ctypes among the
process's mapped libraries (what threadpoolctl does in general; ember needs only this one call). Where it
cannot be found (another BLAS, another OS), BLAS keeps its own threads and ember's pool stays at one
thread. The effect is process-wide (plain NumPy matrix products in the same process run on one thread as
well), so it is made only when ember's pool first runs and can be undone: NOTE [process settings] in
_process.py. ``EMBER_BLAS_THREADS=native`` leaves the BLAS alone (and ember's pool at one thread).
"""
import ctypes
import os

_NAMES = ('scipy_openblas{}_num_threads64_', 'scipy_openblas{}_num_threads', 'openblas{}_num_threads64_',
          'openblas{}_num_threads')
_CORENAME = ('scipy_openblas_get_corename64_', 'scipy_openblas_get_corename', 'openblas_get_corename64_',
             'openblas_get_corename')


def _openblas_libs():
    """The OpenBLAS libraries mapped into this process (NumPy's, and any other), opened with ctypes."""
    try:
        with open('/proc/self/maps') as f:
            paths = sorted({line.split()[-1] for line in f if 'openblas' in line.lower() and '.so' in line})
    except OSError:
        return []
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def _find():
    """(set, get) of the loaded OpenBLAS libraries' thread-count functions, or [] if none is found."""
    if os.environ.get('EMBER_BLAS_THREADS') == 'native':
        return []
    found = []
    for lib in _openblas_libs():
        for pattern in _NAMES:
            setter, getter = getattr(lib, pattern.format('_set'), None), getattr(lib, pattern.format('_get'), None)
            if setter is not None and getter is not None:
                setter.argtypes, getter.restype = [ctypes.c_int], ctypes.c_int
                found.append((setter, getter))
                break
    return found


_LIBS = _find()
controlled = bool(_LIBS)


def set_blas_threads(n):
    for setter, _ in _LIBS:
        setter(n)


def blas_threads():
    """The BLAS's thread count, or None when ember cannot see it."""
    return _LIBS[0][1]() if _LIBS else None


def core_name():
    """The kernel set the loaded OpenBLAS runs ('Haswell', 'SkylakeX', ...: its own pick for the CPU, or the
    environment's OPENBLAS_CORETYPE), or None when ember cannot see it. Benchmarks print it: the AVX2 and
    AVX-512 kernels differ ~1.9x in GEMM speed on an AVX-512 machine."""
    for lib in _openblas_libs():
        for name in _CORENAME:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None
