"""Padding modules (constant/zero, reflection, replication, circular; 1-3 spatial dims) over ``F.pad``."""
from .. import functional as F
from .module import Module
from .utils import _pair, _quadruple, _ntuple

__all__ = ['ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d',
           'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d',
           'ReplicationPad3d', 'CircularPad1d', 'CircularPad2d', 'CircularPad3d']

_sextuple = _ntuple(6, '_sextuple')
_TUPLE = {1: _pair, 2: _quadruple, 3: _sextuple}


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _TUPLE[self._n](padding)

    def forward(self, input):
        return F.pad(input, self.padding, 'constant', self.value)

    def extra_repr(self):
        return f'padding={self.padding}, value={self.value}'


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class _ModePadNd(Module):
    _n = 1
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _TUPLE[self._n](padding)

    def forward(self, input):
        if self._mode == 'circular' and input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f'{self.padding}'


class _ReflectionPadNd(_ModePadNd):
    _mode = 'reflect'


class _ReplicationPadNd(_ModePadNd):
    _mode = 'replicate'


class _CircularPadNd(_ModePadNd):         # the mode classes torch's modules derive from (thop dispatches on them)
    _mode = 'circular'


def _make(base, name, n, mode=None):
    attrs = {'_n': n, '__doc__': f'{name}: pads the last {n} dim(s) of the input.'}
    if mode is not None:
        attrs['_mode'] = mode
    cls = type(name, (base,), attrs)
    cls.__module__ = __name__
    return cls


ConstantPad1d, ConstantPad2d, ConstantPad3d = (_make(_ConstantPadNd, f'ConstantPad{n}d', n) for n in (1, 2, 3))
ZeroPad1d, ZeroPad2d, ZeroPad3d = (_make(_ZeroPadNd, f'ZeroPad{n}d', n) for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_make(_ReflectionPadNd, f'ReflectionPad{n}d', n)
                                                     for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_make(_ReplicationPadNd, f'ReplicationPad{n}d', n)
                                                        for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_make(_CircularPadNd, f'CircularPad{n}d', n) for n in (1, 2, 3))
