"""torch.distributed._composable.fsdp: FSDP2's names, as in ``ember.distributed.fsdp`` (which has no FSDP)."""
from ..fsdp import (fully_shard, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, CPUOffloadPolicy)  # noqa: F401
