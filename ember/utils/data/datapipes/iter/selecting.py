"""Filter (``dp.filter``): keep the items a predicate accepts."""
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _check_unpickable_fn, validate_input_col

__all__ = ['FilterIterDataPipe']


@functional_datapipe('filter')
class FilterIterDataPipe(IterDataPipe):
    """Keep the items for which ``filter_fn`` (of the item, or of its columns ``input_col``) is True.

    ``filter_fn`` must return a Python bool (ValueError otherwise, as in torch).

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(IterableWrapper([0, 1, '', 'a']).filter(bool))
    [1, 'a']
    """

    def __init__(self, datapipe, filter_fn, input_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(filter_fn)
        self.filter_fn = filter_fn
        self.input_col = input_col
        validate_input_col(filter_fn, input_col)

    def _apply_filter_fn(self, data):
        if self.input_col is None:
            return self.filter_fn(data)
        if isinstance(self.input_col, (list, tuple)):
            return self.filter_fn(*(data[col] for col in self.input_col))
        return self.filter_fn(data[self.input_col])

    def _returnIfTrue(self, data):
        condition = self._apply_filter_fn(data)
        if not isinstance(condition, bool):
            raise ValueError("Boolean output is required for `filter_fn` of FilterIterDataPipe, got",
                             type(condition))
        return condition, data

    def __iter__(self):
        for data in self.datapipe:
            condition, filtered = self._returnIfTrue(data)
            if condition:
                yield filtered
