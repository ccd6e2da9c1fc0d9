"""torch.distributed._composable: per-module distributed APIs (``fully_shard``); see ``ember.distributed.fsdp``."""
