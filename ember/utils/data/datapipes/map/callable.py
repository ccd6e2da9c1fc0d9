"""Mapper (``dp.map``) for MapDataPipes: ``fn`` applied on access."""
from .._decorator import functional_datapipe
from ..datapipe import MapDataPipe
from ..utils.common import _check_unpickable_fn

__all__ = ['MapperMapDataPipe', 'default_fn']


def default_fn(data):
    """The identity: Mapper's default, a named function so the DataPipe pickles."""
    return data


@functional_datapipe('map')
class MapperMapDataPipe(MapDataPipe):
    """``dp[i]`` is ``fn(datapipe[i])`` (functional name: ``map``).

    >>> from ember.utils.data.datapipes.map import SequenceWrapper
    >>> SequenceWrapper([1, 2, 3]).map(str)[1]
    '2'
    """

    def __init__(self, datapipe, fn=default_fn):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn

    def __len__(self):
        return len(self.datapipe)

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])
