"""torch.nn.parallel.data_parallel: where torch defines DataParallel (pickles and printed class paths name it)."""
from . import DataParallel  # noqa: F401

__all__ = ['DataParallel']
