"""Argument normalisers shared by the layers (torch.nn.modules.utils)."""
import collections.abc
from itertools import repeat

__all__ = []


def _ntuple(n, name='parse'):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, '_single')
_pair = _ntuple(2, '_pair')
_triple = _ntuple(3, '_triple')
_quadruple = _ntuple(4, '_quadruple')


def _reverse_repeat_tuple(t, n):
    return tuple(x for x in reversed(t) for _ in range(n))
