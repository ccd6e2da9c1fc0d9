"""Datasets: map-style (``__getitem__``/``__len__``) and iterable-style (``__iter__``), and their combinators.

A dataset is any object the DataLoader can index or iterate; these classes add
the combinators torch users expect (``ds1 + ds2``, ``Subset``, ``random_split``).
``__getitems__`` (a list of indices in, a list of samples out) is the batched
access the DataLoader uses when a dataset offers it, as in torch 2.x.
"""
import bisect
import itertools
import math
from ember._warn import warnings
from typing import Generic, TypeVar

import numpy as np

import ember
from ._utils import shm

__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'StackDataset', 'ConcatDataset', 'ChainDataset',
           'Subset', 'random_split']


T_co = TypeVar('T_co', covariant=True)


class Dataset(Generic[T_co]):
    """Base class of map-style datasets: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """Base class of iterable-style datasets: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; use
    ``get_worker_info()`` inside ``__iter__`` to give each worker its shard.

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the index-th rows of the given tensors, which share their first dimension.

    >>> import ember
    >>> ds = TensorDataset(ember.arange(6).reshape(3, 2), ember.tensor([0, 1, 0]))
    >>> len(ds), ds[1][0].tolist(), ds[1][1].item()
    (3, [2, 3], 1)
    """

    def __init__(self, *tensors):
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices):
        """The DataLoader's batched access: ``[self[i] for i in indices]``, without a dispatch per row.

        Rows of CPU tensors that do not require grad are built as views of the
        tensors' NumPy arrays (same memory, dtype and shape as ``t[i]``; only
        their ``_base`` and version counter are their own), which is ~20x
        cheaper than one indexing operator call per row and sample.
        """
        if type(self).__getitem__ is not TensorDataset.__getitem__ or \
                not all(t.device.type == 'cpu' and not t.requires_grad for t in self.tensors):
            return [self[i] for i in indices]   # a subclass's own samples, or rows that need autograd
        arrays = [t.numpy(force=True) for t in self.tensors]
        from_numpy = ember.from_numpy
        return [tuple(from_numpy(a[i, ...]) for a in arrays) for i in indices]   # [i, ...]: a 0-d view, not a scalar

    def _default_collated(self, indices):
        """``default_collate([self[i] for i in indices])``, gathered in one step per tensor; None if not applicable.

        The DataLoader's fetcher calls this when the collate function is
        default_collate: rows go from each tensor straight into the batch
        (in shared memory inside a worker) instead of through per-row tensors.
        """
        cls = type(self)
        if cls.__getitem__ is not TensorDataset.__getitem__ or cls.__getitems__ is not TensorDataset.__getitems__ \
                or not all(t.device.type == 'cpu' and not t.requires_grad for t in self.tensors):
            return None   # a subclass changed what a sample is, or rows need autograd/another device
        idx = np.asarray(indices, dtype=np.int64)
        out = []
        for t in self.tensors:
            a = t.numpy(force=True)
            batch = shm.empty((len(idx),) + a.shape[1:], a.dtype)
            np.take(a, idx, axis=0, out=batch)   # IndexError for an index out of range, as t[i] raises
            out.append(ember.from_numpy(batch))
        return out

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of the datasets' samples.

    >>> StackDataset([1, 2], ['a', 'b'])[1], StackDataset(x=[1, 2], y=['a', 'b'])[0]
    ((2, 'b'), {'x': 1, 'y': 'a'})
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        items = self.datasets.items() if named else enumerate(self.datasets)
        columns = {k: _fetch_many(d, indices) for k, d in items}
        if named:
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices):
    """``dataset.__getitems__(indices)`` when it exists, else one ``__getitem__`` per index."""
    getitems = getattr(dataset, '__getitems__', None)
    if callable(getitems):
        items = getitems(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return items
    return [dataset[i] for i in indices]


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets.

    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (3, 3, 3, [2, 3])
    """

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, 'datasets should not be an empty iterable'
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterates the given iterable datasets one after the other.

    >>> list(ChainDataset([range(2), range(3)]))
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset) or not isinstance(d, Dataset), \
                "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset) or not isinstance(d, Dataset), \
                "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``.

    >>> s = Subset(['a', 'b', 'c', 'd'], [3, 0])
    >>> len(s), s[0], s.__getitems__([1, 0])
    (2, 'd', ['a', 'd'])
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        return _fetch_many(self.dataset, [self.indices[i] for i in indices])

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random Subsets of the given lengths (or fractions summing to 1).

    >>> import ember
    >>> a, b = random_split(range(10), [0.3, 0.7], generator=ember.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (3, 7, True)
    """
    if generator is None:
        generator = ember.default_generator
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):  # spread the remainder round-robin, like torch
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, n in enumerate(lengths):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = ember.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(itertools.accumulate(lengths), lengths)]
