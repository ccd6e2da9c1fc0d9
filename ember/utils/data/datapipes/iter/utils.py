"""IterableWrapper: any iterable as the source of an IterDataPipe pipeline."""
import copy
from collections.abc import Sized
from ember._warn import warnings

from ..datapipe import IterDataPipe

__all__ = ['IterableWrapperIterDataPipe']


class IterableWrapperIterDataPipe(IterDataPipe):
    """Yield the items of ``iterable`` (a deep copy of it per iterator unless ``deepcopy=False``).

    >>> list(IterableWrapperIterDataPipe(range(3)))
    [0, 1, 2]
    """

    def __init__(self, iterable, deepcopy=True):
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:   # in-place changes downstream will then reach the source
                warnings.warn("The input iterable can not be deepcopied, please be aware of in-place modification "
                              "would affect source data.")
        yield from source

    def __len__(self):
        if isinstance(self.iterable, Sized):
            return len(self.iterable)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
