"""``ember.distributed.optim`` (torch.distributed.optim): ``ZeroRedundancyOptimizer``, optimizer state sharded
over the ranks of a process group. torch's RPC ``DistributedOptimizer`` and ``PostLocalSGDOptimizer`` (which
needs ``algorithms.model_averaging``) are not here."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ['ZeroRedundancyOptimizer']
