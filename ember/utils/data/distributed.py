"""DistributedSampler: each of ``num_replicas`` ranks gets its own equal-sized share of the indices."""
import math

import ember
from .sampler import Sampler, T_co

__all__ = ['DistributedSampler']


def _dist_setting(what):
    try:
        import ember.distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, 'is_available', lambda: False)():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == 'world_size' else dist.get_rank()


class DistributedSampler(Sampler[T_co]):
    """Rank ``rank`` of ``num_replicas`` takes every ``num_replicas``-th index from ``rank`` on.

    Without ``drop_last`` the index list is padded by repeating its start so that
    every rank gets ``ceil(len / num_replicas)`` indices; with it, the tail is
    dropped instead. ``shuffle`` permutes with seed ``seed + epoch``: call
    ``set_epoch`` each epoch for a new order that all ranks agree on.

    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    [[0, 2, 4], [1, 3, 0]]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _dist_setting('world_size')
        if rank is None:
            rank = _dist_setting('rank')
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator().manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad > len(indices) else indices[:pad]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size, \
            f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})"
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use ``seed + epoch`` for the next shuffle (the same on every rank)."""
        self.epoch = epoch
