"""Batcher (``dp.batch``) for MapDataPipes: item ``i`` is the ``i``-th batch."""
from collections.abc import Sized

from .._decorator import functional_datapipe
from ..datapipe import DataChunk, MapDataPipe
from ..iter.grouping import _batcher_init

__all__ = ['BatcherMapDataPipe']


@functional_datapipe('batch')
class BatcherMapDataPipe(MapDataPipe):
    """``dp[i]`` is items ``i*batch_size`` up to ``(i+1)*batch_size`` of the source, as a ``wrapper_class``.

    >>> from ember.utils.data.datapipes.map import SequenceWrapper
    >>> list(SequenceWrapper(range(5)).batch(2))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        super().__init__()
        _batcher_init(self, datapipe, batch_size, drop_last, wrapper_class)

    def __getitem__(self, index):
        batch = []
        try:
            batch.extend(self.datapipe[i] for i in range(index * self.batch_size, (index + 1) * self.batch_size))
            return self.wrapper_class(batch)
        except IndexError as e:
            if not self.drop_last and batch:
                return self.wrapper_class(batch)
            raise IndexError(f"Index {index} is out of bound.") from e

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            n = len(self.datapipe)
            return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
