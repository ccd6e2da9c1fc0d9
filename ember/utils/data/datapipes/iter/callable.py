"""Mapper (``dp.map``) and Collator (``dp.collate``)."""
from collections.abc import Sized

from ..._utils.collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe
from ..utils.common import _check_unpickable_fn, validate_input_col

__all__ = ['CollatorIterDataPipe', 'MapperIterDataPipe']


def _place(data, input_col, output_col, res):
    """Put ``res`` into ``data`` as torch's Mapper does: over ``input_col`` (its first column when several), or
    at ``output_col`` (``-1`` appends). Tuples come back as tuples."""
    was_tuple = isinstance(data, tuple)
    if was_tuple:
        data = list(data)
    if output_col is not None:
        if output_col == -1:
            data.append(res)
        else:
            data[output_col] = res
    elif isinstance(input_col, (list, tuple)):
        data[input_col[0]] = res
        for idx in sorted(input_col[1:], reverse=True):
            del data[idx]
    else:
        data[input_col] = res
    return tuple(data) if was_tuple else data


@functional_datapipe('map')
class MapperIterDataPipe(IterDataPipe):
    """Apply ``fn`` to each item (functional name: ``map``), or to the columns ``input_col`` of each item.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(IterableWrapper([(1, 2), (3, 4)]).map(abs, input_col=0, output_col=-1))
    [(1, 2, 1), (3, 4, 3)]
    """

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        super().__init__()
        self.datapipe = datapipe
        _check_unpickable_fn(fn)
        self.fn = fn
        self.input_col = input_col
        if input_col is None and output_col is not None:
            raise ValueError("`output_col` must be None when `input_col` is None.")
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError("`output_col` must be a single-element list or tuple")
            output_col = output_col[0]
        self.output_col = output_col
        validate_input_col(fn, input_col)

    def _apply_fn(self, data):
        if self.input_col is None:   # (output_col is then None too)
            return self.fn(data)
        if isinstance(self.input_col, (list, tuple)):
            res = self.fn(*(data[col] for col in self.input_col))
        else:
            res = self.fn(data[self.input_col])
        return _place(data, self.input_col, self.output_col, res)

    def __iter__(self):
        for data in self.datapipe:
            yield self._apply_fn(data)

    def __len__(self):
        if isinstance(self.datapipe, Sized):
            return len(self.datapipe)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")


@functional_datapipe('collate')
class CollatorIterDataPipe(MapperIterDataPipe):
    """Collate each item (a batch) with ``collate_fn`` (default: ``default_collate``); functional name ``collate``.

    torch also accepts a dict of per-column conversions for DataFrame batches; ember has no DataFrames.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> [t.tolist() for t in IterableWrapper(range(4)).batch(2).collate()]
    [[0, 1], [2, 3]]
    """

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        fn = collate_fn if collate_fn is not None else conversion
        if not callable(fn):
            raise NotImplementedError("Collator with a dict of column conversions needs DataFrames, "
                                      "which ember does not support; pass a callable collate_fn")
        super().__init__(datapipe, fn=fn)
