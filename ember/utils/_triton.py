"""torch.utils._triton: whether Triton kernels can run. ember generates NumPy/CuPy code, never Triton kernels
(NOTE [array code generation] in _inductor/codegen.py), so Triton paths are never taken: libraries that ask
(torchao's BSR kernels, torch.sparse's) fall back to their eager code.

>>> from ember.utils._triton import has_triton
>>> has_triton()
False
"""
import functools
import importlib.util

__all__ = ['has_triton', 'has_triton_package', 'has_triton_tma']


@functools.cache
def has_triton_package():
    """Whether the ``triton`` package is importable (as torch asks, without importing it)."""
    return importlib.util.find_spec('triton') is not None


@functools.cache
def has_triton():
    """Whether Triton kernels can run on a device here: never under ember, which has no Triton backend."""
    return False


def has_triton_tma():
    """Whether Triton's tensor-memory-accelerator API can be used: never without Triton kernels."""
    return False
