"""torch.distributed.fsdp.fully_sharded_data_parallel: the module FSDP's class lives in (see the package's note)."""
from . import (FullyShardedDataParallel, ShardingStrategy, BackwardPrefetch, StateDictType, CPUOffload,  # noqa: F401
               MixedPrecision, FullStateDictConfig, ShardedStateDictConfig, LocalStateDictConfig,
               FullOptimStateDictConfig, ShardedOptimStateDictConfig, OptimStateKeyType)
