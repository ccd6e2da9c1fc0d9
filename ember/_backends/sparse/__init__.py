"""The sparse backends: COO kernels (kernels.py) for SparseCPU and CSR/CSC kernels (compressed.py) for
SparseCsrCPU, registered through the public ember.library API.

``KERNELS`` go to their layout's key (a call with an argument of that layout); ``CPU_KERNELS`` are the
operators that turn dense inputs into a sparse result, registered for CPU; compressed.COO_KERNELS turn a
COO tensor into a compressed one, registered for SparseCPU.
"""
from ...library import Library
from . import kernels, compressed

_lib = Library('aten', 'IMPL')


def register_all():
    for name, fn in kernels.KERNELS.items():
        _lib.impl(name, fn, 'SparseCPU')
    for name, fn in compressed.COO_KERNELS.items():
        _lib.impl(name, fn, 'SparseCPU')
    for name, fn in compressed.KERNELS.items():
        _lib.impl(name, fn, 'SparseCsrCPU')
    for name, fn in {**kernels.CPU_KERNELS, **compressed.CPU_KERNELS}.items():
        _lib.impl(name, fn, 'CPU')
