"""Devices and the device registry.

A device type (``cpu``, ``meta``, ``cuda``, or one a user adds) is described by
one `DeviceInterface`: its dispatch key, its allocator, the array module its
kernels use (NumPy, CuPy, or a stand-in for meta), and how to move arrays to and
from the host. A new device (PrivateUse1-style) is a new interface in the
registry plus kernels registered for its key through ``ember.library``.
"""
import os

import numpy as np

from .allocator import CPUAllocator
from .dispatch_key import DispatchKey


class DeviceInterface:
    """What ember needs to know of a device type.

    ``to_host(array) -> np.ndarray`` and ``from_host(np.ndarray, index) -> array`` move data;
    ``xp`` is the NumPy-like module kernels use; ``allocator`` makes Storages.
    """

    def __init__(self, name, key, allocator=None, xp=np, to_host=None, from_host=None, device_count=1):
        self.name, self.key = name, DispatchKey(key)
        self.allocator = allocator
        self.xp = xp
        self.to_host = to_host or (lambda a: a)
        self.from_host = from_host or (lambda a, index=None: a)
        self.device_count = device_count
        self.keyset = 1 << int(key)


_REGISTRY = {}
_BY_KEY = {}


def register_device(iface):
    if 'device' in globals():       # devices made before the backend existed were absent ones
        device._cache.clear()
    _REGISTRY[iface.name] = iface
    _BY_KEY[iface.key] = iface
    return iface


# torch's device types: ``device('cuda')`` is a valid name on every build, even one without that backend.
# NOTE [absent devices]: a known type with no registered backend gets an `_AbsentDevice` interface, so the
# device object exists (``device('cuda')``, equality, printing) but the first use of it to hold data raises
# what a CPU-only torch raises. Nothing pretends the device is there.
_TORCH_TYPES = ('cpu', 'cuda', 'ipu', 'xpu', 'mkldnn', 'opengl', 'opencl', 'ideep', 'hip', 've', 'fpga', 'maia',
                'xla', 'lazy', 'vulkan', 'mps', 'meta', 'hpu', 'mtia', 'privateuseone')


class _AbsentDevice:
    """The interface of a torch device type this process has no backend for: every use raises torch's error."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        if self.name in ('cuda', 'xpu'):
            raise AssertionError(f"Torch not compiled with {self.name.upper()} enabled")
        raise NotImplementedError(f"Could not run 'aten::empty.memory_format' with arguments from the "
                                  f"'{self.name.upper()}' backend: ember has no {self.name} backend in this process")


# NOTE [cuda as cpu]
# ``ember run --cuda-as-cpu`` (environment ``EMBER_CUDA_AS_CPU=1``, read once when ember is imported, inherited by
# the ranks a launcher starts) runs a GPU program unchanged on the CPU: every ``cuda`` device a program names
# (``'cuda:1'``, ``.to(local_rank)``, ``map_location='cuda:0'``) *is* the CPU device, ``ember.cuda.set_device``
# accepts any index and does nothing, DDP's ``device_ids`` naming such devices are dropped, and
# ``backend='nccl'`` runs on MPI. It is opt-in and announced once by ``ember run``; the answers to questions
# about the machine stay true (``ember.cuda.is_available()`` is False, tensors report ``device='cpu'``), so a
# program that checks for a GPU takes its CPU path. Without the variable nothing of this happens (NOTE
# [absent devices]).
CUDA_AS_CPU = os.environ.get('EMBER_CUDA_AS_CPU') == '1'


# NOTE [backend loaders]: a backend whose library is heavy to import (CUDA's CuPy) registers itself on first use
# of its device type; ember/__init__.py puts its loader here, and the loader returns None where the backend cannot
# run (no CuPy, no GPU), which leaves the type absent (NOTE [absent devices]).
LOADERS = {}


def device_interface(type_name):
    try:
        return _REGISTRY[type_name]
    except KeyError:
        loader = LOADERS.pop(type_name, None)
        if loader is not None and loader() is not None:
            return _REGISTRY[type_name]
        if type_name in _TORCH_TYPES:
            return _AbsentDevice(type_name)
        raise RuntimeError(f"Expected one of {', '.join(_REGISTRY)} device type at start of device string: "
                           f"{type_name}") from None


def interface_for_key(key):
    return _BY_KEY[key]


def registered_types():
    return tuple(_REGISTRY)


class device:
    """A device, as torch.device: ``device('cuda:0')``, ``device('cuda', 0)``, ``device(type='cpu')``.

    >>> import ember
    >>> ember.device('cuda:1')
    device(type='cuda', index=1)
    """
    __slots__ = ('type', 'index', '_iface')
    __module__ = 'ember'        # torch.device's place, where pickle and YAML name the class
    _cache = {}

    def __new__(cls, type=None, index=None):
        if isinstance(type, device):
            return type
        key = (type, index)
        hit = cls._cache.get(key)
        if hit is not None:
            return hit
        if isinstance(type, int):
            type, index = 'cuda', type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        name = type
        if ':' in type:
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index was passed explicitly: {type}")
            name, _, idx = type.partition(':')
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative")
        if CUDA_AS_CPU and name == 'cuda':      # NOTE [cuda as cpu]
            name, index = 'cpu', None
        self = object.__new__(cls)
        object.__setattr__(self, 'type', name)
        object.__setattr__(self, 'index', index)
        object.__setattr__(self, '_iface', device_interface(name))
        if len(cls._cache) < 4096:
            cls._cache[key] = self
        return self

    def __setattr__(self, k, v):
        raise AttributeError("device is immutable")

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f'{self.type}:{self.index}'

    def __eq__(self, other):
        # as torch's: a device equals only a device (``device('cpu') == 'cpu'`` is False; accelerate tests
        # ``device == "npu"`` on devices and strings alike)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type,) if self.index is None else (self.type, self.index))     # torch's arguments

    def __enter__(self):
        """``with ember.device('meta'):`` makes this the default device of the factory functions (and so of the
        parameters modules create) until the block ends, as torch's device context manager does."""
        _device_stack.append(_default_device[0])
        _default_device[0] = canonical(self)
        return self

    def __exit__(self, *exc):
        _default_device[0] = _device_stack.pop()
        return False


class _MetaXP:
    """The meta device's 'array module': there is no data to compute on."""


register_device(DeviceInterface('cpu', DispatchKey.CPU, CPUAllocator(64)))
register_device(DeviceInterface('meta', DispatchKey.Meta, None, xp=_MetaXP))

CPU = device('cpu')
META = device('meta')


def canonical(dev):
    """``'cuda'`` -> ``device('cuda', 0)`` for devices with indices; cpu and meta keep None."""
    if dev is None:
        return CPU
    d = device(dev)
    if d.type in ('cpu', 'meta'):       # a tensor on 'cpu:0' is on device('cpu'), as torch's
        return CPU if d.type == 'cpu' else d if d.index is None else device('meta')
    if d.index is None:
        return device(d.type, 0)
    return d


_default_device = [CPU]
_device_stack = []      # the defaults that ``with device(...)`` blocks replaced, innermost last


def set_default_device(dev):
    _default_device[0] = CPU if dev is None else canonical(dev)


def get_default_device():
    return _default_device[0]


def current_default_keyset():
    return _default_device[0]._iface.keyset
