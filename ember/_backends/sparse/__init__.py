"""The SparseCPU backend: COO kernels (kernels.py), registered through the public ember.library API.

``KERNELS`` go to the SparseCPU key (a call with a sparse argument); ``CPU_KERNELS`` are the
operators that turn dense inputs into a sparse result, registered for CPU.
"""
from ...library import Library
from . import kernels

_lib = Library('aten', 'IMPL')


def register_all():
    for name, fn in kernels.KERNELS.items():
        _lib.impl(name, fn, 'SparseCPU')
    for name, fn in kernels.CPU_KERNELS.items():
        _lib.impl(name, fn, 'CPU')
