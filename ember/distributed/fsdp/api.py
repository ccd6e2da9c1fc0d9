"""``torch.distributed.fsdp.api``: where torch defines FSDP's configuration types (mmengine imports them from
here); ember's are in this package's ``__init__``."""
from . import (ShardingStrategy, BackwardPrefetch, StateDictType, CPUOffload, MixedPrecision,  # noqa: F401
               StateDictConfig, FullStateDictConfig, LocalStateDictConfig, ShardedStateDictConfig,
               OptimStateDictConfig, FullOptimStateDictConfig, LocalOptimStateDictConfig,
               ShardedOptimStateDictConfig, StateDictSettings)
