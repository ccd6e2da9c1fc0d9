"""ember.utils.data: datasets, samplers and the DataLoader (torch.utils.data's API).

>>> import ember
>>> from ember.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(ember.arange(6.).reshape(3, 2)), batch_size=2)
>>> [b[0].shape for b in loader]
[ember.Size([2, 2]), ember.Size([1, 2])]
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                      BatchSampler)
from .distributed import DistributedSampler
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info
from .dataloader import DataLoader
from .datapipes._decorator import (argument_validation, functional_datapipe, guaranteed_datapipes_determinism,
                                   non_deterministic, runtime_validation, runtime_validation_disabled)
from .datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from . import datapipes  # noqa: F401,E402  (registers the functional names: dp.map, dp.shuffle, ...)

__all__ = ['BatchSampler', 'ChainDataset', 'ConcatDataset', 'DFIterDataPipe', 'DataChunk', 'DataLoader', 'Dataset',
           'DistributedSampler', 'IterDataPipe', 'IterableDataset', 'MapDataPipe', 'argument_validation',
           'functional_datapipe', 'guaranteed_datapipes_determinism', 'non_deterministic', 'runtime_validation',
           'runtime_validation_disabled', 'RandomSampler', 'Sampler', 'SequentialSampler', 'StackDataset', 'Subset',
           'SubsetRandomSampler', 'TensorDataset', 'WeightedRandomSampler', 'default_collate', 'default_convert',
           'get_worker_info', 'random_split']
