"""torch.utils.cpp_extension, for a framework without a C++ core.

torch compiles C++/CUDA sources against its C++ API (ATen, libtorch) and loads them as
operators. ember is Python on NumPy and has no C++ API to compile against, so every
build entry point raises RuntimeError saying so. That is the exception torch raises
when a build fails, which is what libraries that try a compiled kernel first and fall
back to Python (peft's BOFT, for one) catch. The constants describe a CPU-only build:
no CUDA or ROCm toolkit, no include paths.
"""
import subprocess
import sys

__all__ = ['BuildExtension', 'CUDA_HOME', 'CppExtension', 'CUDAExtension', 'ROCM_HOME', 'include_paths', 'is_ninja_available', 'library_paths', 'load', 'load_inline', 'verify_ninja_availability']

IS_WINDOWS = sys.platform == 'win32'
IS_MACOS = sys.platform.startswith('darwin')
IS_LINUX = sys.platform.startswith('linux')
CUDA_HOME = None
ROCM_HOME = None
HIP_HOME = None
CUDNN_HOME = None
SYCL_HOME = None
IS_HIP_EXTENSION = False

_NO_CPP = ("ember cannot build or load C++/CUDA extensions: it is written in Python on NumPy and has no C++ API "
           "(ATen/libtorch) to compile against. Use a Python implementation of the operator instead, or register "
           "one with ember.library.")


def _refuse(what):
    raise RuntimeError(f"Error building extension '{what}': {_NO_CPP}")


def load(name, sources, *args, **kwargs):
    """Compile and load a C++ extension: in ember this always raises RuntimeError (see the module docstring).

    >>> try:
    ...     load(name='ext', sources=['ext.cpp'])
    ... except RuntimeError as e:
    ...     print(str(e).split(':')[0])
    Error building extension 'ext'
    """
    _refuse(name)


def load_inline(name, cpp_sources, *args, **kwargs):
    """Compile C++ source strings into an extension: in ember this always raises RuntimeError."""
    _refuse(name)


def CppExtension(name, sources, *args, **kwargs):
    """A setuptools Extension for a C++ extension of torch: ember cannot build one, so this raises RuntimeError."""
    _refuse(name)


def CUDAExtension(name, sources, *args, **kwargs):
    """A setuptools Extension for a CUDA extension of torch: ember cannot build one, so this raises RuntimeError."""
    _refuse(name)


class BuildExtension:
    """torch's setuptools build command for C++ extensions; constructing it (running the build) raises RuntimeError.

    ``BuildExtension.with_options(...)`` (used in ``setup.py`` files) returns a subclass, as torch's does.
    """

    @classmethod
    def with_options(cls, **options):
        class cls_with_options(cls):
            def __init__(self, *args, **kwargs):
                kwargs.update(options)
                super().__init__(*args, **kwargs)
        return cls_with_options

    def __init__(self, *args, **kwargs):
        _refuse('BuildExtension')


def include_paths(device_type='cpu', torch_include_dirs=True):
    """The C++ include directories of the framework: none in ember."""
    return []


def library_paths(device_type='cpu', torch_include_dirs=True, cross_target_platform=None):
    """The libraries an extension links against: none in ember."""
    return []


def is_ninja_available():
    """True when the ``ninja`` build tool runs (``ninja --version`` succeeds), as torch computes it."""
    try:
        subprocess.check_output(['ninja', '--version'])
    except Exception:
        return False
    return True


def verify_ninja_availability():
    """RuntimeError unless ``is_ninja_available()``."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")
