"""The IterDataPipes ember provides, under torch's short names (``from ...datapipes.iter import Mapper``)."""
from .callable import CollatorIterDataPipe as Collator, MapperIterDataPipe as Mapper
from .combinatorics import SamplerIterDataPipe as Sampler, ShufflerIterDataPipe as Shuffler
from .grouping import BatcherIterDataPipe as Batcher, UnBatcherIterDataPipe as UnBatcher
from .selecting import FilterIterDataPipe as Filter
from .sharding import ShardingFilterIterDataPipe as ShardingFilter
from .utils import IterableWrapperIterDataPipe as IterableWrapper

__all__ = ['Batcher', 'Collator', 'Filter', 'IterableWrapper', 'Mapper', 'Sampler', 'ShardingFilter', 'Shuffler',
           'UnBatcher']
