"""torch.__config__: how this build was made (``show()``) and its threads (``parallel_info()``)."""


def show():
    """A description of the build, as torch's names its compiler and libraries."""
    import platform
    import numpy as np
    from . import __version__
    from .backends.cpu import process_tuning
    blas = process_tuning().get('blas_core', 'unknown')
    return (f"ember {__version__} built with:\n"
            f"  - Python {platform.python_version()} ({platform.python_implementation()})\n"
            f"  - NumPy {np.__version__}, BLAS kernels: {blas}\n"
            f"  - CPU capability usage: NumPy's SIMD dispatch\n"
            f"  - Build settings: pure Python (no C++ extension)\n")


def parallel_info():
    """The intra-op and inter-op thread settings."""
    from . import get_num_threads, get_num_interop_threads
    return (f"ATen/Parallel:\n\tat::get_num_threads() : {get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {get_num_interop_threads()}\n"
            f"ember's thread pool (NOTE [BLAS threads])\n")
