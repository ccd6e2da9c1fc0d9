"""ShardingFilter (``dp.sharding_filter``): each of n instances keeps every n-th item."""
from collections.abc import Sized
from enum import IntEnum

from .._decorator import functional_datapipe
from ..datapipe import IterDataPipe

__all__ = ['SHARDING_PRIORITIES', 'ShardingFilterIterDataPipe']


class SHARDING_PRIORITIES(IntEnum):
    DEFAULT = 1
    DISTRIBUTED = 2
    MULTIPROCESSING = 3


class _ShardingIterDataPipe(IterDataPipe):
    """What ``graph_settings.apply_sharding`` looks for (besides any DataPipe with an ``apply_sharding`` method)."""

    def apply_sharding(self, num_of_instances, instance_id, sharding_group):
        raise NotImplementedError


@functional_datapipe('sharding_filter')
class ShardingFilterIterDataPipe(_ShardingIterDataPipe):
    """After ``apply_sharding(n, i)``, yield the items whose position is ``i`` modulo ``n``.

    Sharding groups (DISTRIBUTED, MULTIPROCESSING) compose: the instance index is mixed-radix over the groups,
    the highest priority group outermost. ``sharding_group_filter`` keeps only one group's sharding.

    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> dp = IterableWrapper(range(10)).sharding_filter()
    >>> dp.apply_sharding(3, 1)
    >>> list(dp), len(dp)
    ([1, 4, 7], 3)
    """

    def __init__(self, source_datapipe, sharding_group_filter=None):
        super().__init__()
        self.source_datapipe = source_datapipe
        self.sharding_group_filter = sharding_group_filter
        self.groups = {}
        self.num_of_instances = 1
        self.instance_id = 0
        self._update_num_of_instances()

    def apply_sharding(self, num_of_instances, instance_id, sharding_group=SHARDING_PRIORITIES.DEFAULT):
        if instance_id >= num_of_instances:
            raise ValueError(f"instance_id({instance_id}) should be smaller than num_of_instances({num_of_instances})")
        is_default = sharding_group == SHARDING_PRIORITIES.DEFAULT
        has_default = SHARDING_PRIORITIES.DEFAULT in self.groups
        if (is_default and self.groups and not has_default) or (not is_default and has_default):
            raise RuntimeError("ShardingFilter cannot mix DEFAULT and non DEFAULT groups")
        self.groups[sharding_group] = (num_of_instances, instance_id)
        self._update_num_of_instances()

    def _update_num_of_instances(self):
        kept = [self.groups[k] for k in sorted(self.groups)
                if self.sharding_group_filter is None or k == self.sharding_group_filter]
        self.num_of_instances, self.instance_id = 1, 0
        for n, i in reversed(kept):
            self.instance_id += self.num_of_instances * i
            self.num_of_instances *= n

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        if isinstance(self.source_datapipe, Sized):
            n, k = len(self.source_datapipe), self.num_of_instances
            return n // k + (1 if self.instance_id < n % k else 0)
        raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
