"""Samplers: iterables of dataset indices (or of index lists, for BatchSampler).

Random samplers draw from an ``ember.Generator`` (or, without one, from a fresh
generator seeded from ember's default generator, as torch does), so a seeded
run repeats its order. Streams differ from torch's (see ember/random.py), so
tests compare distributions and partitions with torch, not exact orders.
"""
import itertools
from typing import Generic, TypeVar

import numpy as np

import ember

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'SubsetRandomSampler', 'WeightedRandomSampler',
           'BatchSampler']


T_co = TypeVar('T_co', covariant=True)


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (and ``__len__`` when the length is known). Generic in what it
    yields, as torch's (``Sampler[int]``, ``Sampler[list[int]]`` in annotations and subclass bases)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError
    # no default __len__: list(sampler) must be able to fall back to __iter__ (as in torch)


def _randint(high, size, generator=None):
    return ember.randint(0, high, size, generator=generator, dtype=ember.int64)


def _seed_from(generator=None):
    """A 63-bit seed drawn from ``generator`` (ember's default one when None) as torch draws it:
    ``empty((), dtype=int64).random_()``, so a seeded program shuffles its data as under torch."""
    return int(ember.empty((), dtype=ember.int64).random_(generator=generator).item())


def _uniform(n, generator):
    """``n`` float64 uniforms in [0, 1) with 53 random bits each."""
    return _randint(2 ** 53, (n,), generator).numpy() * (1.0 / 2 ** 53)


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1.

    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation of the indices, or ``num_samples`` draws with replacement.

    >>> import ember
    >>> sorted(RandomSampler(range(5), generator=ember.Generator().manual_seed(0)))
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # the dataset's size may change between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = self.generator if self.generator is not None else ember.Generator().manual_seed(_seed_from())
        if self.replacement:
            for start in range(0, self.num_samples, 32):   # torch's chunks of 32 draws
                k = min(32, self.num_samples - start)
                yield from _randint(n, (k,), g).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from ember.randperm(n, generator=g).tolist()
            yield from ember.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order, without replacement.

    >>> import ember
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=ember.Generator().manual_seed(1)))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Indices 0..len(weights)-1 drawn with probability proportional to ``weights``.

    >>> import ember
    >>> set(WeightedRandomSampler([0., 1., 0.], 5, generator=ember.Generator().manual_seed(0)))
    {1}
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = ember.as_tensor(weights, dtype=ember.float64)
        if len(w.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement, self.generator).tolist()

    def __len__(self):
        return self.num_samples


def _multinomial(w, k, replacement, generator):
    """torch.multinomial for one distribution, with torch's checks; uniforms come from ``generator``."""
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = w.sum()
    if total <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement:
        if k > w.size:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        if k > np.count_nonzero(w):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                               "category to sample)")
        # exponential races (Efraimidis-Spirakis): the k smallest E_i / w_i are a weighted draw without replacement
        with np.errstate(divide='ignore'):
            keys = -np.log1p(-_uniform(w.size, generator)) / w
        return np.argsort(keys, kind='stable')[:k]
    cdf = np.cumsum(w / total)
    idx = np.searchsorted(cdf, _uniform(k, generator) * cdf[-1], side='right')
    return np.minimum(idx, w.size - 1)


class BatchSampler(Sampler[list]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from map(list, zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
