"""DataPipes (torch.utils.data.datapipes): composable iterable- and map-style datasets.

ember provides the core: the two base classes, functional registration, and the
pipes in ``iter`` (IterableWrapper, Mapper, Filter, Batcher, UnBatcher, Collator,
Shuffler, Sampler, ShardingFilter) and ``map`` (SequenceWrapper, Mapper, Batcher).
The graph utilities are ``ember.utils.data.graph`` and ``graph_settings``.
"""
from . import iter, map, utils   # noqa: F401  (registers the functional names)
