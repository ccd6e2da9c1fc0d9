"""SequenceWrapper: a sequence (or mapping) as the source of a MapDataPipe pipeline."""
import copy
from ember._warn import warnings

from ..datapipe import MapDataPipe

__all__ = ['SequenceWrapperMapDataPipe']


class SequenceWrapperMapDataPipe(MapDataPipe):
    """Index into (a deep copy of, unless ``deepcopy=False``) ``sequence``.

    >>> dp = SequenceWrapperMapDataPipe({'a': 1, 'b': 2})
    >>> dp['b'], len(dp)
    (2, 2)
    """

    def __init__(self, sequence, deepcopy=True):
        self.sequence = sequence
        if deepcopy:
            try:
                self.sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn("The input sequence can not be deepcopied, please be aware of in-place modification "
                              "would affect source data")

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)
