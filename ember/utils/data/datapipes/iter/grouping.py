"""Batcher (``dp.batch``) and UnBatcher (``dp.unbatch``)."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ['BatcherIterDataPipe', 'UnBatcherIterDataPipe']


def _batcher_init(dp, datapipe, batch_size, drop_last, wrapper_class):
    """The arguments both Batchers (iterable and map-style) check and keep."""
    if batch_size <= 0:
        raise AssertionError("Batch size is required to be larger than 0!")
    dp.datapipe, dp.batch_size, dp.drop_last, dp.wrapper_class = datapipe, batch_size, drop_last, wrapper_class


@functional_datapipe('batch')
class BatcherIterDataPipe(IterDataPipe):
    """Group items into lists of ``batch_size`` (the last one shorter unless ``drop_last``), each a ``wrapper_class``.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(IterableWrapper(range(7)).batch(3, drop_last=True))
    [[0, 1, 2], [3, 4, 5]]
    """

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        super().__init__()
        _batcher_init(self, datapipe, batch_size, drop_last, wrapper_class)

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            n = len(self.datapipe)
            return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe('unbatch')
class UnBatcherIterDataPipe(IterDataPipe):
    """Flatten ``unbatch_level`` levels of lists (``-1``: all of them).

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(IterableWrapper([[[0, 1], [2]], [[3]]]).unbatch(unbatch_level=2))
    [0, 1, 2, 3]
    """

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe = datapipe
        self.unbatch_level = unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, unbatch_level=self.unbatch_level)

    def _dive(self, element, unbatch_level):
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        if unbatch_level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, unbatch_level=-1 if unbatch_level == -1 else unbatch_level - 1)
        elif unbatch_level == -1:
            yield element
        else:
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe")
