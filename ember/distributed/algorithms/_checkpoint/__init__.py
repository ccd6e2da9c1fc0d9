"""torch.distributed.algorithms._checkpoint: activation checkpointing applied as module wrappers."""
