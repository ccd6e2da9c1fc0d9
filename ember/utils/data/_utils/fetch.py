"""Fetchers: turn one entry of the index sampler into one (collated) batch."""
from .collate import default_collate


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        getitems = getattr(dataset, '__getitems__', None)
        self._getitems = getitems if callable(getitems) else None
        # a dataset may know default_collate's result for a batch without building its samples (TensorDataset)
        fast = getattr(dataset, '_default_collated', None)
        self._collated = fast if auto_collation and collate_fn is default_collate and callable(fast) else None

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self._collated is not None:
            batch = self._collated(possibly_batched_index)
            if batch is not None:
                return batch
        if self._getitems is not None:   # batched access, as in torch 2.x
            return self.collate_fn(self._getitems(possibly_batched_index))
        ds = self.dataset
        return self.collate_fn([ds[i] for i in possibly_batched_index])


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
