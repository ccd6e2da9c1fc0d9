"""The QuantizedCPU backend (NOTE [quantized tensors]): kernels.py, registered through the public ember.library API.

``KERNELS`` go to the QuantizedCPU key (a call with a quantized argument); ``CPU_KERNELS`` turn dense inputs into
a quantized result and are registered for CPU. Operators of torch's ``quantized::`` namespace are named with it.
"""
from ...library import Library
from . import kernels

_libs = {ns: Library(ns, 'IMPL') for ns in ('aten', 'quantized')}


def _impl(name, fn, key):
    ns, _, op = name.rpartition('::')
    _libs[ns or 'aten'].impl(op, fn, key)


def register_all():
    for name, fn in kernels.KERNELS.items():
        _impl(name, fn, 'QuantizedCPU')
    for name, fn in kernels.CPU_KERNELS.items():
        _impl(name, fn, 'CPU')
